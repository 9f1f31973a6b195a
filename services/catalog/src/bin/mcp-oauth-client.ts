/**
 * Toolport's upstream MCP OAuth client as a command, for the official conformance suite's client
 * authorization scenarios (`conformance client --suite auth --command "node .../mcp-oauth-client.js"`):
 * the suite appends the server URL, names the scenario in MCP_CONFORMANCE_SCENARIO and gives extra data
 * (a pre-registered client) in MCP_CONFORMANCE_CONTEXT.
 *
 * It drives the code the catalog and execution use: discovery and registration (oauth/upstream.ts), the
 * authorization request and the token requests (token-client.ts) through the guarded outbound client
 * (loopback allowed, as the suite's servers are local), with storage in memory. The browser's part is
 * played by following the authorization endpoint's redirect (the suite's authorization server approves at
 * once). Then it does what a caller's call does: lists the tools and calls the first, answering a 401 by
 * authorizing and a 403 `insufficient_scope` by authorizing again for the union of scopes, at most
 * MAX_AUTHORIZATIONS times.
 */
import { createHash, randomBytes } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { exchangeCode, type TokenClient } from "../oauth/token-client.js";
import {
  authorizationRequestUrl,
  boundedFetch,
  type Challenge,
  checkResponseIssuer,
  discover,
  parseChallenge,
  type Registration,
  register,
  scopeUnion,
  toolportClientMetadata,
  type UpstreamAuthorization,
} from "../oauth/upstream.js";

/** The suite's expected Client ID Metadata Document URL (it does not fetch it). */
const CONFORMANCE_CIMD_URL = "https://conformance-test.local/client-metadata.json";
const REDIRECT_URI = "http://127.0.0.1:3999/v1/oauth/callback";
const MAX_AUTHORIZATIONS = 3;

const say = (line: string) => process.stderr.write(`${line}\n`);

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly challenge: Challenge | undefined,
  ) {
    super(`HTTP ${status}`);
  }
}

