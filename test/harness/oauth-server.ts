/**
 * A real OAuth 2.0 authorization server and a protected REST API behind it, both on 127.0.0.1 inside
 * the test process, for the end-to-end tests of OAuth connections (authorization code + PKCE, refresh,
 * RFC 7009 revocation, client credentials).
 *
 * The authorization server is panva's oidc-provider 9, unmodified and unmocked. What is turned on, and why:
 * - devInteractions (its built-in login and consent pages): any login and password sign in, so a browser
 *   driven by playwright can go through the flow (`authorizeInBrowser`);
 * - resourceIndicators: since oidc-provider 7, scopes that are not OpenID Connect scopes (`items:read`) are
 *   only granted in access tokens for a resource server. `defaultResource` makes the API the audience when a
 *   client sends no `resource` parameter, and `useGrantedResource` keeps it on refresh; the resource
 *   server's `accessTokenTTL` is `accessTokenTtlSeconds`, so tokens from every grant expire when a test says;
 * - `issueRefreshToken` for every client allowed the refresh_token grant (no `offline_access` scope and
 *   consent needed), `expiresWithSession: false` (tokens outlive the browser's provider session, as a
 *   gateway's do), and `rotateRefreshToken: true`: each refresh returns a new refresh token and consumes the
 *   old one. Presenting a consumed refresh token again is `invalid_grant` AND revokes the whole grant, every
 *   token of it (oidc-provider's reuse detection), which is what makes concurrent refreshes dangerous;
 * - clientCredentials (the machine client) and revocation (RFC 7009). Revoking either token of a grant
 *   destroys every token of that grant: the refresh token's revocation also deletes the grant (the next
 *   authorization asks for consent again), the access token's keeps it;
 * - `pkce.required` for every client: S256 is the only method oidc-provider 9 accepts.
 * Storage is an in-memory adapter of our own (Maps), so `revokeAllGrants()` can enumerate and destroy every
 * token, as when the user removes the app at the provider. The clients live in that adapter too, not in
 * the static client list, so `setRedirectUris()` can change the web client's redirect URIs at any time.
 *
 * The protected API validates every bearer token against the provider for real (`AccessToken.find`,
 * `ClientCredentials.find`: unknown, expired, revoked or other-audience tokens are 401 invalid_token).
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type {
  Adapter,
  AdapterPayload,
  ClientMetadata,
  Configuration,
  KoaContextWithOIDC,
  default as Provider,
} from "oidc-provider";
import type { Page, Request } from "playwright-core";

export interface OAuthServerOptions {
  /** Lifetime of every access token (authorization code, refresh and client credentials grants). Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Scopes of the protected API (the resource server). Default `["items:read", "items:write"]`. */
  scopes?: string[];
  /** The web client's redirect URIs; can also be set later with `setRedirectUris`. */
  redirectUris?: string[];
  /**
   * Dynamic client registration (RFC 7591) open to anyone at `registrationUrl`, as an MCP server's
   * authorization server offers it (issue 32). Off by default.
   */
  registration?: boolean;
}

/** A live access token as a resource server sees it (`accessToken`). */
export interface AccessTokenInfo {
  /** The end user (or the client, for client credentials). */
  subject: string;
  clientId: string;
  scopes: string[];
  /** The resource indicators it is meant for. */
  audience: string[];
}

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

export interface OAuthCounts {
  /** authorization_code grants at the token endpoint (successful or not). */
  authorizationCode: number;
  /** refresh_token grants (successful or not). */
  refresh: number;
  /** refresh_token grants answered with an error. */
  refreshFailed: number;
  /** client_credentials grants (successful or not). */
  clientCredentials: number;
  /** Calls to the revocation endpoint. */
  revocations: number;
  /** Requests to the protected API. */
  apiCalls: number;
  /** Protected API requests answered 401. */
  apiUnauthorized: number;
}

export interface OpenApiOptions {
  /** Which OAuth flows the security scheme declares; both by default. */
  flows?: Array<"authorizationCode" | "clientCredentials">;
  title?: string;
}

export interface OAuthFlowsObject {
  authorizationCode?: { authorizationUrl: string; tokenUrl: string; refreshUrl: string; scopes: Record<string, string> };
  clientCredentials?: { tokenUrl: string; scopes: Record<string, string> };
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: { securitySchemes: { oauth: { type: "oauth2"; flows: OAuthFlowsObject } } };
}

