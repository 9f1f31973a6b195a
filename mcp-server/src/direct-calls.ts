/**
 * The direct lane: a plain `tools/call` answered without the SDK's request machinery.
 *
 * Why: at concurrency 16 the MCP layer's own CPU decided its throughput against the gateway's, and most
 * of that CPU was the SDK's generic path around a call rather than the call: a WHATWG Request and
 * Response per exchange, a server taken from the pool and wired to a transport and torn down again
 * (with an SdkError object for the closed connection), the JSON-RPC message's and the tool result's
 * schema validation, the web streams between them (test/bench/mcp-server-micro.mjs --cpu-prof).
 *
 * What it serves: only what the SDK would serve the same way, decided by the SDK's own classifier
 * (`classifyInboundRequest`) and then narrowed to one POST carrying one `tools/call` of one of this
 * server's tools with arguments its input schema accepts, whose client cannot be asked anything
 * (no elicitation, no Tasks extension, no answers or request state of an earlier round), without a
 * progress token or a session:
 * - 2026-07-28: a valid `_meta` envelope naming 2026-07-28, and the MCP-Protocol-Version, Mcp-Method
 *   and Mcp-Name headers saying the same as the body;
 * - 2025-11-25: no envelope, MCP-Protocol-Version 2025-11-25, no Mcp-Session-Id.
 * Anything else (another method, a malformed message, arguments the schema refuses, a client that can
 * be asked, a session, a batch) goes to the SDK as before, which answers it, errors included. The lane
 * runs the very handlers the SDK runs (recorded as createMcpServer registers them), so a tool cannot
 * behave differently in it; the answers are those of the SDK for the same request (its result
 * projection and, on 2026-07-28, `resultType` and the server's identity in `_meta`), which
 * direct-calls.test.ts checks by sending every case both ways.
 *
 * Left out on purpose: the SDK validates a tool's structured result against its output schema, a
 * check on this server's own code; the lane does not, and the test above holds the tools to their
 * schemas instead.
 */
