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

export function badField(field: string, message: string): HttpError {
  return new HttpError(400, "invalid_request", `${field}: ${message}`, { field });
}

/** A string field; absent or null gives undefined; another type is a 400 naming it. */
export function stringField(body: Record<string, unknown>, field: string, prefix = ""): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw badField(prefix + field, "must be a string");
  return value;
}

/** A boolean field; absent or null gives undefined; another type is a 400 naming it. */
export function boolField(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw badField(field, "must be true or false");
  return value;
}

/** An integer query parameter; absent gives undefined, anything not an integer is a 400. */
export function intQuery(value: string | string[] | undefined, field: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const raw = Array.isArray(value) ? value[0]! : value;
  if (!/^-?\d{1,9}$/.test(raw.trim())) throw badField(field, "must be an integer");
  return Number(raw);
}

export function boolQuery(value: string | string[] | undefined, field: string): boolean {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw badField(field, "must be true or false");
}

/** A query parameter's first value; absent or empty gives undefined. */
export function queryString(ctx: { query: Record<string, string | string[] | undefined> }, name: string): string | undefined {
  const value = ctx.query[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

/** An object field; absent or null gives undefined; anything else is a 400 naming it. */
export function objectField(body: JsonObject, field: string): JsonObject | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw badField(field, "must be an object");
  return value;
}

/** An array of strings; absent or null gives undefined; anything else is a 400 naming the field or element. */
export function stringList(body: JsonObject, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw badField(field, "must be an array of strings");
  return value.map((v, i) => {
    if (typeof v !== "string") throw badField(`${field}[${i}]`, "must be a string");
    return v;
  });
}
