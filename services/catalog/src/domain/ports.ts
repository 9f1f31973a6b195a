/**
 * What the catalog's use cases need from storage, grouped by job; implemented in store/ (catalog-port.ts
 * `pgCatalogStore`) and built once in src/deps.ts. Methods take and return domain records (model.ts) and
 * the shapes below, never rows or clients. A use case that writes does it in one `transaction`, through
 * the `CatalogTx` it is handed: what it writes there, its tool-changed events included, commits together.
 */

import type {
  ConnectionStatus,
  CredentialScope,
  CredentialSummary,
  CredentialType,
  OAuthClientRecord,
  OAuthFlowName,
  ServiceRecord,
  ToolDraft,
  ToolRecord,
  ToolWithService,
} from "./model.js";
import type { ReliabilityFacts } from "./reliability.js";

/** A page of a keyset-paged list. */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page; absent on the last one. */
  next?: string;
}

/** Who reads: a signed-in caller (what its key lets it call decides readiness), or anonymous (null). */
export interface Reader {
  accountId: string;
  organizationId: string;
  isPlatformAdmin: boolean;
  /** Null = all. */
  allowedServices: string[] | null;
  /** Null = all. */
  allowedTools: string[] | null;
}

/** Who asks, for the visibility filter. */
export interface Viewer {
  organizationId: string;
  isPlatformAdmin: boolean;
}

export interface ToolFilter {
  serviceId?: string;
  toolIds?: string[];
  /** Include inactive tools and tools of retired services (publisher views, get by id). */
  includeUnavailable?: boolean;
  /** Leave out input_schema, output, request body schema and example (search candidates). */
  light?: boolean;
}

/** One tool a pair of allow-lists lets through, with its service's name. */
export interface CallableTool {
  id: string;
  name: string;
  serviceId: string;
  serviceName: string;
}

/** Reads of tools by id, slug or service. */
export interface ToolStore {
  /** By id or slug, with its service; any status. */
  findTool(idOrSlug: string): Promise<ToolWithService | null>;
  listToolsWithService(filter?: ToolFilter): Promise<ToolWithService[]>;
  /** Ids (and revisions) of a service's tools. */
  toolIdsOfService(serviceId: string): Promise<{ id: string; revision: bigint }[]>;
  /** Which of the given ids name no service / no tool. Non-UUIDs name nothing. */
  unknownIds(table: "services" | "tools", ids: string[]): Promise<string[]>;
  /** The OAuth scopes the active tools of a service name for one security scheme, without repeats. */
  scopesOfServiceTools(serviceId: string, schemeName: string): Promise<string[]>;
  /**
   * The active, unsunset tools of live services the viewer sees that pass both allow-lists (null = all),
   * counted, and the first `limit` by service name then tool name.
   */
  callableTools(
    who: Viewer,
    services: string[] | null,
    tools: string[] | null,
    limit: number,
  ): Promise<{ count: bigint; tools: CallableTool[] }>;
  /** The listed tools the viewer sees, each with its service's name. */
  toolsWithServices(who: Viewer, ids: string[]): Promise<CallableTool[]>;
  /** Names of the listed services the viewer sees, by id (lower case). */
  serviceNamesById(who: Viewer, ids: string[]): Promise<Map<string, string>>;
}

export interface ServiceStats {
  toolCount: number;
  totalExecutions: number;
  successRate: number;
  calls30d: number;
}

/** Reads of services. */
export interface ServiceStore {
  /** By id or slug; any status and visibility. */
  findService(idOrSlug: string): Promise<ServiceRecord | null>;
  listServices(filter?: { organizationId?: string; visibility?: string }): Promise<ServiceRecord[]>;
  /** Active, not-sunset tool counts and execution figures per service. */
  serviceStats(serviceIds: string[]): Promise<Map<string, ServiceStats>>;
  /** Public, not retired services whose documentation or base URL's host is `domain` or under it, by name (50). */
  servicesOnDomain(domain: string): Promise<{ id: string; name: string }[]>;
}

