/**
 * What the gateway's application is built from: its settings, a client per service, its log and, in a
 * running process, the readiness its role flips when it drains. The role assembles them here once
 * (`createAppDeps`); app.ts and every routes module take them as `AppDeps`.
 */
import type { Logger } from "@toolport/kit/logger";
import { createServiceClients, type ServiceClients } from "./clients.js";
import type { GatewayConfig } from "./config.js";
import type { Readiness } from "./middleware/livez.js";

export interface AppDeps {
  config: GatewayConfig;
  clients: ServiceClients;
  log: Logger;
  /** Set once the gateway drains: `GET /readyz` answers 503 from then on. */
  readiness?: Readiness;
}

export function createAppDeps(config: GatewayConfig, log: Logger, readiness?: Readiness): AppDeps {
  return { config, clients: createServiceClients(config), log, readiness };
}
