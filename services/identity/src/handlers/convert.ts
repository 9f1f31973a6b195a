/** Domain values <-> proto messages, in one place for every identity handler. */

import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { unauthenticated } from "@toolport/kit/errors";
import { jsonBytes } from "@toolport/kit/json-bytes";
import { principalKey } from "@toolport/kit/rpc";
import {
  AccountKind,
  AuthMethod,
  Grant,
  type KeyPermissions,
  KeyPermissionsSchema,
  OrgRole,
  type Principal,
  PrincipalSchema,
} from "@toolport/proto/toolport/common/v1/principal_pb";
import {
  type Account as AccountMsg,
  AccountSchema,
  AgentType,
  type ApiKey as ApiKeyMsg,
  ApiKeySchema,
  ConsoleKey,
  type GettingStarted,
  GettingStartedSchema,
  type Membership,
  MembershipSchema,
  type OrganizationContext,
  OrganizationContextSchema,
  type Organization as OrganizationMsg,
  OrganizationSchema,
} from "@toolport/proto/toolport/identity/v1/identity_resources_pb";
import { type CreateApiKeyResponse, CreateApiKeyResponseSchema } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { type Grant as DomainGrant, grantsOf, roleGrantsOf } from "../domain/authority.js";
import type { Guide } from "../domain/guide.js";
import {
  type Account,
  type ApiKey,
  type Caller,
  type AgentType as DomainAgentType,
  LEFT_OVER_CONSOLE_KEY,
  type Member,
  type OrganizationMembership,
  type Permissions,
  type ResolvedPrincipal,
  type Role,
} from "../domain/model.js";

const ts = (d: Date | null): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);

const roleToProto: Record<Role, OrgRole> = {
  owner: OrgRole.OWNER,
  admin: OrgRole.ADMIN,
  member: OrgRole.MEMBER,
  viewer: OrgRole.VIEWER,
};

const agentTypeToProto: Record<DomainAgentType, AgentType> = {
  coding_agent: AgentType.CODING_AGENT,
  assistant: AgentType.ASSISTANT,
  workflow: AgentType.WORKFLOW,
  service: AgentType.SERVICE,
  other: AgentType.OTHER,
};

export const agentType = (t: DomainAgentType | null): AgentType => (t ? agentTypeToProto[t] : AgentType.UNSPECIFIED);

/** The caller the gateway authenticated; UNAUTHENTICATED when the request carries none. */
export function requireCaller(context: HandlerContext): Caller {
  const p = context.values.get(principalKey);
  if (!p?.accountId) throw unauthenticated("unauthenticated", "this call needs an authenticated caller");
  return {
    accountId: p.accountId,
    organizationId: p.organizationId,
    personalOrganizationId: p.personalOrganizationId,
    keyId: p.keyId ?? null,
    keyPermissions: permissionsFromProto(p.keyPermissions),
    session: p.sessionId && p.sessionExpiresAt ? { id: p.sessionId, expiresAt: timestampDate(p.sessionExpiresAt) } : null,
  };
}

export function permissionsToProto(p: Permissions | null): KeyPermissions | undefined {
  if (!p) return undefined;
  return create(KeyPermissionsSchema, {
    allowedServices: p.allowedServices ? { values: p.allowedServices } : undefined,
    allowedTools: p.allowedTools ? { values: p.allowedTools } : undefined,
    maxCostPerCallCents: p.maxCostPerCallCents ?? undefined,
    dailySpendLimitCents: p.dailySpendLimitCents ?? undefined,
    requireConfirmation: p.requireConfirmation,
  });
}

export function permissionsFromProto(p: KeyPermissions | undefined): Permissions | null {
  if (!p) return null;
  return {
    allowedServices: p.allowedServices ? [...p.allowedServices.values] : null,
    allowedTools: p.allowedTools ? [...p.allowedTools.values] : null,
    maxCostPerCallCents: p.maxCostPerCallCents ?? null,
    dailySpendLimitCents: p.dailySpendLimitCents ?? null,
    requireConfirmation: p.requireConfirmation,
  };
}

export function principalToProto(r: ResolvedPrincipal): Principal {
  return create(PrincipalSchema, {
    accountId: r.account.id,
    organizationId: r.organizationId,
    keyId: r.key?.id,
    authMethod: r.method === "api_key" ? AuthMethod.API_KEY : AuthMethod.JWT,
    orgRole: roleToProto[r.role],
    isPlatformAdmin: r.account.isPlatformAdmin,
    keyPermissions: permissionsToProto(r.key?.permissions ?? null),
    tier: r.account.tier,
    agentName: r.key?.agentName ?? undefined,
    accountKind: r.account.kind === "agent" ? AccountKind.AGENT : AccountKind.HUMAN,
    personalOrganizationId: r.account.personalOrganizationId,
    grants: grantsOf(r.role, r.key).map((g) => grantToProto[g]),
    roleGrants: roleGrantsOf(r.role).map((g) => grantToProto[g]),
    sessionId: r.session?.id,
    sessionExpiresAt: ts(r.session?.expiresAt ?? null),
    credentialExpiresAt: ts(r.credentialExpiresAt ?? null),
  });
}

