/**
 * OAuth-protected upstream MCP servers (issue 32), end to end: an MCP server built here on the v2 SDK,
 * protected by a real authorization server (oidc-provider, test/harness/oauth-server.ts, with dynamic
 * client registration open) that it names in its protected resource metadata (RFC 9728), and the whole
 * stack in front of it.
 * - Publishing it (no credential): the 401 leads the catalog to the metadata, the authorization server,
 *   and a dynamic registration of Toolport; the service is published without tools, saying why.
 * - The publisher connects on the connect flow (the provider's login and consent over HTTP), then the
 *   re-import lists the tools with the connection's token.
 * - Two callers connect their own accounts and call: each call carries its caller's token (the server
 *   sees two subjects); the authorization requests carry PKCE, the resource indicator and the scope the
 *   server's challenge named.
 * - Refresh: the provider ends every access token; the next calls are refused (401), refreshed once per
 *   connection and retried.
 * - Step-up: a tool that needs a wider scope answers 403 insufficient_scope; the call's error and the
 *   caller's readiness say to connect again; connecting again asks for both scopes, and the call works.
 * - Revocation: deleting a connection revokes it at the provider and the caller's calls are refused as
 *   missing a credential; revoking every grant at the provider breaks the other caller's connection.
 * - A server that refuses even a freshly refreshed token breaks the connection; connecting again mends it.
 * - A server that moves to another authorization server: the next connection registers there and goes there.
 * - An authorization server without dynamic registration: the service is published asking for a client
 *   registered by hand (PUT .../oauth-client, endpoints and scopes from discovery), which then connects.
 * - No token or authorization code the provider issued reaches a log line or an answer.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AccessTokenInfo, authorizeOverHttp, type OAuthServer, startOAuthServer } from "../harness/oauth-server.js";
import { type AgentKey, type ExecStack, registerAgent, startExecStack } from "./execution-support.js";

const READ = "mcp:read";
const ADMIN = "mcp:admin";

interface ProtectedMcp {
  url: string;
  metadataUrl: string;
  /** Requests refused 401 / 403, and tool calls served, by subject. */
  refused: { unauthorized: number; insufficientScope: number };
  calls: Array<{ tool: string; subject: string }>;
  /** Subjects whose every token is refused (401), as a server that stopped accepting them. */
  refusedSubjects: Set<string>;
  /** The authorization server its metadata names; tokens of any in `trusted` are accepted. */
  authorizationServer: OAuthServer;
  trusted: OAuthServer[];
  close(): Promise<void>;
}

/**
 * A 2026-07-28 MCP server (the v2 SDK's stateless handler) at /mcp whose every request needs a live access
 * token from `oauth` for its own URL (the audience) with `mcp:read`; `admin_report` needs `mcp:admin` too.
 */
