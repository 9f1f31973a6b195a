/**
 * Connecting upstream credentials (PUT /services/{id}/credentials) and handing them to the execution
 * service (ResolveCredential). Secrets are sealed before they reach the database and opened only for
 * ResolveCredential; `env://NAME` and `vault://path` references are stored (sealed too) and returned
 * unresolved, for the execution service to resolve at call time.
 */
import { invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { administersOrganization, assertMayManageCredentials, type Caller, canSee } from "./access.js";
import { requireCaller } from "./checks.js";
import type { CatalogDeps } from "./deps.js";
import type { CredentialMaterial, CredentialScope, CredentialSummary, ServiceRecord } from "./model.js";

const ENV_REF = /^env:\/\/([A-Za-z_][A-Za-z0-9_]*)$/;
const VAULT_REF = /^vault:\/\/[A-Za-z0-9_\-./#:]+$/;

/** Whether a secret string is a reference; a malformed env:// or vault:// value is a 400. */
export function isReference(value: string, field: string): boolean {
  if (value.startsWith("env://")) {
    if (!ENV_REF.test(value))
      throw invalidArgument("invalid_reference", `${field}: env:// must name a variable, e.g. env://PETSTORE_KEY`, {
        details: { field },
      });
    return true;
  }
  if (value.startsWith("vault://")) {
    if (!VAULT_REF.test(value))
      throw invalidArgument(
        "invalid_reference",
        `${field}: vault:// must give a secret path, e.g. vault://secret/data/petstore#key`,
        { details: { field } },
      );
    return true;
  }
  return false;
}

function required(value: string | undefined, field: string): string {
  if (!value || value.trim() === "")
    throw invalidArgument("missing_credential_value", `${field} is required`, { details: { field } });
  return value;
}

/** Checks the material; returns its secret (for the hint) and whether it is a reference. */
export function checkMaterial(m: CredentialMaterial | undefined): {
  material: CredentialMaterial;
  secret: string;
  reference: boolean;
} {
  if (!m) {
    throw invalidArgument("missing_credential", "credential must hold one of api_key, bearer or basic", {
      details: { field: "credential" },
    });
  }
  switch (m.type) {
    case "api_key": {
      const value = required(m.value, "credential.api_key.value");
      if (m.location !== undefined && !["header", "query", "cookie"].includes(m.location)) {
        throw invalidArgument("invalid_location", "credential.api_key.location must be header, query or cookie", {
          details: { field: "credential.api_key.location" },
        });
      }
      return { material: m, secret: value, reference: isReference(value, "credential.api_key.value") };
    }
    case "bearer": {
      const token = required(m.token, "credential.bearer.token");
      return { material: m, secret: token, reference: isReference(token, "credential.bearer.token") };
    }
    case "basic": {
      required(m.username, "credential.basic.username");
      const password = required(m.password, "credential.basic.password");
      return { material: m, secret: password, reference: isReference(password, "credential.basic.password") };
    }
    case "oauth2":
      throw invalidArgument(
        "invalid_credential",
        "OAuth connections are made with POST /v1/services/{id}/oauth/connect, not connected as a credential",
        { details: { field: "credential" } },
      );
  }
}

/** Last four characters of a literal secret long enough that they give nothing away. */
function hintFor(secret: string, reference: boolean): string {
  return reference || secret.length < 12 ? "" : secret.slice(-4);
}

/** The associated data a credential is sealed with: its service, scope and owner. */
export const associated = (serviceId: string, scope: CredentialScope, ownerId: string) => `${serviceId}:${scope}:${ownerId}`;

function parseScope(scope: string | undefined): CredentialScope {
  if (scope === undefined || scope === "" || scope === "caller") return "caller";
  if (scope === "organization") return "organization";
  throw invalidArgument("invalid_scope", "scope must be caller or organization", { details: { field: "scope" } });
}

export function ownerFor(scope: CredentialScope, caller: Caller): string {
  if (scope === "caller") return caller.accountId;
  if (!administersOrganization(caller)) {
    throw permissionDenied("not_organization_admin", "only owners and admins connect credentials for the whole organization", {
      details: { field: "scope" },
    });
  }
  return caller.organizationId;
}

export async function visibleService(deps: CatalogDeps, idOrSlug: string, caller: Caller): Promise<ServiceRecord> {
  const service = await deps.store.findService(idOrSlug.trim());
  if (!service || !canSee(service, caller)) {
    throw notFound("service_not_found", `service ${idOrSlug} not found`, { details: { service_id: idOrSlug } });
  }
  return service;
}

export async function putServiceCredential(
  deps: CatalogDeps,
  input: { serviceId: string; scope?: string; material?: CredentialMaterial; schemeName?: string },
  callerOrNull: Caller | null,
): Promise<CredentialSummary> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCredentials(caller, "connect credentials");
  const service = await visibleService(deps, input.serviceId, caller);
  const scope = parseScope(input.scope);
  const ownerId = ownerFor(scope, caller);
  const { material, secret, reference } = checkMaterial(input.material);
  if (input.schemeName && !service.securitySchemes.some((s) => s.name === input.schemeName)) {
    throw invalidArgument("unknown_scheme", `the service has no security scheme ${input.schemeName}`, {
      details: { field: "scheme_name", schemes: service.securitySchemes.map((s) => s.name) },
    });
  }
  const schemeName = input.schemeName || service.securitySchemes[0]?.name || null;
  const stored = await deps.store.putCredential({
    serviceId: service.id,
    scope,
    ownerId,
    type: material.type,
    schemeName,
    isReference: reference,
    hint: hintFor(secret, reference),
    sealed: deps.sealer.seal(JSON.stringify(material), associated(service.id, scope, ownerId)),
    createdBy: caller.accountId,
  });
  deps.log.info({ service_id: service.id, scope, type: material.type, reference }, "credential connected");
  return stored;
}

export async function listServiceCredentials(
  deps: CatalogDeps,
  idOrSlug: string,
  callerOrNull: Caller | null,
): Promise<CredentialSummary[]> {
  const caller = requireCaller(callerOrNull);
  const service = await visibleService(deps, idOrSlug, caller);
  return deps.store.credentialsFor(service.id, caller.accountId, caller.organizationId);
}

export async function deleteServiceCredential(
  deps: CatalogDeps,
  idOrSlug: string,
  scopeInput: string | undefined,
  callerOrNull: Caller | null,
): Promise<boolean> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCredentials(caller, "delete credentials");
  const service = await visibleService(deps, idOrSlug, caller);
  const scope = parseScope(scopeInput);
  const deleted = await deps.store.deleteCredential(service.id, scope, ownerFor(scope, caller));
  if (!deleted)
    throw notFound("credential_not_found", `no ${scope} credential is connected to this service`, {
      details: { service_id: service.id },
    });
  return true;
}

