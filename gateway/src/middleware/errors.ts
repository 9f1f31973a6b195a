/**
 * The first middleware: whatever goes wrong below it leaves as the spec's error shape, the outer
 * middleware's own failures included (encoding the answer, the access log, `GET /metrics`). A service's
 * ConnectError keeps its code (-> status) and reason (-> error.code); anything unexpected is a 500 whose
 * cause is logged here, with the request id, and never sent.
 *
 * The middleware that record a request's status on its way out (access log, span, metrics) sit inside
 * this one, so an error has no status yet where they run: `settled` gives them the status it will have.
 */
import { ConnectError } from "@connectrpc/connect";
import { readError } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import type { Context, Middleware, Next } from "koa";
import { ConsentRequired, errorBody, HttpError, httpStatusFor } from "../http/errors.js";

export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = errorStatus(err);
      // Outside the request's scope here: its id is named in the log line itself.
      const requestId: string | undefined = ctx.state.requestId;
      if (err instanceof HttpError) {
        ctx.set(err.headers);
        ctx.body = errorBody(err.code, err.message, err.details);
        return;
      }
      if (err instanceof ConsentRequired) {
        const { reason, message, details, detail } = err.received;
        ctx.body = {
          ...errorBody(reason, message, details, detail),
          confirm_token: details.confirm_token ?? null,
          consent: details.consent ?? null,
        };
        return;
      }
      if (err instanceof ConnectError) {
        const received = readError(err);
        if (ctx.status >= 500)
          log.error(
            { code: received.code, reason: received.reason, msg: received.message, request_id: requestId },
            "service call failed",
          );
        const retryAfter = received.details.retry_after_seconds;
        if (typeof retryAfter === "number") ctx.set("Retry-After", String(Math.max(1, Math.ceil(retryAfter))));
        else if (ctx.status === 503) ctx.set("Retry-After", "1");
        ctx.body = errorBody(received.reason, publicMessage(err, received.message), received.details, received.detail);
        return;
      }
      log.error({ err, method: ctx.method, path: ctx.path, request_id: requestId }, "unhandled error");
      ctx.body = errorBody("internal_error", "internal error");
    }
  };
}

/** The status errorMiddleware answers an error with. */
export function errorStatus(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof ConsentRequired) return 409;
  if (err instanceof ConnectError) {
    const received = readError(err);
    return httpStatusFor(received.code, received.reason);
  }
  return 500;
}

/** How the rest of a request ended, for a middleware that records it before errorMiddleware answers. */
export interface Settled {
  /** The status of the answer: the one set, or the one errorMiddleware will give what was thrown. */
  status: number;
  /** Throws what the rest of the request threw, if anything, on to errorMiddleware. */
  rethrow(): void;
}

/** Runs the rest of the request and holds what it threw, so the caller records the answer's status first. */
export async function settled(ctx: Context, next: Next): Promise<Settled> {
  try {
    await next();
  } catch (err) {
    return {
      status: errorStatus(err),
      rethrow: () => {
        throw err;
      },
    };
  }
  return { status: ctx.status, rethrow: () => {} };
}

/** Messages of internal and transport failures say what happened without internals. */
function publicMessage(err: ConnectError, message: string): string {
  if (err.code === 13 || err.code === 2) return "internal error";
  if (err.code === 14 && /ECONNREFUSED|ECONNRESET|connect|socket|stream/i.test(message))
    return "a backing service is unavailable";
  return message;
}
