/**
 * OAuth connections (issue 20). A publisher registers the service's OAuth client; a caller connects by
 * the authorization-code flow with PKCE (S256) and a single-use state, or at once by the client-credentials
 * flow; the tokens become a credential of type `oauth2`, sealed like the others, for the caller or (when
 * the publisher marks the client `shared`) its organization. The execution service asks for a refresh
 * before the access token expires (RefreshOAuthConnection); the catalog holds the refresh token and the
 * client secret, which never leave it, and runs one token request per connection at a time (a row lock),
 * so concurrent calls on any replica do not race a rotating refresh token. A provider that refuses the
 * refresh (`invalid_grant`) breaks the connection: readiness is `needs_credential` again.
 */
import { createHash, randomBytes } from "node:crypto";
import { conflict, failedPrecondition, invalidArgument, notFound, permissionDenied, unavailable } from "@toolport/kit/errors";
import {
  clientCredentials,
  exchangeCode,
  OAuthProviderError,
  refreshTokens,
  revokeToken,
  type TokenClient,
  type TokenSet,
} from "../oauth/token-client.js";
import {
  authorizationRequestUrl,
  boundedFetch,
  checkResponseIssuer,
  discover,
  probe,
  type Registration,
  register,
  scopeUnion,
  toolportClientMetadata,
  UpstreamAuthError,
  type UpstreamAuthorization,
} from "../oauth/upstream.js";
import { administersOrganization, assertMayManageCatalog, assertMayManageCredentials, type Caller } from "./access.js";
import { oneOf, requireCaller } from "./checks.js";
import { associated, ownerFor, visibleService } from "./credentials.js";
import type { CatalogDeps } from "./deps.js";
import type {
  ConnectionView,
  CredentialScope,
  OAuthClientRecord,
  OAuthFlowName,
  OAuthTokens,
  SecuritySchemeInfo,
} from "./model.js";
import type { CatalogTx, OAuthClientWrites, SealedCredential, StoredConnection } from "./ports.js";
import { managedService } from "./publishing.js";
import { configurationUrl } from "./views.js";

/** Where providers send the browser back: the gateway's route, registered at the provider by the publisher. */
export const CALLBACK_PATH = "/v1/oauth/callback";
/** How long a started authorization is accepted. */
const STATE_TTL_MS = 10 * 60_000;
/** Provider errors on refresh that mean the grant is gone for good (RFC 6749 §5.2). */
const GRANT_GONE = new Set(["invalid_grant", "invalid_client", "unauthorized_client"]);
const OAUTH_TYPES = new Set(["oauth2", "openIdConnect"]);

export function redirectUri(publicUrl: string): string {
  return `${publicUrl.replace(/\/$/, "")}${CALLBACK_PATH}`;
}

const sha256 = (value: string) => createHash("sha256").update(value).digest("base64url");
const clientSecretAad = (serviceId: string) => `oauth-client:${serviceId}`;
const verifierAad = (stateHash: string) => `oauth-state:${stateHash}`;

// ---- registration ---------------------------------------------------------------------------------

export interface OAuthClientInput {
  serviceId: string;
  schemeName?: string;
  clientId?: string;
  clientSecret?: string;
  flow?: string;
  clientAuth?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  revocationUrl?: string;
  scopes: string[];
  shared?: boolean;
}

export interface OAuthClientView {
  client: OAuthClientRecord;
  /** Every scope a connection asks for. */
  scopes: string[];
  redirectUri: string;
}

function oauthScheme(schemes: SecuritySchemeInfo[], name: string | undefined): SecuritySchemeInfo {
  if (name) {
    const named = schemes.find((s) => s.name === name);
    if (!named) {
      throw invalidArgument("unknown_scheme", `the service has no security scheme ${name}`, {
        details: { field: "scheme_name", schemes: schemes.map((s) => s.name) },
      });
    }
    if (!OAUTH_TYPES.has(named.type)) {
      throw invalidArgument("not_oauth_scheme", `security scheme ${name} is ${named.type}, not oauth2 or openIdConnect`, {
        details: { field: "scheme_name" },
      });
    }
    return named;
  }
  const first = schemes.find((s) => OAUTH_TYPES.has(s.type));
  if (!first) {
    throw invalidArgument("no_oauth_scheme", "the service's document declares no oauth2 or openIdConnect security scheme", {
      details: { field: "scheme_name" },
    });
  }
  return first;
}

/** An absolute http(s) URL; a relative one (OpenAPI allows it) is taken against the service's base URL. */
function endpointUrl(value: string | undefined, field: string, base: string | null): string | null {
  if (value === undefined || value.trim() === "") return null;
  let url: URL;
  try {
    url = base ? new URL(value.trim(), `${base}/`) : new URL(value.trim());
  } catch {
    throw invalidArgument("invalid_url", `${field} must be an absolute http(s) URL`, { details: { field } });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidArgument("invalid_url", `${field} must be an absolute http(s) URL`, { details: { field } });
  }
  if (url.username || url.password) {
    throw invalidArgument("invalid_url", `${field} must not carry a user name or password`, { details: { field } });
  }
  return url.toString();
}

