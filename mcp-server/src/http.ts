/**
 * HTTP surface of the MCP server: the Streamable HTTP transport at /mcp (stateless: a fresh server
 * and transport per request, so any replica can answer any request) and GET /mcp/health.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "@toolport/kit/logger";
import type { GatewayClient } from "./gateway-client.js";
import { createMcpServer } from "./server.js";

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export function mcpHttpHandler(log: Logger, gateway: GatewayClient) {
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
    // The caller's own credentials, used for this request's gateway calls only and never logged.
    const server = createMcpServer(
      { apiKey: header(req, "svc-api-key"), orgId: header(req, "svc-org-id"), requestId: header(req, "x-request-id") },
      gateway,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
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

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
