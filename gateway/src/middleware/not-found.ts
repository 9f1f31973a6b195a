/**
 * Requests no route answered become errors in the spec's shape: 404 for an unknown path, 405 (with
 * Allow, set by the router) for a known path with the wrong method.
 */
import type { Middleware } from "koa";
import { errorBody } from "../http/errors.js";

export function unmatchedRoutes(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    if (ctx.status === 405) {
      ctx.body = errorBody(
        "method_not_allowed",
        `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get("Allow")}`,
      );
      return;
    }
    if (ctx.status === 404) {
      ctx.status = 404;
      ctx.body = errorBody("not_found", `no route for ${ctx.method} ${ctx.path}`);
    }
  };
}
