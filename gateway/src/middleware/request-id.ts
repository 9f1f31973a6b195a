/**
 * Gives every request an id (the caller's X-Request-Id when it is sane), echoes it in the response
 * and runs the rest of the request inside its scope, so logs, gRPC metadata and events carry it. The
 * scope also says when the answer is due, `rpcTimeoutMs` after the request arrived: every call to a
 * service that sets no deadline of its own (publishing and workflow runs do) ends by then, so a request
 * waits on the services RPC_TIMEOUT_MS in all, not that much per call.
 */
import { acceptRequestId, REQUEST_ID_HEADER, runInScope } from "@toolport/kit/context";
import type { Logger } from "@toolport/kit/logger";
import type { Middleware } from "koa";
import { settled } from "./errors.js";

export function requestIdMiddleware(log: Logger, rpcTimeoutMs: number): Middleware {
  return async (ctx, next) => {
    const requestId = acceptRequestId(ctx.get(REQUEST_ID_HEADER));
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    const started = performance.now();
    await runInScope({ requestId, deadline: Date.now() + rpcTimeoutMs }, async () => {
      const done = await settled(ctx, next);
      log.info(
        { method: ctx.method, path: ctx.path, status: done.status, ms: Math.round(performance.now() - started) },
        "request",
      );
      done.rethrow();
    });
  };
}
