/**
 * MCP import from real MCP servers started here: with the v1 SDK, one speaking Streamable HTTP (2025
 * revisions) and one only the older SSE transport (the importer falls back to it); with the v2 SDK, one
 * speaking only protocol revision 2026-07-28 and one only 2025-11-25 (the importer negotiates either).
 * Tools arrive with their input and output schemas and the `<service_id>/` path; a re-import picks up a
 * tool added upstream and deactivates one removed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { importMcpServer } from "../../services/catalog/src/publishing/mcp.js";
import { type Agent, type CatalogStack, call, expectError, registerAgent, startCatalogStack } from "../harness/catalog-stack.js";
import { type ModernMcpUpstream, startModernSdkUpstream } from "../harness/upstreams.js";

let extraTool = false;

function buildServer(): McpServer {
  const server = new McpServer({ name: "weather-mcp", version: "2.1.0" });
  server.registerTool(
    "get_forecast",
    {
      title: "Forecast",
      description: "Weather forecast for a city for the next days",
      inputSchema: {
        city: z.string().describe("City name"),
        days: z.number().int().min(1).max(7).default(3).describe("How many days"),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ city }) => ({ content: [{ type: "text", text: `sunny in ${city}` }] }),
  );
  server.registerTool(
    "send_alert",
    {
      description: "Send a severe weather alert by SMS",
      inputSchema: { phone: z.string().describe("E.164 phone number"), message: z.string() },
      annotations: { destructiveHint: true, readOnlyHint: false },
    },
    async () => ({ content: [{ type: "text", text: "sent" }] }),
  );
  if (extraTool) {
    server.registerTool("get_radar", { description: "Rain radar image URL", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "x" }],
    }));
  }
  return server;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Streamable HTTP, stateless: a fresh server and transport per request. */
function streamableHandler(req: IncomingMessage, res: ServerResponse) {
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  server.connect(transport).then(() => transport.handleRequest(req, res));
}

/** The SSE transport only: GET /sse opens the stream, POST /messages carries the client's requests. */
function sseHandler() {
  const transports = new Map<string, SSEServerTransport>();
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      res.on("close", () => transports.delete(transport.sessionId));
      buildServer().connect(transport);
      return;
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = transports.get(url.searchParams.get("sessionId") ?? "");
      if (transport) return void transport.handlePostMessage(req, res);
    }
    res.writeHead(405).end();
  };
}

let s: CatalogStack;
let agent: Agent;
let streamable: { server: Server; url: string };
let sse: { server: Server; url: string };
let modern: ModernMcpUpstream;
let legacy: ModernMcpUpstream;

beforeAll(async () => {
  streamable = await listen(streamableHandler);
  sse = await listen(sseHandler());
  modern = await startModernSdkUpstream({ speaks: "2026-07-28" });
  legacy = await startModernSdkUpstream({ speaks: "2025-11-25" });
  // The catalog dials only what CATALOG_OUTBOUND_ALLOW names on loopback: the servers, and port 1
  // (nothing listens there) so that an unreachable server is still told apart from a refused address.
  const allow = [streamable.url, sse.url, modern.url, legacy.url, "http://127.0.0.1:1"].map((u) => new URL(u).host).join(",");
  s = await startCatalogStack(["catalog", "identity", "billing", "gateway"], { CATALOG_OUTBOUND_ALLOW: allow });
  agent = await registerAgent(s);
});
afterAll(async () => {
  await s?.stop();
  streamable?.server.close();
  sse?.server.closeAllConnections();
  sse?.server.close();
  await modern?.close();
  await legacy?.close();
});

