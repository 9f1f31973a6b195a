/**
 * The catalog's records as the domain sees them: plain data, no pg/proto types. The store returns
 * these; handlers turn them into proto messages.
 */

export type ServiceType = "api" | "mcp_server" | "internal";
export type ServiceStatus = "active" | "degraded" | "retired";
export type VerificationTier = "unverified" | "verified" | "official";
export type Visibility = "public" | "private" | "internal" | "local_only";
export type ToolStatus = "active" | "inactive";
export type ParameterLocation = "path" | "query" | "header" | "cookie" | "body";
export type Readiness = "ready" | "needs_credential" | "unavailable";

export const serviceTypes: readonly ServiceType[] = ["api", "mcp_server", "internal"];
export const serviceStatuses: readonly ServiceStatus[] = ["active", "degraded", "retired"];
export const verificationTiers: readonly VerificationTier[] = ["unverified", "verified", "official"];
export const visibilities: readonly Visibility[] = ["public", "private", "internal", "local_only"];
export const toolStatuses: readonly ToolStatus[] = ["active", "inactive"];

export type JsonSchema = Record<string, unknown>;

export interface Contact {
  name: string;
  url: string;
  email: string;
}

/** One flattened OpenAPI security scheme. */
export interface SecuritySchemeInfo {
  name: string;
  /** apiKey, http, oauth2, openIdConnect */
  type: string;
  scheme?: string;
  location?: ParameterLocation;
  parameterName?: string;
  bearerFormat?: string;
  description: string;
  /** For oauth2: the document's authorizationCode and clientCredentials flows. */
  oauthFlows?: { authorizationCode?: OAuthFlowInfo; clientCredentials?: OAuthFlowInfo };
  /** An OAuth-protected MCP server's: what discovery found of its authorization server (issue 32). */
  mcpAuthorization?: McpAuthorizationInfo;
}

/** An MCP server's authorization server, as discovered from its 401 (oauth/upstream.ts). */
export interface McpAuthorizationInfo {
  issuer: string;
  /** The resource indicator (RFC 8707) of every authorization and token request. */
  resource: string;
  issParameterSupported: boolean;
  registrationUrl?: string;
  revocationUrl?: string;
  cimdSupported: boolean;
  /** `resource_metadata` (RFC 9728) or `origin` (2025-03-26). */
  via: "resource_metadata" | "origin";
}

/** One OAuth 2.0 flow as an OpenAPI document declares it; empty strings where it says nothing. */
export interface OAuthFlowInfo {
  authorizationUrl: string;
  tokenUrl: string;
  refreshUrl: string;
  /** The scope names the document lists. */
  scopes: string[];
}

