/**
 * JSON request bodies with limits, each refusal in the error shape:
 * - size: `BODY_LIMIT_BYTES` (1 MiB) for every route except publishing an OpenAPI document (POST
 *   /v1/services and POST /v1/services/{id}/reimport) and creating a skill or a skill submission, which
 *   take `PUBLISH_BODY_LIMIT_BYTES` (25 MiB: real API descriptions run to several MiB, and a skill's
 *   1 MiB of content is more as JSON). Larger is a 413 naming the limit.
 * - nesting: at most MAX_BODY_DEPTH objects/arrays deep (400 `body_too_deep` naming the limit and where
 *   it was crossed). Real tool inputs and API descriptions stay far below it (Box's 1.7 MB document is 22
 *   levels); the limit keeps hostile bodies from costing stack in every walker after this one.
 * - U+0000: refused in any string or key (400 `invalid_character` with its JSON pointer): Postgres text
 *   cannot hold it, so it could not be stored, and no caller needs to send it.
 * Malformed JSON is a 400 and a body that is not JSON a 415. A YAML body sent to a publishing route (the
 * first guess of someone holding an OpenAPI document in YAML) is a 415 that says how to send it: the
 * document goes inside the JSON body, beside the service's other fields (visibility, name, organization),
 * which a bare document has no place for. The parsed body is `ctx.request.body`.
 */
import { findJsonViolation } from "@toolport/kit/json-guard";
import type { Context, Middleware } from "koa";
import getRawBody from "raw-body";
import { HttpError } from "../http/errors.js";

declare module "koa" {
  interface Request {
    body?: unknown;
    rawBody?: Buffer;
  }
}

export const MAX_BODY_DEPTH = 64;

export interface BodyLimits {
  /** Every route's limit. */
  limitBytes: number;
  /** The publishing routes' limit (an OpenAPI document or a skill bundle inline). */
  publishLimitBytes: number;
  /**
   * Whether a route answers this method and path. A body refused where no route does is not refused: the
   * request is the router's 404 or 405, whatever its body (a 415 or 400 there named a body no route takes).
   * Asked only when a body is refused, so a good body costs no route match here beside the router's own.
   */
  routed(method: string, path: string): boolean;
}

/**
 * Routes that may carry a whole API description, or a skill bundle (whose own limit, 1 MiB of content,
 * content checks and answers with 413 skill_too_large: its JSON is larger than the content).
 */
const PUBLISH_ROUTE = /^\/v1\/(services(\/preview|\/[^/]+\/reimport)?|skills|skill-submissions)\/?$/;

/** The routes that take an OpenAPI document. */
const DOCUMENT_ROUTE = /^\/v1\/services(\/preview|\/[^/]+\/reimport)?\/?$/;
const YAML_TYPES = new Set(["application/yaml", "text/yaml", "application/x-yaml", "text/x-yaml"]);
const YAML_REFUSAL =
  'an OpenAPI document (JSON or YAML) goes inside a JSON body: send Content-Type: application/json with {"api": {"document_text": "<the document as text>"}} (or {"api": {"document_url": "https://..."}}), plus the service\'s fields such as "visibility"';

export function jsonBody(limits: BodyLimits): Middleware {
  return async (ctx, next) => {
    if (!["POST", "PUT", "PATCH", "DELETE"].includes(ctx.method)) return next();
    try {
      await readJson(ctx, limits);
    } catch (err) {
      if (err instanceof HttpError && !limits.routed(ctx.method, ctx.path)) return next();
      throw err;
    }
    return next();
  };
}

/** Reads and checks the request's JSON body into `ctx.request.body`, or throws its refusal. */
async function readJson(ctx: Context, limits: BodyLimits): Promise<void> {
  const limitBytes = ctx.method === "POST" && PUBLISH_ROUTE.test(ctx.path) ? limits.publishLimitBytes : limits.limitBytes;
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
    return;
  }
  const type = ctx.request.type;
  if (type && type !== "application/json" && !type.endsWith("+json")) {
    if (YAML_TYPES.has(type) && ctx.method === "POST" && DOCUMENT_ROUTE.test(ctx.path)) {
      throw new HttpError(415, "unsupported_media_type", YAML_REFUSAL);
    }
    throw new HttpError(415, "unsupported_media_type", "request body must be JSON (Content-Type: application/json)");
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(err as Error).message}`);
  }
  const violation = findJsonViolation(body, MAX_BODY_DEPTH);
  if (violation?.kind === "depth") {
    throw new HttpError(
      400,
      "body_too_deep",
      `request body is nested deeper than the limit of ${MAX_BODY_DEPTH} levels (at ${violation.pointer})`,
      { limit_depth: MAX_BODY_DEPTH, pointer: violation.pointer },
    );
  }
  if (violation?.kind === "nul") {
    throw new HttpError(400, "invalid_character", `request body holds a NUL character (U+0000) at ${violation.pointer}`, {
      field: violation.pointer,
    });
  }
  ctx.request.body = body;
}