describe("MCP import", () => {
  it("imports tools/list over Streamable HTTP with input schemas and the <service_id>/ path", async () => {
    const res = await call(s, "POST", "/services", { agent, body: { mcp_server: { url: `${streamable.url}/mcp` } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { service, tools, publishing } = res.body;
    expect(service).toMatchObject({ name: "weather-mcp", service_type: "mcp_server", version: "2.1.0", slug: "weather-mcp" });
    expect(publishing.mcp_server_url).toBe(`${streamable.url}/mcp`);
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(["get_forecast", "send_alert"]);
    const forecast = tools.find((t: { name: string }) => t.name === "get_forecast");
    expect(forecast).toMatchObject({
      path: `${service.id}/`,
      method: "",
      readiness: "ready",
      description: "Weather forecast for a city for the next days",
    });
    expect(forecast.parameters.city).toMatchObject({
      name: "city",
      location: "body",
      type: "string",
      required: true,
      description: "City name",
    });
    expect(forecast.parameters.days).toMatchObject({ type: "integer", required: false, default: 3, minimum: 1, maximum: 7 });

    const d = await call(s, "GET", `/tools/${forecast.id}/describe`, { agent });
    expect(d.body.input_schema).toMatchObject({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
    expect(d.body.example_call.tool_input).toMatchObject({ city: expect.any(String) });

    // Searchable right away on the authenticated search (the service is private to the agent's organization).
    const found = await call(s, "GET", "/tools/search?query=weather%20forecast", { agent });
    expect(found.body.map((t: { id: string }) => t.id)).toContain(forecast.id);
  });

  it("falls back to the SSE transport", async () => {
    const res = await call(s, "POST", "/services", { agent, body: { mcp_server: `${sse.url}/sse`, name: "Weather over SSE" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.service).toMatchObject({ name: "Weather over SSE", slug: "weather-over-sse" });
    expect(res.body.tools).toHaveLength(2);
    expect(res.body.tools.every((t: { path: string }) => t.path === `${res.body.service.id}/`)).toBe(true);
  });

  it("re-imports: new tools are added, tools gone upstream are deactivated, ids and slugs kept", async () => {
    const created = await call(s, "POST", "/services", {
      agent,
      body: { mcp_server: { url: `${streamable.url}/mcp` }, slug: "weather-reimport" },
    });
    const before = created.body.tools.find((t: { name: string }) => t.name === "get_forecast");
    extraTool = true;
    try {
      const again = await call(s, "POST", `/services/${created.body.service.id}/reimport`, { agent, body: {} });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(["get_forecast", "get_radar", "send_alert"]);
      const after = again.body.tools.find((t: { name: string }) => t.name === "get_forecast");
      expect(after).toMatchObject({ id: before.id, slug: before.slug });
    } finally {
      extraTool = false;
    }
    const third = await call(s, "POST", `/services/${created.body.service.id}/reimport`, { agent, body: {} });
    expect(third.body.deactivated_tool_ids).toHaveLength(1);
  });

  it("refuses an unreachable, non-MCP or not allowed URL with 400 naming the field", async () => {
    const res = await call(s, "POST", "/services", { agent, body: { mcp_server: { url: "http://127.0.0.1:1/mcp" } } });
    expectError(res, 400, "mcp_server_unreachable");
    expect(res.body.error.details.field).toBe("mcp_server.url");
    // Loopback on a port the allow list does not name (test/e2e/catalog-outbound.test.ts has the rest).
    const refused = await call(s, "POST", "/services", { agent, body: { mcp_server: { url: "http://127.0.0.1:2/mcp" } } });
    expectError(refused, 400, "address_not_allowed");
    expect(refused.body.error.details.field).toBe("mcp_server.url");
    expectError(
      await call(s, "POST", "/services", { agent, body: { mcp_server: { url: "ftp://x" } } }),
      400,
      "invalid_mcp_server_url",
    );
  });
});

describe("MCP import from servers of either protocol revision (v2 SDK)", () => {
  const forecastOutput = {
    type: "object",
    properties: {
      city: { type: "string" },
      temperature_c: { type: "number", description: "Degrees Celsius" },
      conditions: { type: "string", enum: ["sunny", "cloudy", "rain"] },
    },
    required: ["city", "temperature_c", "conditions"],
  };

  it("speaks 2026-07-28 to a server that only speaks it: server/discover, then a stateless tools/list", async () => {
    modern.rpc.length = 0;
    const res = await call(s, "POST", "/services", { agent, body: { mcp_server: { url: modern.url } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(modern.rpc).toEqual([
      { method: "server/discover", era: "modern" },
      { method: "tools/list", era: "modern" },
    ]);
    const { service, tools } = res.body;
    expect(service).toMatchObject({ name: "weather-modern", version: "3.0.0", service_type: "mcp_server" });
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(["book_table", "get_forecast", "search_docs"]);
    const byName = Object.fromEntries(tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.get_forecast).toMatchObject({ path: `${service.id}/`, output: forecastOutput });
    expect(byName.book_table).toMatchObject({ output: null });
    expect(byName.search_docs.parameters.query).toMatchObject({
      type: "string",
      required: true,
      description: "what to look for",
    });

    // A re-import negotiates again and finds the same tools: none added, none deactivated, ids kept.
    const again = await call(s, "POST", `/services/${service.id}/reimport`, { agent, body: {} });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.deactivated_tool_ids).toEqual([]);
    expect(again.body.tools.map((t: { id: string }) => t.id).sort()).toEqual(tools.map((t: { id: string }) => t.id).sort());
    expect(modern.rpc.filter((r) => r.era === "legacy")).toEqual([]);
  });

  it("falls back to the 2025-11-25 handshake with a server that only speaks that", async () => {
    legacy.rpc.length = 0;
    const res = await call(s, "POST", "/services", { agent, body: { mcp_server: { url: legacy.url } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The probe is refused (no session, no server/discover), so the client runs initialize.
    expect(legacy.rpc).toEqual([
      { method: "server/discover", era: "modern" },
      { method: "initialize", era: "legacy" },
      { method: "notifications/initialized", era: "legacy" },
      { method: "tools/list", era: "legacy" },
    ]);
    const { service, tools } = res.body;
    expect(service).toMatchObject({ name: "weather-legacy", version: "3.0.0", description: "Weather and bookings" });
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(["book_table", "get_forecast", "search_docs"]);
    const byName = Object.fromEntries(tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.get_forecast).toMatchObject({ output: forecastOutput });
  });

  it("marks a tool annotated destructive side-effecting on either revision", async () => {
    const outbound = new Outbound({ policy: new AddressPolicy([modern.url, legacy.url].map((u) => new URL(u).host).join(",")) });
    try {
      for (const up of [modern, legacy]) {
        const imported = await importMcpServer(up.url, outbound);
        const sideEffecting = Object.fromEntries(imported.tools.map((t) => [t.name, t.sideEffecting]));
        expect(sideEffecting, up.url).toEqual({ search_docs: false, get_forecast: false, book_table: true });
      }
    } finally {
      await outbound.close();
    }
  });
});

describe("an MCP server that fails after the connection", () => {
  it("is a 400 naming mcp_server.url when tools/list breaks off, not a 500", async () => {
    // Answers the handshake like the stateless server above, then closes the socket on tools/list.
    const broken = await listen(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.includes('"tools/list"')) {
        req.socket.destroy();
        return;
      }
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        transport.close().catch(() => {});
        server.close().catch(() => {});
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
    });
    const outbound = new Outbound({ policy: new AddressPolicy(new URL(broken.url).host) });
    try {
      const failed = await importMcpServer(broken.url, outbound).catch((err: unknown) => err);
      expect(failed).toMatchObject({ reason: "mcp_server_unreachable", details: { field: "mcp_server.url" } });
      expect((failed as Error).message).toMatch(/failed while listing its tools/);
    } finally {
      await outbound.close();
      broken.server.closeAllConnections();
      broken.server.close();
    }
  });
});