function checkScopes(scopes: string[]): string[] {
  const out: string[] = [];
  for (const scope of scopes) {
    if (typeof scope !== "string" || scope === "" || scope.length > 200 || /[\s"\\]/.test(scope)) {
      throw invalidArgument("invalid_scope_name", "scopes must be non-empty scope names without spaces, quotes or backslashes", {
        details: { field: "scopes" },
      });
    }
    if (!out.includes(scope)) out.push(scope);
  }
  if (out.length > 100) throw invalidArgument("too_many_scopes", "at most 100 scopes", { details: { field: "scopes" } });
  return out;
}

export async function putOAuthClient(
  deps: CatalogDeps,
  input: OAuthClientInput,
  caller: Caller | null,
): Promise<OAuthClientView> {
  assertMayManageCatalog(requireCaller(caller), "register OAuth clients");
  const service = await managedService(deps, input.serviceId, caller);
  const scheme = oauthScheme(service.securitySchemes, input.schemeName);
  const clientId = (input.clientId ?? "").trim();
  if (clientId === "" || clientId.length > 500) {
    throw invalidArgument("missing_client_id", "client_id is required (at most 500 characters)", {
      details: { field: "client_id" },
    });
  }
  const secret = input.clientSecret === undefined || input.clientSecret === "" ? null : input.clientSecret;
  if (secret !== null && secret.length > 2000) {
    throw invalidArgument("invalid_client_secret", "client_secret is at most 2000 characters", {
      details: { field: "client_secret" },
    });
  }
  const flows = scheme.oauthFlows ?? {};
  const flow: OAuthFlowName =
    oneOf(input.flow, ["authorization_code", "client_credentials"] as const, "flow") ??
    (flows.authorizationCode || input.authorizationUrl || !flows.clientCredentials ? "authorization_code" : "client_credentials");
  const declared = flow === "authorization_code" ? flows.authorizationCode : flows.clientCredentials;
  const authorizationUrl =
    flow === "authorization_code"
      ? endpointUrl(input.authorizationUrl || declared?.authorizationUrl, "authorization_url", service.baseUrl)
      : null;
  const tokenUrl = endpointUrl(input.tokenUrl || declared?.tokenUrl, "token_url", service.baseUrl);
  if (flow === "authorization_code" && !authorizationUrl) {
    throw invalidArgument("missing_authorization_url", `authorization_url is required: scheme ${scheme.name} does not give one`, {
      details: { field: "authorization_url" },
    });
  }
  if (!tokenUrl) {
    throw invalidArgument("missing_token_url", `token_url is required: scheme ${scheme.name} does not give one`, {
      details: { field: "token_url" },
    });
  }
  if (flow === "client_credentials" && secret === null) {
    throw invalidArgument("missing_client_secret", "the client-credentials flow needs a client_secret", {
      details: { field: "client_secret" },
    });
  }
  const record = await deps.store.putOAuthClient(
    {
      serviceId: service.id,
      schemeName: scheme.name,
      flow,
      clientId,
      sealedSecret: secret === null ? null : deps.sealer.seal(secret, clientSecretAad(service.id)),
      clientAuth:
        oneOf(input.clientAuth, ["client_secret_basic", "client_secret_post"] as const, "client_auth") ?? "client_secret_basic",
      authorizationUrl,
      tokenUrl,
      revocationUrl: endpointUrl(input.revocationUrl, "revocation_url", service.baseUrl),
      // An MCP server's client asks by default for the scopes discovery found (its challenge's, else its
      // resource metadata's): its tools name none.
      scopes: checkScopes(
        input.scopes.length === 0 && scheme.mcpAuthorization ? (flows.authorizationCode?.scopes ?? []) : input.scopes,
      ),
      // A client-credentials token is the client's own, the same for everyone: one per organization.
      shared: input.shared ?? flow === "client_credentials",
      // An MCP server's client, registered by hand: bound to the discovered resource and issuer all the same.
      resource: scheme.mcpAuthorization?.resource ?? null,
      issuer: scheme.mcpAuthorization?.issuer ?? null,
      issSupported: scheme.mcpAuthorization?.issParameterSupported ?? false,
      registration: "manual",
    },
    requireCaller(caller).accountId,
  );
  deps.log.info({ service_id: service.id, scheme: scheme.name, flow }, "OAuth client registered");
  return clientView(deps, record);
}

async function clientView(deps: CatalogDeps, client: OAuthClientRecord): Promise<OAuthClientView> {
  return { client, scopes: await connectionScopes(deps, client), redirectUri: redirectUri(deps.publicUrl) };
}

/** The registration's scopes and every scope the service's active tools name for its scheme. */
async function connectionScopes(deps: CatalogDeps, client: OAuthClientRecord): Promise<string[]> {
  const scopes = [...client.scopes];
  for (const scope of await deps.store.scopesOfServiceTools(client.serviceId, client.schemeName)) {
    if (!scopes.includes(scope)) scopes.push(scope);
  }
  return scopes;
}

export async function getOAuthClient(deps: CatalogDeps, serviceId: string, caller: Caller | null): Promise<OAuthClientView> {
  const service = await managedService(deps, serviceId, caller);
  const client = await deps.store.findOAuthClient(service.id);
  if (!client) throw clientNotFound(service.id);
  return clientView(deps, client);
}

export async function removeOAuthClient(deps: CatalogDeps, serviceId: string, caller: Caller | null): Promise<boolean> {
  assertMayManageCatalog(requireCaller(caller), "delete OAuth clients");
  const service = await managedService(deps, serviceId, caller);
  if (!(await deps.store.deleteOAuthClient(service.id))) throw clientNotFound(service.id);
  return true;
}

const clientNotFound = (serviceId: string) =>
  notFound("oauth_client_not_found", "no OAuth client is registered for this service", { details: { service_id: serviceId } });

function tokenClient(deps: CatalogDeps, client: OAuthClientRecord): TokenClient {
  return {
    clientId: client.clientId,
    clientSecret: client.sealedSecret ? deps.sealer.open(client.sealedSecret, clientSecretAad(client.serviceId)) : null,
    clientAuth: client.clientAuth,
  };
}

// ---- connecting ------------------------------------------------------------------------------------

/** A path on the gateway's own origin, so the callback is no open redirect. */
function checkReturnTo(value: string | undefined, serviceId: string): string {
  if (value === undefined || value === "") return `/console/services/${serviceId}/connect`;
  if (!value.startsWith("/") || value.startsWith("//") || /[\\\s]/.test(value) || value.length > 2000) {
    throw invalidArgument("invalid_return_to", "return_to must be a path on this gateway, such as /console/keys", {
      details: { field: "return_to" },
    });
  }
  return value;
}

export interface StartedConnection {
  flow: OAuthFlowName;
  authorizationUrl?: string;
  expiresAt?: Date;
  /** Client credentials: the connection made, and the readiness it gives the service's tools. */
  connection?: ConnectionView;
  readiness?: "ready" | "unavailable";
}

export async function startOAuthConnection(
  deps: CatalogDeps,
  input: { serviceId: string; returnTo?: string },
  callerOrNull: Caller | null,
): Promise<StartedConnection> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCredentials(caller, "connect OAuth connections");
  const service = await visibleService(deps, input.serviceId, caller);
  const returnTo = checkReturnTo(input.returnTo, service.id);
  const stored = await deps.store.findOAuthClient(service.id);
  const client =
    stored?.resource && stored.registration !== "manual" && service.mcpServerUrl
      ? await followMigration(deps, service.mcpServerUrl, stored, caller.accountId)
      : stored;
  if (!client) {
    throw conflict(
      "oauth_not_configured",
      "the publisher registered no OAuth client for this service; connect an access token as a bearer credential instead",
      { details: { service_id: service.id } },
    );
  }
  const scope: CredentialScope = client.shared ? "organization" : "caller";
  const ownerId = ownerFor(scope, caller);
  // Connecting again keeps what the connection has and asks for what an upstream wanted (step-up).
  const existing = (await deps.store.connectionsOf(caller.accountId, caller.organizationId)).find(
    (c) => c.serviceId === service.id && c.scope === scope && c.ownerId === ownerId,
  );
  const scopes = scopeUnion(
    await connectionScopes(deps, client),
    client.resource ? existing?.oauthScopes : undefined,
    existing?.oauthWantedScopes,
  );

  if (client.flow === "client_credentials") {
    let tokens: TokenSet;
    try {
      tokens = await clientCredentials(deps.outbound, client.tokenUrl, tokenClient(deps, client), scopes);
    } catch (err) {
      throw providerRefused(deps, err, service.id);
    }
    const stored = await storeConnection(deps, { client, scope, ownerId, accountId: caller.accountId, tokens, scopes });
    deps.log.info({ service_id: service.id, scope, flow: client.flow }, "OAuth connection made");
    return {
      flow: client.flow,
      connection: connectionView(deps, { ...stored, serviceName: service.name, flow: client.flow }),
      readiness: service.status === "retired" ? "unavailable" : "ready",
    };
  }

  const state = randomBytes(32).toString("base64url");
  const verifier = randomBytes(32).toString("base64url");
  const stateHash = sha256(state);
  const expiresAt = new Date(Date.now() + STATE_TTL_MS);
  const callback = redirectUri(deps.publicUrl);
  await deps.store.insertPendingAuthorization({
    stateHash,
    serviceId: service.id,
    scope,
    ownerId,
    accountId: caller.accountId,
    sealedVerifier: deps.sealer.seal(verifier, verifierAad(stateHash)),
    redirectUri: callback,
    returnTo,
    scopes,
    expiresAt,
  });
  const authorizationUrl = authorizationRequestUrl({
    authorizationUrl: client.authorizationUrl as string,
    clientId: client.clientId,
    redirectUri: callback,
    scopes,
    state,
    codeChallenge: sha256(verifier),
    resource: client.resource,
  });
  return { flow: client.flow, authorizationUrl, expiresAt };
}