import type { IncomingHttpHeaders } from "node:http";
import { classifyInboundRequest, isJsonContentType, SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import type { HandlerExtra } from "./tools/results.js";

export const MODERN_REVISION = "2026-07-28";
export const LEGACY_REVISION = "2025-11-25";

const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** `_meta` keys the lane takes: the envelope and the trace context the tools forward. */
const MODERN_META = new Set([PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY, "traceparent", "tracestate"]);
const LEGACY_META = new Set(["traceparent", "tracestate"]);
/** The params a plain tools/call carries. */
const CALL_PARAMS = new Set(["name", "arguments", "_meta"]);
/** Capabilities that let a handler ask the client something (consent, an upstream's question, a task). */
const ASKING_CAPABILITIES = new Set(["elicitation", "extensions", "tasks", "sampling"]);

/** What the lane needs of a registered tool: the SDK's own schema object and callback. */
export interface DirectTool {
  inputSchema?: { safeParse(value: unknown): { success: true; data: unknown } | { success: false } };
  handler: (args: unknown, extra: HandlerExtra) => unknown;
}

/** A call the lane takes: everything needed to run it and to answer it. */
export interface DirectCall {
  id: string | number;
  revision: typeof MODERN_REVISION | typeof LEGACY_REVISION;
  tool: DirectTool;
  args: unknown;
  meta: Record<string, unknown> | undefined;
}

type Json = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Whether every key of `object` is one of `allowed`. */
function onlyKeys(object: Json, allowed: ReadonlySet<string>): boolean {
  for (const key in object) if (!allowed.has(key)) return false;
  return true;
}

/** Whether an Accept header names both answers the transport may give (what it requires of a POST). */
function acceptsBoth(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(",").map((part) => (part.split(";")[0] ?? "").trim().toLowerCase());
  return types.includes("application/json") && types.includes("text/event-stream");
}

export class DirectCalls {
  constructor(
    private readonly tools: ReadonlyMap<string, DirectTool>,
    private readonly serverInfo: { name: string; version: string },
  ) {}

  /** The call, when the lane may answer this request (see the module comment); undefined sends it to the SDK. */
  take(headers: IncomingHttpHeaders, body: unknown): DirectCall | undefined {
    if (!isPlainObject(body) || body.method !== "tools/call") return undefined;
    if (!isJsonContentType(header(headers, "content-type") ?? null) || !acceptsBoth(header(headers, "accept"))) return undefined;
    if (headers["mcp-session-id"] !== undefined) return undefined;
    const params = body.params;
    if (!isPlainObject(params) || !onlyKeys(params, CALL_PARAMS)) return undefined;
    const name = params.name;
    const tool = typeof name === "string" ? this.tools.get(name) : undefined;
    if (!tool || typeof name !== "string") return undefined;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
    const meta = params._meta;
    if (meta !== undefined && !isPlainObject(meta)) return undefined;

    const versionHeader = header(headers, "mcp-protocol-version")?.trim();
    const methodHeader = header(headers, "mcp-method")?.trim();
    const nameHeader = header(headers, "mcp-name")?.trim();
    const route = classifyInboundRequest({
      httpMethod: "POST",
      body,
      ...(versionHeader !== undefined ? { protocolVersionHeader: versionHeader } : {}),
      ...(methodHeader !== undefined ? { mcpMethodHeader: methodHeader } : {}),
      ...(nameHeader !== undefined ? { mcpNameHeader: nameHeader } : {}),
    } as Parameters<typeof classifyInboundRequest>[0]);
    const id = body.id as string | number;

    if (route.kind === "modern") {
      if (route.messageKind !== "request" || route.classification.revision !== MODERN_REVISION) return undefined;
      if (versionHeader !== MODERN_REVISION || methodHeader !== "tools/call" || nameHeader !== name) return undefined;
      if (!meta || !onlyKeys(meta, MODERN_META)) return undefined;
      const capabilities = meta[CLIENT_CAPABILITIES_KEY];
      if (!isPlainObject(capabilities)) return undefined;
      for (const key in capabilities) if (ASKING_CAPABILITIES.has(key)) return undefined;
      return this.validated(id, MODERN_REVISION, tool, params.arguments, meta);
    }
    if (route.kind === "legacy") {
      if (route.reason !== "no-claim" || versionHeader !== LEGACY_REVISION) return undefined;
      if (meta !== undefined && !onlyKeys(meta, LEGACY_META)) return undefined;
      return this.validated(id, LEGACY_REVISION, tool, params.arguments, meta);
    }
    return undefined;
  }

  /** The call with its arguments as the tool's schema parses them; undefined when it refuses them (the SDK words that). */
  private validated(
    id: string | number,
    revision: DirectCall["revision"],
    tool: DirectTool,
    rawArgs: unknown,
    meta: Json | undefined,
  ): DirectCall | undefined {
    if (!tool.inputSchema) return { id, revision, tool, args: undefined, meta };
    const parsed = tool.inputSchema.safeParse(rawArgs ?? {});
    return parsed.success ? { id, revision, tool, args: parsed.data, meta } : undefined;
  }

  /**
   * Runs the call's handler with the caller's headers and answers as the SDK would: the JSON-RPC
   * response's text. A handler that throws answers a tool error carrying its message, as the SDK's
   * McpServer does.
   */
  async answer(call: DirectCall, callerHeaders: IncomingHttpHeaders): Promise<string> {
    const extra: HandlerExtra = {
      http: { req: { headers: { get: (name: string) => header(callerHeaders, name.toLowerCase()) ?? null } } },
      mcpReq: {
        ...(call.meta !== undefined ? { _meta: call.meta } : {}),
        ...(call.revision === MODERN_REVISION ? { envelope: call.meta } : {}),
      },
    };
    let result: Json;
    try {
      result = projected((await call.tool.handler(call.args, extra)) as Json, call.revision);
    } catch (err) {
      result = { content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }], isError: true };
    }
    if (call.revision === MODERN_REVISION) result = this.stamped(result);
    return JSON.stringify({ result, jsonrpc: "2.0", id: call.id });
  }

  /** What the SDK adds to a 2026-07-28 result: `resultType` when the handler set none, and its identity in `_meta`. */
  private stamped(result: Json): Json {
    const out = result.resultType === undefined ? { ...result, resultType: "complete" } : result;
    const meta = out._meta;
    if (meta === undefined) return { ...out, _meta: { [SERVER_INFO_META_KEY]: this.serverInfo } };
    if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return out;
    return { ...out, _meta: { ...meta, [SERVER_INFO_META_KEY]: this.serverInfo } };
  }
}

/**
 * The SDK's projection of a tool result: a structured value that is not an object also travels as text,
 * and to a 2025-11-25 client inside `{ result }` (that revision's structured content is an object).
 */
function projected(result: Json, revision: DirectCall["revision"]): Json {
  const structured = result.structuredContent;
  if (structured === undefined || isPlainObject(structured)) return result;
  const content = Array.isArray(result.content) ? (result.content as Json[]) : [];
  const withText = content.some((c) => c.type === "text")
    ? result
    : { ...result, content: [...content, { type: "text", text: JSON.stringify(structured) }] };
  return revision === LEGACY_REVISION ? { ...withText, structuredContent: { result: structured } } : withText;
}
