/**
 * Identity as the OAuth 2.1 authorization server of Toolport's MCP server (issue 32;
 * docs/mcp-authorization.md). The rules, free of HTTP, SQL and proto:
 *
 * - Clients are public (no secret; PKCE S256 is required of every one). A client id that is an https URL
 *   is a Client ID Metadata Document, fetched through the outbound guard (so never from a private
 *   address unless the operator allows it) and cached for CLIENT_DOCUMENT_MAX_AGE_MS; its `client_id` must
 *   be that URL. Any other client id must have been registered dynamically (RFC 7591), which the
 *   operator turns on.
 * - `redirect_uri` must equal one the client lists, character for character. Until it is checked,
 *   errors are shown to the person (never sent to an unchecked address); after, they go back to it.
 * - The token is for one resource: this MCP server (RFC 8707). A request naming another is refused with
 *   `invalid_target`; one naming none gets this one.
 * - The person's decision is kept on the request; nothing else is stored until the code is redeemed
 *   with the right verifier: then the grant is made, as an API key of the person's with the
 *   organization and permissions chosen on the consent page (no plaintext key exists; its tokens act as
 *   it). So a token is stamped, counted, limited and revoked exactly as that key, and revoking the
 *   grant in the console (revoking the key) stops the next request.
 * - Codes live 60 seconds and are single use; a code presented twice revokes what it granted (RFC 6749
 *   4.1.2). Refresh tokens rotate: each use returns a new one; presenting a used one again revokes the
 *   whole grant (RFC 9700 4.14.2).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import {
  type DomainError,
  type DomainErrorOptions,
  invalidArgument,
  notFound,
  permissionDenied,
  unauthenticated,
} from "@toolport/kit/errors";
import { assertWithin } from "./authority.js";
import { assertMayMakeKeysIn, checkCatalogIds } from "./keys.js";
import type { Caller, Permissions } from "./model.js";
import type { CatalogPort, KeyStore, OrganizationStore } from "./ports.js";
import { validatePermissions } from "./validation.js";

/** The one scope: use Toolport's tools through its MCP server, with the permissions the person chose. */
export const MCP_SCOPE = "mcp";
export const REQUEST_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 60_000;
export const CLIENT_DOCUMENT_MAX_AGE_MS = 10 * 60_000;
const ACCESS_PREFIX = "tpat_";
const REFRESH_PREFIX = "tprt_";
const CODE_PREFIX = "tpac_";
const DYNAMIC_PREFIX = "tpc_";

export interface OAuthServerSettings {
  /** The issuer: the gateway's public address (RFC 8414 `issuer`, RFC 9207 `iss`). */
  issuer: string;
  /** The one resource tokens are issued for: the MCP server's public address. */
  resource: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  dynamicRegistration: boolean;
}

export interface OAuthClientRecord {
  clientId: string;
  kind: "metadata_document" | "dynamic";
  clientName: string;
  clientUri: string | null;
  logoUri: string | null;
  redirectUris: string[];
  metadata: Record<string, unknown>;
  fetchedAt: Date;
}

export interface AuthorizationRequestRecord {
  id: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string;
  expiresAt: Date;
  decidedAt: Date | null;
  accountId: string | null;
  organizationId: string | null;
  permissions: Permissions | null;
  codeExpiresAt: Date | null;
  codeUsedAt: Date | null;
}

export interface IssuedToken {
  hash: Buffer;
  kind: "access" | "refresh";
  keyId: string;
  clientId: string;
  resource: string;
  scope: string;
  expiresAt: Date;
}

/** What a refresh token redeemed (or was found to be already used, or revoked) belonged to. */
export type RefreshOutcome =
  | { status: "rotated"; keyId: string; clientId: string; resource: string; scope: string }
  | { status: "reused"; keyId: string; clientId: string }
  | { status: "unknown" };

