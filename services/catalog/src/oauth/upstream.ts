/**
 * OAuth-protected upstream MCP servers (issue 32, MCP revision 2025-11-25 "Authorization"): what a server
 * that answers 401 needs from Toolport as its client. Discovery follows the server's protected resource
 * metadata (RFC 9728: the `resource_metadata` of its WWW-Authenticate challenge, else the well-known URLs)
 * to its authorization server's metadata (RFC 8414 / OpenID Connect discovery); a server without
 * resource metadata is its own authorization server, at its origin, with the default endpoints
 * (`/authorize`, `/token`, `/register`) when it publishes no metadata either (revision 2025-03-26).
 * Registration prefers a Client ID Metadata Document (Toolport's, served by the gateway at
 * `/v1/oauth/client-metadata.json`) when the authorization server supports them, then dynamic client
 * registration (RFC 7591), else the publisher registers a client by hand.
 *
 * Discovery and registration are the official SDK's functions (`@modelcontextprotocol/client`), each given
 * the caller's fetch (in the catalog the guarded outbound client's); the token requests are the catalog's
 * own (token-client.ts), with the resource indicator (RFC 8707). The conformance command
 * (services/catalog/bin/mcp-oauth-client.ts) drives this same module.
 */
import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthClientMetadata,
  type OAuthProtectedResourceMetadata,
  registerClient,
  resourceUrlFromServerUrl,
  validateAuthorizationResponseIssuer,
} from "@modelcontextprotocol/client";

export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for discovery and registration: each request ends after `timeoutMs` and its answer is read whole,
 * refused past `maxBytes` (metadata documents are small; an address that streams forever must not hold a
 * publish or a connection, nor fill memory).
 */
export function boundedFetch(fetchFn: FetchFn, limits = { timeoutMs: 15_000, maxBytes: 256 * 1024 }): FetchFn {
  return async (input, init) => {
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const res = await fetchFn(input, { ...init, signal });
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > limits.maxBytes) {
          await res.body.cancel().catch(() => {});
          throw new Error(`the answer of ${res.url || "the server"} is larger than ${limits.maxBytes} bytes`);
        }
        chunks.push(chunk);
      }
    }
    const body = res.status === 204 || res.status === 304 || chunks.length === 0 ? null : Buffer.concat(chunks);
    const copy = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    // Keeps `url` (the SDK's messages name it) and `redirected`.
    Object.defineProperty(copy, "url", { value: res.url });
    return copy;
  };
}

/** What a WWW-Authenticate: Bearer challenge says (RFC 6750 §3, RFC 9728 §5.1). */
export interface Challenge {
  resourceMetadataUrl?: string;
  scope?: string[];
  error?: string;
}

/** Parses the Bearer challenge of a WWW-Authenticate header; undefined when it has none. */
export function parseChallenge(header: string | null | undefined): Challenge | undefined {
  if (!header) return undefined;
  const at = header.search(/(?:^|[\s,])Bearer(?:\s|$)/i);
  if (at < 0) return undefined;
  const params: Record<string, string> = {};
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  re.lastIndex = at;
  for (let m = re.exec(header); m; m = re.exec(header)) {
    params[(m[1] as string).toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? "");
  }
  return {
    resourceMetadataUrl: params.resource_metadata,
    scope: params.scope ? params.scope.split(" ").filter(Boolean) : undefined,
    error: params.error,
  };
}

/** An upstream's answer without a token: its status and challenge. */
export interface Probe {
  status: number;
  challenge?: Challenge;
}

/**
 * Asks the server what it wants: an MCP `initialize` (what every client sends first) without a token.
 * A protected server answers 401 with its challenge.
 */
export async function probe(serverUrl: string, fetchFn: FetchFn): Promise<Probe> {
  const res = await fetchFn(serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "toolport", version: "1.0.0" } },
    }),
  });
  await res.body?.cancel().catch(() => {});
  return { status: res.status, challenge: parseChallenge(res.headers.get("www-authenticate")) };
}

/** The authorization server of an upstream, as discovered. */
export interface UpstreamAuthorization {
  /** The authorization server's issuer (or the server's origin, 2025-03-26). */
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  registrationUrl?: string;
  revocationUrl?: string;
  /** Whether it accepts a Client ID Metadata Document URL as client_id. */
  cimdSupported: boolean;
  /** Whether it sends `iss` on its authorization responses (RFC 9207). */
  issParameterSupported: boolean;
  /** token_endpoint_auth_methods_supported, when it says. */
  authMethods?: string[];
  /** The resource indicator (RFC 8707) for every authorization and token request. */
  resource: string;
  /** The scopes to ask for: the challenge's, else the resource metadata's scopes_supported, else none. */
  scopes: string[];
  /** The resource metadata's scopes_supported, when it says. */
  scopesSupported?: string[];
  /** How it was found, for the publisher: `resource_metadata` or `origin` (2025-03-26). */
  via: "resource_metadata" | "origin";
  /** False when nothing was published and these are the 2025-03-26 default endpoints, guessed. */
  metadataFound: boolean;
}