/** A token request the provider refused or could not answer, as the caller's error (never a token). */
function providerRefused(deps: CatalogDeps, err: unknown, serviceId: string): Error {
  if (!(err instanceof OAuthProviderError)) return err as Error;
  deps.log.warn({ service_id: serviceId, oauth_error: err.code, status: err.status }, "OAuth token request failed");
  if (err.code === "unreachable") {
    return unavailable("oauth_provider_unavailable", "the OAuth provider's token endpoint could not be reached; try again", {
      details: { service_id: serviceId },
    });
  }
  return failedPrecondition("oauth_token_request_failed", err.message, {
    details: { service_id: serviceId, oauth_error: err.code },
  });
}

function sealTokens(deps: CatalogDeps, serviceId: string, scope: CredentialScope, ownerId: string, t: OAuthTokens): Buffer {
  return deps.sealer.seal(JSON.stringify(t), associated(serviceId, scope, ownerId));
}

function expiryOf(tokens: TokenSet): Date | null {
  return tokens.expiresIn ? new Date(Date.now() + tokens.expiresIn * 1000) : null;
}

async function storeConnection(
  deps: CatalogDeps,
  c: {
    client: OAuthClientRecord;
    scope: CredentialScope;
    ownerId: string;
    accountId: string;
    tokens: TokenSet;
    scopes: string[];
  },
): Promise<SealedCredential> {
  const expiresAt = expiryOf(c.tokens);
  const material: OAuthTokens = {
    type: "oauth2",
    accessToken: c.tokens.accessToken,
    refreshToken: c.tokens.refreshToken,
    tokenType: c.tokens.tokenType,
    expiresAt: expiresAt?.toISOString(),
  };
  return deps.store.putCredential({
    serviceId: c.client.serviceId,
    scope: c.scope,
    ownerId: c.ownerId,
    type: "oauth2",
    schemeName: c.client.schemeName,
    isReference: false,
    hint: "",
    sealed: sealTokens(deps, c.client.serviceId, c.scope, c.ownerId, material),
    createdBy: c.accountId,
    // RFC 6749 §5.1: an answer without `scope` granted what was asked.
    oauth: { flow: c.client.flow, scopes: c.tokens.scope ?? c.scopes, expiresAt },
  });
}

