/**
 * The first middleware: whatever goes wrong below it leaves as the spec's error shape. A service's
 * ConnectError keeps its code (-> status) and reason (-> error.code); anything unexpected is a 500
 * whose cause is logged here and never sent.
 */
import { ConnectError } from "@connectrpc/connect";
import { readError } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import type { Middleware } from "koa";
import { ConsentRequired, errorBody, HttpError, httpStatusFor } from "../http/errors.js";

export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = errorBody(err.code, err.message, err.details);
        return;
      }
      if (err instanceof ConsentRequired) {
        const { reason, message, details, detail } = err.received;
        ctx.status = 409;
        ctx.body = {
          ...errorBody(reason, message, details, detail),
          confirm_token: details.confirm_token ?? null,
          consent: details.consent ?? null,
        };
        return;
      }
      if (err instanceof ConnectError) {
        const received = readError(err);
        ctx.status = httpStatusFor(received.code, received.reason);
        if (ctx.status >= 500)
          log.error({ code: received.code, reason: received.reason, msg: received.message }, "service call failed");
        const retryAfter = received.details.retry_after_seconds;
        if (typeof retryAfter === "number") ctx.set("Retry-After", String(Math.max(1, Math.ceil(retryAfter))));
        else if (ctx.status === 503) ctx.set("Retry-After", "1");
        ctx.body = errorBody(received.reason, publicMessage(err, received.message), received.details, received.detail);
        return;
      }
      log.error({ err, method: ctx.method, path: ctx.path }, "unhandled error");
      ctx.status = 500;
      ctx.body = errorBody("internal_error", "internal error");
    }
  };
}

/** Messages of internal and transport failures say what happened without internals. */
function publicMessage(err: ConnectError, message: string): string {
  if (err.code === 13 || err.code === 2) return "internal error";
  if (err.code === 14 && /ECONNREFUSED|ECONNRESET|connect|socket|stream/i.test(message))
    return "a backing service is unavailable";
  return message;
}
