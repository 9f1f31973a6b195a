/**
 * The MCP server's direct lane (mcp-server/src/direct-calls.ts) against the SDK's path, on the real
 * stack: two /mcp handlers on one gateway, one with the lane and one without, get the same requests and
 * must give the same answers (execution ids and times aside). The cases cover what the lane takes (each
 * tool that reads, a run, a tool error, both revisions, trace context) and what it must leave to the SDK
 * (arguments the schema refuses, an unknown tool, headers that contradict the body, a client that can
 * be asked, a task-capable client, a session, another method); the lane's count of answered requests
 * says which way each one went.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayClient } from "../../mcp-server/src/gateway-client.js";
import { type McpHttpHandler, mcpHttpHandler } from "../../mcp-server/src/http.js";
import { type AgentKey, type ExecStack, registerAgent, startExecStack } from "./execution-support.js";
import { modernRequest } from "./mcp-support.js";

const LEGACY_REVISION = "2025-11-25";
const TASKS = "io.modelcontextprotocol/tasks";

let s: ExecStack;
let agent: AgentKey;
const servers: Server[] = [];
let lane: { url: string; handler: McpHttpHandler };
let sdk: { url: string; handler: McpHttpHandler };
let wordCount: string;

async function start(directCalls: boolean): Promise<{ url: string; handler: McpHttpHandler }> {
  const handler = mcpHttpHandler(createLogger("mcp-direct-test", "silent"), new GatewayClient(s.stack.gatewayUrl), {
    trustProxy: false,
    directCalls,
  });
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, handler };
}

beforeAll(async () => {
  s = await startExecStack([], {}, ["catalog", "execution", "billing", "identity", "content", "gateway"]);
  agent = await registerAgent(s);
  lane = await start(true);
  sdk = await start(false);
  const found = await s.call("GET", "/tools/search?query=count%20the%20words%20in%20a%20text&limit=5", { key: agent.key });
  wordCount = (found.body as { id: string; name: string }[]).find((t) => t.name === "word_count")?.id as string;
  expect(wordCount).toBeDefined();
}, 300_000);

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await s?.stop();
});

/** A 2025-11-25 tools/call as a client served without a session sends it. */
function legacyCall(name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": LEGACY_REVISION,
      "svc-api-key": agent.key,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: "call-1", method: "tools/call", params: { name, arguments: args } }),
  };
}

function modernCall(
  name: string,
  args: Record<string, unknown>,
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string>; meta?: Record<string, unknown> } = {},
): RequestInit {
  const init = modernRequest(
    "tools/call",
    { name, arguments: args },
    { key: agent.key, capabilities: options.capabilities, headers: options.headers },
  );
  if (!options.meta) return init;
  const body = JSON.parse(init.body as string);
  Object.assign(body.params._meta, options.meta);
  return { ...init, body: JSON.stringify(body) };
}

/** Values that differ between two runs of the same call (ids of new executions, times). */
const VARYING = /(^|_)(execution_id|id)$|_at$|_ms$/;

function normalized(value: unknown): unknown {
  if (typeof value === "string" && (value.startsWith("{") || value.startsWith("["))) {
    try {
      return { json: normalized(JSON.parse(value)) };
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, VARYING.test(key) && key !== "tool_id" ? "*" : normalized(v)]),
  );
}

/** Sends one request to both handlers; returns both answers and whether the lane took it. */
async function bothWays(init: () => RequestInit) {
  const before = lane.handler.directCallsServed();
  const viaLane = await fetch(lane.url, init());
  const laneBody = await viaLane.text();
  const taken = lane.handler.directCallsServed() - before;
  const viaSdk = await fetch(sdk.url, init());
  const sdkBody = await viaSdk.text();
  expect(sdk.handler.directCallsServed()).toBe(0);
  const parse = (text: string) => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  return {
    taken: taken === 1,
    lane: { status: viaLane.status, type: viaLane.headers.get("content-type"), body: parse(laneBody) },
    sdk: { status: viaSdk.status, type: viaSdk.headers.get("content-type"), body: parse(sdkBody) },
  };
}