export class UpstreamAuthError extends Error {
  override name = "UpstreamAuthError";
  constructor(
    readonly code: "discovery_failed" | "registration_unsupported" | "registration_failed" | "resource_mismatch",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Discovers an upstream's authorization server from its challenge. The resource metadata's `resource`
 * must be the server's (or a prefix of its URL, RFC 9728 §3.3), else nothing is trusted.
 */
export async function discover(
  serverUrl: string,
  challenge: Challenge | undefined,
  fetchFn: FetchFn,
): Promise<UpstreamAuthorization> {
  let prm: OAuthProtectedResourceMetadata | undefined;
  try {
    prm = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {},
      fetchFn,
    );
  } catch {
    // No resource metadata anywhere: the 2025-03-26 revision's server-is-its-own-authorization-server.
    prm = undefined;
  }
  const defaultResource = resourceUrlFromServerUrl(serverUrl);
  let resource = defaultResource.href;
  if (prm) {
    if (!checkResourceAllowed({ requestedResource: defaultResource, configuredResource: prm.resource })) {
      throw new UpstreamAuthError(
        "resource_mismatch",
        `the protected resource metadata names resource ${prm.resource}, which is not ${serverUrl}`,
      );
    }
    resource = prm.resource;
  }
  const asUrl = prm?.authorization_servers?.[0] ?? new URL("/", serverUrl).href;
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(asUrl, { fetchFn });
  } catch (err) {
    throw new UpstreamAuthError(
      "discovery_failed",
      `the authorization server ${asUrl} has no usable metadata (${(err as Error).message})`,
      {
        cause: err,
      },
    );
  }
  const scopes = challenge?.scope ?? prm?.scopes_supported ?? [];
  const scopesSupported = prm?.scopes_supported;
  if (!metadata) {
    if (prm) {
      throw new UpstreamAuthError("discovery_failed", `the authorization server ${asUrl} publishes no metadata`);
    }
    // 2025-03-26: the default endpoints at the server's origin.
    const origin = new URL("/", serverUrl);
    return {
      issuer: origin.href.replace(/\/$/, ""),
      authorizationUrl: new URL("/authorize", origin).href,
      tokenUrl: new URL("/token", origin).href,
      registrationUrl: new URL("/register", origin).href,
      cimdSupported: false,
      issParameterSupported: false,
      resource,
      scopes,
      scopesSupported,
      via: "origin",
      metadataFound: false,
    };
  }
  // The browser is sent to the authorization endpoint and tokens are asked of the token endpoint: http(s) only.
  for (const [name, value] of [
    ["authorization_endpoint", metadata.authorization_endpoint],
    ["token_endpoint", metadata.token_endpoint],
  ] as const) {
    if (!/^https?:$/.test(URL.parse(value)?.protocol ?? "")) {
      throw new UpstreamAuthError("discovery_failed", `the authorization server's ${name} is not an http(s) URL`);
    }
  }
  return {
    issuer: metadata.issuer,
    authorizationUrl: metadata.authorization_endpoint,
    tokenUrl: metadata.token_endpoint,
    registrationUrl: metadata.registration_endpoint,
    revocationUrl: (metadata as { revocation_endpoint?: string }).revocation_endpoint,
    cimdSupported:
      (metadata as { client_id_metadata_document_supported?: boolean }).client_id_metadata_document_supported === true,
    issParameterSupported: metadata.authorization_response_iss_parameter_supported === true,
    authMethods: metadata.token_endpoint_auth_methods_supported,
    resource,
    scopes,
    scopesSupported,
    via: prm ? "resource_metadata" : "origin",
    metadataFound: true,
  };
}

/** Toolport as an OAuth client: its metadata document's URL and content. */
export interface ClientIdentity {
  /** The URL of Toolport's Client ID Metadata Document (an https URL in production). */
  metadataUrl?: string;
  metadata: OAuthClientMetadata;
}

/** The Client ID Metadata Document Toolport serves (and sends for dynamic registration). */
export function toolportClientMetadata(publicUrl: string, redirectUri: string): OAuthClientMetadata {
  const base = publicUrl.replace(/\/$/, "");
  const host = new URL(redirectUri).hostname;
  return {
    // SEP-837 / RFC 8252: a gateway on a loopback address (development) is a native app's redirect.
    application_type: /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(host) ? "native" : "web",
    client_id: `${base}/v1/oauth/client-metadata.json`,
    client_name: "Toolport",
    client_uri: base,
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  } as OAuthClientMetadata;
}

export interface Registration {
  /** The authorization server it is valid at: a client is never assumed portable to another (SEP-2352). */
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  clientAuth: "client_secret_basic" | "client_secret_post";
  kind: "cimd" | "dcr" | "manual";
}

