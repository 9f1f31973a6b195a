/**
 * Each request as a server span (kit/tracing; nothing when tracing is off), a child of the trace context
 * the client sent, if any. Named by the router's route pattern once it is known, so spans group by route.
 */
import { contextFromHeaders, inSpan, SpanKind } from "@toolport/kit/tracing";
import type { Middleware } from "koa";
import { settled } from "./errors.js";

export function tracingMiddleware(): Middleware {
  return async (ctx, next) => {
    // An error goes on to errorMiddleware after the span ends: a 4xx is no failure of the server.
    const done = await inSpan(
      `${ctx.method} ${ctx.path}`,
      {
        kind: SpanKind.SERVER,
        parent: contextFromHeaders((name) => ctx.get(name) || undefined),
        attributes: {
          "http.request.method": ctx.method,
          "toolport.role": "gateway",
          "toolport.request_id": ctx.state.requestId ?? "",
        },
      },
      async (span) => {
        const done = await settled(ctx, next);
        const route = (ctx as { _matchedRoute?: string })._matchedRoute;
        if (typeof route === "string") {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute("http.route", route);
        }
        span.setAttribute("http.response.status_code", done.status);
        return done;
      },
    );
    done.rethrow();
  };
}
