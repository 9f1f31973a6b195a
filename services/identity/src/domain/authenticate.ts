/**
 * Credential + organization selector -> principal. No cache: every request reads the key row, so a
 * revoked key is refused on its very next use on every gateway replica.
 */
import { notFound, unauthenticated } from "@toolport/kit/errors";
import { hashApiKey, hashesMatch, looksLikeApiKey } from "./api-key-secret.js";
import type { Account, ApiKey, ResolvedPrincipal } from "./model.js";
import type { AccountStore, KeyStore, OrganizationStore } from "./ports.js";
import { isUuid } from "./validation.js";

export interface AuthDeps {
  accounts: AccountStore;
  keys: KeyStore;
  organizations: OrganizationStore;
}

export const invalidCredentials = () => unauthenticated("unauthenticated", "the API key or token is not valid");

export async function authenticateApiKey(
  deps: AuthDeps,
  plaintext: string,
  selector: string | undefined,
): Promise<ResolvedPrincipal> {
  if (!looksLikeApiKey(plaintext)) throw invalidCredentials();
  const presented = hashApiKey(plaintext);
  const found = await deps.keys.activeKeyByHash(presented);
  if (!found || !hashesMatch(presented, found.storedHash)) throw invalidCredentials();
  const account = await deps.accounts.accountById(found.key.accountId);
  if (!account) throw invalidCredentials();
  const principal = await resolveOrganization(deps, account, found.key, selector, "api_key");
  await deps.keys.touchKey(found.key.id);
  return principal;
}

export const organizationNotFound = (id: string) =>
  notFound("organization_not_found", `organization ${id} does not exist or you are not a member of it`, {
    details: { organization_id: id },
  });

/**
 * The organization a request runs in: the explicit selector (membership required, else 404), else
 * the key's bound organization, else the personal organization.
 */
export async function resolveOrganization(
  deps: Pick<AuthDeps, "organizations">,
  account: Account,
  key: ApiKey | null,
  selector: string | undefined,
  method: ResolvedPrincipal["method"],
): Promise<ResolvedPrincipal> {
  if (selector !== undefined && selector !== "") {
    if (!isUuid(selector)) throw organizationNotFound(selector);
    const chosen = await deps.organizations.membership(selector, account.id);
    if (!chosen) throw organizationNotFound(selector);
    return { account, organizationId: chosen.id, role: chosen.role, key, method };
  }
  const orgId = key?.organizationId ?? account.personalOrganizationId;
  const membership = await deps.organizations.membership(orgId, account.id);
  // The key's owner has since left the organization the key is bound to: the key no longer works.
  if (!membership) throw unauthenticated("key_organization_left", "this key's organization no longer includes its owner");
  return { account, organizationId: membership.id, role: membership.role, key, method };
}
