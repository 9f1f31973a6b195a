/**
 * What the rules need from the outside, as interfaces: the store (Postgres) and the two services
 * identity calls (billing for wallets, catalog for starter tools and allow-list checks).
 */
import type { Account, AccountKind, AgentType, ApiKey, Member, OrganizationMembership, Permissions, Role } from "./model.js";

export interface NewAccount {
  id: string;
  kind: AccountKind;
  name: string;
  email: string;
  passwordHash: string | null;
  externalIssuer: string | null;
  externalSubject: string | null;
  registeredIp: string | null;
}

export interface NewApiKey {
  id: string;
  accountId: string;
  organizationId: string;
  name: string;
  hash: Buffer;
  prefix: string;
  permissions: Permissions | null;
  agentName: string | null;
  agentType: AgentType | null;
  purpose: string | null;
  createdByKeyId?: string | null;
  expiresAt?: Date | null;
  consoleSession?: string | null;
  /** A grant to an MCP client (domain/oauth-server.ts). */
  oauthClientId?: string | null;
}

export interface KeyUsageSummary {
  calls: bigint;
  successes: bigint;
  p50Seconds: number | null;
  paidCalls: bigint;
  spentCents: bigint;
  firstCallAt: Date | null;
  lastCallAt: Date | null;
  topTools: { toolId: string; toolName: string; serviceName: string; calls: bigint; successes: bigint }[];
  /**
   * One entry per UTC date the window touches (window days + 1: the first and the last are partial), oldest
   * first, days without calls included; the days' calls add up to `calls`.
   */
  daily: { date: string; calls: bigint; successes: bigint; p50Seconds: number | null }[];
}

export interface AccountStore {
  /** Account, personal organization (owner membership) and optionally a first key, in one transaction. */
  createAccount(account: NewAccount, firstKey?: Omit<NewApiKey, "accountId" | "organizationId">): Promise<Account>;
  accountById(id: string): Promise<Account | null>;
  humanByEmail(email: string): Promise<(Account & { passwordHash: string | null }) | null>;
  accountByExternalSubject(issuer: string, subject: string): Promise<Account | null>;
  /**
   * Authenticate's JWT path in one query: the account and its membership of `organizationId` (its
   * personal organization when null); membership null when it is not a member. Null: no such account.
   */
  accountInOrganization(accountId: string, organizationId: string | null): Promise<AccountInOrganization | null>;
}

/** An organization the caller belongs to, as Authenticate needs it. */
export interface MembershipRole {
  organizationId: string;
  role: Role;
}

export interface AccountInOrganization {
  account: Account;
  membership: MembershipRole | null;
}

/** Authenticate's API-key path: the active key, its stored hash, its account and the chosen membership. */
export interface KeyPrincipal extends AccountInOrganization {
  key: ApiKey;
  storedHash: Buffer;
  /** Whether the key's owner is still a member of the organization the key is bound to. */
  boundMembership: boolean;
}

export interface OrganizationStore {
  /** The organization and the account's role in it; null when either is unknown or not a member. */
  membership(organizationId: string, accountId: string): Promise<OrganizationMembership | null>;
  organizationExists(organizationId: string): Promise<boolean>;
  createOrganization(input: { id: string; name: string; slug: string; ownerId: string }): Promise<OrganizationMembership>;
  organizationsOf(accountId: string): Promise<OrganizationMembership[]>;
  members(organizationId: string): Promise<Member[]>;
  addMember(organizationId: string, accountId: string, role: Role): Promise<Member>;
  updateMember(organizationId: string, accountId: string, role: Role): Promise<Member | null>;
  removeMember(organizationId: string, accountId: string): Promise<boolean>;
  ownerCount(organizationId: string): Promise<number>;
}

export interface KeyStore {
  insertKey(key: NewApiKey): Promise<ApiKey>;
  /**
   * Authenticate's API-key path in one round trip: the active (not revoked) key with this hash, its
   * stored hash (for a constant-time check), its account, and the account's membership of
   * `organizationId` (the key's own organization when null; membership null when not a member).
   * When the membership exists, the same statement records the use in `last_used_at` if the stored
   * value is older than LAST_USED_RESOLUTION_SECONDS (or unset). Null: no active key has this hash.
   */
  authenticateKey(hash: Buffer, organizationId: string | null): Promise<KeyPrincipal | null>;
  /** The same as authenticateKey, for the grant key of an active OAuth access token with this hash, and its expiry. */
  authenticateAccessToken(hash: Buffer, organizationId: string | null): Promise<(KeyPrincipal & { tokenExpiresAt: Date }) | null>;
  keyById(id: string): Promise<ApiKey | null>;
  keysOfAccount(accountId: string, includeRevoked: boolean): Promise<ApiKey[]>;
  keysOfOrganization(organizationId: string, includeRevoked: boolean): Promise<ApiKey[]>;
  /** Revokes the key and every key made with it (docs/permissions.md); the keys revoked now. */
  revokeKey(id: string, by: string): Promise<ApiKey[]>;
  /** The key and every key made with it, directly or through keys it made (newest first). */
  keyAndDescendants(id: string): Promise<ApiKey[]>;
  /** Inserts the sign-in's console key unless a key with its hash exists; either way the stored row. */
  issueConsoleKey(key: NewApiKey): Promise<ApiKey | null>;
  /** Revokes the account's console keys of one sign-in and every key made with them; the keys revoked. */
  revokeSessionKeys(accountId: string, session: string): Promise<ApiKey[]>;
  usageOfKey(keyId: string, days: number): Promise<KeyUsageSummary>;
}

export interface WalletInfo {
  walletId: string;
  balanceUsdc: string;
  depositAddress: string | null;
}

export interface WalletPort {
  /** Creates (or returns) the account's wallet. Throws DomainError wallet_unavailable when it cannot. */
  createWallet(accountId: string): Promise<WalletInfo>;
}

export interface StarterTool {
  toolId: string;
  name: string;
  service: string;
  description: string;
  parameters: Record<string, unknown>;
  exampleInput: Record<string, unknown>;
}

export interface CatalogPort {
  /** Up to `limit` credential-free tools; [] (and a warning logged) when the catalog cannot answer. */
  starterTools(limit: number): Promise<StarterTool[]>;
  /** Ids that name nothing. Throws DomainError catalog_unavailable when the catalog cannot answer. */
  unknownIds(serviceIds: string[], toolIds: string[]): Promise<{ services: string[]; tools: string[] }>;
}
