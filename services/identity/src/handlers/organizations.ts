/** Organizations and memberships. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { organizationNotFound } from "../domain/authenticate.js";
import { addMember, createOrganization, listMembers, removeMember, updateMember } from "../domain/organizations.js";
import { isUuid } from "../domain/validation.js";
import { memberToProto, organizationContextToProto, organizationToProto, requireCaller } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<
  ServiceImpl<typeof IdentityService>,
  | "createOrganization"
  | "listOrganizations"
  | "getOrganizationContext"
  | "listMembers"
  | "addMember"
  | "updateMember"
  | "removeMember"
>;

export function organizationHandlers(deps: IdentityDeps): Impl {
  const orgs = deps.organizations;
  return {
    async createOrganization(req, context) {
      const org = await createOrganization(orgs, requireCaller(context), { name: req.name, slug: req.slug });
      return { organization: organizationToProto(org) };
    },

    async listOrganizations(_req, context) {
      const caller = requireCaller(context);
      return { organizations: (await orgs.organizationsOf(caller.accountId)).map(organizationToProto) };
    },

    async getOrganizationContext(req, context) {
      const caller = requireCaller(context);
      const id = req.orgId?.trim() || caller.organizationId;
      const membership = isUuid(id) ? await orgs.membership(id, caller.accountId) : null;
      if (!membership) throw organizationNotFound(id);
      return { org: organizationContextToProto(membership) };
    },

    async listMembers(req, context) {
      return { members: (await listMembers(orgs, requireCaller(context), req.organizationId)).map(memberToProto) };
    },

    async addMember(req, context) {
      const member = await addMember(deps, requireCaller(context), {
        organizationId: req.organizationId,
        accountId: req.member.case === "accountId" ? req.member.value : undefined,
        email: req.member.case === "email" ? req.member.value : undefined,
        role: req.role,
      });
      return { member: memberToProto(member) };
    },

    async updateMember(req, context) {
      const { member, before } = await updateMember(orgs, requireCaller(context), {
        organizationId: req.organizationId,
        accountId: req.accountId,
        role: req.role,
      });
      // Made a viewer: the member no longer calls the organization's tools. Live quota leases of its keys
      // there are dropped before answering, so the next call re-checks the role (as for a removal).
      if (member.role === "viewer" && before !== "viewer") {
        await deps.leases.drop({ accountId: req.accountId, organizationId: req.organizationId });
      }
      return { member: memberToProto(member) };
    },

    async removeMember(req, context) {
      await removeMember(orgs, requireCaller(context), { organizationId: req.organizationId, accountId: req.accountId });
      // The member's keys may still hold quota leases in this organization: dropped before answering,
      // so their very next call there is refused (see events/lease-drops.ts).
      await deps.leases.drop({ accountId: req.accountId, organizationId: req.organizationId });
      return { removed: true };
    },
  };
}