export interface ToolListFilter {
  /** Only the public surface (anonymous routes), whoever asks. */
  publicOnly?: boolean;
  /** Only tools of this service (its id). */
  serviceId?: string;
  /** Only tools carrying every one of these tags. */
  tags?: string[];
  /** Only tools the reader can call now. */
  readyOnly?: boolean;
}

export interface UsableFilter {
  toolIds?: string[];
  serviceIds?: string[];
  /** Tools carrying at least one of these tags. */
  anyTag?: string[];
  /** Tools that run with no credential and no funding. */
  credentialFree?: boolean;
  /** Leave these out (already chosen). */
  exceptIds?: string[];
}

/**
 * The read side's bounded pages (store/tool-pages.ts): visibility, listability, readiness order, filters
 * and paging happen in storage, and only the rows of the page come back.
 */
export interface ToolPages {
  /** One page of the listable tools the reader sees, in the list order (GET /tools, blank search). */
  listToolPage(
    reader: Reader | null,
    filter: ToolListFilter,
    page: { limit: number; cursor?: string },
  ): Promise<Page<ToolWithService>>;
  /** A public service's listable tools by name. */
  serviceToolPage(serviceId: string, page: { limit: number; cursor?: string }): Promise<Page<ToolWithService>>;
  publicServicePage(page: { limit: number; cursor?: string }): Promise<Page<ServiceRecord>>;
  /**
   * At most `limit` listable tools the reader sees that pass the filter, in the list order, as light
   * records; with `toolIds`, in no particular order.
   */
  usableTools(reader: Reader | null, filter: UsableFilter, limit: number): Promise<ToolWithService[]>;
  /** The full Tool shape of the given tools (kept by version between requests). */
  pageToolsByIds(ids: string[]): Promise<ToolWithService[]>;
  /**
   * Up to `limit` credential-free, free, public tools for a first call, one per service first: built-ins,
   * then verified services', then the rest; within each the most used (`popular`) then the oldest.
   */
  starterTools(popular: string[], limit: number): Promise<ToolWithService[]>;
  /**
   * The tool named `name` (case-insensitive) that the reader sees, not past its sunset date: an active tool
   * of a live service before others, a real service's before a sample-data one's, then the oldest.
   */
  toolNamed(reader: Reader | null, name: string): Promise<ToolWithService | null>;
  /** Ids of at most `limit` listable tools the reader sees named exactly `query` (case-insensitive) or slugged so. */
  exactMatchIds(reader: Reader | null, publicOnly: boolean, query: string, limit: number): Promise<string[]>;
}

/** A stored credential: the sealed material and the facts shown to its owner. */
export interface SealedCredential extends CredentialSummary {
  id: string;
  ownerId: string;
  sealed: Buffer;
  /** `broken` once an OAuth provider refused its refresh: it no longer serves calls. */
  status: ConnectionStatus;
  brokenReason: string | null;
  oauthFlow: OAuthFlowName | null;
  oauthScopes: string[];
  /** Scopes an upstream asked for (403 insufficient_scope) beyond the granted ones (step-up). */
  oauthWantedScopes: string[];
  expiresAt: Date | null;
  refreshedAt: Date | null;
}

export interface CredentialWrite {
  serviceId: string;
  scope: CredentialScope;
  ownerId: string;
  type: CredentialType;
  schemeName: string | null;
  isReference: boolean;
  hint: string;
  sealed: Buffer;
  createdBy: string;
  /** For an OAuth connection: its flow, granted scopes and the access token's expiry. */
  oauth?: { flow: OAuthFlowName; scopes: string[]; expiresAt: Date | null };
}

