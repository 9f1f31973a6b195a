/**
 * HTTP surface of the MCP server: the Streamable HTTP transport at /mcp (stateless: a fresh server
 * and transport per request, so any replica can answer any request) and GET /mcp/health.
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

export function mcpHttpHandler(log: Logger, gateway: GatewayClient) {
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
    // The tools read the caller's own svc-api-key / svc-org-id from this request's headers (never logged).
    // The gateway limits some routes per client IP (public search: 30 a minute): pass the MCP client's
    // address on, so callers do not share one budget (the gateway reads it when TRUST_PROXY is true).
    const peer = req.socket.remoteAddress;
    if (peer) {
      const earlier = req.headers["x-forwarded-for"];
      req.headers["x-forwarded-for"] = earlier ? `${earlier}, ${peer}` : peer;
    }
    const server = pool.acquire();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
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