async function main(): Promise<void> {
  const serverUrl = process.argv[process.argv.length - 1];
  if (!serverUrl?.startsWith("http")) throw new Error("usage: mcp-oauth-client <server-url>");
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as { client_id?: string; client_secret?: string };
  const outbound = new Outbound({ policy: new AddressPolicy("127.0.0.0/8,::1/128", "conformance") });
  // As the catalog's: bounded in time and size.
  const discoveryFetch = boundedFetch(outbound.fetch);

  let token: string | undefined;
  let requested: string[] = [];
  let authorization: UpstreamAuthorization | undefined;
  let registration: Registration | undefined;
  let authorizations = 0;
  let registeredManually = false;

  // The transport's fetch: a 401 or 403 is raised with its challenge, before the SDK makes anything of it.
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await outbound.fetch(input, init);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel().catch(() => {});
      throw new HttpRefusal(res.status, parseChallenge(res.headers.get("www-authenticate")));
    }
    return res;
  };

  const authorize = async (refusal: HttpRefusal): Promise<void> => {
    if (++authorizations > MAX_AUTHORIZATIONS) throw new Error(`gave up after ${MAX_AUTHORIZATIONS} authorizations`);
    authorization = await discover(serverUrl, refusal.challenge, discoveryFetch);
    const challenged = refusal.challenge?.scope;
    // 401: the challenge's scope, else scopes_supported (discover's choice); 403: everything asked so far too.
    requested = refusal.status === 403 ? scopeUnion(requested, challenged) : authorization.scopes;
    // A registration is the authorization server's own: a new one (migration) means registering again.
    if (registration && registration.issuer !== authorization.issuer) registration = undefined;
    if (!registration) {
      registration =
        context.client_id && !registeredManually
          ? {
              issuer: authorization.issuer,
              clientId: context.client_id,
              clientSecret: context.client_secret ?? null,
              clientAuth: "client_secret_basic",
              kind: "manual",
            }
          : await register(
              { ...authorization, scopes: requested },
              { metadataUrl: CONFORMANCE_CIMD_URL, metadata: toolportClientMetadata("http://127.0.0.1:3999", REDIRECT_URI) },
              discoveryFetch,
            );
      if (registration.kind === "manual" && authorization.authMethods?.includes("client_secret_post")) {
        registration.clientAuth = authorization.authMethods.includes("client_secret_basic")
          ? "client_secret_basic"
          : "client_secret_post";
      }
      registeredManually = registration.kind === "manual";
      say(`registered (${registration.kind})`);
    }
    const state = randomBytes(16).toString("base64url");
    const verifier = randomBytes(32).toString("base64url");
    const url = authorizationRequestUrl({
      authorizationUrl: authorization.authorizationUrl,
      clientId: registration.clientId,
      redirectUri: REDIRECT_URI,
      scopes: requested,
      state,
      codeChallenge: createHash("sha256").update(verifier).digest("base64url"),
      resource: authorization.resource,
    });
    const answer = await outbound.fetch(url, { redirect: "manual" });
    await answer.body?.cancel().catch(() => {});
    const location = answer.headers.get("location");
    if (!location) throw new Error(`the authorization endpoint answered ${answer.status} without a redirect`);
    const back = new URL(location, url);
    if (back.searchParams.get("state") !== state) throw new Error("the authorization response's state is not ours");
    checkResponseIssuer(back.searchParams.get("iss") ?? undefined, authorization);
    const code = back.searchParams.get("code");
    if (!code) throw new Error(`authorization refused: ${back.searchParams.get("error") ?? "no code"}`);
    const client: TokenClient = {
      clientId: registration.clientId,
      clientSecret: registration.clientSecret,
      clientAuth: registration.clientAuth,
    };
    const tokens = await exchangeCode(outbound, authorization.tokenUrl, client, {
      code,
      redirectUri: REDIRECT_URI,
      codeVerifier: verifier,
      resource: authorization.resource,
    });
    token = tokens.accessToken;
    say(`authorized (scope: ${requested.join(" ") || "none"})`);
  };

  const withAuth = async <T>(run: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await run();
      } catch (err) {
        const refusal = refusalOf(err);
        if (!refusal) throw err;
        if (refusal.status === 403 && refusal.challenge?.error !== "insufficient_scope") throw err;
        await authorize(refusal);
      }
    }
  };

  let client: Client | undefined;
  const connect = async () => {
    await client?.close().catch(() => {});
    client = new Client(
      { name: "toolport-conformance", version: "1.0.0" },
      // As the catalog's import and execution's calls: 2026-07-28 when the server speaks it, else 2025-11-25.
      { capabilities: {}, versionNegotiation: { mode: "auto" } },
    );
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { requestInit: { headers }, fetch: fetchFn }));
    return client;
  };
  // A new token needs a new transport (its headers are fixed): each attempt connects afresh.
  const tools = await withAuth(async () => (await connect()).listTools());
  say(`tools: ${tools.tools.map((t) => t.name).join(", ")}`);
  const first = tools.tools[0];
  if (first) {
    const result = await withAuth(async () => {
      const c = client ?? (await connect());
      try {
        return await c.callTool({ name: first.name, arguments: {} });
      } catch (err) {
        // The session keeps its headers: the retry after a new authorization reconnects.
        await client?.close().catch(() => {});
        client = undefined;
        throw err;
      }
    });
    say(`called ${first.name}: ${result.isError ? "error" : "ok"}`);
  }
  await client?.close().catch(() => {});
}

/** The HttpRefusal the fetch raised, however the SDK wrapped it. */
function refusalOf(err: unknown): HttpRefusal | undefined {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof HttpRefusal) return e;
  }
  return undefined;
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    say(`failed: ${err.message}`);
    process.exit(1);
  },
);
