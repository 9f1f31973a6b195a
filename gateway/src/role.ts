/** The gateway role (a process of its own, or one of several in one process): config -> service clients -> HTTP. */
import type { AddressInfo } from "node:net";
import { startHttpServer } from "@toolport/kit/http-server";
import { createLogger } from "@toolport/kit/logger";
import type { Role } from "@toolport/kit/roles";
import { createApp } from "./app.js";
import { loadGatewayConfig } from "./config.js";
import { createAppDeps } from "./deps.js";
import { answerClientErrors } from "./http/client-error.js";

export const gatewayRole: Role = {
  name: "gateway",
  kind: "edge",
  defaultPort: 8080,
  portVariable: "GATEWAY_PORT",
  async start(env) {
    const config = loadGatewayConfig(env);
    const log = createLogger("gateway", config.LOG_LEVEL);
    const readiness = { draining: false };
    const app = createApp(createAppDeps(config, log, readiness));
    const server = await startHttpServer(app.callback(), config.PORT, config.HOST);
    answerClientErrors(server);
    const port = (server.address() as AddressInfo).port;
    log.info({ port, url: `${config.PUBLIC_URL}/v1` }, "gateway listening");
    return {
      name: "gateway",
      kind: "edge",
      port,
      log,
      stop: () => {
        readiness.draining = true;
        return server.drain(config.SHUTDOWN_GRACE_MS);
      },
    };
  },
};