const grantToProto: Record<DomainGrant, Grant> = {
  call_tools: Grant.CALL_TOOLS,
  manage_catalog: Grant.MANAGE_CATALOG,
  manage_credentials: Grant.MANAGE_CREDENTIALS,
  manage_spending: Grant.MANAGE_SPENDING,
  manage_organizations: Grant.MANAGE_ORGANIZATIONS,
  manage_keys: Grant.MANAGE_KEYS,
};

export function accountToProto(a: Account): AccountMsg {
  return create(AccountSchema, {
    id: a.id,
    kind: a.kind === "agent" ? AccountKind.AGENT : AccountKind.HUMAN,
    name: a.name,
    email: a.email,
    tier: a.tier,
    personalOrganizationId: a.personalOrganizationId,
    isPlatformAdmin: a.isPlatformAdmin,
    createdAt: ts(a.createdAt),
  });
}

export function apiKeyToProto(k: ApiKey): ApiKeyMsg {
  return create(ApiKeySchema, {
    id: k.id,
    keyPrefix: k.keyPrefix,
    name: k.name,
    createdAt: ts(k.createdAt),
    lastUsed: ts(k.lastUsedAt),
    permissions: permissionsToProto(k.permissions),
    organizationId: k.organizationId,
    accountId: k.accountId,
    agentName: k.agentName ?? undefined,
    agentType: agentType(k.agentType),
    purpose: k.purpose ?? undefined,
    revokedAt: ts(k.revokedAt),
    expiresAt: ts(k.expiresAt),
    createdByKeyId: k.createdByKeyId ?? undefined,
    consoleKey: consoleKeyOf(k),
    oauthClientId: k.oauthClientId ?? undefined,
  });
}

export function consoleKeyOf(k: ApiKey): ConsoleKey {
  if (k.consoleSession === null) return ConsoleKey.UNSPECIFIED;
  return k.consoleSession === LEFT_OVER_CONSOLE_KEY ? ConsoleKey.LEFT_OVER : ConsoleKey.SESSION;
}

/** A key as CreateApiKey and IssueConsoleKey answer it: with its plaintext, shown once. */
export function createdKeyToProto(key: ApiKey, plaintext: string): CreateApiKeyResponse {
  return create(CreateApiKeyResponseSchema, {
    id: key.id,
    key: plaintext,
    keyPrefix: key.keyPrefix,
    name: key.name,
    createdAt: ts(key.createdAt),
    lastUsed: undefined,
    permissions: permissionsToProto(key.permissions),
    organizationId: key.organizationId,
    agentName: key.agentName ?? undefined,
    agentType: agentType(key.agentType),
    purpose: key.purpose ?? undefined,
    expiresAt: ts(key.expiresAt),
    createdByKeyId: key.createdByKeyId ?? undefined,
    consoleKey: consoleKeyOf(key),
  });
}

export function organizationToProto(o: OrganizationMembership): OrganizationMsg {
  return create(OrganizationSchema, {
    id: o.id,
    name: o.name,
    slug: o.slug,
    isPersonal: o.isPersonal,
    role: roleToProto[o.role],
    createdAt: ts(o.createdAt),
  });
}

export function organizationContextToProto(o: OrganizationMembership): OrganizationContext {
  return create(OrganizationContextSchema, { orgId: o.id, orgName: o.name, orgSlug: o.slug, role: roleToProto[o.role] });
}

export function memberToProto(m: Member): Membership {
  return create(MembershipSchema, {
    organizationId: m.organizationId,
    accountId: m.accountId,
    name: m.name,
    email: m.email,
    role: roleToProto[m.role],
    createdAt: ts(m.createdAt),
  });
}

export function guideToProto(g: Guide): GettingStarted {
  return create(GettingStartedSchema, {
    freeTier: g.freeTier,
    endpoints: g.endpoints,
    tryFirst: g.tryFirst.map((t) => ({
      toolId: t.toolId,
      name: t.name,
      service: t.service,
      description: t.description,
      parametersJson: jsonBytes(t.parameters),
      executeJson: jsonBytes(t.execute),
    })),
    steps: g.steps,
    readNext: g.readNext,
  });
}

export { ts };
