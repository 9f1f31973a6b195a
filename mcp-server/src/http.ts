/**
 * HTTP surface of the MCP server: Streamable HTTP at /mcp (stateless: a fresh transport per request,
 * so any replica can answer any request; see transport.ts) and GET /mcp/health.
 *
 * Only POST carries MCP messages here. A stateless server has nothing to push on its own, so GET /mcp (the
 * optional standalone SSE stream) and DELETE /mcp (ending a session it never made) answer 405, as the
 * Streamable HTTP transport allows; otherwise every connected client would hold a stream, and a server
 * from the pool, open for as long as it stays connected. POST replies are plain JSON, not a one-event SSE
 * stream: no tool here sends progress or server-to-client requests, and a JSON reply costs both ends less.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@toolport/kit/logger";
import { httpRequestSeconds } from "@toolport/kit/metrics";
import type { GatewayClient } from "./gateway-client.js";
import { type OriginPolicy, originPolicy, rebindingRefusal } from "./origin-guard.js";
import { McpServerPool } from "./server.js";
import { sendRpcError, servePost } from "./transport.js";

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export interface McpHttpOptions {
  /** Keep an X-Forwarded-For the client sent (true only behind a trusted balancer); otherwise replace it. */
  trustProxy: boolean;
  /** Which Host and Origin headers /mcp answers (origin-guard.ts); absent: loopback names only. */
  origins?: OriginPolicy;
}

/**
 * The headers the tools see as the caller's (svc-api-key, svc-org-id, x-request-id; never logged), with
 * X-Forwarded-For set to the MCP client's address. The gateway limits some routes per client IP (public
 * search: 30 a minute) and reads this header when its TRUST_PROXY is true, so callers do not share one
 * budget. A client-sent X-Forwarded-For is replaced, not extended, unless this server sits behind a
 * trusted balancer (MCP_TRUST_PROXY): the gateway takes the leftmost address, which a client could forge.
 */
function callerHeaders(req: IncomingMessage, trustProxy: boolean): IncomingHttpHeaders {
  const headers = { ...req.headers };
  const peer = req.socket.remoteAddress;
  const sent = headers["x-forwarded-for"];
  const earlier = trustProxy && sent ? (Array.isArray(sent) ? sent.join(", ") : sent) : undefined;
  const forwarded = peer ? (earlier ? `${earlier}, ${peer}` : peer) : earlier;
  if (forwarded === undefined) delete headers["x-forwarded-for"];
  else headers["x-forwarded-for"] = forwarded;
  return headers;
}

export function mcpHttpHandler(log: Logger, gateway: GatewayClient, options: McpHttpOptions = { trustProxy: false }) {
  const pool = new McpServerPool(gateway);
  const origins = options.origins ?? originPolicy({ listenHost: "127.0.0.1", allowedHosts: [], allowedOrigins: [] });
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const started = performance.now();
    res.once("finish", () => {
      const route = path === "/mcp" || path === "/mcp/health" ? path : "unmatched";
      httpRequestSeconds.observe(
        { role: "mcp-server", method: req.method ?? "", route, status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    if (path === "/mcp/health" && req.method === "GET") {
      sendJson(res, 200, { status: "ok" });
      return;
    }
    if (path !== "/mcp") {
      const message = `no route for ${req.method} ${path}`;
      sendJson(res, 404, { detail: message, error: { code: "not_found", message, details: {} } });
      return;
    }
    const refused = rebindingRefusal(req, origins);
    if (refused) {
      sendRpcError(res, 403, -32000, `Forbidden: ${refused}`);
      return;
    }
    if (req.method !== "POST") {
      const message = `${req.method} ${path} is not served: this MCP server is stateless, send JSON-RPC messages with POST`;
      sendRpcError(res, 405, -32000, message, { allow: "POST" });
      return;
    }
    let closed = false;
    res.once("close", () => {
      closed = true;
    });
    try {
      await servePost(req, res, callerHeaders(req, options.trustProxy), async (transport) => {
        if (closed) return false;
        // The server goes back to the pool once the response is over and its transport has closed.
        const server = pool.acquire();
        res.once("close", () => {
          transport
            .close()
            .catch(() => {})
            .finally(() => pool.release(server));
        });
        await server.connect(transport);
        return true;
      });
    } catch (err) {
      log.error({ err }, "mcp request failed");
      sendRpcError(res, 500, -32603, "Internal error");
    }
  };
}
