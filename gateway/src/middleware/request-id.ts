/**
 * Gives every request an id (the caller's X-Request-Id when it is sane), echoes it in the response
 * and runs the rest of the request inside its scope, so logs, gRPC metadata and events carry it.
 */
import { acceptRequestId, REQUEST_ID_HEADER, runInScope } from "@toolport/kit/context";
import type { Logger } from "@toolport/kit/logger";
import type { Middleware } from "koa";
import { settled } from "./errors.js";

export function requestIdMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    const requestId = acceptRequestId(ctx.get(REQUEST_ID_HEADER));
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    const started = performance.now();
    await runInScope({ requestId }, async () => {
      const done = await settled(ctx, next);
      log.info(
        { method: ctx.method, path: ctx.path, status: done.status, ms: Math.round(performance.now() - started) },
        "request",
      );
      done.rethrow();
    });
  };
}
