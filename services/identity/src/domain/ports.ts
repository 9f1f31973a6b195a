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
}

export interface AccountStore {
  /** Account, personal organization (owner membership) and optionally a first key, in one transaction. */
  createAccount(account: NewAccount, firstKey?: Omit<NewApiKey, "accountId" | "organizationId">): Promise<Account>;
  accountById(id: string): Promise<Account | null>;
  humanByEmail(email: string): Promise<(Account & { passwordHash: string | null }) | null>;
  accountByExternalSubject(issuer: string, subject: string): Promise<Account | null>;
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
  /** The active (not revoked) key with this hash and its stored hash, for a constant-time check. */
  activeKeyByHash(hash: Buffer): Promise<{ key: ApiKey; storedHash: Buffer } | null>;
  keyById(id: string): Promise<ApiKey | null>;
  keysOfAccount(accountId: string, includeRevoked: boolean): Promise<ApiKey[]>;
  keysOfOrganization(organizationId: string, includeRevoked: boolean): Promise<ApiKey[]>;
  revokeKey(id: string, by: string): Promise<ApiKey | null>;
  touchKey(id: string): Promise<void>;
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
