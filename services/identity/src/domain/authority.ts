/**
 * Authority inside a tenant (docs/permissions.md): what a principal may do, decided here and nowhere
 * else. Authenticate writes the answer into the principal as grants; each service refuses an action
 * whose grant is missing. Keys made with a key are checked here field by field, so a chain of keys never
 * widens.
 */
import { permissionDenied } from "@toolport/kit/errors";
import type { ApiKey, Permissions, Role } from "./model.js";

/** An action beyond reading (proto `toolport.common.v1.Grant`). */
export type Grant =
  | "call_tools"
  | "manage_catalog"
  | "manage_credentials"
  | "manage_spending"
  | "manage_organizations"
  | "manage_keys";

export const allGrants: readonly Grant[] = [
  "call_tools",
  "manage_catalog",
  "manage_credentials",
  "manage_spending",
  "manage_organizations",
  "manage_keys",
];

/** What a viewer may not do in the organization it views: use its tools and credentials, or change them. */
const MEMBER_AND_ABOVE: ReadonlySet<Grant> = new Set(["call_tools", "manage_catalog", "manage_credentials"]);

/** What a restricted key keeps: calling, within its allow-lists and caps. */
const RESTRICTED_KEY_KEEPS: ReadonlySet<Grant> = new Set(["call_tools"]);

export const isRestricted = (key: Pick<ApiKey, "permissions"> | null): boolean => key?.permissions != null;

/** What `role` in the request's organization grants, before any key restriction. */
export function roleGrantsOf(role: Role): Grant[] {
  return allGrants.filter((g) => role !== "viewer" || !MEMBER_AND_ABOVE.has(g));
}

/** The grants of a caller with `role` in the request's organization, using `key` (null for a JWT). */
export function grantsOf(role: Role, key: Pick<ApiKey, "permissions"> | null): Grant[] {
  const restricted = isRestricted(key);
  return roleGrantsOf(role).filter((g) => !restricted || RESTRICTED_KEY_KEEPS.has(g));
}

/**
 * Whether a key may act in an organization other than the one it is bound to (with `svc-org-id`): only
 * an unrestricted key bound to its owner's personal organization. An organization's key stays in its
 * organization, so the organization's listing, revocation and removal of members cover everything it does.
 */
export function maySelectOrganization(
  key: Pick<ApiKey, "permissions" | "organizationId">,
  personalOrganizationId: string,
): boolean {
  return !isRestricted(key) && key.organizationId === personalOrganizationId;
}

export const keyOrganizationMismatch = (keyOrganization: string, selected: string) =>
  permissionDenied(
    "key_organization_mismatch",
    "this key acts only in the organization it belongs to; send no svc-org-id or that organization's id",
    { details: { key_organization_id: keyOrganization, organization_id: selected } },
  );

export const keyRestricted = (action: string) =>
  permissionDenied("key_restricted", `a key with permissions cannot ${action}; use an unrestricted key or a JWT`, {
    details: { action },
  });

export const insufficientRole = (role: Role, action: string) =>
  permissionDenied("insufficient_role", `a ${role} of this organization cannot ${action}`, { details: { role, action } });

/** Throws `key_restricted` when the caller's key lacks `grant` for its restrictions (role rules are the callers'). */
export function requireUnrestricted(caller: { keyPermissions: Permissions | null }, action: string): void {
  if (caller.keyPermissions) throw keyRestricted(action);
}

const exceeds = (field: string, message: string, details: Record<string, unknown> = {}) =>
  permissionDenied("permission_exceeds_key", `${message}: a key cannot make a key wider than itself`, {
    details: { field, ...details },
  });

const lower = (ids: readonly string[]) => new Set(ids.map((id) => id.toLowerCase()));

/**
 * Refuses, naming the first field, permissions wider than the making key's: lists must be subsets (null
 * only under null), caps no higher (null only under null), the confirmation flag kept.
 */
export function assertWithin(maker: Permissions | null, asked: Permissions | null): void {
  if (!maker) return;
  if (!asked) throw exceeds("permissions", "the making key has permissions, so the new key needs them too");
  const lists = [
    ["permissions.allowed_services", maker.allowedServices, asked.allowedServices],
    ["permissions.allowed_tools", maker.allowedTools, asked.allowedTools],
  ] as const;
  for (const [field, mine, theirs] of lists) {
    if (mine === null) continue;
    if (theirs === null) throw exceeds(field, `${field} must list ids, as the making key's does`);
    const allowed = lower(mine);
    const extra = theirs.filter((id) => !allowed.has(id.toLowerCase()));
    if (extra.length > 0) throw exceeds(field, `${field} names ids the making key does not allow`, { ids: extra });
  }
  const caps = [
    ["permissions.max_cost_per_call_cents", maker.maxCostPerCallCents, asked.maxCostPerCallCents],
    ["permissions.daily_spend_limit_cents", maker.dailySpendLimitCents, asked.dailySpendLimitCents],
  ] as const;
  for (const [field, mine, theirs] of caps) {
    if (mine === null) continue;
    if (theirs === null || theirs > mine) {
      throw exceeds(field, `${field} must be at most ${mine}, the making key's cap`, { max: Number(mine) });
    }
  }
  if (maker.requireConfirmation && !asked.requireConfirmation) {
    throw exceeds("permissions.require_confirmation", "permissions.require_confirmation must stay true");
  }
}

/** Refuses a new key's organization other than the making key's, for a key that cannot select others. */
export function assertSameOrganization(makerOrganization: string, asked: string): void {
  if (makerOrganization.toLowerCase() !== asked.toLowerCase()) {
    throw exceeds("organization_id", "organization_id must be the making key's own organization", {
      key_organization_id: makerOrganization,
    });
  }
}