/** Stored upstream credentials. */
export interface CredentialStore {
  /** Replaces the credential of the same service, scope and owner (a broken connection becomes active again). */
  putCredential(c: CredentialWrite): Promise<SealedCredential>;
  /** The caller's and its organization's credentials for a service, caller-scoped first. */
  credentialsFor(serviceId: string, accountId: string, organizationId: string): Promise<SealedCredential[]>;
  /** Ids of the services among `serviceIds` where the caller or its organization has a working credential. */
  servicesWithCredential(serviceIds: string[], accountId: string, organizationId: string): Promise<Set<string>>;
  deleteCredential(serviceId: string, scope: CredentialScope, ownerId: string): Promise<boolean>;
}

export interface PendingAuthorization {
  stateHash: string;
  serviceId: string;
  scope: CredentialScope;
  ownerId: string;
  accountId: string;
  sealedVerifier: Buffer;
  redirectUri: string;
  returnTo: string;
  scopes: string[];
  expiresAt: Date;
}

/** An OAuth connection as stored: a credential of type oauth2, with its service's name. */
export interface StoredConnection extends SealedCredential {
  serviceName: string;
  /** The flow that made it (an oauth2 row always has one). */
  flow: OAuthFlowName;
}

export type OAuthClientWrite = Omit<OAuthClientRecord, "createdAt" | "updatedAt">;

/** Storing a service's OAuth client: on the store, and inside a publishing transaction. */
export interface OAuthClientWrites {
  /** Registers (or replaces) the service's OAuth client. */
  putOAuthClient(c: OAuthClientWrite, createdBy: string): Promise<OAuthClientRecord>;
}

/** OAuth client registrations, started authorizations and connections. */
export interface OAuthStore extends OAuthClientWrites {
  findOAuthClient(serviceId: string): Promise<OAuthClientRecord | null>;
  deleteOAuthClient(serviceId: string): Promise<boolean>;
  /** Records a started authorization (and clears long-expired ones). */
  insertPendingAuthorization(p: PendingAuthorization): Promise<void>;
  /** Takes (deletes and returns) a started authorization: a state is good for one callback only. */
  takePendingAuthorization(stateHash: string): Promise<PendingAuthorization | null>;
  /** The OAuth connections of a caller and of its organization, newest first. */
  connectionsOf(accountId: string, organizationId: string): Promise<StoredConnection[]>;
  findConnection(id: string): Promise<StoredConnection | null>;
  /** Adds scopes an upstream asked for to the connection's wanted ones (step-up). */
  addWantedScopes(id: string, scopes: string[]): Promise<void>;
  markConnectionBroken(id: string, reason: string): Promise<void>;
  deleteConnection(id: string): Promise<boolean>;
}

/** Which catalog service was imported from which entry of the APIs.guru directory. */
export interface DirectoryImports {
  /** The service imported from each of `entries` that has one (entry -> service id). */
  directoryImports(entries: readonly string[]): Promise<Map<string, string>>;
}

/** A tool's reliability facts over the window. */
export interface ReliabilityAggregate extends ReliabilityFacts {
  toolId: string;
}

export interface ToolUsage {
  toolId: string;
  calls: number;
  successes: number;
}

/** What the execution facts (toolport.execution.* events) say, aggregated. */
export interface ExecutionStats {
  /** The window's aggregates for each tool called in it (tools not called are absent). */
  reliabilityAggregates(toolIds: string[], windowDays: number): Promise<Map<string, ReliabilityAggregate>>;
  /** Tools by calls in the window (probes excluded), most used first. */
  popularTools(windowDays: number, limit: number): Promise<ToolUsage[]>;
  /** The tools an account called in the window (probes included), most called first, at most 50. */
  toolsUsedBy(accountId: string, windowDays: number): Promise<ToolUsage[]>;
  /**
   * Tools used by the same callers as the given tools, with how many of those callers used each (the
   * given tools themselves excluded), strongest first.
   */
  usedTogether(toolIds: string[], windowDays: number, limit: number): Promise<{ toolId: string; sharedCallers: number }[]>;
}