async function startProtectedMcp(oauth: OAuthServer): Promise<ProtectedMcp> {
  const up = {
    refused: { unauthorized: 0, insufficientScope: 0 },
    calls: [],
    refusedSubjects: new Set<string>(),
    authorizationServer: oauth,
    trusted: [oauth],
  } as unknown as ProtectedMcp;
  const who = new AsyncLocalStorage<AccessTokenInfo>();
  const build = () => {
    const server = new McpServer({ name: "ledger", version: "1.0.0" }, { instructions: "A ledger behind OAuth" });
    server.registerTool("whoami", { description: "Who the token is for", annotations: { readOnlyHint: true } }, async () => {
      const token = who.getStore()!;
      up.calls.push({ tool: "whoami", subject: token.subject });
      return { content: [{ type: "text", text: JSON.stringify({ subject: token.subject, scopes: token.scopes }) }] };
    });
    server.registerTool(
      "admin_report",
      { description: "The ledger's report, for administrators", annotations: { readOnlyHint: true } },
      async () => {
        const token = who.getStore()!;
        up.calls.push({ tool: "admin_report", subject: token.subject });
        return { content: [{ type: "text", text: JSON.stringify({ report: "balanced", for: token.subject }) }] };
      },
    );
    return server;
  };
  const handler = createMcpHandler(() => build(), { legacy: "reject" });
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = new URL(req.url ?? "/", up.url).pathname;
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (path === "/.well-known/oauth-protected-resource/mcp") {
      return json(200, {
        resource: up.url,
        authorization_servers: [up.authorizationServer.issuer],
        scopes_supported: [READ, ADMIN],
      });
    }
    if (path !== "/mcp") return json(404, { error: "not_found" });
    const bearer = req.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    let token: AccessTokenInfo | undefined;
    for (const server of bearer ? up.trusted : []) token ??= await server.accessToken(bearer!);
    if (!token?.audience.includes(up.url) || !token.scopes.includes(READ) || up.refusedSubjects.has(token.subject)) {
      up.refused.unauthorized++;
      return json(
        401,
        { error: "invalid_token" },
        { "www-authenticate": `Bearer resource_metadata="${up.metadataUrl}", scope="${READ}"` },
      );
    }
    let body: { method?: string; params?: { name?: string } } | undefined;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {}
    if (body?.method === "tools/call" && body.params?.name === "admin_report" && !token.scopes.includes(ADMIN)) {
      up.refused.insufficientScope++;
      return json(
        403,
        { error: "insufficient_scope" },
        {
          "www-authenticate": `Bearer error="insufficient_scope", scope="${READ} ${ADMIN}", resource_metadata="${up.metadataUrl}"`,
        },
      );
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
    }
    const request = new Request(`${up.url.replace(/\/mcp$/, "")}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "POST" ? raw : undefined,
    });
    const response = await who.run(token, () => handler.fetch(request, { parsedBody: body }));
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  up.url = `http://127.0.0.1:${port}/mcp`;
  up.metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  oauth.addResource(up.url);
  up.close = async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return up;
}

let oauth: OAuthServer;
/** The authorization server the MCP server moves to (the migration test). */
let moved: OAuthServer | undefined;
/** An authorization server without dynamic registration, and an MCP server behind it. */
let manual: OAuthServer | undefined;
let manualMcp: ProtectedMcp | undefined;
let mcp: ProtectedMcp;
let s: ExecStack;
let publisher: AgentKey;
let serviceId: string;
let tools: Record<string, string>;
const callers: Record<"alice" | "bob" | "carol", AgentKey> = {} as never;
/** Every answer's body as text, to check at the end that no secret reached one. */
const answers: string[] = [];

/** Connects `who` through the provider as `login`; resolves with the authorization request's address. */
async function connect(who: AgentKey, login: string, provider: OAuthServer = oauth, service = serviceId): Promise<URL> {
  const started = await s.call("POST", `/services/${service}/oauth/connect`, { key: who.key, body: {} });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect(started.body.flow).toBe("authorization_code");
  const authorizationUrl = new URL(started.body.authorization_url);
  expect(authorizationUrl.origin).toBe(new URL(provider.issuer).origin);
  const back = await authorizeOverHttp(authorizationUrl.toString(), { login });
  expect(back.pathname).toBe("/v1/oauth/callback");
  const res = await fetch(back, { redirect: "manual" });
  expect(res.status, await res.text()).toBe(302);
  const to = new URL(res.headers.get("location")!);
  expect(to.searchParams.get("oauth_error"), to.toString()).toBeNull();
  expect(to.searchParams.get("oauth")).toBe("connected");
  return authorizationUrl;
}

const callTool = async (who: AgentKey, tool: string) => {
  const reply = await s.call("POST", `/tools/call/${tools[tool]}`, { key: who.key, body: { tool_input: {} } });
  answers.push(JSON.stringify(reply.body));
  return reply;
};
/** The tool's answer: a JSON text comes back as its value. */
const resultOf = (reply: { body: { result: unknown } }) => reply.body.result as Record<string, unknown>;
const readiness = async (who: AgentKey, tool: string) =>
  (await s.call("GET", `/tools/${tools[tool]}/describe`, { key: who.key })).body.readiness;
const connectionOf = async (who: AgentKey) => {
  const reply = await s.call("GET", "/connections", { key: who.key });
  answers.push(JSON.stringify(reply.body));
  const all = reply.body as Array<{ service_id: string }>;
  return all.find((c) => c.service_id === serviceId) as Record<string, unknown> | undefined;
};

beforeAll(async () => {
  oauth = await startOAuthServer({ scopes: [READ, ADMIN], registration: true });
  mcp = await startProtectedMcp(oauth);
  // Every log line there is (debug): no secret may be in any of them.
  s = await startExecStack(["127.0.0.1"], { CATALOG_OUTBOUND_ALLOW: "127.0.0.1", LOG_LEVEL: "debug" });
  publisher = await registerAgent(s);
  callers.alice = await registerAgent(s);
  callers.bob = await registerAgent(s);
  callers.carol = await registerAgent(s);
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await mcp?.close();
  await oauth?.close();
  await moved?.close();
  await manualMcp?.close();
  await manual?.close();
});

describe("an OAuth-protected upstream MCP server", () => {
  it("is published from its 401: discovery, dynamic registration, no tools until the publisher connects", async () => {
    const published = await s.call("POST", "/services", {
      key: publisher.key,
      body: { mcp_server: { url: mcp.url }, visibility: "public" },
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    serviceId = published.body.service.id;
    expect(published.body.tools).toEqual([]);
    const warning = published.body.warnings.join("\n");
    expect(warning).toContain("protected by OAuth");
    expect(warning).toContain(oauth.issuer);
    expect(warning).toContain("Toolport registered as an OAuth client");
    expect(warning).toContain("(dynamic client registration)");
    expect(warning).toContain(`/console/services/${serviceId}/connect`);
    expect(published.body.publishing.security_schemes).toMatchObject([{ name: "mcp_server", type: "oauth2" }]);
    expect(mcp.refused.unauthorized).toBeGreaterThanOrEqual(1);

    const client = await s.call("GET", `/services/${serviceId}/oauth-client`, { key: publisher.key });
    expect(client.status, JSON.stringify(client.body)).toBe(200);
    expect(client.body).toMatchObject({
      scheme_name: "mcp_server",
      flow: "authorization_code",
      authorization_url: `${oauth.issuer}/auth`,
      token_url: oauth.tokenUrl,
      has_client_secret: false,
      redirect_uri: `${s.stack.gatewayUrl}/v1/oauth/callback`,
    });
    // The client the provider registered dynamically (a random id), not the harness's own clients.
    expect(client.body.client_id).not.toBe(oauth.client.clientId);
    expect(await oauth.provider.Client.find(client.body.client_id)).toBeTruthy();

    // Toolport's client metadata document, for authorization servers that take one as the client_id.
    const document = await s.call("GET", "/oauth/client-metadata.json");
    expect(document.body).toMatchObject({
      client_id: `${s.stack.gatewayUrl}/v1/oauth/client-metadata.json`,
      client_name: "Toolport",
      redirect_uris: [`${s.stack.gatewayUrl}/v1/oauth/callback`],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    });

    // Re-importing before a connection: refused, saying where to connect.
    const early = await s.call("POST", `/services/${serviceId}/reimport`, { key: publisher.key, body: {} });
    expect(early.status).toBe(400);
    expect(JSON.stringify(early.body)).toContain(`/console/services/${serviceId}/connect`);
  });

  it("lists the tools once the publisher connects, with the connection's token", async () => {
    const request = await connect(publisher, "publisher");
    const q = request.searchParams;
    expect(q.get("resource")).toBe(mcp.url);
    expect(q.get("scope")).toBe(READ);
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("redirect_uri")).toBe(`${s.stack.gatewayUrl}/v1/oauth/callback`);

    const reimported = await s.call("POST", `/services/${serviceId}/reimport`, { key: publisher.key, body: {} });
    expect(reimported.status, JSON.stringify(reimported.body)).toBe(200);
    tools = Object.fromEntries(reimported.body.tools.map((t: { name: string; id: string }) => [t.name, t.id]));
    expect(Object.keys(tools).sort()).toEqual(["admin_report", "whoami"]);
  });

  it("serves two callers, each with their own connection and token", async () => {
    expect(await readiness(callers.alice, "whoami")).toBe("needs_credential");
    const before = await callTool(callers.alice, "whoami");
    expect(before.body.success).toBe(false);
    expect(before.body.error).toContain("no credential is connected");

    await connect(callers.alice, "alice");
    await connect(callers.bob, "bob");
    expect(await readiness(callers.alice, "whoami")).toBe("ready");
    const [a, b] = await Promise.all([callTool(callers.alice, "whoami"), callTool(callers.bob, "whoami")]);
    expect(a.body, JSON.stringify(a.body)).toMatchObject({ success: true });
    expect(b.body, JSON.stringify(b.body)).toMatchObject({ success: true });
    expect(resultOf(a)).toEqual({ subject: "alice", scopes: [READ] });
    expect(resultOf(b)).toEqual({ subject: "bob", scopes: [READ] });
  });

  it("refreshes once per connection when the provider ends the access tokens, and retries the calls", async () => {
    oauth.reset();
    const refusedBefore = mcp.refused.unauthorized;
    oauth.endAccessTokens();
    const replies = await Promise.all(
      [callers.alice, callers.alice, callers.alice, callers.bob, callers.bob].map((who) => callTool(who, "whoami")),
    );
    for (const r of replies) expect(r.body, JSON.stringify(r.body)).toMatchObject({ success: true });
    expect(resultOf(replies[0]!).subject).toBe("alice");
    expect(resultOf(replies[4]!).subject).toBe("bob");
    expect(oauth.counts.refresh).toBe(2);
    expect(oauth.counts.refreshFailed).toBe(0);
    expect(mcp.refused.unauthorized).toBeGreaterThan(refusedBefore);
  });

  it("step-up: a 403 insufficient_scope asks the caller to connect again for the wider scope, which then works", async () => {
    const refused = await callTool(callers.alice, "admin_report");
    expect(refused.body.success).toBe(false);
    expect(refused.body.error).toContain(ADMIN);
    expect(refused.body.error).toContain(`/console/services/${serviceId}/connect`);
    expect(mcp.refused.insufficientScope).toBe(1);
    const connection = await connectionOf(callers.alice);
    expect(connection).toMatchObject({ status: "needs_consent", broken_reason: expect.stringContaining(ADMIN) });
    expect(await readiness(callers.alice, "admin_report")).toBe("needs_credential");
    // The grant still serves what it covers; bob is untouched.
    expect((await callTool(callers.alice, "whoami")).body.success).toBe(true);
    expect(await readiness(callers.bob, "whoami")).toBe("ready");

    const request = await connect(callers.alice, "alice");
    expect(request.searchParams.get("scope")?.split(" ").sort()).toEqual([ADMIN, READ]);
    expect(await readiness(callers.alice, "admin_report")).toBe("ready");
    expect(await connectionOf(callers.alice)).toMatchObject({ status: "active", broken_reason: null });
    const report = await callTool(callers.alice, "admin_report");
    expect(report.body, JSON.stringify(report.body)).toMatchObject({ success: true });
    expect(resultOf(report)).toEqual({ report: "balanced", for: "alice" });
    // Bob never consented to more.
    const bobs = await callTool(callers.bob, "admin_report");
    expect(bobs.body.success).toBe(false);
  });

  it("breaks a connection whose fresh token the server refuses too, and connecting again mends it", async () => {
    await connect(callers.carol, "carol");
    expect((await callTool(callers.carol, "whoami")).body.success).toBe(true);
    oauth.reset();
    mcp.refusedSubjects.add("carol");
    const refused = await callTool(callers.carol, "whoami");
    expect(refused.body.success).toBe(false);
    expect(refused.body.error).toContain("refused");
    // One refresh, one retry with the fresh token, then no more: the connection is broken.
    expect(oauth.counts.refresh).toBe(1);
    expect(await connectionOf(callers.carol)).toMatchObject({
      status: "broken",
      broken_reason: expect.stringContaining("freshly refreshed token"),
    });
    expect(await readiness(callers.carol, "whoami")).toBe("needs_credential");
    const again = await callTool(callers.carol, "whoami");
    expect(again.body.error).toContain("broken");
    expect(oauth.counts.refresh).toBe(1);

    mcp.refusedSubjects.delete("carol");
    await connect(callers.carol, "carol");
    expect(await connectionOf(callers.carol)).toMatchObject({ status: "active", broken_reason: null });
    const mended = await callTool(callers.carol, "whoami");
    expect(mended.body, JSON.stringify(mended.body)).toMatchObject({ success: true, result: { subject: "carol" } });
  });

  it("revocation: a deleted connection is revoked at the provider; a grant revoked there breaks the connection", async () => {
    const bobs = (await connectionOf(callers.bob)) as { id: string };
    const deleted = await s.call("DELETE", `/connections/${bobs.id}`, { key: callers.bob.key });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ deleted: true, revoked_at_provider: true });
    const bob = await callTool(callers.bob, "whoami");
    expect(bob.body.success).toBe(false);
    expect(bob.body.error).toContain("no credential is connected");
    expect(await readiness(callers.bob, "whoami")).toBe("needs_credential");

    oauth.reset();
    oauth.revokeAllGrants();
    const alice = await callTool(callers.alice, "whoami");
    expect(alice.body.success).toBe(false);
    expect(alice.body.error).toContain("reconnect");
    expect(oauth.counts.refreshFailed).toBe(1);
    expect(await connectionOf(callers.alice)).toMatchObject({
      status: "broken",
      broken_reason: expect.stringContaining("invalid_grant"),
    });
    expect(await readiness(callers.alice, "whoami")).toBe("needs_credential");
  });

  it("follows the server to a new authorization server: the next connection registers there and goes there", async () => {
    moved = await startOAuthServer({ scopes: [READ, ADMIN], registration: true });
    moved.addResource(mcp.url);
    mcp.trusted.push(moved);
    mcp.authorizationServer = moved;
    const dave = await registerAgent(s);
    const request = await connect(dave, "dave", moved);
    expect(request.origin).toBe(new URL(moved.issuer).origin);
    const client = await s.call("GET", `/services/${serviceId}/oauth-client`, { key: publisher.key });
    expect(client.body).toMatchObject({ token_url: moved.tokenUrl, authorization_url: `${moved.issuer}/auth` });
    expect(await moved.provider.Client.find(client.body.client_id)).toBeTruthy();
    const called = await callTool(dave, "whoami");
    expect(called.body, JSON.stringify(called.body)).toMatchObject({ success: true, result: { subject: "dave" } });
  });

  it("without registration at the authorization server: published asking for a client registered by hand, which then connects", async () => {
    manual = await startOAuthServer({ scopes: [READ, ADMIN], redirectUris: [`${s.stack.gatewayUrl}/v1/oauth/callback`] });
    manualMcp = await startProtectedMcp(manual);
    const published = await s.call("POST", "/services", { key: publisher.key, body: { mcp_server: manualMcp.url } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const id = published.body.service.id as string;
    expect(published.body.tools).toEqual([]);
    const warning = published.body.warnings.join("\n");
    expect(warning).toContain("neither client metadata documents nor dynamic registration");
    expect(warning).toContain(`register a client at ${manual.issuer}`);
    expect(warning).toContain(`PUT /v1/services/${id}/oauth-client`);
    expect((await s.call("GET", `/services/${id}/oauth-client`, { key: publisher.key })).status).toBe(404);

    const registered = await s.call("PUT", `/services/${id}/oauth-client`, {
      key: publisher.key,
      body: { client_id: manual.client.clientId, client_secret: manual.client.clientSecret },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    // The endpoints are the discovered ones; the scopes the server's challenge named.
    expect(registered.body).toMatchObject({
      scheme_name: "mcp_server",
      authorization_url: `${manual.issuer}/auth`,
      token_url: manual.tokenUrl,
      has_client_secret: true,
      scopes: [READ],
    });
    const request = await connect(publisher, "publisher", manual, id);
    expect(request.searchParams.get("resource")).toBe(manualMcp.url);
    expect(request.searchParams.get("client_id")).toBe(manual.client.clientId);
    const reimported = await s.call("POST", `/services/${id}/reimport`, { key: publisher.key, body: {} });
    expect(reimported.status, JSON.stringify(reimported.body)).toBe(200);
    const whoami = reimported.body.tools.find((t: { name: string }) => t.name === "whoami");
    const called = await s.call("POST", `/tools/call/${whoami.id}`, { key: publisher.key, body: { tool_input: {} } });
    answers.push(JSON.stringify(called.body));
    expect(called.body, JSON.stringify(called.body)).toMatchObject({ success: true, result: { subject: "publisher" } });
  });

  it("writes no token or code the provider issued to a log line or an answer", async () => {
    const secrets = [
      ...oauth.issuedSecrets(),
      ...(moved?.issuedSecrets() ?? []),
      ...(manual ? [...manual.issuedSecrets(), manual.client.clientSecret] : []),
    ];
    expect(secrets.length).toBeGreaterThan(10);
    let logs = "";
    for (const file of readdirSync(s.stack.logDir)) logs += readFileSync(path.join(s.stack.logDir, file), "utf8");
    expect(logs).toContain("OAuth token refreshed");
    expect(logs).toContain("OAuth connection needs consent (step-up)");
    const leaks = secrets.filter((secret) => logs.includes(secret) || answers.some((a) => a.includes(secret)));
    expect(leaks).toEqual([]);
  });
});
