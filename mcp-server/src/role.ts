/** The MCP server role (a process of its own, or one of several in one process): HTTP with /mcp and /mcp/health. */
import type { AddressInfo } from "node:net";
import { startHttpServer } from "@toolport/kit/http-server";
import { createLogger } from "@toolport/kit/logger";
import type { Role } from "@toolport/kit/roles";
import { loadMcpConfig } from "./config.js";
import { GatewayClient } from "./gateway-client.js";
import { mcpHttpHandler } from "./http.js";
import { originPolicy } from "./origin-guard.js";

export const mcpServerRole: Role = {
  name: "mcp-server",
  kind: "edge",
  defaultPort: 8090,
  portVariable: "MCP_PORT",
  async start(env) {
    const config = loadMcpConfig(env);
    const log = createLogger("mcp-server", config.LOG_LEVEL);
    const gateway = new GatewayClient(config.GATEWAY_URL);
    const origins = originPolicy({
      listenHost: config.HOST,
      publicUrl: config.MCP_PUBLIC_URL,
      allowedHosts: config.MCP_ALLOWED_HOSTS,
      allowedOrigins: config.MCP_ALLOWED_ORIGINS,
    });
    if (!origins.hosts) {
      log.warn(
        { host: config.HOST },
        "MCP_PUBLIC_URL and MCP_ALLOWED_HOSTS are not set and HOST is not loopback: any Host header is served (set them to refuse DNS rebinding)",
      );
    }
    if (!config.MCP_REQUEST_STATE_KEY) {
      log.info(
        "MCP_REQUEST_STATE_KEY is not set: consent questions are sealed with a key of this process, so only it can take their answers",
      );
    }
    const handler = mcpHttpHandler(log, gateway, {
      trustProxy: config.MCP_TRUST_PROXY,
      origins,
      stateKey: config.MCP_REQUEST_STATE_KEY,
      authorization: { issuer: new URL(config.PUBLIC_URL).origin, resource: config.MCP_PUBLIC_URL },
    });
    const server = await startHttpServer(handler, config.PORT, config.HOST);
    const port = (server.address() as AddressInfo).port;
    log.info({ port, gateway: config.GATEWAY_URL }, "mcp server listening");
    return {
      name: "mcp-server",
      kind: "edge",
      port,
      log,
      async stop() {
        // Sessions first: a question still waiting for its person ends unanswered (nothing ran), which
        // also ends its open stream instead of holding the drain for the whole grace period.
        await handler.close();
        await server.drain(config.SHUTDOWN_GRACE_MS);
        await gateway.close();
      },
    };
  },
};
