/** The gateway's principal (gRPC metadata) -> the catalog's Caller. */
import type { HandlerContext } from "@connectrpc/connect";
import { authorityOf } from "@toolport/kit/grants";
import { principalKey } from "@toolport/kit/rpc";
import { OrgRole, type Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import type { Caller, OrgRole as DomainOrgRole } from "../domain/access.js";

const roles: Record<OrgRole, DomainOrgRole> = {
  [OrgRole.UNSPECIFIED]: null,
  [OrgRole.OWNER]: "owner",
  [OrgRole.ADMIN]: "admin",
  [OrgRole.MEMBER]: "member",
  [OrgRole.VIEWER]: "viewer",
};

export function callerFromPrincipal(p: Principal | undefined): Caller | null {
  if (!p?.accountId) return null;
  const perms = p.keyPermissions;
  return {
    accountId: p.accountId,
    organizationId: p.organizationId || p.personalOrganizationId,
    orgRole: roles[p.orgRole] ?? null,
    isPlatformAdmin: p.isPlatformAdmin,
    allowedServices: perms?.allowedServices ? perms.allowedServices.values : null,
    allowedTools: perms?.allowedTools ? perms.allowedTools.values : null,
    requireConfirmation: perms?.requireConfirmation ?? false,
    authority: authorityOf(p),
  };
}

export function callerOf(context: HandlerContext): Caller | null {
  return callerFromPrincipal(context.values.get(principalKey));
}
