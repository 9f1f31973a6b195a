/**
 * `GET /livez`: 200 whenever the gateway's process serves HTTP. It checks nothing else, so a service being
 * down does not take every gateway out of its Service (GET /v1/health reports the services, for people and
 * alerts). Kubernetes probes it for readiness and liveness (deploy/k8s/base/gateway.yaml). Answered before
 * the access log and metrics, so a probe every few seconds adds neither lines nor series.
 */
import type { Middleware } from "koa";

export function livenessMiddleware(): Middleware {
  return async (ctx, next) => {
    if (ctx.path === "/livez" && (ctx.method === "GET" || ctx.method === "HEAD")) {
      ctx.set("Cache-Control", "no-store");
      ctx.body = { status: "ok" };
      return;
    }
    await next();
  };
}
