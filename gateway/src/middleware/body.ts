/**
 * JSON request bodies with a size limit. Malformed JSON is a 400 and an oversize body a 413, both
 * in the error shape; the parsed body is `ctx.request.body`.
 */
import type { Middleware } from "koa";
import getRawBody from "raw-body";
import { HttpError } from "../http/errors.js";

declare module "koa" {
  interface Request {
    body?: unknown;
    rawBody?: Buffer;
  }
}

export function jsonBody(limitBytes: number): Middleware {
  return async (ctx, next) => {
    if (!["POST", "PUT", "PATCH", "DELETE"].includes(ctx.method)) return next();
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: limitBytes, length: ctx.get("content-length") || undefined });
    } catch (err) {
      const e = err as { type?: string; status?: number };
      if (e.type === "entity.too.large") {
        throw new HttpError(413, "payload_too_large", `request body is larger than the limit of ${limitBytes} bytes`, {
          limit_bytes: limitBytes,
        });
      }
      throw new HttpError(400, "invalid_body", "request body could not be read");
    }
    ctx.request.rawBody = raw;
    if (raw.length === 0) {
      ctx.request.body = undefined;
      return next();
    }
    const type = ctx.request.type;
    if (type && type !== "application/json" && !type.endsWith("+json")) {
      throw new HttpError(415, "unsupported_media_type", "request body must be JSON (Content-Type: application/json)");
    }
    try {
      ctx.request.body = JSON.parse(raw.toString("utf8"));
    } catch (err) {
      throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(err as Error).message}`);
    }
    return next();
  };
}
