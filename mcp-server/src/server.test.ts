/**
 * The server createMcpServer builds, linked to an SDK client through the SDK's in-memory transport: no
 * HTTP between them, so what is tested is the server itself (its tools, their schemas, how a tool turns
 * the gateway's answer into a result). The gateway is a real HTTP server, as in http.test.ts, that records
 * what reached it and answers as the gateway's /v1 does. The connection carries the caller's headers the
 * way http.ts hands them on: on the HTTP request each message arrives with.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport, type Transport } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOOL_NAMES } from "../../test/e2e/mcp-support.js";
import { GatewayClient } from "./gateway-client.js";
import { createMcpServer } from "./server.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

const received: Received[] = [];
let gatewayServer: Server;
let gateway: GatewayClient;
const clients: Client[] = [];

/** A PublicTool as GET /v1/tools/public/search answers it. */
const FORECAST = {
  id: "0b6f3a52-1f7e-4a43-9a55-3c1d9e2f7a10",
  name: "get_forecast",
  slug: "weather-get-forecast",
  service_id: "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
  description: "The weather forecast for a city.",
  parameters: {
    city: {
      type: "string",
      required: true,
      location: "query",
      description: "The city's name.",
      json_schema: { type: "string", description: "The city's name." },
    },
    days: { type: "integer", required: false, location: "query", minimum: 1, maximum: 7 },
  },
  readiness: "ready",
  reliability: { success_rate_30d: 0.98, calls_30d: 120, p50_seconds: 0.4, flagged: false },
};

function answer(res: import("node:http").ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  gatewayServer = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const body = text ? JSON.parse(text) : undefined;
    received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const path = new URL(req.url ?? "/", "http://gateway").pathname;
    if (req.method === "GET" && path === "/v1/tools/public/search") return answer(res, 200, [FORECAST]);
    if (req.method === "POST" && path === "/v1/tools/call/batch") {
      const calls = (body as { calls: { tool_id: string; tool_input?: unknown }[] }).calls;
      if (calls.some((c) => c.tool_id === "not-a-tool")) {
        const message = "calls[0].tool_id: no such tool";
        return answer(res, 400, {
          detail: message,
          error: { code: "invalid_parameters", message, details: { field: "calls[0].tool_id" } },
        });
      }
      return answer(res, 200, {
        results: calls.map((c, i) => ({
          tool_id: c.tool_id,
          success: true,
          result: { city: (c.tool_input as { city?: string })?.city, high_c: 21 },
          error: null,
          execution_id: `exec-${i}`,
          truncated: false,
        })),
      });
    }
    answer(res, 404, { detail: "no route", error: { code: "not_found", message: "no route", details: {} } });
  });
  await new Promise<void>((resolve) => gatewayServer.listen(0, "127.0.0.1", resolve));
  gateway = new GatewayClient(`http://127.0.0.1:${(gatewayServer.address() as AddressInfo).port}`);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  received.length = 0;
});

afterAll(async () => {
  await gateway.close();
  gatewayServer.closeAllConnections();
  await new Promise((resolve) => gatewayServer.close(resolve));
});

/** A client linked in memory to a new server; every message reaches the server with `headers` as its request's. */
async function connect(headers: Record<string, string>): Promise<Client> {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(gateway);
  await server.connect(serverEnd);
  const request = new Request("http://mcp.test/mcp", { method: "POST", headers });
  // As a Transport: the in-memory one hands on only authInfo, an HTTP one the request too.
  const end: Transport = serverEnd;
  const deliver = end.onmessage!;
  end.onmessage = (message, extra) => deliver(message, { ...extra, request });
  const client = new Client({ name: "in-memory-test", version: "1.0.0" });
  await client.connect(clientEnd);
  clients.push(client);
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

const CALLER = { "svc-api-key": "tp_in_memory_key", "svc-org-id": "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a" };

describe("createMcpServer over the in-memory transport", () => {
  it("lists the eleven tools, each with a description and an input schema", async () => {
    const client = await connect(CALLER);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type, tool.name).toBe("object");
    }
    const batch = tools.find((t) => t.name === "batch_execute_tools");
    expect(batch?.inputSchema.required).toEqual(["calls"]);
    expect(received).toEqual([]);
  });

  it("runs search_tools against the gateway with the caller's headers and answers the compact tools", async () => {
    const client = await connect(CALLER);
    const result = (await client.callTool({
      name: "search_tools",
      arguments: { query: "weather", ready_only: true, limit: 5 },
    })) as ToolResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({
      tools: [
        {
          id: FORECAST.id,
          name: "get_forecast",
          service_id: FORECAST.service_id,
          description: "The weather forecast for a city.",
          parameters: {
            city: { type: "string", required: true, description: "The city's name." },
            days: { type: "integer", required: false, minimum: 1, maximum: 7 },
          },
          readiness: "ready",
          reliability: { success_rate_30d: 0.98, calls_30d: 120, p50_seconds: 0.4 },
        },
      ],
    });
    expect(JSON.parse(result.content[0]?.text ?? "")).toEqual(result.structuredContent);
    expect(received).toHaveLength(1);
    const sent = received[0]!;
    expect(sent.method).toBe("GET");
    const url = new URL(sent.url, "http://gateway");
    expect(url.pathname).toBe("/v1/tools/public/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ query: "weather", ready_only: "true", limit: "5" });
    expect(sent.headers["svc-api-key"]).toBe(CALLER["svc-api-key"]);
    expect(sent.headers["svc-org-id"]).toBe(CALLER["svc-org-id"]);
  });

  it("runs batch_execute_tools and answers each element in the MCP surface's fields", async () => {
    const client = await connect(CALLER);
    const result = (await client.callTool({
      name: "batch_execute_tools",
      arguments: { calls: [{ tool_id: FORECAST.id, tool_input: { city: "Lyon" } }] },
    })) as ToolResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({
      results: [
        {
          tool_id: FORECAST.id,
          success: true,
          result: { city: "Lyon", high_c: 21 },
          truncated: false,
          cursor: null,
          error: null,
          _meta: { execution_id: "exec-0" },
        },
      ],
    });
    expect(received.map((r) => [r.method, r.url, r.body])).toEqual([
      ["POST", "/v1/tools/call/batch", { calls: [{ tool_id: FORECAST.id, tool_input: { city: "Lyon" } }] }],
    ]);
  });

  it("turns the gateway's refusal into an error result that says what to fix", async () => {
    const client = await connect(CALLER);
    const result = (await client.callTool({
      name: "batch_execute_tools",
      arguments: { calls: [{ tool_id: "not-a-tool" }] },
    })) as ToolResult;
    expect(result.isError).toBe(true);
    const text = result.content[0]?.text ?? "";
    expect(text.startsWith("invalid_parameters: calls[0].tool_id: no such tool\n")).toBe(true);
    expect(text).toContain("Fix the arguments named above");
  });

  it("refuses a call that needs a key before reaching the gateway when the connection carries none", async () => {
    const client = await connect({});
    const result = (await client.callTool({
      name: "batch_execute_tools",
      arguments: { calls: [{ tool_id: FORECAST.id }] },
    })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain("`svc-api-key` header");
    expect(received).toEqual([]);
  });

  it("refuses arguments outside the tool's input schema without calling the gateway", async () => {
    const client = await connect(CALLER);
    const eleven = Array.from({ length: 11 }, () => ({ tool_id: FORECAST.id }));
    const result = (await client.callTool({ name: "batch_execute_tools", arguments: { calls: eleven } })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(received).toEqual([]);
  });
});
