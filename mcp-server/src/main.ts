/** MCP server process: config -> HTTP server with /mcp and /mcp/health; drains on SIGTERM. */
import type { AddressInfo } from "node:net";
import { startHttpServer } from "@toolport/kit/http-server";
import { onShutdown, runMain } from "@toolport/kit/lifecycle";
import { createLogger } from "@toolport/kit/logger";
import { loadMcpConfig } from "./config.js";
import { GatewayClient } from "./gateway-client.js";
import { mcpHttpHandler } from "./http.js";

runMain("mcp-server", async () => {
  const config = loadMcpConfig();
  const log = createLogger("mcp-server", config.LOG_LEVEL);
  const gateway = new GatewayClient(config.GATEWAY_URL);
  const server = await startHttpServer(
    mcpHttpHandler(log, gateway, { trustProxy: config.MCP_TRUST_PROXY }),
    config.PORT,
    config.HOST,
  );
  log.info({ port: (server.address() as AddressInfo).port, gateway: config.GATEWAY_URL }, "mcp server listening");
  onShutdown(log, async () => {
    await server.drain(config.SHUTDOWN_GRACE_MS);
    await gateway.close();
  });
});
