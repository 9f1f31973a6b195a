/**
 * Reading request input the same way on every route: the JSON body, its fields, query parameters and
 * the page of a list route. Every reader answers bad input with a 400 in the error body's shape that
 * names the field, before any service is called.
 *
 * The routes word that 400 three ways, kept as they were when the readers were local to each routes
 * module (clients and tests read the messages), and a reader takes the wording as its `fail` argument:
 * - `badField` (the default): `tags: must be an array of strings`, code `invalid_request`;
 * - `namedField` (catalog, billing and directory routes): `tags must be an array of strings`, code
 *   `invalid_request`;
 * - `badParameter` (tool-call routes): `fields must be ...`, code `invalid_parameters`, with the field also
 *   listed in `details.fields` as execution's own refusals list them.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { HttpError } from "./errors.js";

// ---- the 400 ------------------------------------------------------------------------------------

/** The 400 of one bad field: `field` names it (with its path: `calls[2].tool_id`), `problem` says what is wrong. */
export type FieldFault = (field: string, problem: string) => HttpError;

/** A 400 naming `field`, with the whole message given. */
export function fieldError(field: string, message: string, code = "invalid_request"): HttpError {
  return new HttpError(400, code, message, { field });
}

/** A 400 of a tool call's body: the field in `details.field` and in `details.fields`. */
export function parameterError(field: string, message: string, code = "invalid_parameters"): HttpError {
  return new HttpError(400, code, message, { field, fields: [{ field, message }] });
}

/** `field: problem`, code invalid_request. */
export const badField: FieldFault = (field, problem) => fieldError(field, `${field}: ${problem}`);

/** `field problem`, code invalid_request. */
export const namedField: FieldFault = (field, problem) => fieldError(field, `${field} ${problem}`);

/** `field problem`, code invalid_parameters (parameterError). */
export const badParameter: FieldFault = (field, problem) => parameterError(field, `${field} ${problem}`);

// ---- JSON bodies --------------------------------------------------------------------------------

/** The JSON body as an object ({} when there is none); an array or a scalar is a 400. */
export function objectBody(ctx: { request: { body?: unknown } }): JsonObject {
  const body = ctx.request.body;
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, "invalid_body", "request body must be a JSON object");
  }
  return body as JsonObject;
}

/** A string field; absent or null gives undefined; another type is a 400 naming it (`prefix` is its path). */
export function stringField(
  body: Record<string, unknown>,
  field: string,
  prefix = "",
  fail: FieldFault = badField,
): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw fail(prefix + field, "must be a string");
  return value;
}

/** A boolean field; absent or null gives undefined; another type is a 400 naming it. */
export function boolField(body: Record<string, unknown>, field: string, fail: FieldFault = badField): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw fail(field, "must be true or false");
  return value;
}

/** An object field; absent or null gives undefined; anything else is a 400 naming it. */
export function objectField(body: Record<string, unknown>, field: string, fail: FieldFault = badField): JsonObject | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw fail(field, "must be an object");
  return value as JsonObject;
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

/** A price in cents: a whole number, 0 or more; absent or null gives undefined. */
export function centsField(body: Record<string, unknown>, field: string): bigint | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw namedField(field, "must be a whole number of cents, 0 or more");
  return BigInt(value);
}

/**
 * An amount that may pass 2^53 (atomic USDC units): a JSON integer, or a string of digits. Absent or null
 * is null; anything else is a 400 naming the field (the service checks ranges).
 */
export function bigintField(body: JsonObject, field: string): bigint | null {
  const value: JsonValue | undefined = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^-?\d{1,19}$/.test(value)) return BigInt(value);
  throw namedField(field, "must be an integer");
}

/** A tool's parameters (`tool_input`): an object; absent or null gives {}. */
export function toolInputField(value: JsonValue | undefined, field: string): JsonObject {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw badParameter(field, "must be an object of tool parameters");
  return value;
}

/**
 * How many calls one batch holds at most: checked here for the sync and the async batch route, and
 * described from here (`maxItems` of the batch body). The execution service refuses more on its own too,
 * for its callers that are not the gateway (a workflow run).
 */
export const MAX_BATCH_CALLS = 10;

/** A batch's `calls`: an array of 1 to MAX_BATCH_CALLS elements, refused as a whole otherwise. */
export function batchCallList(body: JsonObject): JsonValue[] {
  const calls = body.calls;
  if (!Array.isArray(calls)) throw parameterError("calls", `calls must be an array of 1 to ${MAX_BATCH_CALLS} calls`);
  if (calls.length < 1 || calls.length > MAX_BATCH_CALLS) {
    const message = `calls must hold 1 to ${MAX_BATCH_CALLS} calls (got ${calls.length})`;
    throw parameterError("calls", message, "invalid_batch");
  }
  return calls;
}

/** `max_response_chars` of a call or a workflow run: a positive integer (the service clamps it), or absent. */
export function maxResponseChars(body: JsonObject, prefix = ""): number | undefined {
  const max = body.max_response_chars;
  if (max === undefined || max === null) return undefined;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
    throw badParameter(`${prefix}max_response_chars`, "must be a positive integer (at most 500000)");
  }
  return Math.min(max, 2 ** 31 - 1);
}

