/**
 * The MCP server factory: side-effect free, one server per MCP session. Its tools call the gateway
 * with the caller's own `svc-api-key` (and `svc-org-id`); they are added by the issues that build
 * the operations behind them.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

export interface CallerHeaders {
  apiKey?: string;
  orgId?: string;
}

export function createMcpServer(_caller: CallerHeaders, version = "0.1.0"): McpServer {
  return new McpServer(
    { name: "toolport", version },
    {
      instructions:
        "Toolport: search a catalog of callable tools, run them singly or in batches, and read stored results by handle.",
    },
  );
}