export interface OAuthServerStore {
  client(clientId: string): Promise<OAuthClientRecord | null>;
  saveClient(client: OAuthClientRecord): Promise<void>;
  insertRequest(request: AuthorizationRequestRecord): Promise<void>;
  request(id: string): Promise<AuthorizationRequestRecord | null>;
  /**
   * The person who opened the undecided, unexpired request first (this one, when nobody had); null when
   * the request is decided, expired or unknown.
   */
  claim(id: string, accountId: string): Promise<string | null>;
  /** Records the person's decision if the request is undecided and unexpired; false otherwise. */
  decide(
    id: string,
    decision: {
      accountId: string;
      organizationId: string;
      permissions: Permissions | null;
      codeHash: Buffer | null;
      codeExpiresAt: Date | null;
    },
  ): Promise<boolean>;
  /**
   * Marks the code used and answers its request; `reused` when it was used before (its grant, if one
   * was made, is `keyId`), null when no request has this code.
   */
  redeemCode(codeHash: Buffer): Promise<{ request: AuthorizationRequestRecord; reused: boolean; keyId: string | null } | null>;
  /** Links the grant made by redeeming a request's code to it (so a reused code finds what to revoke). */
  linkGrant(requestId: string, keyId: string): Promise<void>;
  insertTokens(tokens: IssuedToken[]): Promise<void>;
  rotateRefresh(hash: Buffer): Promise<RefreshOutcome>;
  /** Revokes one token if it is this client's; the token's kind and key when it was found. */
  revokeToken(hash: Buffer, clientId: string | null): Promise<{ kind: "access" | "refresh"; keyId: string } | null>;
  revokeTokensOfKey(keyId: string): Promise<void>;
  /** An access token that is active (unexpired, unrevoked, its grant key active), or null. */
  activeAccessToken(
    hash: Buffer,
  ): Promise<{ keyId: string; clientId: string; resource: string; scope: string; expiresAt: Date } | null>;
  /** Whether the account ever made a grant to this client (revoked ones included). */
  hasGranted(accountId: string, clientId: string): Promise<boolean>;
}

/** Fetches a Client ID Metadata Document through the outbound guard. */
export interface ClientDocumentFetcher {
  fetch(url: URL): Promise<{ status: number; contentType: string; body: Buffer }>;
}

export interface GrantMaker {
  /** Makes the grant's key (an API key of the person's, no plaintext) and answers its id. */
  makeGrantKey(input: {
    accountId: string;
    organizationId: string;
    permissions: Permissions | null;
    client: OAuthClientRecord;
  }): Promise<string>;
  /** Revokes the grant's key (and drops its quota leases). */
  revokeGrantKey(keyId: string): Promise<void>;
}

export interface OAuthServerDeps {
  settings: OAuthServerSettings;
  store: OAuthServerStore;
  documents: ClientDocumentFetcher;
  grants: GrantMaker;
  keys: KeyStore;
  organizations: OrganizationStore;
  catalog: CatalogPort;
}

/** An OAuth error (RFC 6749 5.2 and 4.1.2.1): its code is the reason, answered as `error`. */
export function oauthError(
  code: string,
  description: string,
  status: "400" | "401" = "400",
  o?: DomainErrorOptions,
): DomainError {
  return status === "401" ? unauthenticated(code, description, o) : invalidArgument(code, description, o);
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();
const secret = (prefix: string) => prefix + randomBytes(32).toString("base64url");
export const hashToken = sha256;

export function looksLikeAccessToken(value: string): boolean {
  return value.startsWith(ACCESS_PREFIX) && value.length === ACCESS_PREFIX.length + 43;
}

// ---------------------------------------------------------------------------------------------------
// Clients

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]";
}

/** A redirect URI a public client may use: https, or http on a loopback host (RFC 8252 7.3); no fragment. */
function checkRedirectUri(value: unknown, where: string): string {
  if (typeof value !== "string") throw oauthError("invalid_client_metadata", `${where}: every redirect_uri must be a string`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw oauthError("invalid_redirect_uri", `${where}: ${JSON.stringify(value)} is not an absolute URL`);
  }
  if (parsed.hash) throw oauthError("invalid_redirect_uri", `${where}: a redirect_uri must not have a fragment`);
  const ok = parsed.protocol === "https:" || (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname));
  if (!ok) throw oauthError("invalid_redirect_uri", `${where}: a redirect_uri must be https, or http on a loopback address`);
  return value;
}

function text(value: unknown, max: number): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, max) : null;
}

function httpsUrl(value: unknown): string | null {
  const v = text(value, 2000);
  if (!v) return null;
  try {
    return new URL(v).protocol === "https:" ? v : null;
  } catch {
    return null;
  }
}

