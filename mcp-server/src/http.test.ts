/**
 * The MCP server's HTTP surface, in process: which methods /mcp serves, the reply's media type, and the
 * address it forwards to the gateway. The gateway here is a real HTTP server that records what reached
 * it and answers an empty search, so the test sees exactly the headers the MCP server sent.
 */
import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODERN_REVISION as MODERN, modernRequest } from "../../test/e2e/mcp-support.js";
import { GatewayClient } from "./gateway-client.js";
import { mcpHttpHandler } from "./http.js";
import { type OriginPolicy, originPolicy } from "./origin-guard.js";

const received: IncomingHttpHeaders[] = [];
/** The resource the fake gateway says "tpat_good" was issued for (set to the MCP server's own). */
let tokenResource = "";
const GRANT = "8b2c1f7e-1d2a-4c3b-9e8f-7a6b5c4d3e2f";
let gatewayServer: Server;
let gateway: GatewayClient;
const mcpServers: Server[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startMcp(trustProxy: boolean, origins?: OriginPolicy): Promise<string> {
  const server = createServer(mcpHttpHandler(createLogger("mcp-test", "silent"), gateway, { trustProxy, origins }));
  mcpServers.push(server);
  return `${await listen(server)}/mcp`;
}

/** A key for the requests: /mcp refuses a request without a credential (authorization.ts). */
const KEY = { "svc-api-key": "tp_unit_test_key" };
const JSON_POST = { "content-type": "application/json", accept: "application/json, text/event-stream", ...KEY };

/** One JSON-RPC tools/call of search_tools, as a client that skipped nothing it must send. */
function searchCall(extraHeaders: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { ...JSON_POST, ...extraHeaders },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "search_tools", arguments: { query: "weather" } },
    }),
  };
}

beforeAll(async () => {
  gatewayServer = createServer((req, res) => {
    received.push(req.headers);
    if (req.url === "/v1/oauth/token-info") {
      // As the gateway answers (routes/oauth-server.ts): the facts of an active token, else 401.
      const token = req.headers.authorization?.replace(/^Bearer /, "");
      const resource =
        token === "tpat_good" ? tokenResource : token === "tpat_elsewhere" ? "https://elsewhere.example/mcp" : null;
      if (!resource) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "inactive", error: { code: "invalid_token", message: "inactive", details: {} } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ active: true, client_id: "https://c.example/c.json", resource, scope: "mcp", exp: 1, key_id: GRANT }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end("[]");
  });
  gateway = new GatewayClient(await listen(gatewayServer));
});

