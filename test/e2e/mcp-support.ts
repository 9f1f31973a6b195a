/**
 * Shared by the MCP server's end-to-end tests: an SDK `Client` on Streamable HTTP to the stack's /mcp
 * with the caller's headers, and tool calls read the way the contract draws them (mcp-server/README.md):
 * a success is `structuredContent` plus one text block holding exactly its JSON; a failure is a result
 * with `isError: true` whose text starts with the gateway's `<code>: <message>`. A JSON-RPC error is
 * never an acceptable answer to a tool call, so both helpers fail the test on one.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import type { Reply } from "../harness/http.js";

/** The spec's ten tools (spec "What the service does", item 8) and run_workflow (issue 31). */
export const MCP_TOOL_NAMES = [
  "search_tools",
  "batch_execute_tools",
  "fetch_result",
  "get_recommendations",
  "get_spending_limits",
  "fund_agent_wallet",
  "create_skill",
  "list_workflows",
  "delete_workflow",
  "run_workflow",
  "get_site_info",
] as const;

export type McpToolName = (typeof MCP_TOOL_NAMES)[number];

export interface McpCaller {
  /** Sent as `svc-api-key`; omitted when undefined. */
  key?: string;
  /** Sent as `svc-org-id`; omitted when undefined. */
  orgId?: string;
}

/** A connected client (initialize done) with the caller's headers on every request of the connection. */
export async function connectMcp(mcpUrl: string, caller: McpCaller = {}, name = "toolport-e2e"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: callerHeaders(caller) } }));
  return client;
}

/** The MCP protocol revision without a handshake (2026-07-28). */
export const MODERN_REVISION = "2026-07-28";

function callerHeaders(caller: McpCaller): Record<string, string> {
  const headers: Record<string, string> = {};
  if (caller.key !== undefined) headers["svc-api-key"] = caller.key;
  if (caller.orgId !== undefined) headers["svc-org-id"] = caller.orgId;
  return headers;
}

/**
 * A client of the official v2 SDK (`@modelcontextprotocol/client`): `mode` "auto" probes with
 * `server/discover` and speaks 2026-07-28 when the server does, `{pin}` speaks one revision, "legacy"
 * initializes as a 2025-11-25 client.
 */
export async function connectMcpV2(
  mcpUrl: string,
  caller: McpCaller = {},
  mode: "auto" | "legacy" | { pin: string } = "auto",
  /** Answers the server's questions (declares the elicitation capability, form mode). */
  elicit?: (params: {
    message: string;
    requestedSchema: unknown;
  }) => Promise<{ action: "accept" | "decline" | "cancel"; content?: Record<string, string | number | boolean | string[]> }>,
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "toolport-e2e-v2", version: "1.0.0" },
    { versionNegotiation: { mode }, ...(elicit ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  if (elicit) {
    client.setRequestHandler("elicitation/create", async (request) =>
      elicit(request.params as { message: string; requestedSchema: unknown }),
    );
  }
  await client.connect(new StreamableHTTPClientTransportV2(new URL(mcpUrl), { requestInit: { headers: callerHeaders(caller) } }));
  return client;
}

export interface ModernOptions {
  /** Sent as `svc-api-key`. */
  key?: string;
  /** The client's capabilities in the request's `_meta` (default none). */
  capabilities?: Record<string, unknown>;
  /** More headers, or other values for the routing headers (undefined drops one). */
  headers?: Record<string, string | undefined>;
}

/**
 * A raw 2026-07-28 request as the v2 client sends it: no session, the version, capabilities and client
 * in `_meta`, and the routing headers (`Mcp-Name` is a tool call's tool or a task method's task).
 */
export function modernRequest(method: string, params: Record<string, unknown>, options: ModernOptions = {}): RequestInit {
  const name = method === "tools/call" ? params.name : method.startsWith("tasks/") ? params.taskId : undefined;
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_REVISION,
    "mcp-method": method,
    ...(typeof name === "string" ? { "mcp-name": name } : {}),
    ...(options.key !== undefined ? { "svc-api-key": options.key } : {}),
    ...options.headers,
  };
  return {
    method: "POST",
    headers: Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined)),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
      },
    }),
  };
}

/** Sends a raw 2026-07-28 request and reads its JSON-RPC answer. */
export async function modernRpc(
  mcpUrl: string,
  method: string,
  params: Record<string, unknown>,
  options?: ModernOptions,
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answer as each needs
): Promise<any> {
  const res = await fetch(mcpUrl, modernRequest(method, params, options));
  return res.json();
}

/** What the helpers need of a client, so they take one of either SDK line. */
export interface ToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/** Calls a tool; a JSON-RPC error rejects (and so fails the test) with the tool's name in the message. */
export async function callTool(client: ToolCaller, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  } catch (err) {
    throw new Error(`${name}: a protocol error instead of a tool result: ${(err as Error).message}`);
  }
}

/** The single text block of a result. */
function onlyText(result: CallToolResult, name: string): string {
  expect(result.content, `${name}: content`).toHaveLength(1);
  const [block] = result.content;
  expect(block?.type, `${name}: content[0].type`).toBe("text");
  return (block as { text: string }).text;
}

/**
 * A successful call's `structuredContent`, after checking that it is an object, that the result is not
 * an error and that `content[0].text` is exactly `JSON.stringify` of it.
 */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export async function callOk(client: ToolCaller, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await callTool(client, name, args);
  const text = onlyText(result, name);
  expect(result.isError ?? false, `${name} failed: ${text}`).toBe(false);
  const structured = result.structuredContent;
  expect(structured !== null && typeof structured === "object" && !Array.isArray(structured), `${name}: structuredContent`).toBe(
    true,
  );
  expect(text, `${name}: content[0].text is JSON.stringify(structuredContent)`).toBe(JSON.stringify(structured));
  return structured;
}

/** A failed call's text, after checking that it is a tool result with `isError: true`. */
export async function callError(client: ToolCaller, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await callTool(client, name, args);
  const text = onlyText(result, name);
  expect(result.isError, `${name} should have failed, got: ${text.slice(0, 500)}`).toBe(true);
  return text;
}

/** The first line the contract promises for a gateway refusal: `<error.code>: <error.message>`. */
export function gatewayErrorLine(reply: Reply): string {
  expect(reply.status, JSON.stringify(reply.body)).toBeGreaterThanOrEqual(400);
  expect(typeof reply.body?.error?.code, JSON.stringify(reply.body)).toBe("string");
  return `${reply.body.error.code}: ${reply.body.error.message}`;
}

/** Every `properties` entry anywhere in a JSON Schema, as [pointer, schema]. */
export function schemaProperties(schema: unknown, at = ""): Array<[string, Record<string, unknown>]> {
  if (schema === null || typeof schema !== "object") return [];
  const s = schema as Record<string, unknown>;
  const found: Array<[string, Record<string, unknown>]> = [];
  const props = s.properties as Record<string, Record<string, unknown>> | undefined;
  for (const [key, value] of Object.entries(props ?? {})) {
    found.push([`${at}/properties/${key}`, value], ...schemaProperties(value, `${at}/properties/${key}`));
  }
  for (const key of ["items", "additionalProperties"] as const) {
    if (s[key] && typeof s[key] === "object") found.push(...schemaProperties(s[key], `${at}/${key}`));
  }
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const subs = Array.isArray(s[key]) ? (s[key] as unknown[]) : [];
    for (const [i, sub] of subs.entries()) found.push(...schemaProperties(sub, `${at}/${key}/${i}`));
  }
  return found;
}