/** The fields of client metadata this server uses, checked (RFC 7591 2, CIMD). Public clients only. */
function clientFromMetadata(
  clientId: string,
  kind: OAuthClientRecord["kind"],
  metadata: Record<string, unknown>,
  where: string,
): OAuthClientRecord {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20)
    throw oauthError("invalid_client_metadata", `${where}: redirect_uris must list 1 to 20 addresses`);
  const redirectUris = uris.map((u) => checkRedirectUri(u, where));
  const method = metadata.token_endpoint_auth_method ?? "none";
  if (method !== "none")
    throw oauthError(
      "invalid_client_metadata",
      `${where}: token_endpoint_auth_method must be "none": this server registers public clients, which prove themselves with PKCE`,
    );
  const grantTypes = metadata.grant_types ?? ["authorization_code"];
  if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== "authorization_code" && g !== "refresh_token"))
    throw oauthError("invalid_client_metadata", `${where}: grant_types may hold only authorization_code and refresh_token`);
  const responseTypes = metadata.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== "code"))
    throw oauthError("invalid_client_metadata", `${where}: response_types may hold only code`);
  const fallbackName = kind === "metadata_document" ? new URL(clientId).host : clientId;
  return {
    clientId,
    kind,
    clientName: text(metadata.client_name, 200) ?? fallbackName,
    clientUri: httpsUrl(metadata.client_uri),
    logoUri: httpsUrl(metadata.logo_uri),
    redirectUris,
    metadata,
    fetchedAt: new Date(),
  };
}

/** A client id that names a Client ID Metadata Document: an https URL with a path. */
function documentUrl(clientId: string): URL | null {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || url.pathname === "/" || url.hash || url.username || url.password) return null;
  return url;
}

const MAX_DOCUMENT_BYTES = 64 * 1024;

async function fetchDocument(deps: OAuthServerDeps, clientId: string, url: URL): Promise<OAuthClientRecord> {
  let answer: Awaited<ReturnType<ClientDocumentFetcher["fetch"]>>;
  try {
    answer = await deps.documents.fetch(url);
  } catch (err) {
    throw oauthError(
      "invalid_client",
      `the client's metadata document ${clientId} could not be fetched: ${(err as Error).message}`,
    );
  }
  if (answer.status !== 200)
    throw oauthError("invalid_client", `the client's metadata document ${clientId} answered HTTP ${answer.status}`);
  if (answer.body.length > MAX_DOCUMENT_BYTES)
    throw oauthError("invalid_client", `the client's metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  let metadata: unknown;
  try {
    metadata = JSON.parse(answer.body.toString("utf8"));
  } catch {
    throw oauthError("invalid_client", `the client's metadata document ${clientId} is not JSON`);
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))
    throw oauthError("invalid_client", `the client's metadata document ${clientId} is not a JSON object`);
  const doc = metadata as Record<string, unknown>;
  if (doc.client_id !== clientId)
    throw oauthError(
      "invalid_client",
      `the client's metadata document names client_id ${JSON.stringify(doc.client_id)}, not its own address ${clientId}`,
    );
  for (const forbidden of ["client_secret", "client_secret_expires_at"])
    if (forbidden in doc) throw oauthError("invalid_client", `a client metadata document must not hold ${forbidden}`);
  return clientFromMetadata(clientId, "metadata_document", doc, "client metadata document");
}

/** The client a request names: its (fresh enough) metadata document, or a registered client. */
export async function resolveClient(deps: OAuthServerDeps, clientId: string | undefined): Promise<OAuthClientRecord> {
  const id = clientId?.trim();
  if (!id) throw oauthError("invalid_request", "client_id is required");
  if (id.length > 2000) throw oauthError("invalid_client", "client_id is longer than 2000 characters");
  const known = await deps.store.client(id);
  const url = documentUrl(id);
  if (url) {
    if (known && Date.now() - known.fetchedAt.getTime() < CLIENT_DOCUMENT_MAX_AGE_MS) return known;
    const fetched = await fetchDocument(deps, id, url);
    await deps.store.saveClient(fetched);
    return fetched;
  }
  if (known?.kind === "dynamic") return known;
  throw oauthError(
    "invalid_client",
    `unknown client_id ${JSON.stringify(id)}: use an https URL of a client metadata document${deps.settings.dynamicRegistration ? ", or register at the registration_endpoint first" : ""}`,
  );
}

