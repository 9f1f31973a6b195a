/**
 * The one check every service makes before an action beyond reading: is its grant in the principal?
 * Identity alone decides the grants (services/identity/src/domain/authority.ts, docs/permissions.md);
 * a service never re-derives the rule, it only says why the grant is missing: the key's restrictions
 * took it away (403 `key_restricted`) or the role did (403 `insufficient_role`).
 */
import { Grant, OrgRole, type Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { type DomainError, permissionDenied } from "./errors.js";

export { Grant };

/** What a service keeps of the principal to check grants with. */
export interface Authority {
  grants: ReadonlySet<Grant>;
  /** What the role alone would grant: a grant in here but not in `grants` was taken by the key. */
  roleGrants: ReadonlySet<Grant>;
  /** The role in the request's organization ("owner", "admin", "member", "viewer"); null when unknown. */
  role: string | null;
}

const roleNames: Record<OrgRole, string | null> = {
  [OrgRole.UNSPECIFIED]: null,
  [OrgRole.OWNER]: "owner",
  [OrgRole.ADMIN]: "admin",
  [OrgRole.MEMBER]: "member",
  [OrgRole.VIEWER]: "viewer",
};

export function authorityOf(p: Principal): Authority {
  return { grants: new Set(p.grants), roleGrants: new Set(p.roleGrants), role: roleNames[p.orgRole] };
}

/**
 * Why the caller may not do an action needing `grant` (403), or null when it holds the grant; `action`
 * completes "cannot ..." in the message.
 */
export function grantRefusal(authority: Authority, grant: Grant, action: string): DomainError | null {
  if (authority.grants.has(grant)) return null;
  if (authority.roleGrants.has(grant)) {
    return permissionDenied("key_restricted", `a key with permissions cannot ${action}; use an unrestricted key or a JWT`, {
      details: { action },
    });
  }
  return permissionDenied(
    "insufficient_role",
    `a ${authority.role ?? "member without a role"} of this organization cannot ${action}`,
    {
      details: { role: authority.role, action },
    },
  );
}

/** Throws grantRefusal's 403 unless the caller holds `grant`. */
export function requireGrant(authority: Authority, grant: Grant, action: string): void {
  const refusal = grantRefusal(authority, grant, action);
  if (refusal) throw refusal;
}
