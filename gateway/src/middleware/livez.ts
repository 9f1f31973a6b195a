/**
 * Kubernetes' probes of the gateway (deploy/k8s/base/gateway.yaml), answered before the access log and
 * metrics, so a probe every few seconds adds neither lines nor series:
 * - `GET /livez` (liveness): 200 whenever the gateway's process serves HTTP. It checks nothing else.
 * - `GET /readyz` (readiness): 200 while the gateway takes requests, 503 once it is draining (SIGTERM),
 *   so it leaves its Service before its listener closes. The gateway holds no database or NATS of its
 *   own; a service being down does not take every gateway out of its Service (that would turn clear 503
 *   answers into refused connections). `GET /v1/health` reports the services and NATS, for people and alerts.
 */
import type { Middleware } from "koa";

/** Whether the gateway is draining; its role sets it when asked to stop. */
export interface Readiness {
  draining: boolean;
}

export function livenessMiddleware(readiness: Readiness = { draining: false }): Middleware {
  return async (ctx, next) => {
    if ((ctx.path === "/livez" || ctx.path === "/readyz") && (ctx.method === "GET" || ctx.method === "HEAD")) {
      ctx.set("Cache-Control", "no-store");
      if (ctx.path === "/readyz" && readiness.draining) {
        ctx.status = 503;
        ctx.body = { status: "draining" };
        return;
      }
      ctx.body = { status: "ok" };
      return;
    }
    await next();
  };
}
