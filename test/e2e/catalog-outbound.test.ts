/**
 * The catalog's outbound guard, end to end through the gateway on real processes. Publishing an OpenAPI
 * document by URL and an MCP server makes the catalog dial a caller-chosen address; both go through
 * @toolport/kit/outbound, which refuses loopback, private, link-local (cloud metadata), CGNAT and other
 * special-purpose addresses, in every spelling the URL parser accepts and after DNS, on every redirect
 * hop. Two real HTTP servers on loopback serve a valid OpenAPI document and a real MCP server (SDK):
 * "allowed" is named in CATALOG_OUTBOUND_ALLOW, "refused" is not and counts every request it gets, so a
 * refusal is proven to have dialled nothing. A refusal is a 400 `address_not_allowed` naming the field,
 * and nothing is stored. The MCP SDK follows only same-origin redirects, so an MCP server redirecting
 * elsewhere fails as `mcp_server_unreachable` before the guard is asked. Fetched documents stop at 25 MiB.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, type ExecStack, type Reply, registerAgent, startExecStack } from "./execution-support.js";

/** Served by both servers, so a request that got through would publish successfully. */
const SECRET_MARKER = "served-content-7f3a";
const document = (title: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0", description: SECRET_MARKER },
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "pong" } } } } },
});

interface TestServer {
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Every request received, as `METHOD path`. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * /openapi.json: an OpenAPI document; /mcp: a stateless Streamable HTTP MCP server with one tool;
 * /redirect?to=<url>&status=<code>: a redirect. Listens on `::` (IPv4 and IPv6 loopback alike).
 */
async function startServer(title: string): Promise<TestServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    requests.push(`${req.method} ${url.pathname}`);
    if (url.pathname === "/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document(title)));
      return;
    }
    if (url.pathname === "/big") {
      // 25 MiB + 1 byte of YAML-valid padding: one byte over the catalog's document limit.
      res.writeHead(200, { "content-type": "application/yaml" });
      const chunk = Buffer.alloc(1024 * 1024, " ");
      for (let i = 0; i < 25; i++) res.write(chunk);
      res.end(" ");
      return;
    }
    if (url.pathname === "/redirect") {
      res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to") ?? "/" }).end();
      return;
    }
    if (url.pathname === "/mcp") {
      const mcp = new McpServer({ name: title, version: "1.0.0" });
      mcp.registerTool("ping", { description: `Answers pong (${SECRET_MARKER})` }, async () => ({
        content: [{ type: "text", text: "pong" }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        transport.close().catch(() => {});
        mcp.close().catch(() => {});
      });
      mcp.connect(transport).then(() => transport.handleRequest(req, res));
      return;
    }
    res.writeHead(404).end(SECRET_MARKER);
  });
  server.listen(0, "::");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let allowed: TestServer;
let refused: TestServer;
let s: ExecStack;
let agent: AgentKey;

beforeAll(async () => {
  allowed = await startServer("Allowed upstream");
  refused = await startServer("Refused upstream");
  s = await startExecStack([], { CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${allowed.port}` }, [
    "catalog",
    "identity",
    "billing",
    "gateway",
  ]);
  agent = await registerAgent(s);
});
afterAll(async () => {
  await s?.stop();
  await allowed?.close();
  await refused?.close();
});

const serviceIds = async () => {
  const res = await s.call("GET", "/services", { key: agent.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as Array<{ id: string }>).map((x) => x.id).sort();
};

/**
 * The URLs that must be refused, built for a path on the server (`/openapi.json`, `/mcp`), each with the
 * words its message should use; the last two are redirects from the allowed server.
 */
function refusedUrls(path: string): Array<[string, RegExp]> {
  const p = refused.port;
  const redirect = (status: number, to: string) => `${allowed.url}/redirect?status=${status}&to=${encodeURIComponent(to)}`;
  return [
    [`http://127.0.0.1:${p}${path}`, /host 127\.0\.0\.1 is a loopback address/],
    [`http://[::1]:${p}${path}`, /host ::1 is a loopback address/],
    [`http://10.0.0.1${path}`, /host 10\.0\.0\.1 is a private \(RFC 1918\) address/],
    [`http://169.254.169.254${path}`, /host 169\.254\.169\.254 is a link-local address/],
    // The URL parser turns these into 127.0.0.1 / ::ffff:7f00:1 before anything is dialled.
    [`http://2130706433:${p}${path}`, /host 127\.0\.0\.1 is a loopback address/],
    [`http://0x7f.1:${p}${path}`, /host 127\.0\.0\.1 is a loopback address/],
    [`http://[::ffff:127.0.0.1]:${p}${path}`, /host ::ffff:7f00:1 is a loopback address/],
    [`http://localhost:${p}${path}`, /host localhost resolves to a loopback address/],
    // The allowed server redirecting to addresses that are not allowed: every hop is checked.
    [redirect(302, `http://127.0.0.1:${p}${path}`), /loopback address/],
    [redirect(307, `http://169.254.169.254${path}`), /redirects to a link-local address/],
  ];
}

function expectRefused(res: Reply, field: string, words: RegExp, what: string, code = "address_not_allowed") {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.error.code, what).toBe(code);
  expect(res.body.error.details.field, what).toBe(field);
  expect(res.body.error.message, what).toMatch(words);
  expect(JSON.stringify(res.body), what).not.toContain(SECRET_MARKER);
  // Refused before connecting: no connect timeout to 10.0.0.1 or 169.254.169.254 was waited out.
  expect(res.ms, what).toBeLessThan(5_000);
}

describe("catalog imports and the outbound address guard", () => {
  it("refuses OpenAPI document URLs on loopback, private, link-local and metadata addresses, and after redirects", async () => {
    const before = await serviceIds();
    const allowedBefore = allowed.requests.length;
    for (const [documentUrl, words] of refusedUrls("/openapi.json")) {
      const res = await s.call("POST", "/services", { key: agent.key, body: { api: { document_url: documentUrl } } });
      expectRefused(res, "api.document_url", words, documentUrl);
      expect(res.body.error.message).toMatch(/^api\.document_url /);
    }
    expect(refused.requests).toEqual([]);
    // Only the two redirecting requests reached the allowed server.
    expect(allowed.requests.slice(allowedBefore)).toEqual(["GET /redirect", "GET /redirect"]);
    expect(await serviceIds()).toEqual(before);
  });

  it("refuses MCP servers on the same addresses; redirects off the allowed server are not followed", async () => {
    const before = await serviceIds();
    for (const [url, words] of refusedUrls("/mcp")) {
      const res = await s.call("POST", "/services", { key: agent.key, body: { mcp_server: { url } } });
      if (url.startsWith(allowed.url)) {
        // The MCP SDK's transports follow only same-origin redirects (which stay on the checked, allowed
        // address; a new connection would be checked again); a cross-origin one fails the import first.
        expectRefused(res, "mcp_server.url", /not followed/, url, "mcp_server_unreachable");
      } else {
        expectRefused(res, "mcp_server.url", words, url);
        expect(res.body.error.message).toMatch(/^mcp_server\.url /);
      }
    }
    expect(refused.requests).toEqual([]);
    expect(await serviceIds()).toEqual(before);
  });

  it("publishes from a server CATALOG_OUTBOUND_ALLOW names, following redirects that stay allowed", async () => {
    const byUrl = await s.call("POST", "/services", {
      key: agent.key,
      body: { api: { document_url: `${allowed.url}/openapi.json`, base_url: allowed.url } },
    });
    expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(201);
    expect(byUrl.body.service.name).toBe("Allowed upstream");
    expect(byUrl.body.tools.map((t: { name: string }) => t.name)).toEqual(["ping"]);

    const redirected = await s.call("POST", "/services", {
      key: agent.key,
      body: { api: { document_url: `${allowed.url}/redirect?to=/openapi.json`, base_url: allowed.url } },
    });
    expect(redirected.status, JSON.stringify(redirected.body)).toBe(201);

    const mcp = await s.call("POST", "/services", { key: agent.key, body: { mcp_server: { url: `${allowed.url}/mcp` } } });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    expect(mcp.body.service.service_type).toBe("mcp_server");
    expect(mcp.body.tools.map((t: { name: string }) => t.name)).toEqual(["ping"]);
    expect(allowed.requests).toEqual(expect.arrayContaining(["GET /openapi.json", "POST /mcp"]));
    expect(refused.requests).toEqual([]);
  });

  it("caps a fetched document at 25 MiB and never repeats what the server answered", async () => {
    const big = await s.call("POST", "/services", { key: agent.key, body: { api: { document_url: `${allowed.url}/big` } } });
    expect(big.status, JSON.stringify(big.body)).toBe(400);
    expect(big.body.error).toMatchObject({
      code: "document_too_large",
      details: { field: "api.document_url", limit_bytes: 26214400 },
    });
    const missing = await s.call("POST", "/services", {
      key: agent.key,
      body: { api: { document_url: `${allowed.url}/nothing` } },
    });
    expect(missing.status, JSON.stringify(missing.body)).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "document_unreachable", details: { field: "api.document_url" } });
    expect(missing.body.error.message).toMatch(/HTTP 404/);
    expect(JSON.stringify(missing.body)).not.toContain(SECRET_MARKER);
  });

  it("refuses re-imports that lead to a refused address and keeps the tools", async () => {
    const api = await s.call("POST", "/services", {
      key: agent.key,
      body: { api: { document_url: `${allowed.url}/openapi.json` }, slug: "reimport-guarded-api" },
    });
    expect(api.status, JSON.stringify(api.body)).toBe(201);
    const again = await s.call("POST", `/services/${api.body.service.id}/reimport`, {
      key: agent.key,
      body: { api: { document_url: `http://localhost:${refused.port}/openapi.json` } },
    });
    expectRefused(again, "api.document_url", /resolves to a loopback address/, "re-import by URL");

    // An MCP service whose URL is edited to point inside: the re-import dials it through the guard.
    const mcp = await s.call("POST", "/services", {
      key: agent.key,
      body: { mcp_server: { url: `${allowed.url}/mcp` }, slug: "reimport-guarded-mcp" },
    });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    const moved = await s.call("PATCH", `/services/${mcp.body.service.id}`, {
      key: agent.key,
      body: { mcp_server_url: `http://[::1]:${refused.port}/mcp` },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const reimported = await s.call("POST", `/services/${mcp.body.service.id}/reimport`, { key: agent.key, body: {} });
    expectRefused(reimported, "mcp_server.url", /loopback address/, "re-import of an MCP server");

    for (const id of [api.body.service.id, mcp.body.service.id]) {
      const tools = await s.call("GET", `/services/${id}/tools`, { key: agent.key });
      expect(tools.status, JSON.stringify(tools.body)).toBe(200);
      expect(tools.body.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([["ping", "active"]]);
    }
    expect(refused.requests).toEqual([]);
  });
});
