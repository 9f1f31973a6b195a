/** The MCP server role (a process of its own, or one of several in one process): HTTP with /mcp and /mcp/health. */
import type { AddressInfo } from "node:net";
import { startHttpServer } from "@toolport/kit/http-server";
import { createLogger } from "@toolport/kit/logger";
import type { Role } from "@toolport/kit/roles";
import { loadMcpConfig } from "./config.js";
import { GatewayClient } from "./gateway-client.js";
import { mcpHttpHandler } from "./http.js";

export const mcpServerRole: Role = {
  name: "mcp-server",
  kind: "edge",
  defaultPort: 8090,
  portVariable: "MCP_PORT",
  async start(env) {
    const config = loadMcpConfig(env);
    const log = createLogger("mcp-server", config.LOG_LEVEL);
    const gateway = new GatewayClient(config.GATEWAY_URL);
    const server = await startHttpServer(
      mcpHttpHandler(log, gateway, { trustProxy: config.MCP_TRUST_PROXY }),
      config.PORT,
      config.HOST,
    );
    const port = (server.address() as AddressInfo).port;
    log.info({ port, gateway: config.GATEWAY_URL }, "mcp server listening");
    return {
      name: "mcp-server",
      kind: "edge",
      port,
      log,
      async stop() {
        await server.drain(config.SHUTDOWN_GRACE_MS);
        await gateway.close();
      },
    };
  },
};
