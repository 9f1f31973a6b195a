/**
 * JSON answers leave as bytes, encoded once. Left to itself, Koa stringifies an object body, measures
 * the string's UTF-8 length for Content-Length, then encodes it again as it writes it: two passes over
 * a page of tools, which is a megabyte and more with real APIs' schemas (the gateway's CPU profile
 * under the catalog-scale benchmark showed the measuring and the writing as a third of its time).
 * Outermost but for errorMiddleware, so every other middleware still sees the object, and a failure to
 * encode is still answered in the error shape (an error body is small: Koa encodes it). A RawJson in the
 * body (a tool's schemas, as the catalog sent them) is written as the bytes it arrived in, never decoded.
 */
import { Stream } from "node:stream";
import { jsonWithRaw } from "@toolport/kit/json-bytes";
import type { Middleware } from "koa";

export function jsonBytesMiddleware(): Middleware {
  return async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    if (body === null || typeof body !== "object" || Buffer.isBuffer(body) || body instanceof Stream) return;
    const type = ctx.response.get("Content-Type");
    ctx.body = jsonWithRaw(body);
    ctx.type = type || "application/json; charset=utf-8";
  };
}
