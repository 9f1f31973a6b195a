/** Gateway process: config -> service clients -> HTTP server; drains in-flight requests on SIGTERM. */
import type { AddressInfo } from "node:net";
import { startHttpServer } from "@toolport/kit/http-server";
import { onShutdown, runMain } from "@toolport/kit/lifecycle";
import { createLogger } from "@toolport/kit/logger";
import { createApp } from "./app.js";
import { createServiceClients } from "./clients.js";
import { loadGatewayConfig } from "./config.js";

runMain("gateway", async () => {
  const config = loadGatewayConfig();
  const log = createLogger("gateway", config.LOG_LEVEL);
  const app = createApp({ config, clients: createServiceClients(config), log });
  const server = await startHttpServer(app.callback(), config.PORT, config.HOST);
  log.info({ port: (server.address() as AddressInfo).port, url: `${config.PUBLIC_URL}/v1` }, "gateway listening");
  onShutdown(log, () => server.drain(config.SHUTDOWN_GRACE_MS));
});
