/** The launcher's port variables (deploy/local/start.mjs), for benches that start it on free ports. */
import { freePort } from "../../deploy/local/infra.mjs";

const PORT_VARIABLES = [
  "GATEWAY_PORT",
  "MCP_PORT",
  "CATALOG_PORT",
  "EXECUTION_PORT",
  "BILLING_PORT",
  "IDENTITY_PORT",
  "CONTENT_PORT",
  "WEBHOOKS_PORT",
  "PGPORT",
  "NATS_PORT",
];

/** Sets every port variable of the launcher in `env` to a free port. */
export async function assignLauncherPorts(env: Record<string, string>): Promise<void> {
  for (const v of PORT_VARIABLES) env[v] = String(await freePort());
}
