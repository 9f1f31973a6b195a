/**
 * The MCP server factory: side-effect free, one server per MCP request (stateless Streamable HTTP).
 * Its ten tools (spec "MCP server", item 8) call the gateway with the caller's own `svc-api-key` and
 * `svc-org-id`; one module per tool group under tools/.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallerHeaders, GatewayClient } from "./gateway-client.js";
import { registerCatalogTools } from "./tools/catalog.js";
import { registerContentTools } from "./tools/content.js";
import { registerExecutionTools } from "./tools/execution.js";
import type { ToolContext } from "./tools/results.js";
import { registerWalletTools } from "./tools/wallet.js";

export type { CallerHeaders };

export const INSTRUCTIONS =
  "Toolport: a catalog of callable tools. Find tools with search_tools, run them with batch_execute_tools " +
  "(one to ten calls at once), read stored results with fetch_result. Calls run with the API key sent in the " +
  "svc-api-key header of this connection; priced tools draw on its wallet (get_spending_limits, fund_agent_wallet).";

export function createMcpServer(caller: CallerHeaders, gateway: GatewayClient, version = "0.1.0"): McpServer {
  const server = new McpServer({ name: "toolport", version }, { instructions: INSTRUCTIONS });
  const ctx: ToolContext = { server, gateway, caller };
  registerCatalogTools(ctx);
  registerExecutionTools(ctx);
  registerWalletTools(ctx);
  registerContentTools(ctx);
  return server;
}