/** RFC 7591 dynamic registration of a public client. */
export async function registerClient(deps: OAuthServerDeps, metadataJson: string): Promise<Record<string, unknown>> {
  if (!deps.settings.dynamicRegistration)
    throw oauthError(
      "access_denied",
      "dynamic client registration is turned off here; use a client metadata document (an https client_id)",
    );
  let metadata: unknown;
  try {
    metadata = JSON.parse(metadataJson);
  } catch {
    throw oauthError("invalid_client_metadata", "the registration request is not JSON");
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))
    throw oauthError("invalid_client_metadata", "the registration request must be a JSON object");
  const clientId = DYNAMIC_PREFIX + randomBytes(16).toString("base64url");
  const client = clientFromMetadata(clientId, "dynamic", metadata as Record<string, unknown>, "registration request");
  await deps.store.saveClient(client);
  return {
    ...(metadata as Record<string, unknown>),
    client_id: clientId,
    client_id_issued_at: Math.floor(client.fetchedAt.getTime() / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: (metadata as { grant_types?: unknown }).grant_types ?? ["authorization_code"],
    response_types: ["code"],
  };
}

// ---------------------------------------------------------------------------------------------------
// Authorization

export interface AuthorizationParams {
  responseType?: string;
  clientId?: string;
  redirectUri?: string;
  state?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  resource: string[];
  scope?: string;
}

/** The resource a request names, which must be this MCP server (RFC 8707 2). */
function chosenResource(settings: OAuthServerSettings, sent: string[]): string | { error: string } {
  if (sent.length === 0) return settings.resource;
  const distinct = [...new Set(sent)];
  if (distinct.length > 1 || distinct[0] !== settings.resource)
    return { error: `this server issues tokens only for the resource ${settings.resource}` };
  return settings.resource;
}

function chosenScope(sent: string | undefined): string | { error: string } {
  const scopes = (sent ?? "").split(" ").filter(Boolean);
  if (scopes.some((s) => s !== MCP_SCOPE)) return { error: `the only scope offered is "${MCP_SCOPE}"` };
  return MCP_SCOPE;
}

function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value != null) url.searchParams.set(name, value);
  return url.toString();
}

export type AuthorizationStart = { requestId: string } | { redirectTo: string };

export async function startAuthorization(deps: OAuthServerDeps, p: AuthorizationParams): Promise<AuthorizationStart> {
  const client = await resolveClient(deps, p.clientId);
  let redirectUri = p.redirectUri;
  if (redirectUri === undefined) {
    if (client.redirectUris.length !== 1)
      throw oauthError("invalid_request", "redirect_uri is required: the client lists more than one");
    redirectUri = client.redirectUris[0] as string;
  }
  if (!client.redirectUris.includes(redirectUri))
    throw oauthError(
      "invalid_request",
      `redirect_uri ${JSON.stringify(redirectUri)} is not one the client registered (they must match exactly)`,
    );
  const refuse = (error: string, description: string): AuthorizationStart => ({
    redirectTo: redirectWith(redirectUri, { error, error_description: description, state: p.state, iss: deps.settings.issuer }),
  });
  if (p.responseType !== "code") return refuse("unsupported_response_type", 'response_type must be "code"');
  if (!p.codeChallenge) return refuse("invalid_request", "code_challenge is required (PKCE)");
  if (p.codeChallengeMethod !== "S256") return refuse("invalid_request", 'code_challenge_method must be "S256"');
  if (!/^[A-Za-z0-9_-]{43}$/.test(p.codeChallenge))
    return refuse("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  const resource = chosenResource(deps.settings, p.resource);
  if (typeof resource !== "string") return refuse("invalid_target", resource.error);
  const scope = chosenScope(p.scope);
  if (typeof scope !== "string") return refuse("invalid_scope", scope.error);
  if (p.state !== undefined && p.state.length > 2000) return refuse("invalid_request", "state is longer than 2000 characters");
  const id = randomUUID();
  await deps.store.insertRequest({
    id,
    clientId: client.clientId,
    redirectUri,
    state: p.state ?? null,
    codeChallenge: p.codeChallenge,
    resource,
    scope,
    expiresAt: new Date(Date.now() + REQUEST_TTL_MS),
    decidedAt: null,
    accountId: null,
    organizationId: null,
    permissions: null,
    codeExpiresAt: null,
    codeUsedAt: null,
  });
  return { requestId: id };
}

const requestGone = () =>
  notFound(
    "authorization_request_not_found",
    "this authorization request is unknown, was already answered or expired: start again from the assistant",
  );

/**
 * The undecided request, for the person: the first signed-in person to open it owns it, and to anyone
 * else it does not exist (a request id in another account's hands decides nothing).
 */
async function openRequest(deps: OAuthServerDeps, id: string, caller: Caller): Promise<AuthorizationRequestRecord> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw requestGone();
  const request = await deps.store.request(id);
  if (!request || request.decidedAt || request.expiresAt.getTime() <= Date.now()) throw requestGone();
  if ((await deps.store.claim(id, caller.accountId)) !== caller.accountId) throw requestGone();
  return request;
}

