/**
 * API keys: creation (plaintext returned once), listing (never the secret), revocation and the usage
 * view. A key belongs to an account and is bound to one organization it runs in.
 */
import { randomUUID } from "node:crypto";
import { notFound, permissionDenied, unavailable } from "@toolport/kit/errors";
import { generateApiKeySecret } from "./api-key-secret.js";
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

  const organizationId = input.organizationId?.trim() || caller.personalOrganizationId;
  const unknownOrg = notFound("organization_not_found", `organization ${organizationId} does not exist`, {
    details: { organization_id: organizationId },
  });
  if (!isUuid(organizationId) || !(await deps.organizations.organizationExists(organizationId))) throw unknownOrg;
  const membership = await deps.organizations.membership(organizationId, caller.accountId);
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
  });
  return { key, plaintext: secret.plaintext };
}

/** Allow-lists may only name what exists; an unchecked id is never accepted. */
async function checkCatalogIds(catalog: CatalogPort, p: Permissions): Promise<void> {
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

/** The key's own account, or an owner or admin of the key's organization, may revoke it. */
export async function revokeKey(deps: Pick<KeyDeps, "keys" | "organizations">, caller: Caller, keyId: string): Promise<ApiKey> {
  const key = isUuid(keyId) ? await deps.keys.keyById(keyId) : null;
  if (!key) throw keyNotFound(keyId);
  if (key.accountId !== caller.accountId) {
    const membership = await deps.organizations.membership(key.organizationId, caller.accountId);
    if (membership?.role !== "owner" && membership?.role !== "admin") throw keyNotFound(keyId);
  }
  if (key.revokedAt) return key;
  return (await deps.keys.revokeKey(key.id, caller.accountId)) ?? key;
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