export interface OAuthServer {
  /** `http://127.0.0.1:<port>`, also the provider's issuer identifier. */
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** RFC 7009 token revocation endpoint. */
  revocationUrl: string;
  /** RFC 7591 registration endpoint (with `registration: true`). */
  registrationUrl: string;
  /**
   * Makes `indicator` (an MCP server's URL) a resource server of the provider too, with the same scopes
   * and token lifetime as the API: an authorization or token request naming it as `resource` gets tokens
   * for it (its audience), which `accessToken` then finds.
   */
  addResource(indicator: string): void;
  /** The live access token behind a bearer value, for a resource server to check; undefined if none. */
  accessToken(value: string): Promise<AccessTokenInfo | undefined>;
  /** Base URL of the protected API (no trailing slash); also the resource indicator of its tokens. */
  apiUrl: string;
  /** Confidential web client: authorization_code + refresh_token, client_secret_basic, PKCE required. */
  client: OAuthClientCredentials;
  /** Machine client: client_credentials only, client_secret_basic. */
  machineClient: OAuthClientCredentials;
  /** Live counters (read them any time); `reset()` zeroes them. */
  counts: OAuthCounts;
  reset(): void;
  /** Replaces the web client's redirect URIs; takes effect for the next authorization request. */
  setRedirectUris(uris: string[]): void;
  openapi(opts?: OpenApiOptions): OpenApiDocument;
  /** Destroys every grant, authorization code, access token, client-credentials token and refresh token. */
  revokeAllGrants(): void;
  /**
   * Ends every access token now, keeping grants and refresh tokens: what a provider does when it rotates its
   * keys or shortens lifetimes; the next call with such a token gets 401 and a refresh succeeds.
   */
  endAccessTokens(): void;
  /**
   * Every secret value the provider ever issued (access, refresh and client-credentials tokens, authorization
   * codes), for asserting that none of them reaches a log.
   */
  issuedSecrets(): string[];
  /** Refresh tokens neither expired, consumed (rotated) nor revoked. */
  activeRefreshTokens(): number;
  /** Whether the value is a live access token, client-credentials token or unconsumed refresh token. */
  tokenActive(value: string): Promise<boolean>;
  /** The oidc-provider instance, for anything the helpers above do not cover. */
  provider: Provider;
  close(): Promise<void>;
}

const SCOPE_DESCRIPTIONS: Record<string, string> = { "items:read": "Read items", "items:write": "Create items" };
/** Models whose stored id is the secret a client holds (opaque token formats, codes). */
const SECRET_MODELS = new Set(["AccessToken", "RefreshToken", "AuthorizationCode", "ClientCredentials"]);
/** What `revokeAllGrants` empties: everything a grant or a token is made of (not clients, not sessions). */
const TOKEN_MODELS = [
  "AccessToken",
  "RefreshToken",
  "AuthorizationCode",
  "ClientCredentials",
  "Grant",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
];

/**
 * oidc-provider's storage: one Map per model, shared by the adapters of one provider. Payloads are cloned in
 * and out, as a database would, so the provider cannot change stored state behind the adapter's back.
 */
class MemoryStore {
  readonly models = new Map<string, Map<string, { payload: AdapterPayload; expiresAt: number }>>();
  /** Ids of the models whose id is the secret itself (opaque tokens, codes), kept after they go. */
  readonly issued = new Set<string>();

  model(name: string) {
    let entries = this.models.get(name);
    if (!entries) {
      entries = new Map();
      this.models.set(name, entries);
    }
    return entries;
  }

  /** The live payloads of a model (expired ones are dropped on the way). */
  *live(name: string): Generator<[string, AdapterPayload]> {
    const entries = this.model(name);
    for (const [id, entry] of entries) {
      if (entry.expiresAt <= Date.now()) entries.delete(id);
      else yield [id, entry.payload];
    }
  }

  adapter(name: string): Adapter {
    const entries = this.model(name);
    const findWhere = async (match: (payload: AdapterPayload) => boolean) => {
      for (const [, payload] of this.live(name)) if (match(payload)) return structuredClone(payload);
      return undefined;
    };
    return {
      upsert: async (id, payload, expiresIn) => {
        if (SECRET_MODELS.has(name)) this.issued.add(id);
        const expiresAt = typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY;
        entries.set(id, { payload: structuredClone(payload), expiresAt });
      },
      async find(id) {
        const entry = entries.get(id);
        if (!entry) return undefined;
        if (entry.expiresAt <= Date.now()) {
          entries.delete(id);
          return undefined;
        }
        return structuredClone(entry.payload);
      },
      findByUid: (uid) => findWhere((payload) => payload.uid === uid),
      findByUserCode: (userCode) => findWhere((payload) => payload.userCode === userCode),
      async consume(id) {
        const entry = entries.get(id);
        if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(id);
      },
      async revokeByGrantId(grantId) {
        for (const [id, entry] of entries) if (entry.payload.grantId === grantId) entries.delete(id);
      },
    };
  }
}