export interface CompletedConnection {
  /** return_to with `oauth=connected`, or `oauth_error=` (and the provider's `reason`). */
  redirectTo: string;
}

/**
 * The provider's redirect. An unknown, used or missing state is refused (400) without a redirect: it names
 * no authorization, so there is nowhere safe to send the browser. Once the state is known, every outcome
 * sends the browser back to where the connection started, with `oauth=connected` or `oauth_error=`.
 */
export async function completeOAuthConnection(
  deps: CatalogDeps,
  input: { state: string; code: string; error: string; errorDescription: string; iss?: string },
): Promise<CompletedConnection> {
  if (!input.state) {
    throw invalidArgument("invalid_oauth_state", "the callback carries no state; start the connection again", {
      details: { field: "state" },
    });
  }
  const pending = await deps.store.takePendingAuthorization(sha256(input.state));
  if (!pending) {
    throw invalidArgument(
      "invalid_oauth_state",
      "the state names no started authorization (unknown, or already used); start the connection again",
      { details: { field: "state" } },
    );
  }
  const back = (params: Record<string, string>): string => {
    const url = new URL(pending.returnTo, deps.publicUrl);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  };
  const fail = (error: string): CompletedConnection => {
    // error_description is the provider's words about the request (never a token), kept for the operator.
    const description = input.errorDescription.slice(0, 200) || undefined;
    deps.log.warn({ service_id: pending.serviceId, oauth_error: error, description }, "OAuth connection not made");
    return { redirectTo: back({ oauth_error: error }) };
  };
  if (pending.expiresAt.getTime() < Date.now()) return fail("state_expired");
  // The provider's error code is a short token by RFC 6749; anything else is not repeated.
  if (input.error) return fail(/^[\w.-]{1,64}$/.test(input.error) ? input.error : "authorization_failed");
  if (!input.code) return fail("missing_code");
  const client = await deps.store.findOAuthClient(pending.serviceId);
  if (client?.flow !== "authorization_code" || !client.authorizationUrl) return fail("oauth_not_configured");
  if (client.issuer) {
    // RFC 9207: the answer must come from the authorization server the request went to (mix-up defense).
    try {
      checkResponseIssuer(input.iss || undefined, { issuer: client.issuer, issParameterSupported: client.issSupported });
    } catch {
      return fail("invalid_issuer");
    }
  }
  let tokens: TokenSet;
  try {
    tokens = await exchangeCode(deps.outbound, client.tokenUrl, tokenClient(deps, client), {
      code: input.code,
      redirectUri: pending.redirectUri,
      codeVerifier: deps.sealer.open(pending.sealedVerifier, verifierAad(pending.stateHash)),
      resource: client.resource ?? undefined,
    });
  } catch (err) {
    if (!(err instanceof OAuthProviderError)) throw err;
    deps.log.warn({ service_id: pending.serviceId, oauth_error: err.code, status: err.status }, "OAuth code exchange refused");
    return { redirectTo: back({ oauth_error: "exchange_failed", reason: err.code }) };
  }
  await storeConnection(deps, {
    client,
    scope: pending.scope,
    ownerId: pending.ownerId,
    accountId: pending.accountId,
    tokens,
    scopes: pending.scopes,
  });
  deps.log.info({ service_id: pending.serviceId, scope: pending.scope, flow: client.flow }, "OAuth connection made");
  return { redirectTo: back({ oauth: "connected" }) };
}