afterAll(async () => {
  await gateway.close();
  for (const server of [...mcpServers, gatewayServer]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("/mcp", () => {
  it("answers GET and DELETE with 405 and Allow: POST, since a stateless server keeps no stream or session", async () => {
    const url = await startMcp(false);
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(url, { method, headers: { accept: "text/event-stream", ...KEY } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow"), method).toBe("POST");
      const body = (await res.json()) as { jsonrpc: string; error: { message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.message).toContain("POST");
    }
  });

  it("answers a POST with one JSON reply, not an event stream", async () => {
    const url = await startMcp(false);
    const res = await fetch(url, searchCall());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const reply = (await res.json()) as { id: number; result: { structuredContent: unknown; isError?: boolean } };
    expect(reply.id).toBe(1);
    expect(reply.result.isError ?? false).toBe(false);
    expect(reply.result.structuredContent).toEqual({ tools: [] });
  });

  it("replaces an X-Forwarded-For the client sent with the client's own address", async () => {
    const url = await startMcp(false);
    received.length = 0;
    const res = await fetch(url, searchCall({ "x-forwarded-for": "203.0.113.7" }));
    expect(res.status).toBe(200);
    await res.text();
    expect(received).toHaveLength(1);
    expect(received[0]?.["x-forwarded-for"]).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it("keeps the balancer's X-Forwarded-For and appends the peer when told to trust it", async () => {
    const url = await startMcp(true);
    received.length = 0;
    const res = await fetch(url, searchCall({ "x-forwarded-for": "203.0.113.7" }));
    await res.text();
    expect(received[0]?.["x-forwarded-for"]).toMatch(/^203\.0\.113\.7, (::ffff:)?127\.0\.0\.1$/);
  });

  it("refuses what the Streamable HTTP transport refuses, with its status and a JSON-RPC error", async () => {
    const url = await startMcp(false);
    const post = async (init: RequestInit) => {
      const res = await fetch(url, { method: "POST", ...init });
      return {
        status: res.status,
        body: (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null },
      };
    };
    const ok = JSON_POST;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const cases: [string, RequestInit, number, number, string][] = [
      [
        "Accept without text/event-stream",
        { headers: { ...ok, accept: "application/json" }, body: ping },
        406,
        -32000,
        "Not Acceptable",
      ],
      [
        "a body that is not JSON",
        { headers: { ...ok, "content-type": "text/plain" }, body: ping },
        415,
        -32000,
        "Unsupported Media Type",
      ],
      ["broken JSON", { headers: ok, body: "{" }, 400, -32700, "Invalid JSON"],
      ["JSON that is not JSON-RPC", { headers: ok, body: JSON.stringify({ hello: 1 }) }, 400, -32600, "Bad Request"],
      ["over 4 MiB", { headers: ok, body: `"${"x".repeat(4 * 1024 * 1024)}"` }, 413, -32000, "Payload Too Large"],
      [
        "101 messages",
        { headers: ok, body: JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }))) },
        400,
        -32600,
        "Batch",
      ],
      ["two requests with one id", { headers: ok, body: `[${ping},${ping}]` }, 400, -32600, "share an id"],
      [
        "an unknown protocol version",
        { headers: { ...ok, "mcp-protocol-version": "1999-01-01" }, body: ping },
        400,
        -32000,
        "Unsupported protocol version",
      ],
    ];
    for (const [name, init, status, code, message] of cases) {
      const { status: got, body } = await post(init);
      expect(got, name).toBe(status);
      expect(body.error.code, name).toBe(code);
      expect(body.error.message, name).toContain(message);
      expect(body.id, name).toBeNull();
    }
  });

  it("answers a batch with an array of its responses, and a POST of notifications only with 202", async () => {
    const url = await startMcp(false);
    const headers = JSON_POST;
    const batch = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify([
        { jsonrpc: "2.0", id: "a", method: "ping" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 7, method: "tools/list" },
      ]),
    });
    expect(batch.status).toBe(200);
    const replies = (await batch.json()) as { id: string | number; result: { tools?: { name: string }[] } }[];
    expect(replies.map((r) => r.id)).toEqual(["a", 7]);
    expect(replies[0]?.result).toEqual({});
    expect(replies[1]?.result.tools).toHaveLength(11);
    const note = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(note.status).toBe(202);
    expect(await note.text()).toBe("");
  });
});

/** A POST of a search_tools call with the Host and Origin given (fetch does not let a caller set Host). */
function postWith(mcpUrl: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const target = new URL(mcpUrl);
  const init = searchCall();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { ...init.headers, ...headers } as Record<string, string>,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(init.body as string);
  });
}

