/**
 * Request metrics of the gateway (kit/metrics: `toolport_http_request_duration_seconds`, labelled by the
 * router's route pattern, so ids in paths do not multiply the series) and `GET /metrics`, the process's
 * whole registry in Prometheus's text format: every role the process hosts, and Node's runtime. It is
 * served on the gateway's own port, outside `/v1`; the Kubernetes Ingress does not route `/metrics` (a test keeps it so).
 */
import { httpRequestSeconds, metrics } from "@toolport/kit/metrics";
import type { Middleware } from "koa";
import { settled } from "./errors.js";

export function metricsMiddleware(): Middleware {
  return async (ctx, next) => {
    if (ctx.path === "/metrics" && ctx.method === "GET") {
      ctx.type = metrics.contentType;
      ctx.body = await metrics.metrics();
      return;
    }
    const started = performance.now();
    const done = await settled(ctx, next);
    const route = (ctx as { _matchedRoute?: string })._matchedRoute;
    httpRequestSeconds.observe(
      {
        role: "gateway",
        method: ctx.method,
        route: typeof route === "string" ? route : "unmatched",
        status: String(done.status),
      },
      (performance.now() - started) / 1000,
    );
    done.rethrow();
  };
}
