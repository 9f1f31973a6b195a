import { describe, expect, it } from "vitest";
import {
  authorizationRequestUrl,
  boundedFetch,
  checkResponseIssuer,
  discover,
  type FetchFn,
  parseChallenge,
  register,
  scopeUnion,
  toolportClientMetadata,
  type UpstreamAuthorization,
} from "./upstream.js";

const SERVER = "https://mcp.example.com/mcp";
const ISSUER = "https://auth.example.com";

/** A fetch answering JSON by URL (404 for anything else), recording each request. */
function fakeFetch(routes: Record<string, unknown | ((init?: RequestInit) => Response)>) {
  const seen: Array<{ url: string; body?: string }> = [];
  const fetchFn: FetchFn = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    seen.push({ url, body: typeof init?.body === "string" ? init.body : undefined });
    const route = routes[url];
    if (route === undefined) return new Response("not found", { status: 404 });
    if (typeof route === "function") return (route as (init?: RequestInit) => Response)(init);
    return Response.json(route);
  };
  return { fetchFn, seen };
}

const asMetadata = (extra: Record<string, unknown> = {}) => ({
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/authorize`,
  token_endpoint: `${ISSUER}/token`,
  registration_endpoint: `${ISSUER}/register`,
  response_types_supported: ["code"],
  code_challenge_methods_supported: ["S256"],
  ...extra,
});

describe("parseChallenge", () => {
  it("reads the Bearer challenge's resource_metadata, scope and error, quoted or not", () => {
    expect(parseChallenge(`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/p"`)).toEqual(
      { resourceMetadataUrl: "https://x/.well-known/p", scope: ["a", "b"], error: "insufficient_scope" },
    );
    expect(parseChallenge("Basic realm=x, Bearer error=invalid_token")).toEqual({
      resourceMetadataUrl: undefined,
      scope: undefined,
      error: "invalid_token",
    });
    expect(parseChallenge("Basic realm=x")).toBeUndefined();
    expect(parseChallenge(null)).toBeUndefined();
  });
});

describe("discover", () => {
  it("follows the challenge's resource metadata to the authorization server; scopes from the challenge first", async () => {
    const prmUrl = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    const { fetchFn } = fakeFetch({
      [prmUrl]: { resource: SERVER, authorization_servers: [ISSUER], scopes_supported: ["read", "write"] },
      [`${ISSUER}/.well-known/oauth-authorization-server`]: asMetadata({
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      }),
    });
    const found = await discover(SERVER, { resourceMetadataUrl: prmUrl, scope: ["read"] }, fetchFn);
    expect(found).toMatchObject({
      issuer: ISSUER,
      tokenUrl: `${ISSUER}/token`,
      resource: SERVER,
      scopes: ["read"],
      scopesSupported: ["read", "write"],
      cimdSupported: true,
      issParameterSupported: true,
      via: "resource_metadata",
      metadataFound: true,
    });
    const noScope = await discover(SERVER, { resourceMetadataUrl: prmUrl }, fetchFn);
    expect(noScope.scopes).toEqual(["read", "write"]);
  });

  it("refuses resource metadata naming another resource", async () => {
    const { fetchFn } = fakeFetch({
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp": {
        resource: "https://elsewhere.example.com/mcp",
        authorization_servers: [ISSUER],
      },
    });
    await expect(discover(SERVER, undefined, fetchFn)).rejects.toMatchObject({ code: "resource_mismatch" });
  });

  it("refuses an authorization server whose endpoints are not http(s)", async () => {
    const { fetchFn } = fakeFetch({
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp": { resource: SERVER, authorization_servers: [ISSUER] },
      [`${ISSUER}/.well-known/oauth-authorization-server`]: asMetadata({ authorization_endpoint: "javascript:alert(1)" }),
    });
    await expect(discover(SERVER, undefined, fetchFn)).rejects.toMatchObject({ code: "discovery_failed" });
  });

  it("falls back to the server's origin and, without any metadata, the 2025-03-26 default endpoints", async () => {
    const { fetchFn } = fakeFetch({});
    const found = await discover(SERVER, {}, fetchFn);
    expect(found).toMatchObject({
      issuer: "https://mcp.example.com",
      authorizationUrl: "https://mcp.example.com/authorize",
      tokenUrl: "https://mcp.example.com/token",
      registrationUrl: "https://mcp.example.com/register",
      via: "origin",
      metadataFound: false,
      scopes: [],
    });
  });
});

