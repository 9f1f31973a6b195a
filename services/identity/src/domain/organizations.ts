/**
 * Organizations and memberships. Roles: owner and admin manage members and revoke the
 * organization's keys; member uses it; viewer reads. Only an owner makes or unmakes an owner, and an
 * organization always keeps at least one owner. Non-members learn nothing: 404, as for an unknown id.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { conflict, failedPrecondition, notFound, permissionDenied } from "@toolport/kit/errors";
import { organizationNotFound } from "./authenticate.js";
import { requireUnrestricted } from "./authority.js";
import type { Caller, Member, OrganizationMembership, Role } from "./model.js";
import type { AccountStore, OrganizationStore } from "./ports.js";
import { invalidField, isUuid, parseRole, requireText } from "./validation.js";

export function slugify(name: string): string {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return base || "org";
}

/** A unique slug for a personal organization or an unslugged name. */
export function uniqueSlug(name: string): string {
  return `${slugify(name)}-${randomBytes(3).toString("hex")}`;
}

export async function createOrganization(
  orgs: OrganizationStore,
  caller: Caller,
  input: { name: string; slug: string | undefined },
): Promise<OrganizationMembership> {
  requireUnrestricted(caller, "create organizations");
  const name = requireText("name", input.name, 100);
  let slug: string;
  if (input.slug?.trim()) {
    slug = input.slug.trim();
    if (!/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(slug)) {
      throw invalidField("slug", "must be 1-64 lowercase letters, digits and inner hyphens");
    }
  } else {
    slug = uniqueSlug(name);
  }
  try {
    return await orgs.createOrganization({ id: randomUUID(), name, slug, ownerId: caller.accountId });
  } catch (err) {
    if ((err as { code?: string }).code === "23505")
      throw conflict("slug_taken", `the slug ${slug} is taken`, { details: { slug } });
    throw err;
  }
}

async function requireMembership(orgs: OrganizationStore, caller: Caller, orgId: string): Promise<OrganizationMembership> {
  const membership = isUuid(orgId) ? await orgs.membership(orgId, caller.accountId) : null;
  if (!membership) throw organizationNotFound(orgId);
  return membership;
}

async function requireManager(orgs: OrganizationStore, caller: Caller, orgId: string): Promise<OrganizationMembership> {
  const membership = await requireMembership(orgs, caller, orgId);
  if (membership.role !== "owner" && membership.role !== "admin") {
    throw permissionDenied("insufficient_role", "only owners and admins manage members", { details: { role: membership.role } });
  }
  return membership;
}

export async function listMembers(orgs: OrganizationStore, caller: Caller, orgId: string): Promise<Member[]> {
  await requireMembership(orgs, caller, orgId);
  return orgs.members(orgId);
}

export async function addMember(
  deps: { organizations: OrganizationStore; accounts: AccountStore },
  caller: Caller,
  input: { organizationId: string; accountId: string | undefined; email: string | undefined; role: string },
): Promise<Member> {
  requireUnrestricted(caller, "change organization membership");
  const role = parseRole(input.role);
  const mine = await requireManager(deps.organizations, caller, input.organizationId);
  if (role === "owner" && mine.role !== "owner") throw permissionDenied("insufficient_role", "only owners add owners");
  let accountId: string | undefined;
  if (input.accountId) {
    accountId = isUuid(input.accountId) ? (await deps.accounts.accountById(input.accountId))?.id : undefined;
  } else if (input.email) {
    accountId = (await deps.accounts.humanByEmail(input.email.trim()))?.id;
  } else {
    throw invalidField("account_id", "account_id or email is required");
  }
  if (!accountId) throw notFound("account_not_found", "no account matches; the person must sign up first");
  if (await deps.organizations.membership(input.organizationId, accountId)) {
    throw conflict("already_a_member", "that account is already a member; change its role instead");
  }
  return deps.organizations.addMember(input.organizationId, accountId, role);
}

export async function updateMember(
  orgs: OrganizationStore,
  caller: Caller,
  input: { organizationId: string; accountId: string; role: string },
): Promise<{ member: Member; before: Role }> {
  requireUnrestricted(caller, "change organization membership");
  const role: Role = parseRole(input.role);
  const mine = await requireManager(orgs, caller, input.organizationId);
  const target = isUuid(input.accountId) ? await orgs.membership(input.organizationId, input.accountId) : null;
  if (!target) throw notFound("member_not_found", "that account is not a member of this organization");
  if ((role === "owner" || target.role === "owner") && mine.role !== "owner") {
    throw permissionDenied("insufficient_role", "only owners make or unmake owners");
  }
  if (target.role === "owner" && role !== "owner" && (await orgs.ownerCount(input.organizationId)) <= 1) {
    throw failedPrecondition("last_owner", "an organization keeps at least one owner");
  }
  const updated = await orgs.updateMember(input.organizationId, input.accountId, role);
  if (!updated) throw notFound("member_not_found", "that account is not a member of this organization");
  return { member: updated, before: target.role };
}

export async function removeMember(
  orgs: OrganizationStore,
  caller: Caller,
  input: { organizationId: string; accountId: string },
): Promise<void> {
  requireUnrestricted(caller, "change organization membership");
  const self = input.accountId === caller.accountId;
  const mine = self
    ? await requireMembership(orgs, caller, input.organizationId)
    : await requireManager(orgs, caller, input.organizationId);
  if (mine.isPersonal) throw failedPrecondition("personal_organization", "a personal organization keeps its owner");
  const target = isUuid(input.accountId) ? await orgs.membership(input.organizationId, input.accountId) : null;
  if (!target) throw notFound("member_not_found", "that account is not a member of this organization");
  if (target.role === "owner") {
    if (!self && mine.role !== "owner") throw permissionDenied("insufficient_role", "only owners remove owners");
    if ((await orgs.ownerCount(input.organizationId)) <= 1) {
      throw failedPrecondition("last_owner", "an organization keeps at least one owner");
    }
  }
  await orgs.removeMember(input.organizationId, input.accountId);
}
