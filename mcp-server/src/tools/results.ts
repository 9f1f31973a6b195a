/**
 * Gateway replies as MCP tool results. A success is `structuredContent` plus one text block holding the
 * same JSON, so clients that read either get everything. Every failure, a gateway error or a missing
 * key, is a result with `isError: true` whose text gives the gateway's code and message and what the
 * model should do next; JSON-RPC errors are left to the SDK for malformed MCP requests.
 */
import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { CallerHeaders, GatewayClient, GatewayReply } from "../gateway-client.js";
import type { ConsentCodec } from "./consent.js";
import type { TaskHandles } from "./tasks.js";

/** What every tool module gets: the server to register on and the gateway. */
export interface ToolContext {
  server: McpServer;
  gateway: GatewayClient;
  /** Seals and opens the consent round's requestState (consent.ts); without it consent is the token object. */
  consent?: ConsentCodec;
  /** Makes and opens task handles (tasks.ts); without it no call becomes a task. */
  tasks?: TaskHandles;
}

/**
 * The part of what the SDK hands a tool handler besides its arguments (its ServerContext) read here:
 * the HTTP request (its headers), the request's `_meta`, and on 2026-07-28 its `_meta` envelope (the
 * client's capabilities) and a retried round's answers and verified state (consent.ts).
 */
export interface HandlerExtra {
  http?: { req?: { headers: { get(name: string): string | null } } };
  mcpReq?: {
    _meta?: Record<string, unknown>;
    envelope?: Record<string, unknown>;
    inputResponses?: Record<string, unknown>;
    requestState?: <T>() => T | undefined;
  };
}

/** A W3C traceparent (version 00: trace id, parent span id, flags), as the trace-context spec writes it. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** tracestate: at most 32 list members (W3C), bounded here by length. */
const MAX_TRACESTATE = 512;

/**
 * The trace context the client sent with this request: `traceparent`/`tracestate` in the request's
 * `_meta` (where MCP carries it), else as HTTP headers of the MCP request. A malformed one is dropped,
 * not forwarded.
 */
function traceContext(extra: HandlerExtra, header: (name: string) => string | undefined) {
  const meta = extra.mcpReq?._meta ?? {};
  const fromMeta = typeof meta.traceparent === "string";
  const traceparent = fromMeta ? (meta.traceparent as string) : header("traceparent");
  if (!traceparent || !TRACEPARENT.test(traceparent)) return {};
  const tracestate = fromMeta ? meta.tracestate : header("tracestate");
  return {
    traceparent,
    tracestate: typeof tracestate === "string" && tracestate.length <= MAX_TRACESTATE ? tracestate : undefined,
  };
}

/**
 * The caller's own credentials, read from the headers of the MCP request being answered (servers are
 * pooled across requests, so nothing about a caller is kept on them). Used for this call only, never logged.
 */
/** Set by http.ts on a request whose access token it checked: the grant (key id) the token acts as. */
export const GRANT_HEADER = "x-toolport-grant";

/**
 * Who is calling, for binding sealed state to them: the key (or, for an access token, the grant it acts
 * as, which outlives the token's refreshes) and the organization.
 */
export function callerIdentity(caller: Pick<CallerHeaders, "apiKey" | "grant" | "orgId">): string {
  const who = caller.apiKey ?? (caller.grant ? `grant:${caller.grant}` : "");
  return `${who}\0${caller.orgId ?? ""}`;
}

export function callerOf(extra: HandlerExtra): CallerHeaders {
  const headers = extra.http?.req?.headers;
  const one = (name: string) => headers?.get(name) || undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(one("authorization") ?? "")?.[1];
  return {
    apiKey: one("svc-api-key"),
    // http.ts checked the token and named its grant in GRANT_HEADER (a client-sent one is dropped).
    ...(bearer ? { bearer, grant: one(GRANT_HEADER) } : {}),
    orgId: one("svc-org-id"),
    requestId: one("x-request-id"),
    forwardedFor: one("x-forwarded-for"),
    ...traceContext(extra, one),
  };
}

type Json = Record<string, unknown>;

export function success(structured: Json): CallToolResult {
  return { structuredContent: structured, content: [{ type: "text", text: JSON.stringify(structured) }] };
}