// ---- query parameters ---------------------------------------------------------------------------

type Query = Record<string, string | string[] | undefined>;

/** A query parameter's first value as sent (an empty one included). */
export function queryValue(ctx: { query: Query }, name: string): string | undefined {
  const raw = ctx.query[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** A query parameter's first value; absent or empty gives undefined. */
export function queryString(ctx: { query: Query }, name: string): string | undefined {
  return queryValue(ctx, name) || undefined;
}

/** A list: repeated (`tags=a&tags=b`, `tags[]=a`) or comma-separated (`tags=a,b`), blanks dropped. */
export function queryList(ctx: { query: Query }, name: string): string[] {
  const raw = ctx.query[name] ?? ctx.query[`${name}[]`];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * An integer query parameter; absent or empty gives undefined, anything not an integer is a 400. With
 * `exact`, the value is taken as sent: an empty, padded or repeated one is refused too.
 */
export function intQuery(
  value: string | string[] | undefined,
  field: string,
  { fail = badField, exact = false }: { fail?: FieldFault; exact?: boolean } = {},
): number | undefined {
  if (value === undefined) return undefined;
  if (exact) {
    if (typeof value !== "string" || !/^-?\d{1,9}$/.test(value)) throw fail(field, "must be an integer");
    return Number(value);
  }
  if (value === "") return undefined;
  const raw = Array.isArray(value) ? value[0]! : value;
  if (!/^-?\d{1,9}$/.test(raw.trim())) throw fail(field, "must be an integer");
  return Number(raw);
}

/** A whole number from `min` to `max`; absent or empty gives undefined; else a 400 with code `invalid_<name>`. */
export function rangeQuery(ctx: { query: Query }, name: string, min: number, max: number): number | undefined {
  const raw = queryValue(ctx, name)?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw fieldError(name, `${name} must be a whole number from ${min} to ${max}`, `invalid_${name}`);
  }
  return Number(raw);
}

/** `true`/`1` or `false`/`0`; absent or empty is false; anything else is a 400. */
export function boolQuery(value: string | string[] | undefined, field: string, fail: FieldFault = badField): boolean {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw fail(field, "must be true or false");
}

/** A number from 0 to 1 (a rate); absent or blank gives undefined; else a 400 with code `invalid_<name>`. */
export function rateQuery(ctx: { query: Query }, name: string): number | undefined {
  const raw = queryValue(ctx, name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw fieldError(name, `${name} must be a number from 0 to 1`, `invalid_${name}`);
  }
  return value;
}

/**
 * An ISO 8601 time (a query value or a body field's string), as the services take it; undefined gives undefined, anything that is not a time is a
 * 400 naming it.
 */
export function timeValue(value: string | undefined, field: string, fail: FieldFault = badField): Timestamp | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw fail(field, "must be an ISO 8601 timestamp");
  return timestampFromDate(date);
}

// ---- pages of a list ----------------------------------------------------------------------------

/** A page's size: a non-negative integer (at most 1,000,000; the service clamps it); else a 400 `invalid_limit`. */
export function limitQuery(ctx: { query: Query }, name = "limit"): number | undefined {
  const raw = queryValue(ctx, name);
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^\d+$/.test(raw.trim())) throw fieldError(name, `${name} must be a non-negative integer`, "invalid_limit");
  return Math.min(Number(raw.trim()), 1_000_000);
}

/** A list route's page: `limit` and `cursor`. */
export function pageQuery(ctx: { query: Query }): { limit?: number; cursor?: string } {
  return { limit: limitQuery(ctx), cursor: queryString(ctx, "cursor") };
}

/**
 * After a page: the `Link: <...>; rel="next"` header (RFC 8288) that carries the next page's address,
 * the same query with the next cursor; none on the last page.
 */
export function linkNext(
  ctx: { query: Query; path: string; set(name: string, value: string): void },
  publicUrl: string,
  nextCursor: string | undefined,
): void {
  if (!nextCursor) return;
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(ctx.query)) {
    if (name === "cursor" || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) next.append(name, v);
  }
  next.set("cursor", nextCursor);
  ctx.set("Link", `<${publicUrl.replace(/\/$/, "")}${ctx.path}?${next.toString()}>; rel="next"`);
}

// ---- one wording for a whole routes module ------------------------------------------------------

/** The field readers with one wording bound: `const named = withWording(namedField); named.string(body, "slug")`. */
export function withWording(fail: FieldFault) {
  return {
    string: (body: Record<string, unknown>, field: string, prefix = "") => stringField(body, field, prefix, fail),
    bool: (body: Record<string, unknown>, field: string) => boolField(body, field, fail),
    object: (body: Record<string, unknown>, field: string) => objectField(body, field, fail),
    boolQuery: (value: string | string[] | undefined, field: string) => boolQuery(value, field, fail),
  };
}