export type NewService = Omit<ServiceRecord, "createdAt" | "updatedAt">;

export interface ToolInsertOptions {
  serviceId: string;
  serviceSlug: string;
  pricePerCallCents: bigint;
  /** Fills `<service_id>/` for MCP tools. */
  pathFor?: (draft: ToolDraft) => string;
}

export interface ToolPatch {
  name?: string;
  slug?: string;
  description?: string;
  tips?: string | null;
  tags?: string[];
  output?: Record<string, unknown> | null;
  version?: string;
  pricePerCallCents?: bigint;
  sideEffecting?: boolean;
  status?: string;
  deprecated?: boolean;
  deprecationMessage?: string | null;
  sunsetDate?: Date | null;
  passthroughReason?: string | null;
}

/** A tool whose change is announced (toolport.catalog.tool.changed). */
export interface ChangedTool {
  id: string;
  serviceId: string;
  revision: bigint;
  updatedAt?: Date;
}

/** What a use case reads and writes inside one transaction: all of it commits, or none. */
export interface CatalogTx extends OAuthClientWrites {
  /** Holds `key` until the transaction ends: transactions that take the same key run one after another. */
  exclusive(key: number): Promise<void>;
  findService(idOrSlug: string): Promise<ServiceRecord | null>;
  slugTaken(table: "services" | "tools", slug: string, exceptId?: string): Promise<boolean>;
  /** The first of `base`, `base-2`, `base-3`, ... that no service has. */
  freeServiceSlug(base: string): Promise<string>;
  insertService(s: NewService): Promise<ServiceRecord>;
  updateService(id: string, patch: Partial<NewService>): Promise<ServiceRecord>;
  /** Deletes a service and with it its tools, credentials and OAuth rows; returns the ids its tools had. */
  deleteService(id: string): Promise<string[]>;
  toolIdsOfService(serviceId: string): Promise<{ id: string; revision: bigint }[]>;
  /**
   * Inserts new tools and updates those already there by source key; `missing` are the ids of the
   * service's tools that the drafts no longer have.
   */
  upsertToolDrafts(
    drafts: (ToolDraft & { deprecated?: boolean })[],
    options: ToolInsertOptions,
  ): Promise<{ tools: ToolRecord[]; missing: string[] }>;
  updateTool(id: string, patch: ToolPatch): Promise<ToolRecord>;
  setToolsStatus(ids: string[], status: "active" | "inactive"): Promise<ToolRecord[]>;
  deleteTool(id: string): Promise<void>;
  /** Marks the service as imported from `entry`; false when another service already holds the entry. */
  recordDirectoryImport(serviceId: string, entry: string, version: string): Promise<boolean>;
  /** One toolport.catalog.tool.changed event per tool, written to the outbox with the transaction. */
  enqueueToolChanged(tools: ChangedTool[], kind: "upsert" | "delete"): Promise<void>;
  /** The OAuth connection, locked until the transaction ends. */
  lockConnection(id: string): Promise<StoredConnection | null>;
  findOAuthClient(serviceId: string): Promise<OAuthClientRecord | null>;
  storeRefreshedTokens(id: string, sealed: Buffer, expiresAt: Date | null, scopes: string[] | undefined): Promise<void>;
  markConnectionBroken(id: string, reason: string): Promise<void>;
}

/** The catalog's storage as its use cases see it. */
export interface CatalogStore
  extends ToolStore,
    ServiceStore,
    ToolPages,
    CredentialStore,
    OAuthStore,
    DirectoryImports,
    ExecutionStats {
  /** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(work: (tx: CatalogTx) => Promise<T>): Promise<T>;
  /**
   * Whether a transaction failed because a concurrent one took a slug it was writing (a service's or a
   * tool's): worth running again, when it picks free slugs anew.
   */
  isSlugRace(err: unknown): boolean;
}