/** Binds an http server to a free port on 127.0.0.1 and gives its base URL. */
async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * oidc-provider prints development notices through console.warn/info when it is imported on Node 20 (it
 * asks for 22) and when a provider is built with devInteractions. They are expected here, so they are
 * dropped; anything else still goes through.
 */
async function withoutProviderNotices<T>(fn: () => Promise<T>): Promise<T> {
  const { warn, info } = console;
  const filter =
    (print: (...args: unknown[]) => void) =>
    (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes("oidc-provider ")) return;
      print.apply(console, args);
    };
  console.warn = filter(warn);
  console.info = filter(info);
  try {
    return await fn();
  } finally {
    console.warn = warn;
    console.info = info;
  }
}

/** The `Authorization` header of client_secret_basic (RFC 6749 2.3.1: both parts form-encoded first). */
export function basicAuth(client: OAuthClientCredentials): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString("base64")}`;
}

export async function startOAuthServer(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const ttl = options.accessTokenTtlSeconds ?? 3600;
  const scopes = options.scopes ?? ["items:read", "items:write"];
  const counts: OAuthCounts = {
    authorizationCode: 0,
    refresh: 0,
    refreshFailed: 0,
    clientCredentials: 0,
    revocations: 0,
    apiCalls: 0,
    apiUnauthorized: 0,
  };

  // Both servers listen first: the provider's issuer and the API's resource indicator must be known to
  // build the provider, and the API needs the provider to validate tokens.
  const providerServer = http.createServer();
  const apiServer = http.createServer();
  const issuer = await listen(providerServer);
  const apiUrl = await listen(apiServer);
  const resources = new Set([new URL(apiUrl).href]);
  const isApiResource = (indicator: string) => resources.has(URL.parse(indicator)?.href ?? "");

  // base64url secrets: nothing to escape in client_secret_basic.
  const secret = () => randomBytes(24).toString("base64url");
  const client = { clientId: "toolport-web", clientSecret: secret() };
  const machineClient = { clientId: "toolport-machine", clientSecret: secret() };
  const store = new MemoryStore();
  const webClientMetadata = (redirectUris: string[]): ClientMetadata => ({
    client_id: client.clientId,
    client_secret: client.clientSecret,
    application_type: "web",
    token_endpoint_auth_method: "client_secret_basic",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    redirect_uris: redirectUris,
  });
  const setRedirectUris = (uris: string[]) => {
    // Client.find reads the adapter on every request (caching by content), so this applies at once.
    void store.adapter("Client").upsert(client.clientId, webClientMetadata(uris));
  };
  // A web client must have a redirect URI; this one (the discard port) fails visibly until one is set.
  setRedirectUris(options.redirectUris ?? ["http://127.0.0.1:9/redirect-uri-not-set"]);
  void store.adapter("Client").upsert(machineClient.clientId, {
    client_id: machineClient.clientId,
    client_secret: machineClient.clientSecret,
    token_endpoint_auth_method: "client_secret_basic",
    grant_types: ["client_credentials"],
    response_types: [],
    redirect_uris: [],
  });

  // A fresh RSA signing key rather than oidc-provider's published development keys.
  const signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });

  const { default: ProviderClass, errors } = await withoutProviderNotices(() => import("oidc-provider"));
  const configuration: Configuration = {
    adapter: (name: string) => store.adapter(name),
    jwks: { keys: [{ ...signingKey, kid: "harness", use: "sig", alg: "RS256" }] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    routes: { authorization: "/auth", token: "/token", revocation: "/token/revocation", registration: "/reg" },
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, c) => c.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      registration: { enabled: options.registration === true },
      revocation: {
        enabled: true,
        // oidc-provider's default policy for confidential clients (only their own tokens), given here to skip
        // its notice.
        allowedPolicy: async (_ctx, c, token) => {
          if (token.clientId !== c.clientId) {
            throw new errors.InvalidRequest("client is not authorized to revoke the presented token");
          }
          return true;
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => apiUrl,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (!isApiResource(indicator)) throw new errors.InvalidTarget();
          return { scope: scopes.join(" "), accessTokenFormat: "opaque", accessTokenTTL: ttl };
        },
      },
    },
    // Every TTL given, so oidc-provider has no "you SHOULD change" notice to print at request time.
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
      AuthorizationCode: 60,
      RefreshToken: 14 * 24 * 3600,
      IdToken: 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    // Plain text errors (the default page loads a web font) that `authorizeInBrowser` can quote.
    async renderError(ctx, out) {
      ctx.type = "text/plain";
      ctx.body = Object.entries(out)
        .map(([key, value]) => `${key}: ${value}`)
        .join("\n");
    },
  };
  const provider = await withoutProviderNotices(async () => new ProviderClass(issuer, configuration));

  // Counters: a pre/post middleware (it runs before oidc-provider's own, error handler included), so
  // after next() the route, the parsed grant_type and the final status are all known.
  provider.use(async (ctx: KoaContextWithOIDC, next) => {
    await next();
    const route = ctx.oidc?.route;
    if (route === "revocation") counts.revocations++;
    if (route !== "token") return;
    const grantType = ctx.oidc.params?.grant_type;
    if (grantType === "authorization_code") counts.authorizationCode++;
    if (grantType === "client_credentials") counts.clientCredentials++;
    if (grantType === "refresh_token") {
      counts.refresh++;
      if (ctx.status >= 400) counts.refreshFailed++;
    }
  });
  providerServer.on("request", provider.callback());

  /** The token behind a bearer value, if the provider knows it, it is live and it is meant for this API. */
  async function findApiToken(value: string) {
    const token = (await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value));
    if (!token || token.isExpired) return undefined;
    const audience = Array.isArray(token.aud) ? token.aud : [token.aud];
    return audience.some((aud) => typeof aud === "string" && isApiResource(aud)) ? token : undefined;
  }

  let nextItemId = 2;
  apiServer.on("request", (req, res) => {
    counts.apiCalls++;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (status === 401) counts.apiUnauthorized++;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const handle = async () => {
      const authorization = req.headers.authorization;
      const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
      if (!bearer) {
        return send(401, { error: "invalid_request" }, { "www-authenticate": 'Bearer realm="api"' });
      }
      const token = await findApiToken(bearer);
      if (!token) {
        return send(
          401,
          { error: "invalid_token" },
          { "www-authenticate": 'Bearer realm="api", error="invalid_token", error_description="unknown, expired or revoked"' },
        );
      }
      const granted = new Set(token.scope?.split(" ").filter(Boolean));
      const requireScope = (scope: string) => {
        if (granted.has(scope)) return true;
        send(
          403,
          { error: "insufficient_scope", scope },
          { "www-authenticate": `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
        );
        return false;
      };
      // Client-credentials tokens have no end user: the client is the subject.
      const subject = ("accountId" in token && token.accountId) || token.clientId;
      const route = `${req.method} ${new URL(req.url ?? "/", apiUrl).pathname}`;
      switch (route) {
        case "GET /me":
          return send(200, { subject, scopes: [...granted], client_id: token.clientId });
        case "GET /items":
          if (requireScope("items:read")) send(200, { items: [{ id: 1, name: "first" }], subject });
          return;
        case "POST /items": {
          if (!requireScope("items:write")) return;
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return send(400, { error: "invalid_json" });
          }
          if (typeof body !== "object" || body === null || Array.isArray(body)) return send(400, { error: "not_an_object" });
          return send(201, { ...body, id: nextItemId++ });
        }
        case "GET /echo-auth":
          // Verbatim on purpose: the gateway's tests check that it masks tokens in results, under a key that
          // says so and, as `note`, in plain words (only an exact-value match can find it there).
          return send(200, { authorization, note: `the token I got is ${authorization.replace(/^Bearer /i, "")}, thanks` });
        default:
          return send(404, { error: "not_found" });
      }
    };
    handle().catch((error: unknown) => send(500, { error: String(error) }));
  });

  const scopeObject = () => Object.fromEntries(scopes.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope] ?? scope]));
  const authorizationUrl = `${issuer}/auth`;
  const tokenUrl = `${issuer}/token`;
  const jsonResponse = (description: string) => ({
    description,
    content: { "application/json": { schema: { type: "object" } } },
  });
  const denied = { "401": { description: "Missing, unknown, expired or revoked token" } };

  return {
    issuer,
    authorizationUrl,
    tokenUrl,
    revocationUrl: `${issuer}/token/revocation`,
    registrationUrl: `${issuer}/reg`,
    apiUrl,
    addResource(indicator) {
      resources.add(new URL(indicator).href);
    },
    async accessToken(value) {
      const token = await provider.AccessToken.find(value);
      if (!token || token.isExpired) return undefined;
      const audience = (Array.isArray(token.aud) ? token.aud : [token.aud]).filter((a): a is string => typeof a === "string");
      return {
        subject: token.accountId ?? token.clientId ?? "",
        clientId: token.clientId ?? "",
        scopes: token.scope?.split(" ").filter(Boolean) ?? [],
        audience,
      };
    },
    client,
    machineClient,
    counts,
    provider,
    reset() {
      for (const key of Object.keys(counts) as Array<keyof OAuthCounts>) counts[key] = 0;
    },
    setRedirectUris,
    openapi(opts = {}) {
      const wanted = new Set(opts.flows ?? ["authorizationCode", "clientCredentials"]);
      const flows: OAuthFlowsObject = {};
      if (wanted.has("authorizationCode")) {
        flows.authorizationCode = { authorizationUrl, tokenUrl, refreshUrl: tokenUrl, scopes: scopeObject() };
      }
      if (wanted.has("clientCredentials")) flows.clientCredentials = { tokenUrl, scopes: scopeObject() };
      return {
        openapi: "3.0.3",
        info: { title: opts.title ?? "OAuth test API", version: "1.0.0" },
        servers: [{ url: apiUrl }],
        paths: {
          "/me": {
            get: {
              operationId: "getMe",
              summary: "Who the token is for",
              security: [{ oauth: [] }],
              responses: { "200": jsonResponse("subject, scopes and client_id of the token"), ...denied },
            },
          },
          "/items": {
            get: {
              operationId: "listItems",
              summary: "List items",
              security: [{ oauth: ["items:read"] }],
              responses: { "200": jsonResponse("The items"), ...denied, "403": { description: "insufficient_scope" } },
            },
            post: {
              operationId: "createItem",
              summary: "Create an item",
              security: [{ oauth: ["items:write"] }],
              requestBody: {
                required: true,
                content: {
                  "application/json": {
                    schema: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
                  },
                },
              },
              responses: {
                "201": jsonResponse("The item, with its id"),
                ...denied,
                "403": { description: "insufficient_scope" },
              },
            },
          },
          "/echo-auth": {
            get: {
              operationId: "echoAuth",
              summary: "Echo the Authorization header received",
              security: [{ oauth: [] }],
              responses: { "200": jsonResponse("{authorization, note}"), ...denied },
            },
          },
        },
        components: { securitySchemes: { oauth: { type: "oauth2", flows } } },
      };
    },
    revokeAllGrants() {
      for (const model of TOKEN_MODELS) store.model(model).clear();
    },
    endAccessTokens() {
      store.model("AccessToken").clear();
      store.model("ClientCredentials").clear();
    },
    issuedSecrets() {
      return [...store.issued];
    },
    activeRefreshTokens() {
      let active = 0;
      for (const [, payload] of store.live("RefreshToken")) if (!payload.consumed) active++;
      return active;
    },
    async tokenActive(value) {
      if (await findApiToken(value)) return true;
      const refreshToken = await provider.RefreshToken.find(value);
      return !!refreshToken && !refreshToken.isExpired && !refreshToken.consumed;
    },
    async close() {
      await Promise.all([closeServer(providerServer), closeServer(apiServer)]);
    },
  };
}

