/**
 * The MCP server factory and the pool that reuses its servers. A server is side-effect free and
 * caller-free: its eleven tools (the spec's ten, "MCP server" item 8, and run_workflow) read the caller's `svc-api-key` and
 * `svc-org-id` from the headers of the request being answered and call the gateway with them; one
 * module per tool group under tools/.
 *
 * Why a pool: the SDK's handler (http.ts) asks for a server for every HTTP request, in either protocol
 * revision, and building an McpServer with its eleven tools costs a few tenths of a millisecond of CPU
 * (mostly compiling the tools' schemas), as much as the rest of a tool call's MCP layer. A server serves
 * one exchange at a time and goes back to the pool when that exchange's transport closes. Servers are
 * kept apart by revision: the handler sets a 2026-07-28 server's negotiated version and installs that
 * revision's handlers on it, which a 2025-11-25 exchange must not meet.
 */
import { McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { DirectTool } from "./direct-calls.js";
import type { GatewayClient } from "./gateway-client.js";
import { registerCatalogTools } from "./tools/catalog.js";
import type { ConsentCodec } from "./tools/consent.js";
import { registerContentTools } from "./tools/content.js";
import { registerExecutionTools } from "./tools/execution.js";
import { registerTaskMethods, TASKS_EXTENSION, type TaskHandles } from "./tools/tasks.js";
import { registerWalletTools } from "./tools/wallet.js";

export const INSTRUCTIONS =
  "Toolport: a catalog of callable tools. Find tools with search_tools, run them with batch_execute_tools " +
  "(one to ten calls at once), read stored results with fetch_result. Calls run with the API key sent in the " +
  "svc-api-key header of this connection; priced tools draw on its wallet (get_spending_limits, fund_agent_wallet).";

/**
 * How long a client may keep the tool list and the discovery result (2026-07-28 `ttlMs`), and for whom
 * (`cacheScope`): the eleven tools, their schemas and the server's capabilities are the same for every
 * caller and change only when a new version of this server is deployed, so one hour, shared.
 */
export const LIST_CACHE = { ttlMs: 3_600_000, cacheScope: "public" } as const;

export interface McpServerParts {
  consent?: ConsentCodec;
  tasks?: TaskHandles;
}

/** The name and version this server gives in its answers. */
export const SERVER_INFO = { name: "toolport", version: "0.1.0" } as const;

export function createMcpServer(
  gateway: GatewayClient,
  parts: McpServerParts = {},
  record?: (name: string, tool: DirectTool) => void,
): McpServer {
  const { consent, tasks } = parts;
  const server = new McpServer(
    { ...SERVER_INFO },
    {
      instructions: INSTRUCTIONS,
      // The Tasks extension (tools/tasks.ts), listed by server/discover.
      ...(tasks ? { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } } : {}),
      cacheHints: { "tools/list": LIST_CACHE, "server/discover": LIST_CACHE },
      // A retried round's requestState is opened (MAC, expiry, binding) before any handler runs.
      ...(consent ? { requestState: { verify: (state: string, ctx: ServerContext) => consent.verify(state, ctx) } } : {}),
    },
  );
  if (record) {
    // The direct lane (direct-calls.ts) runs the same handlers with the same schemas: seen as they are registered.
    const register = server.registerTool.bind(server) as (name: string, config: object, cb: unknown) => unknown;
    (server as { registerTool: unknown }).registerTool = (name: string, config: { inputSchema?: unknown }, cb: unknown) => {
      record(name, { inputSchema: config.inputSchema as DirectTool["inputSchema"], handler: cb as DirectTool["handler"] });
      return register(name, config, cb);
    };
  }
  const ctx = { server, gateway, consent, tasks };
  registerCatalogTools(ctx);
  registerExecutionTools(ctx);
  registerWalletTools(ctx);
  registerContentTools(ctx);
  if (tasks) registerTaskMethods(ctx, tasks);
  return server;
}

/** Every tool's schema and handler, for the direct lane (direct-calls.ts). */
export function directTools(gateway: GatewayClient, parts: McpServerParts = {}): Map<string, DirectTool> {
  const tools = new Map<string, DirectTool>();
  createMcpServer(gateway, parts, (name, tool) => tools.set(name, tool));
  return tools;
}

/** Idle servers kept for reuse per revision; more concurrent requests than this build extra ones. */
const MAX_IDLE = 64;

export type Era = "legacy" | "modern";

export class McpServerPool {
  private readonly idle: Record<Era, McpServer[]> = { legacy: [], modern: [] };

  constructor(
    private readonly gateway: GatewayClient,
    private readonly parts: McpServerParts = {},
  ) {}

  /** A server for one exchange of `era`; it returns to the pool by itself once that exchange closes. */
  acquire(era: Era): McpServer {
    const server = this.idle[era].pop() ?? createMcpServer(this.gateway, this.parts);
    // The SDK's handler keeps this callback and calls it when the exchange's transport closes.
    server.server.onclose = () => {
      server.server.onclose = undefined;
      if (!server.isConnected() && this.idle[era].length < MAX_IDLE) this.idle[era].push(server);
    };
    return server;
  }
}