/** Only a person, signed in (a JWT): a key or a grant cannot grant. */
function requirePerson(caller: Caller): void {
  if (caller.keyId !== null)
    throw permissionDenied(
      "person_required",
      "only a person signed in to the console can grant an MCP client access, not an API key",
    );
}

export interface AuthorizationView {
  request: AuthorizationRequestRecord;
  client: OAuthClientRecord;
  redirectHost: string;
  firstTime: boolean;
}

export async function describeAuthorization(deps: OAuthServerDeps, caller: Caller, id: string): Promise<AuthorizationView> {
  requirePerson(caller);
  const request = await openRequest(deps, id, caller);
  const client = await deps.store.client(request.clientId);
  if (!client) throw requestGone();
  return {
    request,
    client,
    redirectHost: new URL(request.redirectUri).host,
    firstTime: !(await deps.store.hasGranted(caller.accountId, client.clientId)),
  };
}

export interface Decision {
  allow: boolean;
  organizationId: string | undefined;
  permissions: Permissions | null;
}

export async function decideAuthorization(
  deps: OAuthServerDeps,
  caller: Caller,
  id: string,
  decision: Decision,
): Promise<string> {
  requirePerson(caller);
  const request = await openRequest(deps, id, caller);
  const organizationId = decision.organizationId?.trim() || caller.personalOrganizationId;
  if (!decision.allow) {
    if (
      !(await deps.store.decide(id, {
        accountId: caller.accountId,
        organizationId,
        permissions: null,
        codeHash: null,
        codeExpiresAt: null,
      }))
    )
      throw requestGone();
    return redirectWith(request.redirectUri, {
      error: "access_denied",
      error_description: "the person denied access",
      state: request.state,
      iss: deps.settings.issuer,
    });
  }
  const permissions = decision.permissions ? validatePermissions(decision.permissions) : null;
  // A grant is never wider than what made it; a console sign-in is unrestricted, so this only matters
  // should a restricted principal ever reach here.
  assertWithin(caller.keyPermissions, permissions);
  // The rules of making a key there, since the grant is one: a member, not a viewer, and allow-lists that
  // name services and tools that exist.
  await assertMayMakeKeysIn(deps.organizations, caller, organizationId);
  if (permissions) await checkCatalogIds(deps.catalog, permissions);
  const code = secret(CODE_PREFIX);
  const decided = await deps.store.decide(id, {
    accountId: caller.accountId,
    organizationId,
    permissions,
    codeHash: sha256(code),
    codeExpiresAt: new Date(Date.now() + CODE_TTL_MS),
  });
  if (!decided) throw requestGone();
  return redirectWith(request.redirectUri, { code, state: request.state, iss: deps.settings.issuer });
}

// ---------------------------------------------------------------------------------------------------
// Tokens

export interface TokenParams {
  grantType?: string;
  clientId?: string;
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
  refreshToken?: string;
  resource: string[];
  scope?: string;
}

export interface TokenAnswer {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scope: string;
}

function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

async function issuePair(
  deps: OAuthServerDeps,
  keyId: string,
  clientId: string,
  resource: string,
  scope: string,
): Promise<TokenAnswer> {
  const access = secret(ACCESS_PREFIX);
  const refresh = secret(REFRESH_PREFIX);
  const now = Date.now();
  const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = deps.settings;
  await deps.store.insertTokens([
    {
      hash: sha256(access),
      kind: "access",
      keyId,
      clientId,
      resource,
      scope,
      expiresAt: new Date(now + accessTokenTtlSeconds * 1000),
    },
    {
      hash: sha256(refresh),
      kind: "refresh",
      keyId,
      clientId,
      resource,
      scope,
      expiresAt: new Date(now + refreshTokenTtlSeconds * 1000),
    },
  ]);
  return { accessToken: access, refreshToken: refresh, expiresIn: accessTokenTtlSeconds, scope };
}

async function revokeGrant(deps: OAuthServerDeps, keyId: string): Promise<void> {
  await deps.store.revokeTokensOfKey(keyId);
  await deps.grants.revokeGrantKey(keyId);
}

export async function exchangeToken(deps: OAuthServerDeps, p: TokenParams): Promise<TokenAnswer> {
  if (p.grantType === "authorization_code") return redeemCode(deps, p);
  if (p.grantType === "refresh_token") return refresh(deps, p);
  if (!p.grantType) throw oauthError("invalid_request", "grant_type is required");
  throw oauthError("unsupported_grant_type", 'grant_type must be "authorization_code" or "refresh_token"');
}