export interface ServiceRecord {
  id: string;
  slug: string;
  name: string;
  summary: string;
  description: string;
  serviceType: ServiceType;
  category: string;
  logo: string;
  contact: Contact;
  documentationUrl: string;
  verificationTier: VerificationTier;
  status: ServiceStatus;
  visibility: Visibility;
  isDemo: boolean;
  version: string;
  organizationId: string | null;
  ownerAccountId: string | null;
  baseUrl: string | null;
  mcpServerUrl: string | null;
  openapiDocumentUrl: string | null;
  securitySchemes: SecuritySchemeInfo[];
  importedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolParameterInfo {
  /** The name upstream (may differ from the input key when a body property collides). */
  name: string;
  location: ParameterLocation;
  description: string;
  type: string;
  required: boolean;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  encodeSlashes?: boolean;
  jsonSchema?: JsonSchema;
}

/** What an import produces for one tool, before it has an id. */
export interface ToolDraft {
  sourceKey: string;
  name: string;
  description: string;
  tags: string[];
  method: string;
  path: string;
  parameters: Record<string, ToolParameterInfo>;
  inputSchema: JsonSchema;
  requestBodySchema: JsonSchema | null;
  requestBodyContentType: string;
  output: JsonSchema | null;
  /** A valid input that runs, when the source gives one. */
  example?: Record<string, unknown> | null;
  tips: string | null;
  version: string;
  sideEffecting: boolean;
  security: string[];
  /** OAuth scopes the operation's security requirements name, per scheme; {} when none. */
  securityScopes?: Record<string, string[]>;
  mcpToolName: string;
  internalHandler: string;
  /** Preferred slug (built-ins keep theirs); otherwise one is made from the service and name. */
  slug?: string;
  passthroughReason?: string | null;
}

/**
 * A tool page's output and parameters' JSON Schemas as Postgres wrote them (JSON text), for handing on
 * unparsed (store/tool-pages.ts); the record's `output` and its parameters' `jsonSchema` are then absent.
 */
export interface RawToolJson {
  output: string | null;
  /** Parameter key -> its JSON Schema's text, for the parameters that have one. */
  schemas: Record<string, string>;
}

export interface ToolRecord extends ToolDraft {
  id: string;
  serviceId: string;
  slug: string;
  status: ToolStatus;
  pricePerCallCents: bigint;
  deprecated: boolean;
  deprecationMessage: string | null;
  sunsetDate: Date | null;
  passthroughReason: string | null;
  revision: bigint;
  createdAt: Date;
  updatedAt: Date;
  rawJson?: RawToolJson;
}

/** A tool with the service facts every view of it needs. */
export interface ToolWithService {
  tool: ToolRecord;
  service: ServiceRecord;
}

export type CredentialScope = "caller" | "organization";
export type CredentialType = "api_key" | "bearer" | "basic" | "oauth2";

/** Decrypted credential material. Secret strings may be env:// or vault:// references (not OAuth tokens). */
export type CredentialMaterial =
  | { type: "api_key"; value: string; parameterName?: string; location?: string }
  | { type: "bearer"; token: string }
  | { type: "basic"; username: string; password: string }
  | OAuthTokens;

/** What an OAuth connection holds: the provider's tokens, sealed at rest like every credential. */
export interface OAuthTokens {
  type: "oauth2";
  accessToken: string;
  /** Absent for the client-credentials flow and for providers that issue none. */
  refreshToken?: string;
  tokenType: string;
  /** When the access token expires (ISO 8601); absent when the provider did not say. */
  expiresAt?: string;
}

/** `needs_consent` is a view of an active connection an upstream asked for more scopes (step-up). */
export type ConnectionStatus = "active" | "broken" | "needs_consent";
export type OAuthFlowName = "authorization_code" | "client_credentials";
export type OAuthClientAuth = "client_secret_basic" | "client_secret_post";

/** A publisher's OAuth client registration for a service (one per service). */
export interface OAuthClientRecord {
  serviceId: string;
  schemeName: string;
  flow: OAuthFlowName;
  clientId: string;
  /** Sealed client secret; null for a public client (PKCE only). */
  sealedSecret: Buffer | null;
  clientAuth: OAuthClientAuth;
  authorizationUrl: string | null;
  tokenUrl: string;
  revocationUrl: string | null;
  /** Scopes every connection asks for, beside the ones the tools' requirements name. */
  scopes: string[];
  /** One connection for the whole organization instead of one per person. */
  shared: boolean;
  /** An MCP server's: the resource indicator (RFC 8707) sent on authorization and token requests. */
  resource: string | null;
  /** An MCP server's authorization server issuer, which an authorization response's `iss` must equal. */
  issuer: string | null;
  issSupported: boolean;
  /** How the client came to be: registered by hand, by dynamic registration, or a metadata document URL. */
  registration: "manual" | "dcr" | "cimd";
  createdAt: Date;
  updatedAt: Date;
}

/** An OAuth connection as its owner sees it: never a token. */
export interface ConnectionView {
  id: string;
  serviceId: string;
  serviceName: string;
  schemeName: string | null;
  scope: CredentialScope;
  status: ConnectionStatus;
  brokenReason: string | null;
  flow: OAuthFlowName;
  scopes: string[];
  expiresAt: Date | null;
  refreshedAt: Date | null;
  /** Where a person reconnects it (the console's connect page). */
  configurationUrl: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface CredentialSummary {
  serviceId: string;
  scope: CredentialScope;
  type: CredentialType;
  isReference: boolean;
  hint: string;
  schemeName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The 30-day reliability block (spec "Reliability block"); null when not called in the window. */
export interface ReliabilityBlock {
  windowDays: number;
  calls7d: number;
  calls30d: number;
  successRate30d: number | null;
  p50Seconds: number | null;
  p95Seconds: number | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastErrorClass: string | null;
  lastErrorType: string | null;
  errorClasses: Record<string, number>;
  faults: Record<string, number>;
  authFailures30d: number;
  callerFailures30d: number;
  platformFailures30d: number;
  upstreamFailures30d: number;
  distinctCallers30d: number;
  flagged: boolean;
  refreshedAt: Date;
}
