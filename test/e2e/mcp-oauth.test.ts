/**
 * MCP authorization end to end (issue 32): the official v2 SDK client's own OAuth support against
 * Toolport's MCP server and identity as its authorization server, on the real stack.
 *
 * The client is identified by a Client ID Metadata Document served over HTTPS by a test server (a test
 * CA the identity process trusts; IDENTITY_OUTBOUND_ALLOW names that one address and port, so any other
 * private address stays refused). The person consents on the console's page in chromium for the first
 * connection; later ones decide through the /v1 API that page uses, with the person's sign-in. Then: discovery from the 401, the token, tools/list and a call; the SDK
 * refreshing after its access token is revoked; revocation of the grant refusing the next request; and
 * every refusal the issue lists, each leaving nothing stored.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { CONFORMANCE_2026_VERSION, installConformance } from "../harness/conformance.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { type OAuthServer, startOAuthServer } from "../harness/oauth-server.js";
import { launchBrowser } from "./console-support.js";
import { type ExecStack, startExecStack } from "./execution-support.js";
import { MCP_TOOL_NAMES } from "./mcp-support.js";

let s: ExecStack;
let documents: Receiver;
let elsewhere: Receiver;
let other: OAuthServer;
let callback: { url: string; close(): Promise<void> };
let person: { token: string; accountId: string; email: string };
const PASSWORD = "a long enough password";
let clientId: string;
let conformanceCallbackPort: number;

const REDIRECT_PATH = "/callback";
const ACCESS_LIFETIME_SECONDS = 10;

/** A plain HTTP server the browser would land on; the test reads the code off the redirect itself. */
async function startCallback(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${REDIRECT_PATH}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function metadataDocument(id: string, redirectUri: string): Record<string, unknown> {
  return {
    client_id: id,
    client_name: "Test Assistant",
    client_uri: "https://assistant.example",
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

beforeAll(async () => {
  const ca = await testCertificates();
  [documents, elsewhere, other, callback] = await Promise.all([
    startHttpsReceiver(),
    startHttpsReceiver(),
    startOAuthServer(),
    startCallback(),
  ]);
  clientId = `${documents.url}/client.json`;
  conformanceCallbackPort = await freePort();
  const documentsServed: Record<string, Record<string, unknown>> = {
    "/client.json": metadataDocument(clientId, callback.url),
    // The conformance suite's authorization run (last test): its own callback port.
    "/conformance.json": metadataDocument(
      `${documents.url}/conformance.json`,
      `http://127.0.0.1:${conformanceCallbackPort}/callback`,
    ),
  };
  documents.respond((req) => {
    const doc = documentsServed[req.path];
    return doc ? { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(doc) } : { status: 404 };
  });
  elsewhere.respond(() => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(metadataDocument(`${elsewhere.url}/client.json`, callback.url)),
  }));
  s = await startExecStack(
    [],
    {
      NODE_EXTRA_CA_CERTS: ca.caFile,
      IDENTITY_OUTBOUND_ALLOW: `127.0.0.1:${documents.port}`,
      // Short-lived access tokens: the SDK must refresh on its own during these tests, and one test waits one out.
      OAUTH_ACCESS_LIFETIME_SECONDS: String(ACCESS_LIFETIME_SECONDS),
    },
    ["catalog", "execution", "billing", "identity", "content", "gateway", "mcp-server"],
  );
  const email = `p-${randomBytes(4).toString("hex")}@example.com`;
  const signup = await s.call("POST", "/auth/signup", { body: { email, password: PASSWORD, name: "Pat" } });
  expect(signup.status, JSON.stringify(signup.body)).toBeLessThan(300);
  person = { token: signup.body.access_token, accountId: signup.body.account_id, email };
}, 300_000);

afterAll(async () => {
  await Promise.all([documents?.close(), elsewhere?.close(), other?.close(), callback?.close()]);
  await s?.stop();
});

/** An MCP client's OAuth state, as a desktop assistant keeps it; `authorizationUrl` is where it sent the person. */
class Provider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(readonly clientMetadataUrl: string) {}
  get redirectUrl() {
    return callback.url;
  }
  get clientMetadata(): OAuthClientMetadata {
    return metadataDocument(this.clientMetadataUrl, callback.url) as OAuthClientMetadata;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The person's browser at the authorization URL: the gateway sends it on to the console's consent page. */
async function consentRequestOf(authorizationUrl: URL | string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: "manual" });
  expect(res.status, await res.text()).toBe(302);
  const location = new URL(res.headers.get("location") as string);
  expect(location.pathname).toBe("/console/oauth/authorize");
  return location.searchParams.get("request") as string;
}

