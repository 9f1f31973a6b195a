/**
 * The MCP server factory and the pool that reuses its servers. A server is side-effect free and
 * caller-free: its ten tools (spec "MCP server", item 8) read the caller's `svc-api-key` and
 * `svc-org-id` from the headers of the request being answered and call the gateway with them; one
 * module per tool group under tools/.
 *
 * Why a pool: in stateless Streamable HTTP every POST gets its own transport, and building an McpServer
 * with its ten tools costs ~0.4 ms of CPU (mostly the SDK's constructor), as much as the rest of a tool
 * call's MCP layer. A server serves one request at a time and, once that request's transport has
 * closed, the next one.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GatewayClient } from "./gateway-client.js";
import { registerCatalogTools } from "./tools/catalog.js";
import { registerContentTools } from "./tools/content.js";
import { registerExecutionTools } from "./tools/execution.js";
import { registerWalletTools } from "./tools/wallet.js";

export const INSTRUCTIONS =
  "Toolport: a catalog of callable tools. Find tools with search_tools, run them with batch_execute_tools " +
  "(one to ten calls at once), read stored results with fetch_result. Calls run with the API key sent in the " +
  "svc-api-key header of this connection; priced tools draw on its wallet (get_spending_limits, fund_agent_wallet).";

export function createMcpServer(gateway: GatewayClient, version = "0.1.0"): McpServer {
  const server = new McpServer({ name: "toolport", version }, { instructions: INSTRUCTIONS });
  const ctx = { server, gateway };
  registerCatalogTools(ctx);
  registerExecutionTools(ctx);
  registerWalletTools(ctx);
  registerContentTools(ctx);
  return server;
}

/** Idle servers kept for reuse; more than this many concurrent requests build extra ones. */
const MAX_IDLE = 64;

export class McpServerPool {
  private readonly idle: McpServer[] = [];

  constructor(private readonly gateway: GatewayClient) {}

  acquire(): McpServer {
    return this.idle.pop() ?? createMcpServer(this.gateway);
  }

  /** Takes a server back once its transport has closed; one still attached to a transport is dropped. */
  release(server: McpServer): void {
    if (server.server.transport === undefined && this.idle.length < MAX_IDLE) this.idle.push(server);
  }
}
