/** Reading request input the same way on every route. */
import type { JsonObject } from "@bufbuild/protobuf";
import { HttpError } from "./errors.js";

/** The JSON body as an object ({} when there is none); an array or a scalar is a 400. */
export function objectBody(ctx: { request: { body?: unknown } }): JsonObject {
  const body = ctx.request.body;
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, "invalid_body", "request body must be a JSON object");
  }
  return body as JsonObject;
}