/** The consent page's decision, with the person's sign-in; answers where the browser goes next. */
async function decide(requestId: string, body: Record<string, unknown>): Promise<URL> {
  const res = await s.call("POST", `/oauth/authorizations/${requestId}`, { token: person.token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return new URL(res.body.redirect_to);
}

async function connected(provider: Provider): Promise<Client> {
  const client = new Client({ name: "oauth-e2e", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(s.stack.mcpUrl), { authProvider: provider }));
  return client;
}

/** The whole dance through the SDK: 401, discovery, the consent, the code for tokens; answers the client. */
async function authorizeThroughSdk(provider: Provider, decision: Record<string, unknown> = { allow: true }) {
  const first = new Client({ name: "oauth-e2e", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const transport = new StreamableHTTPClientTransport(new URL(s.stack.mcpUrl), { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl, "the SDK sent the person to authorize").toBeDefined();
  const landing = await decide(await consentRequestOf(provider.authorizationUrl!), decision);
  await transport.finishAuth(landing.searchParams);
  return connected(provider);
}

/** A raw 2025-11-25 tools/list POST to /mcp with these credential headers. */
const rawToolsList = (credential: Record<string, string>) =>
  fetch(s.stack.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...credential,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

interface Grant {
  key: { id: string; oauth_client_id: string | null; permissions: unknown; revoked_at: string | null };
  client_id: string;
  client_name: string;
}
const grants = async () => (await s.call("GET", "/oauth/grants", { token: person.token })).body as Grant[];

describe("an MCP client connects by OAuth (the v2 SDK's own support)", () => {
  let provider: Provider;
  let client: Client;

  it("discovers, is identified by its metadata document, gets consent and a token, lists the tools and calls one", async () => {
    // The challenge and discovery documents the SDK follows.
    const challenge = await fetch(s.stack.mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(challenge.status).toBe(401);
    const resourceMetadataUrl = /resource_metadata="([^"]+)"/.exec(challenge.headers.get("www-authenticate") ?? "")?.[1];
    const prm = (await (await fetch(resourceMetadataUrl!)).json()) as { resource: string; authorization_servers: string[] };
    expect(prm.resource).toBe(s.stack.mcpUrl);
    expect(prm.authorization_servers).toEqual([s.stack.gatewayUrl]);
    const asm = await (await fetch(`${s.stack.gatewayUrl}/.well-known/oauth-authorization-server`)).json();
    expect(asm).toMatchObject({
      issuer: s.stack.gatewayUrl,
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
    });
    expect(asm).not.toHaveProperty("registration_endpoint");

    // The person in a browser: the SDK's authorization URL, the console's consent page, sign in, allow.
    provider = new Provider(clientId);
    const first = new Client({ name: "oauth-e2e", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    const transport = new StreamableHTTPClientTransport(new URL(s.stack.mcpUrl), { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(provider.authorizationUrl!.toString());
      await page.getByLabel("Email").fill(person.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { level: 1, name: "Allow Test Assistant to use Toolport?" }).waitFor();
      await page.getByLabel("Require confirmation for calls that write, send, spend or delete").check();
      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL((u) => u.toString().startsWith(callback.url));
      await transport.finishAuth(new URL(page.url()).searchParams);
    } finally {
      await browser.close();
    }
    client = await connected(provider);
    expect(provider.saved?.refresh_token).toMatch(/^tprt_/);
    expect(provider.saved?.access_token).toMatch(/^tpat_/);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    const found = await client.callTool({ name: "search_tools", arguments: { query: "count the words in a text", limit: 3 } });
    expect(found.isError).toBeFalsy();
    const limits = await client.callTool({ name: "get_spending_limits", arguments: {} });
    expect(limits.isError, JSON.stringify(limits.content)).toBeFalsy();

    // The grant: listed beside the keys, with the permissions chosen and its usage counted.
    const [grant] = await grants();
    expect(grant).toMatchObject({ client_id: clientId, client_name: "Test Assistant" });
    expect(grant!.key).toMatchObject({
      oauth_client_id: clientId,
      permissions: { require_confirmation: true },
      revoked_at: null,
    });
    const keys = (await s.call("GET", "/api-keys", { token: person.token })).body as Array<{
      id: string;
      oauth_client_id: string | null;
    }>;
    expect(keys.find((k) => k.id === grant!.key.id)?.oauth_client_id).toBe(clientId);
  });

  it("refreshes by itself when its access token stops working, and a reused refresh token revokes the grant", async () => {
    const before = provider.saved!;
    // The client revokes its own access token (RFC 7009): the next request is refused, the SDK refreshes.
    const revoked = await fetch(`${s.stack.gatewayUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: before.access_token, client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const again = await connected(provider);
    expect((await again.listTools()).tools.length).toBe(MCP_TOOL_NAMES.length);
    expect(provider.saved!.access_token).not.toBe(before.access_token);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);

    // The first refresh token, rotated away, presented again: invalid_grant, and the grant is revoked.
    const reused = await fetch(`${s.stack.gatewayUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: before.refresh_token!, client_id: clientId }),
    });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
    const [grant] = await grants();
    expect(grant).toBeUndefined();
    const info = await fetch(`${s.stack.gatewayUrl}/v1/oauth/token-info`, {
      headers: { authorization: `Bearer ${provider.saved!.access_token}` },
    });
    expect(info.status, "the newest token went with the grant").toBe(401);
  });

  it("stops the next request once the person revokes the grant (as from the console)", async () => {
    const fresh = new Provider(clientId);
    const client = await authorizeThroughSdk(fresh);
    expect((await client.listTools()).tools.length).toBe(MCP_TOOL_NAMES.length);
    // A tool call on /v1 with the token warms the gateway's principal cache; revocation must still win.
    const tools = (await s.call("GET", "/tools/search?query=word&limit=1", { token: fresh.saved!.access_token })).body;
    const warm = async () =>
      s.call("POST", "/tools/call/batch", {
        token: fresh.saved!.access_token,
        body: { calls: [{ tool_id: tools[0].id, tool_input: { text: "a b c" } }] },
      });
    expect((await warm()).status).toBe(200);
    const [grant] = await grants();
    const revoke = await s.call("DELETE", `/api-keys/${grant!.key.id}`, { token: person.token });
    expect(revoke.status).toBe(200);
    const raw = await rawToolsList({ authorization: `Bearer ${fresh.saved!.access_token}` });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect((await warm()).status, "the cached principal does not outlive the grant").toBe(401);
    // Its refresh token went with it.
    const refreshed = await fetch(`${s.stack.gatewayUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: fresh.saved!.refresh_token!, client_id: clientId }),
    });
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });
});

describe("refusals, each storing nothing", () => {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorizeUrl = (params: Record<string, string>) => {
    const url = new URL(`${s.stack.gatewayUrl}/oauth/authorize`);
    const all = {
      response_type: "code",
      client_id: clientId,
      redirect_uri: callback.url,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st-1",
      resource: s.stack.mcpUrl,
      scope: "mcp",
      ...params,
    };
    for (const [k, v] of Object.entries(all)) if (v !== "") url.searchParams.set(k, v);
    return url;
  };
  const tokenRequest = (fields: Record<string, string>) =>
    fetch(`${s.stack.gatewayUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });

  it("refuses a redirect_uri the client did not register, shown to the person and never redirected to", async () => {
    const res = await fetch(authorizeUrl({ redirect_uri: "http://127.0.0.1:9/elsewhere" }), {
      redirect: "manual",
      headers: { accept: "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.json()).toMatchObject({
      error: "invalid_request",
      error_description: expect.stringMatching(/redirect_uri/),
    });
  });

  it("refuses another resource (invalid_target) and a missing PKCE challenge, back at the redirect_uri", async () => {
    for (const [params, error] of [
      [{ resource: "https://elsewhere.example/mcp" }, "invalid_target"],
      [{ code_challenge: "" }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
    ] as const) {
      const res = await fetch(authorizeUrl(params), { redirect: "manual" });
      expect(res.status, JSON.stringify(params)).toBe(302);
      const back = new URL(res.headers.get("location") as string);
      expect(`${back.origin}${back.pathname}`).toBe(callback.url);
      expect(back.searchParams.get("error"), JSON.stringify(params)).toBe(error);
      expect(back.searchParams.get("state")).toBe("st-1");
      expect(back.searchParams.get("iss")).toBe(s.stack.gatewayUrl);
    }
  });

  it("refuses a metadata document at a private address not allowed, and dynamic registration when it is off", async () => {
    const res = await fetch(authorizeUrl({ client_id: `${elsewhere.url}/client.json` }), {
      redirect: "manual",
      headers: { accept: "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: "invalid_client",
      error_description: expect.stringMatching(/could not be fetched/),
    });
    expect(elsewhere.requests, "nothing was dialled").toHaveLength(0);
    const register = await fetch(`${s.stack.gatewayUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [callback.url], token_endpoint_auth_method: "none" }),
    });
    expect(register.status).toBe(400);
  });

  it("refuses a PKCE mismatch without making a grant, and the code stays single use", async () => {
    const before = (await grants()).length;
    const requestId = await consentRequestOf(authorizeUrl({}));
    const landing = await decide(requestId, { allow: true });
    const code = landing.searchParams.get("code") as string;
    expect(landing.searchParams.get("state")).toBe("st-1");
    const wrong = await tokenRequest({
      grant_type: "authorization_code",
      code,
      code_verifier: randomBytes(32).toString("base64url"),
      client_id: clientId,
      redirect_uri: callback.url,
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringMatching(/PKCE/) });
    expect((await grants()).length, "no grant was made").toBe(before);
    const late = await tokenRequest({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId });
    expect(await late.json()).toMatchObject({ error: "invalid_grant" });
    expect((await grants()).length).toBe(before);
  });

  it("a request belongs to the first person who opens it: to another account it does not exist", async () => {
    const requestId = await consentRequestOf(authorizeUrl({}));
    expect((await s.call("GET", `/oauth/authorizations/${requestId}`, { token: person.token })).status).toBe(200);
    const other = await s.call("POST", "/auth/signup", {
      body: { email: `o-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD, name: "Other" },
    });
    for (const [method, body] of [
      ["GET", undefined],
      ["POST", { allow: true }],
    ] as const) {
      const res = await s.call(method, `/oauth/authorizations/${requestId}`, { token: other.body.access_token, body });
      expect(res.status, method).toBe(404);
      expect(res.body.error.code).toBe("authorization_request_not_found");
    }
    // Still the first person's to decide.
    expect((await decide(requestId, { allow: false })).searchParams.get("error")).toBe("access_denied");
  });

  it("allows only what a key could be made with: an unknown service in the allow-list is a 400, nothing decided", async () => {
    const requestId = await consentRequestOf(authorizeUrl({}));
    const bad = await s.call("POST", `/oauth/authorizations/${requestId}`, {
      token: person.token,
      body: { allow: true, permissions: { allowed_services: [randomUUID()] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("permissions.allowed_services[0]");
    // Still undecided: the person can answer it.
    expect((await decide(requestId, { allow: false })).searchParams.get("error")).toBe("access_denied");
  });

  it("denied: back with access_denied and no grant; the request cannot be answered twice", async () => {
    const before = (await grants()).length;
    const requestId = await consentRequestOf(authorizeUrl({}));
    const landing = await decide(requestId, { allow: false });
    expect(landing.searchParams.get("error")).toBe("access_denied");
    expect(landing.searchParams.get("code")).toBeNull();
    const twice = await s.call("POST", `/oauth/authorizations/${requestId}`, { token: person.token, body: { allow: true } });
    expect(twice.status).toBe(404);
    expect((await grants()).length).toBe(before);
  });

  it("refuses an expired or revoked token, and one of another authorization server, at /mcp with invalid_token", async () => {
    const theirs = await fetch(other.tokenUrl, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${other.machineClient.clientId}:${other.machineClient.clientSecret}`).toString("base64")}`,
      },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: "items:read" }),
    });
    const foreign = ((await theirs.json()) as { access_token: string }).access_token;
    expect(foreign).toBeTruthy();
    for (const token of [foreign, `tpat_${randomBytes(32).toString("base64url")}`]) {
      const res = await rawToolsList({ authorization: `Bearer ${token}` });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it("refuses an access token once it has expired, and the client's refresh token still gets a new one", async () => {
    const p = new Provider(clientId);
    await (await authorizeThroughSdk(p)).close();
    const token = p.saved!.access_token;
    expect(p.saved!.expires_in).toBe(ACCESS_LIFETIME_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, ACCESS_LIFETIME_SECONDS * 1000 + 500));
    const info = await fetch(`${s.stack.gatewayUrl}/v1/oauth/token-info`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(401);
    const res = await rawToolsList({ authorization: `Bearer ${token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    const client = await connected(p);
    expect((await client.listTools()).tools.length, "the SDK refreshed by itself").toBe(MCP_TOOL_NAMES.length);
    expect(p.saved!.access_token).not.toBe(token);
  });

  it("keeps svc-api-key working exactly as before beside OAuth", async () => {
    const agent = await s.call("POST", "/agents", { body: { name: "keyed" } });
    const res = await rawToolsList({ "svc-api-key": agent.body.api_key });
    expect(res.status).toBe(200);
  });
});

describe("the official conformance suite's authorization server scenarios, against identity", () => {
  it("passes the metadata endpoint and the authorization code grant (a public client by metadata document, PKCE, resource)", async () => {
    const suite = await installConformance((line) => process.stderr.write(`${line}\n`), CONFORMANCE_2026_VERSION);
    const child = spawn(
      suite.node,
      [
        suite.cli,
        "authorization",
        "--url",
        s.stack.gatewayUrl,
        "--client-id",
        `${documents.url}/conformance.json`,
        "--resource",
        s.stack.mcpUrl,
        "--port",
        String(conformanceCallbackPort),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    // The suite prints the authorization URL for a person to open; the person here allows through the
    // consent page's API, and the browser's last step, following redirect_to, reaches the suite's callback.
    const authorizationUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        output += chunk;
        const found = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(output);
        if (found) resolve(found[1] as string);
      });
      child.on("exit", () => reject(new Error(`the suite ended before asking for authorization:\n${output}`)));
    });
    const landing = await decide(await consentRequestOf(authorizationUrl), { allow: true });
    await fetch(landing);
    const code = await exited;
    expect(output, output).toMatch(/authorization-server-metadata-endpoint[^\n]*(✓|pass)/i);
    expect(output, output).toMatch(/authorization-code-grant[^\n]*(✓|pass)/i);
    expect(code, output).toBe(0);
  }, 120_000);
});