/** How a client with a secret authenticates at this token endpoint: basic unless only post is offered. */
export function clientAuthFor(as: Pick<UpstreamAuthorization, "authMethods">, secret: string | null, registered?: string) {
  if (registered === "client_secret_post" || registered === "client_secret_basic") return registered;
  if (
    secret &&
    as.authMethods &&
    !as.authMethods.includes("client_secret_basic") &&
    as.authMethods.includes("client_secret_post")
  ) {
    return "client_secret_post" as const;
  }
  return "client_secret_basic" as const;
}

/**
 * Registers Toolport at the authorization server: its metadata document's URL as client_id when the
 * server supports those (and the URL is https, which it requires), else dynamic registration, else a
 * `registration_unsupported` error (the publisher registers a client by hand).
 */
export async function register(as: UpstreamAuthorization, identity: ClientIdentity, fetchFn: FetchFn): Promise<Registration> {
  if (as.cimdSupported && identity.metadataUrl?.startsWith("https://")) {
    return {
      issuer: as.issuer,
      clientId: identity.metadataUrl,
      clientSecret: null,
      clientAuth: "client_secret_basic",
      kind: "cimd",
    };
  }
  if (!as.registrationUrl) {
    throw new UpstreamAuthError(
      "registration_unsupported",
      "the authorization server offers neither client metadata documents nor dynamic registration: register a client there by hand",
    );
  }
  const { client_id: _omitted, ...metadata } = identity.metadata as OAuthClientMetadata & { client_id?: string };
  // Every scope the resource offers, not just the first call's: an authorization server that limits a
  // client to its registered scopes must still allow a step-up later. One that refuses scopes it does not
  // list itself (resource scopes are often only the resource's) is asked again without any.
  const scope = scopeUnion(as.scopes, as.scopesSupported).join(" ") || undefined;
  try {
    return await registerWith(as, metadata, scope, fetchFn);
  } catch (err) {
    if (!scope || !/invalid_client_metadata|scope/i.test((err as Error).message)) throw err;
    return registerWith(as, metadata, undefined, fetchFn);
  }
}

async function registerWith(
  as: UpstreamAuthorization,
  metadata: OAuthClientMetadata,
  scope: string | undefined,
  fetchFn: FetchFn,
): Promise<Registration> {
  try {
    const info = await registerClient(as.issuer, {
      metadata: {
        issuer: as.issuer,
        authorization_endpoint: as.authorizationUrl,
        token_endpoint: as.tokenUrl,
        registration_endpoint: as.registrationUrl,
        response_types_supported: ["code"],
      },
      clientMetadata: metadata,
      scope,
      fetchFn,
    });
    const secret = info.client_secret ?? null;
    return {
      issuer: as.issuer,
      clientId: info.client_id,
      clientSecret: secret,
      clientAuth: clientAuthFor(as, secret, info.token_endpoint_auth_method),
      kind: "dcr",
    };
  } catch (err) {
    throw new UpstreamAuthError(
      "registration_failed",
      `dynamic client registration failed (${(err as Error).message.slice(0, 200)})`,
      {
        cause: err,
      },
    );
  }
}

/** The union of scope lists, in first-seen order. */
export function scopeUnion(...lists: (readonly string[] | undefined)[]): string[] {
  const out: string[] = [];
  for (const list of lists) for (const s of list ?? []) if (s && !out.includes(s)) out.push(s);
  return out;
}

/**
 * The authorization request (RFC 6749 §4.1.1 with PKCE S256, RFC 7636, and the resource indicator,
 * RFC 8707): `scope` is left out when there is none to ask for.
 */
export function authorizationRequestUrl(input: {
  authorizationUrl: string;
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  state: string;
  codeChallenge: string;
  resource?: string | null;
}): string {
  const url = new URL(input.authorizationUrl);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", input.clientId);
  url.searchParams.set("redirect_uri", input.redirectUri);
  if (input.scopes.length > 0) url.searchParams.set("scope", input.scopes.join(" "));
  url.searchParams.set("state", input.state);
  url.searchParams.set("code_challenge", input.codeChallenge);
  url.searchParams.set("code_challenge_method", "S256");
  if (input.resource) url.searchParams.set("resource", input.resource);
  return url.toString();
}

/**
 * The authorization response's issuer check (RFC 9207 §2.4, the mix-up defense): a present `iss` must be
 * the authorization server's issuer exactly (no normalization), and one that advertises `iss` must send
 * it. Throws an Error saying which.
 */
export function checkResponseIssuer(iss: string | undefined, as: { issuer: string; issParameterSupported: boolean }): void {
  validateAuthorizationResponseIssuer({ iss, expectedIssuer: as.issuer, issParameterSupported: as.issParameterSupported });
}