describe("/mcp against DNS rebinding", () => {
  it("refuses a foreign Host or Origin with 403 before anything runs, and serves loopback names", async () => {
    const url = await startMcp(false);
    const port = new URL(url).port;
    const before = received.length;
    const evil = await postWith(url, { host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}` });
    // Not a host at all (a URL parser would read "localhost" as the host of this one).
    expect((await postWith(url, { host: `evil.example.com@localhost:${port}` })).status).toBe(403);
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null });
    expect(JSON.parse(evil.body).error.message).toContain("evil.example.com");
    // A loopback Host with a foreign page's Origin is refused too.
    const page = await postWith(url, { host: `localhost:${port}`, origin: "https://evil.example.com" });
    expect(page.status).toBe(403);
    expect(JSON.parse(page.body).error.message).toContain("Origin");
    expect(received.length).toBe(before); // nothing reached the gateway
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await postWith(url, { host })).status).toBe(200);
      expect((await postWith(url, { host, origin: `http://${host}` })).status).toBe(200);
    }
    expect(received.length).toBe(before + 4);
  });

  it("serves the names and origins it is configured with, and only those", async () => {
    const origins = originPolicy({
      listenHost: "0.0.0.0",
      publicUrl: "https://mcp.example.org/mcp",
      allowedHosts: ["toolport-mcp.internal"],
      allowedOrigins: ["https://console.example.org"],
    });
    const url = await startMcp(false, origins);
    expect((await postWith(url, { host: "mcp.example.org" })).status).toBe(200);
    expect((await postWith(url, { host: "toolport-mcp.internal:8090" })).status).toBe(200);
    expect((await postWith(url, { host: "mcp.example.org", origin: "https://console.example.org" })).status).toBe(200);
    // Listening on every interface, loopback names are not this server's unless configured.
    expect((await postWith(url, { host: "localhost" })).status).toBe(403);
    // An address is no rebinding (a pod or Service IP): served, with a page from that address only.
    expect((await postWith(url, { host: "10.0.0.7:8090" })).status).toBe(200);
    expect((await postWith(url, { host: "[fd00::7]:8090", origin: "http://[fd00::7]:8090" })).status).toBe(200);
    expect((await postWith(url, { host: "10.0.0.7:8090", origin: "http://10.0.0.8" })).status).toBe(403);
    expect((await postWith(url, { host: "mcp.example.org", origin: "https://console.example.org:8443" })).status).toBe(403);
    expect((await postWith(url, { host: "mcp.example.org", origin: "null" })).status).toBe(403);
  });

  it("checks no Host when it cannot know its names, but still refuses a page from another site", async () => {
    const open = originPolicy({ listenHost: "0.0.0.0", allowedHosts: [], allowedOrigins: [] });
    expect(open.hosts).toBeNull();
    const url = await startMcp(false, open);
    expect((await postWith(url, { host: "whatever.example" })).status).toBe(200);
    expect((await postWith(url, { host: "whatever.example", origin: "http://whatever.example" })).status).toBe(200);
    expect((await postWith(url, { host: "whatever.example", origin: "http://evil.example.com" })).status).toBe(403);
  });
});

/** A 2026-07-28 request: no session, the version and capabilities in `_meta`, the routing headers set. */
const modern = (method: string, params: Record<string, unknown>, headers: Record<string, string | undefined> = {}) =>
  modernRequest(method, params, { key: KEY["svc-api-key"], headers });

type RpcReply = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

