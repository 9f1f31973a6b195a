/**
 * API keys: creation (plaintext returned once), listing (never the secret), revocation and the usage
 * view. A key belongs to an account and is bound to one organization it runs in.
 */
import { randomUUID } from "node:crypto";
import { notFound, permissionDenied, unauthenticated, unavailable } from "@toolport/kit/errors";
import { deriveApiKeySecret, generateApiKeySecret, type NewApiKeySecret } from "./api-key-secret.js";
import { assertSameOrganization, assertWithin, keyRestricted, maySelectOrganization } from "./authority.js";
import type { ApiKey, Caller, Permissions } from "./model.js";
import type { CatalogPort, KeyStore, KeyUsageSummary, OrganizationStore } from "./ports.js";
import {
  clampUsageDays,
  invalidField,
  isUuid,
  optionalText,
  parseAgentType,
  requireText,
  validatePermissions,
} from "./validation.js";

export interface KeyDeps {
  keys: KeyStore;
  organizations: OrganizationStore;
  catalog: CatalogPort;
}

export interface CreateKeyInput {
  name: string;
  permissions: Permissions | null;
  agentName: string | undefined;
  agentType: string | undefined;
  purpose: string | undefined;
  organizationId: string | undefined;
}

export async function createKey(
  deps: KeyDeps,
  caller: Caller,
  input: CreateKeyInput,
): Promise<{ key: ApiKey; plaintext: string }> {
  const name = requireText("name", input.name, 100);
  const agentName = optionalText("agent_name", input.agentName, 100);
  const agentType = parseAgentType(input.agentType);
  const purpose = optionalText("purpose", input.purpose, 200);
  const permissions = input.permissions ? validatePermissions(input.permissions) : null;

  // A key made with a key is never wider than it (docs/permissions.md). A key that acts only in its own
  // organization makes keys there by default, and only there.
  const maker = caller.keyId ? await deps.keys.keyById(caller.keyId) : null;
  const makerStaysHome = maker !== null && !maySelectOrganization(maker, caller.personalOrganizationId);
  const organizationId = input.organizationId?.trim() || (makerStaysHome ? maker.organizationId : caller.personalOrganizationId);
  if (maker) {
    assertWithin(maker.permissions, permissions);
    if (makerStaysHome) assertSameOrganization(maker.organizationId, organizationId);
  }
  await assertMayMakeKeysIn(deps.organizations, caller, organizationId);
  if (permissions) await checkCatalogIds(deps.catalog, permissions);

  const secret = generateApiKeySecret();
  const key = await deps.keys.insertKey({
    id: randomUUID(),
    accountId: caller.accountId,
    organizationId,
    name,
    hash: secret.hash,
    prefix: secret.prefix,
    permissions,
    agentName,
    agentType,
    purpose,
    createdByKeyId: maker?.id ?? null,
    // A key made with a key that ends (a console key) ends with it.
    expiresAt: maker?.expiresAt ?? null,
  });
  return { key, plaintext: secret.plaintext };
}

/** The organization exists, the caller is a member of it, and not a viewer (spec: 404, then 403). */
export async function assertMayMakeKeysIn(
  organizations: OrganizationStore,
  caller: Caller,
  organizationId: string,
): Promise<void> {
  const unknownOrg = notFound("organization_not_found", `organization ${organizationId} does not exist`, {
    details: { organization_id: organizationId },
  });
  if (!isUuid(organizationId) || !(await organizations.organizationExists(organizationId))) throw unknownOrg;
  const membership = await organizations.membership(organizationId, caller.accountId);
  if (!membership) {
    throw permissionDenied("not_a_member", "you are not a member of this organization", {
      details: { organization_id: organizationId },
    });
  }
  if (membership.role === "viewer") {
    throw permissionDenied("insufficient_role", "viewers cannot create keys for an organization", {
      details: { organization_id: organizationId, role: membership.role },
    });
  }
}

/** What the console's key looks like: one per sign-in and organization, ending with the sign-in. */
const CONSOLE_KEY = {
  name: "Toolport console",
  agentType: "other" as const,
  purpose: "Calls tools, funds the wallet and runs workflows from the Toolport console, for one sign-in",
};

/**
 * The console key of the caller's sign-in in an organization: derived from the sign-in, so every screen
 * asking at once gets the same key and one row exists. It expires with the sign-in's token and is
 * revoked when the sign-in ends; asked again after that, it is refused (sign in again).
 */
export async function issueConsoleKey(
  deps: Pick<KeyDeps, "keys" | "organizations">,
  serverSecret: string,
  caller: Caller,
  input: { organizationId: string | undefined },
): Promise<{ key: ApiKey; plaintext: string }> {
  const session = caller.session;
  if (!session || caller.keyId) {
    throw permissionDenied("session_required", "a console key is issued to a signed-in person's JWT from Toolport only");
  }
  const organizationId = input.organizationId?.trim() || caller.organizationId;
  await assertMayMakeKeysIn(deps.organizations, caller, organizationId);
  const secret: NewApiKeySecret = deriveApiKeySecret(
    serverSecret,
    `console\0${caller.accountId}\0${session.id}\0${organizationId.toLowerCase()}`,
  );
  const key = await deps.keys.issueConsoleKey({
    id: randomUUID(),
    accountId: caller.accountId,
    organizationId,
    name: CONSOLE_KEY.name,
    hash: secret.hash,
    prefix: secret.prefix,
    permissions: null,
    agentName: null,
    agentType: CONSOLE_KEY.agentType,
    purpose: CONSOLE_KEY.purpose,
    expiresAt: session.expiresAt,
    consoleSession: session.id,
  });
  if (!key || key.revokedAt) {
    throw unauthenticated("console_session_ended", "this sign-in has ended; sign in again");
  }
  return { key, plaintext: secret.plaintext };
}