/**
 * Drives oidc-provider's development login ("any login", password) and consent ("Continue") pages in a
 * playwright page and resolves with the first URL the browser was sent to outside the provider: the
 * client's redirect_uri with `code` and `state` (or `error`), whatever the page there does next. Steps the
 * provider skips (a signed-in session, a grant already given) are skipped. Requests to other hosts than
 * the loopback (the dev pages import a web font) are aborted, from the first call on the page until the
 * page closes (`offlineExceptLoopback`).
 */
export async function authorizeInBrowser(
  page: Page,
  authorizationUrl: string,
  { login = "alice", timeoutMs = 15_000 }: { login?: string; timeoutMs?: number } = {},
): Promise<string> {
  const providerOrigin = new URL(authorizationUrl).origin;
  let redirectedTo: string | undefined;
  const onRequest = (request: Request) => {
    if (redirectedTo || !request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    if (new URL(request.url()).origin !== providerOrigin) redirectedTo = request.url();
  };
  page.on("request", onRequest);
  await offlineExceptLoopback(page);
  const submit = async (button: string) => {
    const navigated = page.waitForEvent("framenavigated", {
      predicate: (frame) => frame === page.mainFrame(),
      timeout: timeoutMs,
    });
    await page.click(button, { timeout: timeoutMs });
    await navigated;
  };
  try {
    // With a session and a grant already there, the provider redirects at once; a redirect_uri nobody
    // serves yet fails the navigation, which is not this helper's business.
    await page.goto(authorizationUrl, { timeout: timeoutMs }).catch((error: unknown) => {
      if (!redirectedTo) throw error;
    });
    // At most a login and a consent page; a few more turns in case the provider asks again.
    for (let turn = 0; turn < 4 && !redirectedTo; turn++) {
      const prompt = await page
        .locator('form input[name="prompt"]')
        .getAttribute("value", { timeout: timeoutMs })
        .catch(() => undefined);
      if (redirectedTo) break;
      if (prompt === "login") {
        await page.fill('input[name="login"]', login, { timeout: timeoutMs });
        await page.fill('input[name="password"]', "any password", { timeout: timeoutMs });
        await submit('button[type="submit"]');
      } else if (prompt === "consent") {
        await submit('button:has-text("Continue")');
      } else {
        const text = await page.textContent("body", { timeout: 1000 }).catch(() => "");
        throw new Error(`authorizeInBrowser: unexpected page at ${page.url()}: ${text?.trim().slice(0, 500)}`);
      }
    }
    if (!redirectedTo) throw new Error(`authorizeInBrowser: still at the provider (${page.url()})`);
    // The request was seen leaving; wait until the redirect_uri has answered it (or the navigation failed).
    await page.waitForURL((url) => url.origin !== providerOrigin, { waitUntil: "commit", timeout: timeoutMs });
    return redirectedTo;
  } finally {
    page.off("request", onRequest);
  }
}

/** Any http(s) address whose host is not the loopback. */
const OFF_LOOPBACK = /^https?:\/\/(?!(?:127\.0\.0\.1|localhost|\[::1\])(?:[:/]|$))/i;
const offlinePages = new WeakSet<Page>();

/**
 * Aborts the page's requests to hosts other than the loopback, for the rest of the page's life. Never
 * undone: removing a page's last route turns chromium's request interception off, and doing that while a
 * page loads can leave its requests pending for good. In a standalone script (playwright-core 1.65.1,
 * chromium; a redirect to a page of 13 scripts and styles), unrouting as that page committed, which this
 * helper did before, left its `load` unfired in 3 of 100 runs, 8 of 150 with this pattern; keeping the
 * route, in 0 of 200. The pattern is a RegExp, not a function, so loopback requests never wait on this
 * process.
 */
async function offlineExceptLoopback(page: Page): Promise<void> {
  if (offlinePages.has(page)) return;
  offlinePages.add(page);
  await page.route(OFF_LOOPBACK, (route) => route.abort());
}

/**
 * The same round trip as `authorizeInBrowser`, over plain HTTP (a cookie jar, redirects followed by hand, the
 * dev login and consent forms posted): resolves with the redirect_uri address the provider sends the
 * browser to, WITHOUT requesting it. For tests that must hold a fresh authorization code back from the
 * client (a browser cannot be stopped inside a redirect chain). The pages are the provider's own.
 */
export async function authorizeOverHttp(authorizationUrl: string, { login = "alice" }: { login?: string } = {}): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const cookies = new Map<string, string>();
  const send = async (url: URL, form?: Record<string, string>) => {
    const res = await fetch(url, {
      method: form ? "POST" : "GET",
      redirect: "manual",
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
    return { res, body: await res.text() };
  };
  let next: { url: URL; form?: Record<string, string> } = { url: new URL(authorizationUrl) };
  for (let hop = 0; hop < 20; hop++) {
    const { res, body } = await send(next.url, next.form);
    const location = res.headers.get("location");
    if (location) {
      const to = new URL(location, next.url);
      if (to.origin !== origin) return to;
      next = { url: to };
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(body)?.[1]?.replace(/&amp;/g, "&");
    const prompt = /name="prompt" value="(\w+)"/.exec(body)?.[1];
    if (!action || (prompt !== "login" && prompt !== "consent")) {
      throw new Error(`authorizeOverHttp: unexpected page at ${next.url} (${res.status}): ${body.slice(0, 300)}`);
    }
    next = {
      url: new URL(action, next.url),
      form: prompt === "login" ? { prompt, login, password: "any password" } : { prompt },
    };
  }
  throw new Error("authorizeOverHttp: too many hops at the provider");
}
