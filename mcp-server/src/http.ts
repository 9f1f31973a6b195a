/**
 * HTTP surface of the MCP server: the Streamable HTTP transport at /mcp (stateless: a fresh transport
 * per request, so any replica can answer any request) and GET /mcp/health.
 *
 * Only POST carries MCP messages here. A stateless server has nothing to push on its own, so GET /mcp (the
 * optional standalone SSE stream) and DELETE /mcp (ending a session it never made) answer 405, as the
 * Streamable HTTP transport allows; otherwise every connected client would hold a stream, and a server
 * from the pool, open for as long as it stays connected. POST replies are plain JSON, not a one-event SSE
 * stream: no tool here sends progress or server-to-client requests, and a JSON reply costs both ends less.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "@toolport/kit/logger";
import type { GatewayClient } from "./gateway-client.js";
import { McpServerPool } from "./server.js";

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * Sets (or removes) X-Forwarded-For on the request the transport will read. The SDK builds the tools'
 * `requestInfo.headers` from `rawHeaders`, not from the parsed `headers`, so both are rewritten.
 */
function setForwardedFor(req: IncomingMessage, value: string | undefined): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (raw[i]?.toLowerCase() === "x-forwarded-for") raw.splice(i, 2);
  }
  if (value === undefined) {
    delete req.headers["x-forwarded-for"];
    return;
  }
  raw.push("x-forwarded-for", value);
  req.headers["x-forwarded-for"] = value;
}

export interface McpHttpOptions {
  /** Keep an X-Forwarded-For the client sent (true only behind a trusted balancer); otherwise replace it. */
  trustProxy: boolean;
}

export function mcpHttpHandler(log: Logger, gateway: GatewayClient, options: McpHttpOptions = { trustProxy: false }) {
  const pool = new McpServerPool(gateway);
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === "/mcp/health" && req.method === "GET") {
      sendJson(res, 200, { status: "ok" });
      return;
    }
    if (path !== "/mcp") {
      const message = `no route for ${req.method} ${path}`;
      sendJson(res, 404, { detail: message, error: { code: "not_found", message, details: {} } });
      return;
    }
    if (req.method !== "POST") {
      const message = `${req.method} ${path} is not served: this MCP server is stateless, send JSON-RPC messages with POST`;
      res.setHeader("allow", "POST");
      sendJson(res, 405, { jsonrpc: "2.0", error: { code: -32000, message }, id: null });
      return;
    }
    // The tools read the caller's own svc-api-key / svc-org-id from this request's headers (never logged).
    // The gateway limits some routes per client IP (public search: 30 a minute): pass the MCP client's
    // address on, so callers do not share one budget (the gateway reads it when TRUST_PROXY is true). A
    // client-supplied X-Forwarded-For is replaced, not extended, unless this server sits behind a trusted
    // balancer (MCP_TRUST_PROXY): the gateway takes the leftmost address, which a client could otherwise forge.
    const peer = req.socket.remoteAddress;
    const sent = req.headers["x-forwarded-for"];
    const earlier = options.trustProxy ? (Array.isArray(sent) ? sent.join(", ") : sent) : undefined;
    setForwardedFor(req, peer ? (earlier ? `${earlier}, ${peer}` : peer) : earlier);
    const server = pool.acquire();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      transport
        .close()
        .catch(() => {})
        .finally(() => pool.release(server));
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      log.error({ err }, "mcp request failed");
      if (!res.headersSent)
        sendJson(res, 500, {
          detail: "internal error",
          error: { code: "internal_error", message: "internal error", details: {} },
        });
    }
  };
}
