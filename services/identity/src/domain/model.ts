/** What identity's rules talk about, free of storage and wire formats. */

export type AccountKind = "agent" | "human";
export type Role = "owner" | "admin" | "member" | "viewer";
export const roles: readonly Role[] = ["owner", "admin", "member", "viewer"];
export type AgentType = "coding_agent" | "assistant" | "workflow" | "service" | "other";
export const agentTypes: readonly AgentType[] = ["coding_agent", "assistant", "workflow", "service", "other"];

export interface Account {
  id: string;
  kind: AccountKind;
  name: string;
  email: string;
  tier: string;
  personalOrganizationId: string;
  isPlatformAdmin: boolean;
  createdAt: Date;
}

export interface Organization {
  id: string;
  name: string;
  slug: string;
  isPersonal: boolean;
  createdAt: Date;
}

/** An organization seen by one member: with that member's role. */
export interface OrganizationMembership extends Organization {
  role: Role;
}

export interface Member {
  organizationId: string;
  accountId: string;
  name: string;
  email: string;
  role: Role;
  createdAt: Date;
}

/** Key permissions; null lists mean "all", caps null mean "no key cap". */
export interface Permissions {
  allowedServices: string[] | null;
  allowedTools: string[] | null;
  maxCostPerCallCents: bigint | null;
  dailySpendLimitCents: bigint | null;
  requireConfirmation: boolean;
}

export interface ApiKey {
  id: string;
  accountId: string;
  organizationId: string;
  name: string;
  keyPrefix: string;
  /** Null = unrestricted. */
  permissions: Permissions | null;
  agentName: string | null;
  agentType: AgentType | null;
  purpose: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** When it stops working by itself (a console key); null = never. */
  expiresAt: Date | null;
  /** The key it was made with; null when made with a JWT or at registration. */
  createdByKeyId: string | null;
  /** A console key: the sign-in (JWT jti) it was made for, or "left_over"; null otherwise. */
  consoleSession: string | null;
  /** A grant to an MCP client: the client's id (domain/oauth-server.ts); null for every other key. */
  oauthClientId: string | null;
}

/** `consoleSession` of a console key made before keys were tied to a sign-in. */
export const LEFT_OVER_CONSOLE_KEY = "left_over";

/** Who is calling, as the gateway resolved it. */
export interface Caller {
  accountId: string;
  organizationId: string;
  personalOrganizationId: string;
  keyId: string | null;
  /** The key's permissions; null for an unrestricted key or a JWT. */
  keyPermissions: Permissions | null;
  /** For a Toolport JWT: its sign-in (the token's jti) and when it ends. */
  session: { id: string; expiresAt: Date } | null;
}

/** The resolved caller of Authenticate, before it is written as a proto Principal. */
export interface ResolvedPrincipal {
  account: Account;
  organizationId: string;
  role: Role;
  key: ApiKey | null;
  method: "api_key" | "jwt";
  /** For a Toolport JWT: its sign-in (jti) and expiry. */
  session: { id: string; expiresAt: Date } | null;
  /** For an OAuth access token: when it expires. */
  credentialExpiresAt?: Date;
}