export interface ResolvedCredential {
  scope: CredentialScope;
  material: CredentialMaterial;
  schemeName: string | null;
  /** The credential's id (an OAuth connection's id). */
  id: string;
}

/**
 * For the execution service: the caller's working credential, else its organization's; decrypted. When
 * there is none but a broken OAuth connection, `brokenReason` says why it broke.
 */
export async function resolveCredential(
  deps: CatalogDeps,
  input: { serviceId: string; accountId: string; organizationId: string; schemeName?: string },
): Promise<{ credential: ResolvedCredential | null; brokenReason: string | null }> {
  const all = await deps.store.credentialsFor(input.serviceId, input.accountId, input.organizationId);
  const found = all.filter((c) => c.status === "active");
  const preferred = input.schemeName ? found.filter((c) => c.schemeName === input.schemeName) : [];
  const chosen = preferred[0] ?? found[0];
  if (!chosen) {
    const broken = all.find((c) => c.status === "broken");
    return { credential: null, brokenReason: broken ? (broken.brokenReason ?? "the connection is broken") : null };
  }
  const material = JSON.parse(
    deps.sealer.open(chosen.sealed, associated(chosen.serviceId, chosen.scope, chosen.ownerId)),
  ) as CredentialMaterial;
  return {
    credential: { scope: chosen.scope, material, schemeName: chosen.schemeName, id: chosen.id },
    brokenReason: null,
  };
}