export function failure(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

export const NEEDS_KEY =
  "This tool needs your Toolport credential: send your API key in the `svc-api-key` header of the MCP connection " +
  "(and `svc-org-id` to act in an organization), or connect through OAuth. An agent gets a key by registering: POST /v1/agents.";

/**
 * The missing-credential failure, or null when the caller sent a key or a token. http.ts refuses a
 * request without either before any tool runs; this guards a tool reached some other way.
 */
export function requireKey(caller: CallerHeaders): CallToolResult | null {
  return caller.apiKey || caller.bearer ? null : failure(NEEDS_KEY);
}

/** A 2xx reply shaped by `shape`; anything else as the failure the model can act on. */
export function fromReply(reply: GatewayReply, shape: (body: unknown) => Json): CallToolResult {
  if (reply.status >= 200 && reply.status < 300) return success(shape(reply.body));
  return failure(describeError(reply));
}

/** The failure for a gateway that did not answer at all. */
export function unreachable(err: Error): CallToolResult {
  return failure(`gateway_unreachable: Toolport's gateway did not answer (${err.message}). Nothing was done; retry in a moment.`);
}

/** Sends one request and turns the answer into a tool result; a gateway that cannot be reached is one too. */
export async function call(
  ctx: ToolContext,
  caller: CallerHeaders,
  request: Parameters<GatewayClient["send"]>[1],
  shape: (body: unknown) => Json,
): Promise<CallToolResult> {
  let reply: GatewayReply;
  try {
    reply = await ctx.gateway.send(caller, request);
  } catch (err) {
    return unreachable(err as Error);
  }
  return fromReply(reply, shape);
}

/** `body` when it is an object, else `{value: body}` (structuredContent must be an object). */
export const asObject = (body: unknown): Json =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Json) : { value: body };

/** An array reply under one key (structuredContent must be an object). */
export const listUnder =
  (key: string) =>
  (body: unknown): Json => ({ [key]: Array.isArray(body) ? body : [] });

interface ErrorBody {
  detail?: unknown;
  error?: { code?: string; message?: string; details?: Json };
}

export function describeError(reply: GatewayReply): string {
  const body = (typeof reply.body === "object" && reply.body !== null ? reply.body : {}) as ErrorBody;
  const code = body.error?.code ?? `http_${reply.status}`;
  const message =
    body.error?.message ??
    (typeof body.detail === "string" ? body.detail : typeof reply.body === "string" ? reply.body.slice(0, 300) : "");
  const details = body.error?.details ?? {};
  return `${code}: ${message || `the gateway answered HTTP ${reply.status}`}\n${advice(reply, code, details)}`;
}

/** What to do next, by status and code. */
function advice(reply: GatewayReply, code: string, details: Json): string {
  switch (reply.status) {
    case 400:
    case 422:
      return "Fix the arguments named above and call again.";
    case 401:
      return `${NEEDS_KEY} The key or token sent was missing, revoked, expired or not valid.`;
    case 402:
      return "The wallet cannot pay for this tool: call fund_agent_wallet, then retry the call.";
    case 403:
      return "This key is not allowed to do this (its permissions or organization). Nothing was done; use another tool or ask the key's owner.";
    case 404:
      return "Nothing was found for that id or name. search_tools finds tool ids; fetch_result takes an execution_id of your own calls.";
    case 409:
      if (code === "confirmation_required") {
        const token = typeof details.confirm_token === "string" ? ` confirm_token: ${details.confirm_token}` : "";
        return `Nothing ran. Show the call to the user; if they agree, send the same call again with the confirm_token.${token}`;
      }
      return "It conflicts with something that exists already; change the name or id and try again.";
    case 413:
      return "The request is too large; send less at once.";
    case 429: {
      const wait = reply.retryAfter ? `wait ${reply.retryAfter} seconds` : "wait a minute";
      return code === "usage_limit_reached"
        ? `The free tier's calls are used up: ${wait} or until the limit resets, or fund the wallet with fund_agent_wallet.`
        : `Too many calls: ${wait} (Retry-After) before calling again.`;
    }
    case 501:
      return "This operation is not available on this Toolport server yet: its service is not built. Nothing was done; do not retry.";
    case 503:
      return code.endsWith("_not_configured")
        ? "This Toolport server is not set up for this (an operator setting); retrying will not help."
        : `Toolport could not do this right now; retry ${reply.retryAfter ? `after ${reply.retryAfter} s (Retry-After)` : "in a few seconds"}.`;
    default:
      return reply.status >= 500
        ? "Toolport failed unexpectedly; nothing is known to have happened. Retry later."
        : "The call was refused; read the message above.";
  }
}
