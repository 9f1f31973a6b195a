/**
 * Streamable HTTP, the part a stateless JSON-replying server uses, directly on node:http: one POST
 * carries one JSON-RPC message (or a batch), and its reply is one `application/json` body holding the
 * responses, or 202 when it carried no request. The checks and status codes are the MCP transport's
 * and the SDK's own (406 without both media types in Accept, 415 for a body that is not JSON, 413
 * over 4 MiB, 400 with -32700 / -32600 for bad JSON or a bad message, 400 for an unsupported
 * `mcp-protocol-version`), so clients see no difference from the SDK's transport.
 *
 * Why not the SDK's StreamableHTTPServerTransport: its Node version converts every request and reply
 * to Web `Request`/`Response` objects and streams (through @hono/node-server) to reach its Web-standard
 * core; in test/bench/mcp-server.mjs that conversion was about a third of this server's CPU per tool
 * call, the largest part of what it adds to a call. The protocol itself (initialize, tools/list,
 * tools/call, argument and result validation) stays the SDK's `McpServer`.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

/** Largest POST body, as the SDK's transport allows by default. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Most messages in one JSON-RPC batch, as the SDK's transport allows. */
export const MAX_BATCH_MESSAGES = 100;

export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** The body as text, or undefined once it grows past the limit (the rest is not buffered). */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"]) > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString("utf8");
}

/**
 * The transport of one POST: the messages go to the server's protocol layer, and once every request
 * among them has its response, the responses are written as one JSON body. Notifications the server
 * sends meanwhile (progress, logs) have nowhere to go in a JSON reply and are dropped, as the SDK's
 * transport does in its JSON mode.
 */
class PostTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly responses = new Map<RequestId, JSONRPCMessage | undefined>();
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    requests: RequestId[],
    private readonly batch: boolean,
  ) {
    for (const id of requests) this.responses.set(id, undefined);
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = message.id;
    if (this.closed || id === undefined || !this.responses.has(id)) throw new Error(`no open request with id ${String(id)}`);
    this.responses.set(id, message);
    const all = [...this.responses.values()];
    if (all.some((m) => m === undefined)) return;
    this.res.writeHead(200, { "content-type": "application/json" });
    this.res.end(JSON.stringify(this.batch ? all : all[0]));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

/**
 * Answers one POST /mcp: validates it as the transport requires, then has `connect` attach a server to
 * a transport for this request (false: the client has gone, nothing to deliver), and hands it the
 * messages with `headers` as their `requestInfo`. Whoever connects closes the transport when the
 * response closes. A request refused here never reaches a server.
 */
export async function servePost(
  req: IncomingMessage,
  res: ServerResponse,
  headers: IncomingHttpHeaders,
  connect: (transport: Transport) => Promise<boolean>,
): Promise<void> {
  const accept = req.headers.accept ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    sendRpcError(res, 406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
    return;
  }
  if (!isJsonContentType(req.headers["content-type"])) {
    sendRpcError(res, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
    return;
  }
  const text = await readBody(req, MAX_BODY_BYTES);
  if (text === undefined) {
    sendRpcError(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`);
    return;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    sendRpcError(res, 400, -32700, "Parse error: Invalid JSON");
    return;
  }
  const batch = Array.isArray(raw);
  const list: unknown[] = batch ? (raw as unknown[]) : [raw];
  if (list.length > MAX_BATCH_MESSAGES) {
    sendRpcError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages`);
    return;
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of list) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) {
      sendRpcError(res, 400, -32700, "Parse error: Invalid JSON-RPC message");
      return;
    }
    messages.push(parsed.data);
  }
  if (messages.some(isInitializeRequest)) {
    if (messages.length > 1) {
      sendRpcError(res, 400, -32600, "Invalid Request: Only one initialization request is allowed");
      return;
    }
  } else {
    const version = req.headers["mcp-protocol-version"];
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
      const message = `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`;
      sendRpcError(res, 400, -32000, message);
      return;
    }
  }
  const requests = messages.filter(isJSONRPCRequest).map((m) => m.id);
  if (new Set(requests).size !== requests.length) {
    sendRpcError(res, 400, -32600, "Invalid Request: two requests in one batch share an id");
    return;
  }
  const transport = new PostTransport(res, requests, batch);
  if (!(await connect(transport))) return;
  const extra: MessageExtraInfo = { requestInfo: { headers } };
  for (const message of messages) transport.onmessage?.(message, extra);
  if (requests.length === 0) {
    res.writeHead(202);
    res.end();
  }
}
