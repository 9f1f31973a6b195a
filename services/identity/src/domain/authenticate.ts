/**
 * Credential + organization selector -> principal. No cache: every request reads the key row, so a
 * revoked key is refused on its very next use on every gateway replica. Nothing here logs: this runs
 * on every gateway request.
 */
import { notFound, unauthenticated } from "@toolport/kit/errors";
import { hashApiKey, hashesMatch, looksLikeApiKey } from "./api-key-secret.js";
import { keyOrganizationMismatch, maySelectOrganization } from "./authority.js";
import type { Account, ApiKey, ResolvedPrincipal } from "./model.js";
import { hashToken, looksLikeAccessToken } from "./oauth-server.js";
import type { AccountStore, KeyPrincipal, KeyStore, MembershipRole, OrganizationStore } from "./ports.js";
import { isUuid } from "./validation.js";

export interface AuthDeps {
  accounts: AccountStore;
  keys: KeyStore;
  organizations: OrganizationStore;
}

export const invalidCredentials = () => unauthenticated("unauthenticated", "the API key or token is not valid");

/**
 * An API key -> principal in one store round trip (key, account, membership, and the throttled
 * `last_used_at` write all in one statement).
 */
export async function authenticateApiKey(
  deps: AuthDeps,
  plaintext: string,
  selector: string | undefined,
): Promise<ResolvedPrincipal> {
  if (!looksLikeApiKey(plaintext)) throw invalidCredentials();
  const presented = hashApiKey(plaintext);
  return keyPrincipal(presented, await deps.keys.authenticateKey(presented, chosenOrganization(selector)), selector);
}

/**
 * An OAuth access token (domain/oauth-server.ts) -> the principal of its grant's key, by the same rules
 * as the key itself: a token acts exactly as the key the person granted, until the token expires.
 */
export async function authenticateAccessToken(
  deps: AuthDeps,
  plaintext: string,
  selector: string | undefined,
): Promise<ResolvedPrincipal> {
  if (!looksLikeAccessToken(plaintext)) throw invalidCredentials();
  const presented = hashToken(plaintext);
  const found = await deps.keys.authenticateAccessToken(presented, chosenOrganization(selector));
  return { ...keyPrincipal(presented, found, selector), credentialExpiresAt: found?.tokenExpiresAt };
}

/** The principal of a key the store found for a presented hash, or the refusal. */
function keyPrincipal(presented: Buffer, found: KeyPrincipal | null, selector: string | undefined): ResolvedPrincipal {
  if (!found || !hashesMatch(presented, found.storedHash)) throw invalidCredentials();
  // docs/permissions.md: a key works only while its owner belongs to the organization it is bound to,
  // whatever organization the request selects.
  if (!found.boundMembership) throw keyOrganizationLeft();
  const principal = principalOf(found.account, found.key, found.membership, selector, "api_key");
  // A selected organization the owner belongs to, but that this key may not act in.
  if (principal.organizationId.toLowerCase() !== found.key.organizationId.toLowerCase()) {
    if (!maySelectOrganization(found.key, found.account.personalOrganizationId)) {
      throw keyOrganizationMismatch(found.key.organizationId, principal.organizationId);
    }
  }
  return principal;
}

/** A Toolport JWT's account -> principal in one store round trip. */
export async function authenticateAccount(
  deps: AuthDeps,
  accountId: string,
  selector: string | undefined,
): Promise<ResolvedPrincipal> {
  const chosen = chosenOrganization(selector);
  const found = await deps.accounts.accountInOrganization(accountId, chosen);
  if (!found) throw invalidCredentials();
  return principalOf(found.account, null, found.membership, selector, "jwt");
}

export const organizationNotFound = (id: string) =>
  notFound("organization_not_found", `organization ${id} does not exist or you are not a member of it`, {
    details: { organization_id: id },
  });

/** The key's owner has since left the organization the key is bound to: the key no longer works anywhere. */
export const keyOrganizationLeft = () =>
  unauthenticated("key_organization_left", "this key's organization no longer includes its owner");

/** A selector that names no organization (not a UUID) is looked up as this id, which matches nothing. */
const NO_ORGANIZATION = "00000000-0000-0000-0000-000000000000";

/**
 * The organization id the explicit selector asks for (null when none was given). A malformed selector
 * is refused with 404 only after the credential has been checked, like an unknown one.
 */
function chosenOrganization(selector: string | undefined): string | null {
  if (selector === undefined || selector === "") return null;
  return isUuid(selector) ? selector.toLowerCase() : NO_ORGANIZATION;
}

/**
 * The principal from the membership looked up for the chosen organization (the selector's, else the
 * key's bound organization, else the personal one).
 */
function principalOf(
  account: Account,
  key: ApiKey | null,
  membership: MembershipRole | null,
  selector: string | undefined,
  method: ResolvedPrincipal["method"],
): ResolvedPrincipal {
  if (!membership) {
    if (selector !== undefined && selector !== "") throw organizationNotFound(selector);
    throw keyOrganizationLeft();
  }
  return { account, organizationId: membership.organizationId, role: membership.role, key, method, session: null };
}

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
  const chosen = chosenOrganization(selector);
  const found = await deps.organizations.membership(chosen ?? key?.organizationId ?? account.personalOrganizationId, account.id);
  return principalOf(account, key, found && { organizationId: found.id, role: found.role }, selector, method);
}