describe("register", () => {
  const as = (extra: Partial<UpstreamAuthorization> = {}): UpstreamAuthorization => ({
    issuer: ISSUER,
    authorizationUrl: `${ISSUER}/authorize`,
    tokenUrl: `${ISSUER}/token`,
    registrationUrl: `${ISSUER}/register`,
    cimdSupported: false,
    issParameterSupported: false,
    resource: SERVER,
    scopes: ["read"],
    scopesSupported: ["read", "admin"],
    via: "resource_metadata",
    metadataFound: true,
    ...extra,
  });
  const identity = {
    metadataUrl: "https://toolport.example.com/v1/oauth/client-metadata.json",
    metadata: toolportClientMetadata("https://toolport.example.com", "https://toolport.example.com/v1/oauth/callback"),
  };

  it("uses the client metadata document's URL when the authorization server supports them", async () => {
    const { fetchFn, seen } = fakeFetch({});
    expect(await register(as({ cimdSupported: true }), identity, fetchFn)).toEqual({
      issuer: ISSUER,
      clientId: identity.metadataUrl,
      clientSecret: null,
      clientAuth: "client_secret_basic",
      kind: "cimd",
    });
    expect(seen).toEqual([]);
    expect(identity.metadata).toMatchObject({ application_type: "web", token_endpoint_auth_method: "none" });
  });

  it("registers dynamically with every offered scope, and again without scopes when they are refused", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const { fetchFn } = fakeFetch({
      [`${ISSUER}/register`]: (init?: RequestInit) => {
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
        bodies.push(body);
        if (body.scope) return Response.json({ error: "invalid_client_metadata", error_description: "scope" }, { status: 400 });
        return Response.json({ client_id: "c-1", client_secret: "s-1", redirect_uris: body.redirect_uris }, { status: 201 });
      },
    });
    const registered = await register(as({ authMethods: ["client_secret_post"] }), identity, fetchFn);
    expect(registered).toEqual({
      issuer: ISSUER,
      clientId: "c-1",
      clientSecret: "s-1",
      clientAuth: "client_secret_post",
      kind: "dcr",
    });
    expect(bodies.map((b) => b.scope)).toEqual(["read admin", undefined]);
    expect(bodies[0]).not.toHaveProperty("client_id");
    expect(bodies[0]).toMatchObject({
      client_name: "Toolport",
      redirect_uris: ["https://toolport.example.com/v1/oauth/callback"],
    });
  });

  it("says so when there is no way to register", async () => {
    const { fetchFn } = fakeFetch({});
    await expect(register(as({ registrationUrl: undefined }), identity, fetchFn)).rejects.toMatchObject({
      code: "registration_unsupported",
    });
    // A client metadata document needs an https URL: a gateway on http registers dynamically instead.
    await expect(
      register(as({ cimdSupported: true, registrationUrl: undefined }), { ...identity, metadataUrl: "http://x/doc" }, fetchFn),
    ).rejects.toMatchObject({ code: "registration_unsupported" });
  });
});

describe("the authorization request and response", () => {
  it("carries PKCE, the resource indicator and the scopes; none when there are none", () => {
    const url = new URL(
      authorizationRequestUrl({
        authorizationUrl: `${ISSUER}/authorize?tenant=1`,
        clientId: "c",
        redirectUri: "https://t/cb",
        scopes: ["a", "b"],
        state: "st",
        codeChallenge: "ch",
        resource: SERVER,
      }),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: "1",
      response_type: "code",
      client_id: "c",
      redirect_uri: "https://t/cb",
      scope: "a b",
      state: "st",
      code_challenge: "ch",
      code_challenge_method: "S256",
      resource: SERVER,
    });
    const bare = new URL(
      authorizationRequestUrl({
        authorizationUrl: `${ISSUER}/authorize`,
        clientId: "c",
        redirectUri: "https://t/cb",
        scopes: [],
        state: "st",
        codeChallenge: "ch",
      }),
    );
    expect(bare.searchParams.has("scope")).toBe(false);
    expect(bare.searchParams.has("resource")).toBe(false);
  });

  it("checks iss exactly (RFC 9207), and requires it when advertised", () => {
    expect(() => checkResponseIssuer(ISSUER, { issuer: ISSUER, issParameterSupported: true })).not.toThrow();
    expect(() => checkResponseIssuer(undefined, { issuer: ISSUER, issParameterSupported: false })).not.toThrow();
    expect(() => checkResponseIssuer(undefined, { issuer: ISSUER, issParameterSupported: true })).toThrow();
    expect(() => checkResponseIssuer(`${ISSUER}/`, { issuer: ISSUER, issParameterSupported: false })).toThrow();
  });

  it("unions scopes in first-seen order", () => {
    expect(scopeUnion(["a", "b"], undefined, ["b", "c", ""])).toEqual(["a", "b", "c"]);
  });
});

describe("boundedFetch", () => {
  it("passes small answers through, refuses large ones and gives up on slow ones", async () => {
    const small = boundedFetch(async () => Response.json({ ok: true }, { status: 201 }));
    const answer = await small("https://x/");
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({ ok: true });
    const large = boundedFetch(async () => new Response("x".repeat(2000)), { timeoutMs: 1000, maxBytes: 1000 });
    await expect(large("https://x/")).rejects.toThrow(/larger than 1000 bytes/);
    const slow = boundedFetch(
      (_input, init) =>
        new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason))),
      { timeoutMs: 20, maxBytes: 1000 },
    );
    await expect(slow("https://x/")).rejects.toThrow();
  });
});