async function redeemCode(deps: OAuthServerDeps, p: TokenParams): Promise<TokenAnswer> {
  if (!p.code) throw oauthError("invalid_request", "code is required");
  if (!p.codeVerifier) throw oauthError("invalid_request", "code_verifier is required (PKCE)");
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.codeVerifier))
    throw oauthError("invalid_request", "code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]");
  const clientId = p.clientId?.trim();
  if (!clientId) throw oauthError("invalid_request", "client_id is required");
  const found = await deps.store.redeemCode(sha256(p.code));
  const invalid = () => oauthError("invalid_grant", "the authorization code is unknown, expired or used");
  if (!found) throw invalid();
  const { request } = found;
  if (found.reused) {
    // A code seen twice was stolen or replayed: what it granted is revoked.
    if (found.keyId) await revokeGrant(deps, found.keyId);
    throw invalid();
  }
  if (!request.codeExpiresAt || request.codeExpiresAt.getTime() <= Date.now()) throw invalid();
  if (request.clientId !== clientId) throw oauthError("invalid_grant", "the code was issued to another client");
  if (p.redirectUri !== undefined && p.redirectUri !== request.redirectUri)
    throw oauthError("invalid_grant", "redirect_uri differs from the authorization request's");
  if (!pkceMatches(p.codeVerifier, request.codeChallenge))
    throw oauthError("invalid_grant", "code_verifier does not match the code_challenge (PKCE)");
  const resource = chosenResource(deps.settings, p.resource);
  if (typeof resource !== "string" || resource !== request.resource)
    throw oauthError("invalid_target", `the code was issued for the resource ${request.resource}`);
  const client = await deps.store.client(clientId);
  if (!client || !request.accountId || !request.organizationId) throw invalid();
  const keyId = await deps.grants.makeGrantKey({
    accountId: request.accountId,
    organizationId: request.organizationId,
    permissions: request.permissions,
    client,
  });
  await deps.store.linkGrant(request.id, keyId);
  return issuePair(deps, keyId, clientId, request.resource, request.scope);
}

async function refresh(deps: OAuthServerDeps, p: TokenParams): Promise<TokenAnswer> {
  if (!p.refreshToken) throw oauthError("invalid_request", "refresh_token is required");
  const clientId = p.clientId?.trim();
  if (!clientId) throw oauthError("invalid_request", "client_id is required");
  const outcome = await deps.store.rotateRefresh(sha256(p.refreshToken));
  const invalid = () => oauthError("invalid_grant", "the refresh token is unknown, expired, revoked or used");
  if (outcome.status === "unknown") throw invalid();
  if (outcome.clientId !== clientId) throw oauthError("invalid_grant", "the refresh token was issued to another client");
  if (outcome.status === "reused") {
    await revokeGrant(deps, outcome.keyId);
    throw oauthError("invalid_grant", "the refresh token was used before: the grant is revoked, authorize again");
  }
  const resource = chosenResource(deps.settings, p.resource);
  if (typeof resource !== "string" || resource !== outcome.resource)
    throw oauthError("invalid_target", `the refresh token was issued for the resource ${outcome.resource}`);
  const scope = chosenScope(p.scope);
  if (typeof scope !== "string") throw oauthError("invalid_scope", scope.error);
  const key = await deps.keys.keyById(outcome.keyId);
  if (!key || key.revokedAt) throw invalid();
  return issuePair(deps, outcome.keyId, clientId, outcome.resource, outcome.scope);
}

/** RFC 7009: revoking a refresh token ends the grant; an access token, itself. Unknown tokens are fine. */
export async function revokeToken(deps: OAuthServerDeps, token: string, clientId: string | undefined): Promise<void> {
  if (!token) throw oauthError("invalid_request", "token is required");
  const revoked = await deps.store.revokeToken(sha256(token), clientId?.trim() || null);
  if (revoked?.kind === "refresh") await revokeGrant(deps, revoked.keyId);
}

/** RFC 7662's facts of an access token; null when it is not active. */
export async function introspect(deps: OAuthServerDeps, token: string) {
  if (!looksLikeAccessToken(token)) return null;
  return deps.store.activeAccessToken(sha256(token));
}

/** The grant key's name in the person's key list. */
export function grantKeyName(client: OAuthClientRecord): string {
  return `MCP: ${client.clientName}`.slice(0, 100);
}

export const GRANT_KEY_PREFIX = "mcpgrant";
