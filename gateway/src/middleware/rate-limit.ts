/**
 * Rate limits counted in one shared place: each request is one IdentityService.ConsumeRateLimit hit
 * on a fixed window in identity's Postgres, so every gateway replica behind a balancer enforces the
 * same limit. Over the limit: 429 in the error shape with `Retry-After`; under it, the response carries
 * `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` so a client can pace itself.
 *
 *   router.get("/tools/public/search", rateLimit(identity, { bucket: "public_search", key: clientIp }), ...)
 *   router.get("/tools/search", auth(identity, "api_key"), rateLimit(identity, { bucket: "search", key: accountOf }), ...)
 *
 * When identity cannot count (down, deadline), the request fails with identity's error (503), rather
 * than running unlimited.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Context, Middleware } from "koa";
import type { ServiceClients } from "../clients.js";
import { HttpError } from "../http/errors.js";

export interface RateLimitOptions {
  /** Counter name shared by every replica, e.g. "registration", "public_search". */
  bucket: string;
  /**
   * Requests allowed per window and the window's length. Omitted, identity's configured default for
   * the bucket applies (`registration`, `public_search`, `tool_calls`; see services/identity/README.md),
   * so an operator sets a limit in one place.
   */
  limit?: number;
  windowSeconds?: number;
  /** Who is counted: a client IP, key id, account id. */
  key: (ctx: Context) => string;
}

/** The caller's IP as Koa sees it (X-Forwarded-For only when TRUST_PROXY is set). */
export const clientIp = (ctx: Context): string => ctx.ip || "unknown";

/** The authenticated caller's account (after an `auth()` middleware that requires credentials). */
export const accountOf = (ctx: Context): string => {
  const accountId = ctx.state.principal?.accountId;
  if (!accountId) throw new Error("rateLimit keyed by account runs before authentication");
  return `account:${accountId}`;
};

const limiters = new WeakMap<Middleware, string>();

/** The bucket a `rateLimit()` middleware counts in (the API description adds its 429); undefined for others. */
export function rateLimitBucketOf(middleware: Middleware): string | undefined {
  return limiters.get(middleware);
}

export function rateLimit(identity: ServiceClients["identity"], options: RateLimitOptions): Middleware {
  const { bucket } = options;
  const middleware: Middleware = async (ctx, next) => {
    const outcome = await identity.consumeRateLimit({
      bucket,
      subjectKey: options.key(ctx),
      limit: options.limit ?? 0,
      windowSeconds: options.windowSeconds ?? 0,
    });
    const resetAt = outcome.resetAt ? timestampDate(outcome.resetAt) : new Date();
    const resetSeconds = Math.max(0, Math.ceil((resetAt.getTime() - Date.now()) / 1000));
    ctx.set({
      "RateLimit-Limit": String(outcome.limit),
      "RateLimit-Remaining": String(outcome.remaining),
      "RateLimit-Reset": String(resetSeconds),
    });
    if (!outcome.allowed) {
      const retryAfter = Math.max(1, outcome.retryAfterSeconds);
      throw new HttpError(
        429,
        "rate_limited",
        `rate limit exceeded: at most ${outcome.limit} requests per window; retry after ${retryAfter} seconds`,
        { bucket, limit: outcome.limit, retry_after_seconds: retryAfter, reset_at: resetAt.toISOString() },
        { "Retry-After": String(retryAfter) },
      );
    }
    return next();
  };
  limiters.set(middleware, bucket);
  return middleware;
}