async function expectSame(init: () => RequestInit, taken: boolean) {
  const answer = await bothWays(init);
  expect(answer.taken, JSON.stringify(answer.lane.body).slice(0, 300)).toBe(taken);
  expect(answer.lane.status).toBe(answer.sdk.status);
  expect(answer.lane.type).toBe(answer.sdk.type);
  expect(normalized(answer.lane.body)).toEqual(normalized(answer.sdk.body));
  return answer.lane.body;
}

describe("the direct lane answers as the SDK does", () => {
  it("takes plain calls of every reading tool, on both revisions, with the SDK's answer", async () => {
    for (const [name, args] of [
      ["search_tools", { query: "count the words in a text", limit: 5 }],
      ["get_spending_limits", {}],
      ["get_recommendations", {}],
      ["list_workflows", {}],
      ["get_site_info", { domain: "example.com" }],
    ] as const) {
      const modern = await expectSame(() => modernCall(name, args), true);
      expect(modern.result.resultType, name).toBe("complete");
      expect(modern.result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("toolport");
      const legacy = await expectSame(() => legacyCall(name, args), true);
      expect(legacy.result.resultType, name).toBeUndefined();
    }
  });

  it("runs a batch, reads its result back and answers a tool's error alike", async () => {
    const run = (await expectSame(
      () => modernCall("batch_execute_tools", { calls: [{ tool_id: wordCount, tool_input: { text: "one two three" } }] }),
      true,
    )) as {
      result: { structuredContent: { results: { success: boolean; result: unknown; _meta: { execution_id: string } }[] } };
    };
    const element = run.result.structuredContent.results[0];
    expect(element).toMatchObject({ success: true, result: { words: 3 } });
    await expectSame(() => legacyCall("fetch_result", { execution_id: element?._meta.execution_id as string }), true);
    const missing = await expectSame(
      () => modernCall("fetch_result", { execution_id: "00000000-0000-4000-8000-000000000000" }),
      true,
    );
    expect(missing.result.isError).toBe(true);
  });

  // tracing.test.ts follows such a request (a plain call, so through the lane) to the gateway's span.
  it("takes a request whose _meta carries trace context", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const body = await expectSame(
      () =>
        modernCall(
          "batch_execute_tools",
          { calls: [{ tool_id: wordCount, tool_input: { text: "a b" } }] },
          { meta: { traceparent } },
        ),
      true,
    );
    expect(body.result.structuredContent.results[0].success).toBe(true);
  });

  it("leaves to the SDK what it must answer itself, and the answers stay the same", async () => {
    // Arguments the tool's schema refuses (the SDK words the error), and a tool that does not exist.
    await expectSame(() => modernCall("batch_execute_tools", { calls: "all of them" }), false);
    await expectSame(() => legacyCall("fetch_result", {}), false);
    await expectSame(() => modernCall("no_such_tool", {}), false);
    // Headers that contradict the body.
    await expectSame(() => modernCall("search_tools", { query: "x" }, { headers: { "mcp-name": "get_site_info" } }), false);
    await expectSame(() => modernCall("search_tools", { query: "x" }, { headers: { "mcp-method": "tools/list" } }), false);
    await expectSame(() => legacyCall("search_tools", { query: "x" }, { "mcp-protocol-version": "2024-01-01" }), false);
    await expectSame(() => legacyCall("search_tools", { query: "x" }, { accept: "application/json" }), false);
    // A client that can be asked, or that takes tasks: consent and tasks are the SDK's path.
    await expectSame(() => modernCall("search_tools", { query: "x" }, { capabilities: { elicitation: {} } }), false);
    const task = await bothWays(() =>
      modernCall(
        "batch_execute_tools",
        { calls: [{ tool_id: wordCount, tool_input: { text: "a" } }] },
        { capabilities: { extensions: { [TASKS]: {} } } },
      ),
    );
    expect(task.taken).toBe(false);
    // A progress token, another method, a request naming a session.
    await expectSame(() => modernCall("search_tools", { query: "x" }, { meta: { progressToken: "p1" } }), false);
    await expectSame(() => modernRequest("tools/list", {}, { key: agent.key }), false);
    await expectSame(() => legacyCall("search_tools", { query: "x" }, { "mcp-session-id": "not-a-session" }), false);
  });
});
