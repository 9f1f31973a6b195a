/**
 * GET /v1/health: the gRPC health of every service, checked now. 200 when all serve; 503 naming
 * each one that does not. `services` maps each service to its status; `roles` says the same for every
 * role the gateway depends on, and itself, with where it runs: `in_process` (hosted in the gateway's own
 * process, DESIGN.md "Roles") or the address it is called at. `nats` is NATS as the services see it, asked
 * of each (their `toolport.nats` health check: a PING answered on their own connection): `connected`
 * when every service that answered reaches it, `disconnected` (and 503, `nats` among `down`) when one
 * does not, `unknown` when no service could be asked.
 */

import { NATS_CHECK } from "@toolport/kit/health";
import { hostedHere } from "@toolport/kit/local-rpc";
import { createServiceClient } from "@toolport/kit/rpc";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@toolport/proto/grpc/health/v1/health_pb";
import type { GatewayConfig } from "../config.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { systemOps } from "../openapi/operations/system.js";

export const serviceNames = ["catalog", "execution", "billing", "identity", "content", "webhooks"] as const;

export function healthRoutes(api: DescribedRouter, config: GatewayConfig): void {
  const checks = serviceNames.map((name) => {
    const baseUrl = config[`${name.toUpperCase()}_URL` as keyof GatewayConfig] as string;
    const client = createServiceClient(Health, baseUrl, { timeoutMs: config.HEALTH_TIMEOUT_MS });
    return { name, client, baseUrl };
  });

  api.get("/health", systemOps.health, async (ctx) => {
    const ask = async (client: (typeof checks)[number]["client"], service: string) => {
      try {
        const res = await client.check({ service }, { timeoutMs: config.HEALTH_TIMEOUT_MS });
        return res.status === Status.SERVING ? "serving" : "not_serving";
      } catch {
        return "unreachable";
      }
    };
    const [results, natsSeen] = await Promise.all([
      Promise.all(checks.map(async ({ name, client }) => [name, await ask(client, "")] as const)),
      Promise.all(checks.map(({ client }) => ask(client, NATS_CHECK))),
    ]);
    // A service that serves but did not answer its NATS check in time is waiting on NATS: not connected.
    const natsAnswers = natsSeen
      .map((seen, i) => (seen === "unreachable" && results[i]?.[1] === "serving" ? "not_serving" : seen))
      .filter((s) => s !== "unreachable");
    const nats = natsAnswers.length === 0 ? "unknown" : natsAnswers.every((s) => s === "serving") ? "connected" : "disconnected";
    const services = Object.fromEntries(results);
    const roles: Record<string, { status: string; runs: string; pid?: number }> = {
      gateway: { status: "serving", runs: "in_process", pid: process.pid },
    };
    for (const [name, status] of results) {
      const { baseUrl } = checks.find((c) => c.name === name) as (typeof checks)[number];
      roles[name] = hostedHere(Health, baseUrl)
        ? { status, runs: "in_process", pid: process.pid }
        : { status, runs: new URL(baseUrl).host };
    }
    const down: string[] = results.filter(([, s]) => s !== "serving").map(([n]) => n);
    if (nats === "disconnected") down.push("nats");
    if (down.length === 0) {
      ctx.body = { status: "ok", services, nats, roles };
      return;
    }
    ctx.status = 503;
    ctx.set("Retry-After", "1");
    const message = `unhealthy: ${down.join(", ")}`;
    ctx.body = {
      status: "unavailable",
      services,
      nats,
      roles,
      detail: message,
      error: { code: "service_unavailable", message, details: { down } },
    };
  });
}
