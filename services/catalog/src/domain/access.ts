/**
 * Who sees what and who may change what. Visibility (DESIGN.md, our decisions where the spec is silent):
 * - public: everyone, anonymous callers included;
 * - internal: every signed-in caller of this deployment, never anonymous ones;
 * - private and local_only: members of the owning organization only.
 * Platform services (built-in and demo) have no organization and are public.
 * Publishing: platform admins may manage every service; owners and admins of an organization manage
 * that organization's services.
 */
import { permissionDenied } from "@toolport/kit/errors";
import { type Authority, Grant, requireGrant } from "@toolport/kit/grants";
import type { ServiceRecord } from "./model.js";

export type OrgRole = "owner" | "admin" | "member" | "viewer" | null;

/** The signed-in caller, as the catalog needs it; null = anonymous. */
export interface Caller {
  accountId: string;
  organizationId: string;
  orgRole: OrgRole;
  isPlatformAdmin: boolean;
  /** Null = all. */
  allowedServices: string[] | null;
  /** Null = all. */
  allowedTools: string[] | null;
  requireConfirmation: boolean;
  /** What identity granted (docs/permissions.md): checked before every change. */
  authority: Authority;
}

/** Publishing, editing, reimporting or deleting services and tools; registering OAuth clients. */
export function assertMayManageCatalog(caller: Caller, action: string): void {
  requireGrant(caller.authority, Grant.MANAGE_CATALOG, action);
}

/** Connecting or deleting stored credentials and OAuth connections. */
export function assertMayManageCredentials(caller: Caller, action: string): void {
  requireGrant(caller.authority, Grant.MANAGE_CREDENTIALS, action);
}

/** Whether a caller may see the service on its authenticated routes (list, search, get). */
export function canSee(service: ServiceRecord, caller: Caller | null): boolean {
  switch (service.visibility) {
    case "public":
      return true;
    case "internal":
      return caller !== null;
    default:
      return caller !== null && (caller.isPlatformAdmin || service.organizationId === caller.organizationId);
  }
}

/** Whether the service appears on the anonymous routes (/services/public..., public search). */
export function isPublic(service: ServiceRecord): boolean {
  return service.visibility === "public";
}

/** Whether the caller acts for its whole organization: an owner or admin there, or a platform admin. */
export function administersOrganization(caller: Caller): boolean {
  return caller.isPlatformAdmin || caller.orgRole === "owner" || caller.orgRole === "admin";
}

export function canManage(service: ServiceRecord, caller: Caller | null): boolean {
  if (!caller) return false;
  if (caller.isPlatformAdmin) return true;
  return (
    service.organizationId !== null &&
    service.organizationId === caller.organizationId &&
    (caller.orgRole === "owner" || caller.orgRole === "admin")
  );
}

export function assertCanManage(service: ServiceRecord, caller: Caller | null): void {
  if (!canManage(service, caller)) {
    throw permissionDenied(
      "not_service_owner",
      "only the service's organization owners and admins, or platform admins, may change it",
      {
        details: { service_id: service.id },
      },
    );
  }
}

/** Whether the caller may publish into the organization (owner or admin there, or platform admin). */
export function assertCanPublishInto(organizationId: string, caller: Caller): void {
  if (caller.isPlatformAdmin) return;
  if (organizationId === caller.organizationId && (caller.orgRole === "owner" || caller.orgRole === "admin")) return;
  throw permissionDenied("not_organization_admin", "publishing needs the owner or admin role in the organization", {
    details: { organization_id: organizationId },
  });
}
