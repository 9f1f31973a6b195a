/**
 * Refuses a NUL character (U+0000) anywhere in the path or the query string, before any route sees
 * it: ids, slugs, names and domains go to Postgres, which cannot hold it ("invalid byte sequence for
 * encoding UTF8: 0x00"), so it used to surface as a 500. One check here covers every route.
 */
import type { Middleware } from "koa";
import { HttpError } from "../http/errors.js";

const ENCODED_NUL = /%00/i;

export function urlGuard(): Middleware {
  return async (ctx, next) => {
    // ctx.path is still percent-encoded; a raw NUL cannot arrive in an HTTP request line.
    if (ENCODED_NUL.test(ctx.path)) {
      throw new HttpError(400, "invalid_character", "the request path holds a NUL character (%00)", { field: "path" });
    }
    if (ENCODED_NUL.test(ctx.querystring)) {
      for (const [name, value] of Object.entries(ctx.query)) {
        const values = Array.isArray(value) ? value : [value ?? ""];
        if (name.includes("\u0000") || values.some((v) => v.includes("\u0000"))) {
          throw new HttpError(400, "invalid_character", `query parameter ${JSON.stringify(name)} holds a NUL character (%00)`, {
            field: name.replaceAll("\u0000", "\\u0000"),
          });
        }
      }
    }
    return next();
  };
}