/** Ends the caller's sign-in: its console keys are revoked (the handler drops their quota leases). */
export async function endSession(deps: Pick<KeyDeps, "keys">, caller: Caller): Promise<ApiKey[]> {
  if (!caller.session || caller.keyId) {
    throw permissionDenied("session_required", "only a signed-in person's JWT from Toolport ends a sign-in");
  }
  return deps.keys.revokeSessionKeys(caller.accountId, caller.session.id);
}

/** Allow-lists may only name what exists; an unchecked id is never accepted. */
export async function checkCatalogIds(catalog: CatalogPort, p: Permissions): Promise<void> {
  const services = p.allowedServices ?? [];
  const tools = p.allowedTools ?? [];
  if (services.length === 0 && tools.length === 0) return;
  const unknown = await catalog.unknownIds(services, tools);
  const first = (field: string, ids: string[], bad: string[]) => {
    const badSet = new Set(bad.map((id) => id.toLowerCase()));
    const index = ids.findIndex((id) => badSet.has(id.toLowerCase()));
    if (index >= 0) {
      const err = invalidField(`${field}[${index}]`, `no such ${field.endsWith("services") ? "service" : "tool"}: ${ids[index]}`);
      Object.assign(err.details, { unknown_ids: bad });
      throw err;
    }
  };
  first("permissions.allowed_services", services, unknown.services);
  first("permissions.allowed_tools", tools, unknown.tools);
}

/**
 * The caller's keys; with an organization, that organization's keys (all of them for its owners and
 * admins, the caller's own otherwise).
 */
export async function listKeys(
  deps: Pick<KeyDeps, "keys" | "organizations">,
  caller: Caller,
  input: { organizationId: string | undefined; includeRevoked: boolean },
): Promise<ApiKey[]> {
  if (caller.keyId && caller.keyPermissions) {
    // A restricted key sees itself and the keys it made, whatever organization is asked for.
    const made = await deps.keys.keyAndDescendants(caller.keyId);
    return made.filter(
      (k) => (input.includeRevoked || !k.revokedAt) && (!input.organizationId || k.organizationId === input.organizationId),
    );
  }
  if (!input.organizationId) return deps.keys.keysOfAccount(caller.accountId, input.includeRevoked);
  const orgId = input.organizationId;
  const membership = isUuid(orgId) ? await deps.organizations.membership(orgId, caller.accountId) : null;
  if (!membership) {
    throw notFound("organization_not_found", `organization ${orgId} does not exist or you are not a member of it`);
  }
  const keys = await deps.keys.keysOfOrganization(orgId, input.includeRevoked);
  const manager = membership.role === "owner" || membership.role === "admin";
  return manager ? keys : keys.filter((k) => k.accountId === caller.accountId);
}

const keyNotFound = (id: string) => notFound("api_key_not_found", `API key ${id} not found`, { details: { key_id: id } });

/**
 * The key's own account, or an owner or admin of the key's organization, may revoke it; a restricted key
 * only itself and the keys it made. The keys made with it are revoked with it (`revoked`: every key
 * revoked now, the key itself included).
 */
export async function revokeKey(
  deps: Pick<KeyDeps, "keys" | "organizations">,
  caller: Caller,
  keyId: string,
): Promise<{ key: ApiKey; revoked: ApiKey[] }> {
  const key = isUuid(keyId) ? await deps.keys.keyById(keyId) : null;
  if (!key) throw keyNotFound(keyId);
  if (caller.keyId && caller.keyPermissions) {
    const made = await deps.keys.keyAndDescendants(caller.keyId);
    if (!made.some((k) => k.id === key.id)) {
      if (key.accountId !== caller.accountId) await assertManages(deps.organizations, caller, key);
      throw keyRestricted("revoke keys other than itself and the keys it made");
    }
  } else if (key.accountId !== caller.accountId) {
    await assertManages(deps.organizations, caller, key);
  }
  if (key.revokedAt) return { key, revoked: [] };
  const revoked = await deps.keys.revokeKey(key.id, caller.accountId);
  return { key: revoked.find((k) => k.id === key.id) ?? key, revoked };
}

/** Someone else's key is revoked by an owner or admin of its organization; to anyone else it does not exist. */
async function assertManages(organizations: OrganizationStore, caller: Caller, key: ApiKey): Promise<void> {
  const membership = await organizations.membership(key.organizationId, caller.accountId);
  if (membership?.role !== "owner" && membership?.role !== "admin") throw keyNotFound(key.id);
}

export interface KeyUsage extends KeyUsageSummary {
  key: ApiKey;
  windowDays: number;
  successRate: number | null;
}

/** Only the key's own account sees its usage; anyone else gets the same 404 as for an unknown key. */
export async function keyUsage(keys: KeyStore, caller: Caller, keyId: string, days: number | undefined): Promise<KeyUsage> {
  const key = isUuid(keyId) ? await keys.keyById(keyId) : null;
  if (!key || key.accountId !== caller.accountId) throw keyNotFound(keyId);
  const windowDays = clampUsageDays(days);
  let summary: KeyUsageSummary;
  try {
    summary = await keys.usageOfKey(key.id, windowDays);
  } catch (err) {
    throw unavailable("usage_unavailable", "key usage is temporarily unavailable; try again shortly", { cause: err });
  }
  const successRate = summary.calls === 0n ? null : Number(summary.successes) / Number(summary.calls);
  return { ...summary, key, windowDays, successRate };
}