describe("/mcp at protocol revision 2026-07-28", () => {
  it("answers without a handshake: discovery, a tool list with true cache hints, and a tool call", async () => {
    const url = await startMcp(false);
    const discover = await fetch(url, modern("server/discover", {}));
    expect(discover.status).toBe(200);
    const found = ((await discover.json()) as RpcReply).result ?? {};
    expect(found.supportedVersions).toContain(MODERN);
    expect(found.capabilities).toHaveProperty("tools");
    expect(found.resultType).toBe("complete");

    const list = await fetch(url, modern("tools/list", {}));
    expect(list.headers.get("mcp-session-id")).toBeNull();
    const listed = ((await list.json()) as RpcReply).result ?? {};
    expect((listed.tools as unknown[]).length).toBe(11);
    expect(listed).toMatchObject({ ttlMs: 3_600_000, cacheScope: "public", resultType: "complete" });

    const before = received.length;
    const called = await fetch(url, modern("tools/call", { name: "search_tools", arguments: { query: "weather" } }));
    const reply = (await called.json()) as RpcReply;
    expect(reply.result).toMatchObject({ structuredContent: { tools: [] }, resultType: "complete" });
    expect(received.length).toBe(before + 1);
  });

  it("carries the client's trace context from the request's _meta on to the gateway", async () => {
    const url = await startMcp(false);
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const init = modern("tools/call", { name: "search_tools", arguments: { query: "weather" } });
    const body = JSON.parse(init.body as string);
    body.params._meta.traceparent = traceparent;
    body.params._meta.tracestate = "vendor=1";
    const before = received.length;
    const res = await fetch(url, { ...init, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(received.length).toBe(before + 1);
    expect(received.at(-1)?.traceparent).toBe(traceparent);
    expect(received.at(-1)?.tracestate).toBe("vendor=1");
  });

  it("refuses a request whose headers are missing or contradict its body, naming the header, before anything runs", async () => {
    const url = await startMcp(false);
    const before = received.length;
    const call = { name: "search_tools", arguments: { query: "weather" } };
    const cases: [string, RequestInit][] = [
      ["Mcp-Method", modern("tools/call", call, { "mcp-method": "tools/list" })],
      ["Mcp-Name", modern("tools/call", call, { "mcp-name": "fetch_result" })],
      ["MCP-Protocol-Version", modern("tools/call", call, { "mcp-protocol-version": "2025-11-25" })],
    ];
    for (const [header, init] of cases) {
      const res = await fetch(url, init);
      expect(res.status, header).toBe(400);
      const body = (await res.json()) as RpcReply;
      expect(body.error?.message.toLowerCase(), header).toContain(header.toLowerCase());
    }
    const res = await fetch(url, modern("tools/call", call, { "mcp-name": undefined }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as RpcReply).error?.message.toLowerCase()).toContain("mcp-name");
    expect(received.length).toBe(before);
  });
});

describe("authorization (OAuth protected resource)", () => {
  const listTools = (headers: Record<string, string>) =>
    fetch(mcpUrl, modernRequest("tools/list", {}, { headers: { ...headers } }));
  let mcpUrl: string;
  beforeAll(async () => {
    mcpUrl = await startMcp(false);
    tokenResource = mcpUrl;
  });

  it("answers 401 with a challenge naming its metadata and scope when no credential is sent; health stays open", async () => {
    const res = await listTools({});
    expect(res.status).toBe(401);
    const origin = new URL(mcpUrl).origin;
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
    );
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/svc-api-key/);
    expect((await fetch(`${origin}/mcp/health`)).status).toBe(200);
  });

  it("serves its protected resource metadata at both well-known addresses", async () => {
    const origin = new URL(mcpUrl).origin;
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toMatchObject({
        resource: mcpUrl,
        authorization_servers: ["http://localhost:8080"],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("serves a token issued for it, forwards the token to the gateway and never a client's grant header", async () => {
    const before = received.length;
    const ok = await listTools({ authorization: "Bearer tpat_good", "x-toolport-grant": "forged" });
    expect(ok.status).toBe(200);
    const called = await fetch(
      mcpUrl,
      modernRequest(
        "tools/call",
        { name: "search_tools", arguments: { query: "weather" } },
        { headers: { authorization: "Bearer tpat_good" } },
      ),
    );
    expect(called.status).toBe(200);
    expect(received.length - before, "two token checks and the search").toBeGreaterThanOrEqual(3);
    expect(received.slice(before).every((h) => h.authorization === "Bearer tpat_good")).toBe(true);
    expect(received.slice(before).some((h) => "x-toolport-grant" in h)).toBe(false);
  });

  it("refuses a token issued for another resource, and an unknown one, with invalid_token", async () => {
    for (const token of ["tpat_elsewhere", "tpat_unknown"]) {
      const res = await listTools({ authorization: `Bearer ${token}` });
      expect(res.status, token).toBe(401);
      expect(res.headers.get("www-authenticate"), token).toMatch(
        /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="/,
      );
    }
  });
});
