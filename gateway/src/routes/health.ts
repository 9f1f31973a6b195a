/**
 * GET /v1/health: the gRPC health of every service, checked now. 200 when all serve; 503 naming
 * each one that does not.
 */

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type Router from "@koa/router";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@toolport/proto/grpc/health/v1/health_pb";
import type { GatewayConfig } from "../config.js";

export const serviceNames = ["catalog", "execution", "billing", "identity", "content", "webhooks"] as const;

export function healthRoutes(router: Router, config: GatewayConfig): void {
  const checks = serviceNames.map((name) => {
    const baseUrl = config[`${name.toUpperCase()}_URL` as keyof GatewayConfig] as string;
    const client = createClient(Health, createGrpcTransport({ baseUrl }));
    return { name, client };
  });

  router.get("/health", async (ctx) => {
    const results = await Promise.all(
      checks.map(async ({ name, client }) => {
        try {
          const res = await client.check({ service: "" }, { timeoutMs: config.HEALTH_TIMEOUT_MS });
          return [name, res.status === Status.SERVING ? "serving" : "not_serving"] as const;
        } catch {
          return [name, "unreachable"] as const;
        }
      }),
    );
    const services = Object.fromEntries(results);
    const down = results.filter(([, s]) => s !== "serving").map(([n]) => n);
    if (down.length === 0) {
      ctx.body = { status: "ok", services };
      return;
    }
    ctx.status = 503;
    ctx.set("Retry-After", "1");
    const message = `unhealthy: ${down.join(", ")}`;
    ctx.body = {
      status: "unavailable",
      services,
      detail: message,
      error: { code: "service_unavailable", message, details: { down } },
    };
  });
}