// ---- connections -----------------------------------------------------------------------------------

/** The scopes an upstream asked a connection for that it was not granted (step-up), none when none. */
export function missingConsent(row: { oauthScopes: string[]; oauthWantedScopes: string[] }): string[] {
  return row.oauthWantedScopes.filter((s) => !row.oauthScopes.includes(s));
}

function connectionView(deps: CatalogDeps, row: StoredConnection): ConnectionView {
  const missing = row.status === "active" ? missingConsent(row) : [];
  return {
    id: row.id,
    serviceId: row.serviceId,
    serviceName: row.serviceName,
    schemeName: row.schemeName,
    scope: row.scope,
    status: missing.length > 0 ? "needs_consent" : row.status,
    brokenReason: missing.length > 0 ? `the MCP server asks for consent to ${missing.join(" ")}` : row.brokenReason,
    flow: row.flow,
    scopes: row.oauthScopes,
    expiresAt: row.expiresAt,
    refreshedAt: row.refreshedAt,
    configurationUrl: configurationUrl(deps.publicUrl, row.serviceId),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function listConnections(deps: CatalogDeps, callerOrNull: Caller | null): Promise<ConnectionView[]> {
  const caller = requireCaller(callerOrNull);
  return (await deps.store.connectionsOf(caller.accountId, caller.organizationId)).map((r) => connectionView(deps, r));
}

/** Whether a connection serves this caller: its own, or its organization's. */
const servesCaller = (row: StoredConnection, who: { accountId: string; organizationId: string }) =>
  (row.scope === "caller" && row.ownerId === who.accountId) ||
  (row.scope === "organization" && row.ownerId === who.organizationId);

const connectionNotFound = (id: string) =>
  notFound("connection_not_found", `connection ${id} not found`, { details: { connection_id: id } });

/** A connection the caller may see; 404 otherwise, as for an unknown id. */
async function ownConnection(deps: CatalogDeps, id: string, caller: { accountId: string; organizationId: string }) {
  const row = /^[0-9a-f-]{36}$/i.test(id) ? await deps.store.findConnection(id) : null;
  if (!row || !servesCaller(row, caller)) throw connectionNotFound(id);
  return row;
}

function openTokens(deps: CatalogDeps, row: StoredConnection): OAuthTokens {
  return JSON.parse(deps.sealer.open(row.sealed, associated(row.serviceId, row.scope, row.ownerId))) as OAuthTokens;
}

/** Deletes a connection, first revoking its tokens at the provider when it offers RFC 7009 (best effort). */
export async function deleteConnection(
  deps: CatalogDeps,
  id: string,
  callerOrNull: Caller | null,
): Promise<{ revokedAtProvider: boolean }> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCredentials(caller, "delete OAuth connections");
  const row = await ownConnection(deps, id, caller);
  if (row.scope === "organization" && !administersOrganization(caller)) {
    throw permissionDenied("not_organization_admin", "only owners and admins delete the organization's connections", {
      details: { connection_id: id },
    });
  }
  let revokedAtProvider = false;
  const client = await deps.store.findOAuthClient(row.serviceId);
  if (client?.revocationUrl) {
    const tokens = openTokens(deps, row);
    const revoke = (token: string, hint: "refresh_token" | "access_token") =>
      revokeToken(deps.outbound, client.revocationUrl as string, tokenClient(deps, client), token, hint);
    // Revoking the refresh token ends the grant at most providers (RFC 7009 §2.1), so its answer is the one
    // reported; the access token is revoked too, for providers that keep them apart.
    const grantRevoked = tokens.refreshToken ? await revoke(tokens.refreshToken, "refresh_token") : undefined;
    const accessRevoked = await revoke(tokens.accessToken, "access_token");
    revokedAtProvider = grantRevoked ?? accessRevoked;
  }
  await deps.store.deleteConnection(row.id);
  deps.log.info(
    { service_id: row.serviceId, connection_id: row.id, revoked_at_provider: revokedAtProvider },
    "OAuth connection deleted",
  );
  return { revokedAtProvider };
}

// ---- refreshing (execution) ------------------------------------------------------------------------

export interface RefreshInput {
  connectionId: string;
  accountId: string;
  organizationId: string;
  minValidSeconds: number;
  rejectedAccessToken?: string;
  /** The upstream answered 403 insufficient_scope asking for these: recorded, then the call fails. */
  insufficientScope?: string[];
  /** The upstream refused even a freshly refreshed token: the connection breaks with this reason. */
  brokenReason?: string;
}

/**
 * A usable access token for a connection. Under a row lock: a call that waited for another's refresh
 * finds the new token and returns it without a token request. A provider that says the grant is gone
 * breaks the connection (committed), then the call fails with `oauth_connection_broken`.
 */
export async function refreshOAuthConnection(
  deps: CatalogDeps,
  input: RefreshInput,
): Promise<{ tokens: OAuthTokens; refreshed: boolean }> {
  if (input.insufficientScope) return recordInsufficientScope(deps, input, input.insufficientScope);
  if (input.brokenReason !== undefined) return breakConnection(deps, input, input.brokenReason);
  const outcome = await deps.store.transaction(async (tx) => {
    const row = await tx.lockConnection(input.connectionId);
    if (!row || !servesCaller(row, input)) throw connectionNotFound(input.connectionId);
    if (row.status === "broken") return { broken: row.brokenReason ?? "the connection is broken" } as const;
    const current = openTokens(deps, row);
    const stale = input.rejectedAccessToken
      ? current.accessToken === input.rejectedAccessToken
      : current.expiresAt !== undefined && Date.parse(current.expiresAt) - Date.now() < input.minValidSeconds * 1000;
    if (!stale) return { tokens: current, refreshed: false } as const;

    const fresh = await newTokens(deps, tx, row, current);
    if ("broken" in fresh) {
      await tx.markConnectionBroken(row.id, fresh.broken);
      return fresh;
    }
    const expiresAt = expiryOf(fresh);
    const tokens: OAuthTokens = {
      type: "oauth2",
      accessToken: fresh.accessToken,
      // A provider that does not rotate keeps the old refresh token valid (RFC 6749 §6).
      refreshToken: fresh.refreshToken ?? current.refreshToken,
      tokenType: fresh.tokenType,
      expiresAt: expiresAt?.toISOString(),
    };
    await tx.storeRefreshedTokens(
      row.id,
      sealTokens(deps, row.serviceId, row.scope, row.ownerId, tokens),
      expiresAt,
      fresh.scope,
    );
    deps.log.info({ service_id: row.serviceId, connection_id: row.id }, "OAuth token refreshed");
    return { tokens, refreshed: true } as const;
  });
  if ("broken" in outcome) {
    throw failedPrecondition("oauth_connection_broken", `the OAuth connection is broken: ${outcome.broken}`, {
      details: { connection_id: input.connectionId },
    });
  }
  return { tokens: outcome.tokens, refreshed: outcome.refreshed };
}

/**
 * The token request a refresh makes: the refresh-token grant, or the client-credentials grant again.
 * `{broken}` when the grant is gone for good (the provider said so, or there is nothing to refresh with);
 * a provider that is down or answers 5xx throws UNAVAILABLE and changes nothing.
 */
async function newTokens(
  deps: CatalogDeps,
  tx: Pick<CatalogTx, "findOAuthClient">,
  row: StoredConnection,
  current: OAuthTokens,
): Promise<TokenSet | { broken: string }> {
  const client = await tx.findOAuthClient(row.serviceId);
  if (!client) return { broken: "the service's OAuth client registration was removed" };
  if (row.flow === "authorization_code" && !current.refreshToken) {
    return { broken: "the provider issued no refresh token and the access token expired" };
  }
  try {
    return row.flow === "client_credentials"
      ? await clientCredentials(deps.outbound, client.tokenUrl, tokenClient(deps, client), row.oauthScopes)
      : await refreshTokens(
          deps.outbound,
          client.tokenUrl,
          tokenClient(deps, client),
          current.refreshToken as string,
          client.resource ?? undefined,
        );
  } catch (err) {
    if (!(err instanceof OAuthProviderError)) throw err;
    deps.log.warn(
      { service_id: row.serviceId, connection_id: row.id, oauth_error: err.code, status: err.status },
      "OAuth refresh refused",
    );
    if (!GRANT_GONE.has(err.code)) {
      throw unavailable("oauth_refresh_failed", `refreshing the OAuth token failed (${err.code}); try again`, {
        details: { connection_id: row.id },
      });
    }
    return { broken: `the provider refused the refresh (${err.code}); reconnect the service` };
  }
}

/**
 * Step-up (MCP authorization, "Scope challenge handling"): an upstream refused a call with 403
 * `insufficient_scope` asking for `scopes`. A refresh cannot widen a grant (RFC 6749 §6), so the scopes are
 * recorded on the connection as wanted: readiness then says the caller must connect again (the connect
 * page asks for the union of the granted and the wanted scopes), and the call fails saying so. The
 * connection itself keeps serving the calls its grant covers.
 */
async function recordInsufficientScope(deps: CatalogDeps, input: RefreshInput, asked: string[]): Promise<never> {
  const row = await deps.store.findConnection(input.connectionId);
  if (!row || !servesCaller(row, input)) throw connectionNotFound(input.connectionId);
  // The upstream's words: scope names it could not mean (quotes, backslashes, too long) are left out, not refused.
  const scopes = checkScopes(
    asked
      .flatMap((s) => s.split(" "))
      .filter((s) => s !== "" && s.length <= 200 && !/[\s"\\]/.test(s))
      .slice(0, 100),
  );
  const wanted = scopeUnion(
    row.oauthWantedScopes,
    scopes.filter((s) => !row.oauthScopes.includes(s)),
  );
  // An upstream asking for scopes the grant already has: consent cannot help, but the caller may
  // reconnect all the same; the scopes it names are still the ones to ask for.
  const needed = wanted.length > 0 ? wanted : scopes;
  await deps.store.addWantedScopes(row.id, needed);
  const url = configurationUrl(deps.publicUrl, row.serviceId);
  deps.log.info({ service_id: row.serviceId, connection_id: row.id, scopes: needed }, "OAuth connection needs consent (step-up)");
  throw permissionDenied(
    "insufficient_scope",
    `the MCP server needs consent to ${needed.join(" ")} for this call: connect ${row.serviceName} again at ${url}`,
    { details: { connection_id: row.id, scopes: needed, configuration_url: url } },
  );
}

// ---- OAuth-protected MCP servers (issue 32) --------------------------------------------------------

/** What publishing found of an MCP server that answered 401: its authorization server and, if made, Toolport's client there. */
export interface DiscoveredMcpAuthorization {
  authorization: UpstreamAuthorization;
  /** Null when the authorization server offers no registration: the publisher registers a client by hand. */
  registration: Registration | null;
  /** Why there is no registration, for the publisher. */
  registrationProblem?: string;
}

/**
 * Publishing an MCP server that answers 401 (no credential given): discovers its authorization server and
 * registers Toolport there (oauth/upstream.ts); every request through the guarded outbound client. Null
 * when the server's refusal is no OAuth challenge (a bearer or API key server: the publisher gives one).
 */
export async function discoverMcpAuthorization(deps: CatalogDeps, serverUrl: string): Promise<DiscoveredMcpAuthorization | null> {
  const fetchFn = boundedFetch(deps.outbound.fetch);
  const answer = await probe(serverUrl, fetchFn);
  if (answer.status !== 401) return null;
  let authorization: UpstreamAuthorization;
  try {
    authorization = await discover(serverUrl, answer.challenge, fetchFn);
  } catch (err) {
    if (!answer.challenge && !(err instanceof UpstreamAuthError && err.code !== "discovery_failed")) return null;
    throw invalidArgument(
      "mcp_oauth_discovery_failed",
      `the MCP server at ${serverUrl} asks for OAuth, but ${(err as Error).message}`,
      {
        details: { field: "mcp_server.url" },
      },
    );
  }
  const base = deps.publicUrl.replace(/\/$/, "");
  const identity = {
    metadataUrl: `${base}/v1/oauth/client-metadata.json`,
    metadata: toolportClientMetadata(base, redirectUri(deps.publicUrl)),
  };
  try {
    return { authorization, registration: await register(authorization, identity, fetchFn) };
  } catch (err) {
    if (!(err instanceof UpstreamAuthError)) throw err;
    // Guessed endpoints (no metadata anywhere) that do not register either: no OAuth server after all, just
    // a server that wants a credential (bearer, API key) the publisher did not give.
    if (!authorization.metadataFound) return null;
    deps.log.warn({ url: serverUrl, reason: err.code }, "registering at an MCP server's authorization server failed");
    return { authorization, registration: null, registrationProblem: err.message };
  }
}

/** The `mcp_server` scheme of an OAuth-protected MCP server: oauth2, authorization code, with what discovery found. */
export function mcpOAuthScheme(name: string, found: DiscoveredMcpAuthorization): SecuritySchemeInfo {
  const a = found.authorization;
  return {
    name,
    type: "oauth2",
    description: `OAuth 2.0 at ${a.issuer} (discovered from the MCP server's ${a.via === "origin" ? "origin" : "protected resource metadata"})`,
    oauthFlows: {
      authorizationCode: { authorizationUrl: a.authorizationUrl, tokenUrl: a.tokenUrl, refreshUrl: "", scopes: a.scopes },
    },
    mcpAuthorization: {
      issuer: a.issuer,
      resource: a.resource,
      issParameterSupported: a.issParameterSupported,
      registrationUrl: a.registrationUrl,
      revocationUrl: a.revocationUrl,
      cimdSupported: a.cimdSupported,
      via: a.via,
    },
  };
}

/** Stores the client Toolport registered at an MCP server's authorization server as the service's OAuth client. */
export async function storeDiscoveredClient(
  deps: CatalogDeps,
  store: OAuthClientWrites,
  serviceId: string,
  found: DiscoveredMcpAuthorization,
  createdBy: string,
): Promise<OAuthClientRecord | null> {
  const r = found.registration;
  if (!r) return null;
  const a = found.authorization;
  return store.putOAuthClient(
    {
      serviceId,
      schemeName: "mcp_server",
      flow: "authorization_code",
      clientId: r.clientId,
      sealedSecret: r.clientSecret === null ? null : deps.sealer.seal(r.clientSecret, clientSecretAad(serviceId)),
      clientAuth: r.clientAuth,
      authorizationUrl: a.authorizationUrl,
      tokenUrl: a.tokenUrl,
      revocationUrl: a.revocationUrl ?? null,
      scopes: checkScopes(a.scopes),
      shared: false,
      resource: a.resource,
      issuer: a.issuer,
      issSupported: a.issParameterSupported,
      registration: r.kind,
    },
    createdBy,
  );
}

/**
 * An upstream that refuses even a token just refreshed (401 again) will not take this grant: the connection
 * breaks, so readiness asks the caller to connect again instead of every call refreshing in vain.
 */
async function breakConnection(deps: CatalogDeps, input: RefreshInput, reason: string): Promise<never> {
  const row = await deps.store.findConnection(input.connectionId);
  if (!row || !servesCaller(row, input)) throw connectionNotFound(input.connectionId);
  const why = reason.slice(0, 300) || "the upstream refused a freshly refreshed token";
  await deps.store.markConnectionBroken(row.id, why);
  deps.log.warn(
    { service_id: row.serviceId, connection_id: row.id },
    "OAuth connection broken: the upstream refused a fresh token",
  );
  throw failedPrecondition("oauth_connection_broken", `the OAuth connection is broken: ${why}`, {
    details: { connection_id: row.id },
  });
}

/**
 * An MCP server may move to another authorization server (its resource metadata names a new one): a client
 * is that server's alone and never assumed portable (SEP-2352). Each connection started for a client
 * Toolport registered itself looks again (the server's challenge, its metadata); on a new issuer Toolport
 * registers there and the service's client is replaced, so the connection goes to the new server. When the
 * server cannot be asked, the stored client is used as it is.
 */
async function followMigration(
  deps: CatalogDeps,
  serverUrl: string,
  client: OAuthClientRecord,
  accountId: string,
): Promise<OAuthClientRecord> {
  const fetchFn = boundedFetch(deps.outbound.fetch);
  let authorization: UpstreamAuthorization;
  try {
    const answer = await probe(serverUrl, fetchFn);
    if (answer.status !== 401) return client;
    authorization = await discover(serverUrl, answer.challenge, fetchFn);
  } catch (err) {
    deps.log.debug({ service_id: client.serviceId, err: (err as Error).message }, "MCP server's authorization not re-read");
    return client;
  }
  if (!authorization.metadataFound || authorization.issuer === client.issuer) return client;
  const base = deps.publicUrl.replace(/\/$/, "");
  let registration: Registration;
  try {
    registration = await register(
      authorization,
      {
        metadataUrl: `${base}/v1/oauth/client-metadata.json`,
        metadata: toolportClientMetadata(base, redirectUri(deps.publicUrl)),
      },
      fetchFn,
    );
  } catch (err) {
    if (!(err instanceof UpstreamAuthError)) throw err;
    throw conflict(
      "oauth_not_configured",
      `the MCP server moved to the authorization server ${authorization.issuer}, where Toolport could not register (${err.message}): the publisher registers a client there by hand`,
      { details: { service_id: client.serviceId } },
    );
  }
  deps.log.info(
    { service_id: client.serviceId, issuer: authorization.issuer, registration: registration.kind },
    "MCP server moved to another authorization server; registered there",
  );
  return (await storeDiscoveredClient(deps, deps.store, client.serviceId, { authorization, registration }, accountId)) ?? client;
}
