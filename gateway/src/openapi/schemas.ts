/**
 * The spec's resource shapes as JSON Schemas (2020-12, as OpenAPI 3.1 takes them): the components of the
 * API description (document.ts) and what the end-to-end harness checks every reply against.
 *
 * How the spec's tables read here:
 * - Every listed field is required, with the listed type: `integer` is a whole number (1.5 fails),
 *   `number` any number, "string or null" both, timestamps RFC 3339 date-times with a zone.
 * - A field whose note says it is there "when set" / "when the publisher gave them" (Tool `output`,
 *   `tips`, `configuration_url`) is present and null when not set: the gateway renders absent values
 *   as null, and a missing key would be a regression.
 * - Enums are the spec's words only (Tool status, readiness, service_type, verification_tier, Service
 *   status and visibility, Execution status, stored kind).
 * - Extra fields, decided per shape: Tool, trimmed Tool, Reliability block and Service are closed (the
 *   spec lists their fields and DESIGN adds none; the trimmed Tool must in particular carry no
 *   security schemes, base URL or credential details). Execution result, Batch element and the
 *   single-call result are closed except for a few named, typed extras (see `mcpSurfaceExtras` and
 *   `batchElement`).
 * - Rules between fields are written as if/then schemas whose description names the rule in the
 *   failure message (configuration_url with needs_credential, path_matched with path, response_meta
 *   with truncated, stored_meta with stored_truncated, error with success/status).
 */

export type Schema = { [keyword: string]: unknown } | boolean;

// ---- building blocks --------------------------------------------------------------------------

export const string = { type: "string" };
export const stringOrNull = { type: ["string", "null"] };
export const integer = { type: "integer" };
export const number = { type: "number" };
export const boolean = { type: "boolean" };
export const anyValue = {};
export const stringArray = { type: "array", items: string };
export const timestamp = { type: "string", format: "date-time" };
export const timestampOrNull = { type: ["string", "null"], format: "date-time" };
export const oneOf = (...values: string[]) => ({ type: "string", enum: values });

/** An object with exactly these fields: `required` must be present, `optional` may be. */
export function closed(
  required: Record<string, Schema>,
  optional: Record<string, Schema> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    type: "object",
    properties: { ...required, ...optional },
    required: Object.keys(required),
    additionalProperties: false,
    ...extra,
  };
}

/** A rule between fields, named in failure messages by its description. */
export function rule(
  description: string,
  condition: Record<string, unknown>,
  then: Record<string, unknown>,
  otherwise?: Record<string, unknown>,
) {
  return {
    if: condition,
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, never awaited
    then: { description, ...then },
    ...(otherwise ? { else: { description, ...otherwise } } : {}),
  };
}

export const isNull = { type: "null" };
export const has = (field: string) => ({ required: [field] });
/** These fields are present and each matches its schema. */
export const fieldsAre = (fields: Record<string, Schema>) => ({ required: Object.keys(fields), properties: fields });
export const fieldIs = (field: string, schema: Schema) => fieldsAre({ [field]: schema });
export const absent = (field: string) => ({ properties: { [field]: false } });

// ---- catalog shapes ---------------------------------------------------------------------------

/** Spec "Reliability block": null when the tool was not called in the window, else exactly these keys. */
export const reliability = {
  description: "Reliability block",
  ...closed({
    window_days: integer,
    calls_7d: integer,
    calls_30d: integer,
    // "null below 10 calls".
    success_rate_30d: { type: ["number", "null"] },
    // Latency percentiles and the last-* facts are null when no call gave them (the spec draws no type).
    p50_seconds: { type: ["number", "null"] },
    p95_seconds: { type: ["number", "null"] },
    last_success_at: timestampOrNull,
    last_failure_at: timestampOrNull,
    last_error_class: stringOrNull,
    last_error_type: stringOrNull,
    // "Value shapes of error_classes and faults: not shown beyond being objects."
    error_classes: { type: "object" },
    faults: { type: "object" },
    auth_failures_30d: integer,
    caller_failures_30d: integer,
    danube_failures_30d: integer,
    upstream_failures_30d: integer,
    distinct_callers_30d: integer,
    flagged: boolean,
    refreshed_at: timestamp,
  }),
  type: ["object", "null"],
};

/**
 * One entry of a tool's `parameters` map. Spec: "type, location, description, required, default,
 * enum" (full Tool) and "name, location, description, type, required, plus default, enum, minimum,
 * maximum, encode_slashes and json_schema when set" (trimmed Tool); both renderings are one shape, so
 * the full Tool's entries may carry the trimmed one's extras, and `name` is required where listed.
 */
export const parameterOptional = {
  default: anyValue,
  enum: { type: "array" },
  minimum: number,
  maximum: number,
  encode_slashes: boolean,
  json_schema: { type: ["object", "boolean"] },
};
export const parameterCore = { location: string, description: string, type: string, required: boolean };
export const toolParameter = closed(parameterCore, { name: string, ...parameterOptional });
export const publicToolParameter = closed({ name: string, ...parameterCore }, parameterOptional);

export const readiness = oneOf("ready", "needs_credential", "unavailable");
export const configurationUrlRule = rule(
  "configuration_url is set when readiness is needs_credential",
  fieldIs("readiness", { const: "needs_credential" }),
  fieldIs("configuration_url", string),
);

/** Spec "Tool (full shape, returned by list and get)". */
export const tool = closed(
  {
    id: string,
    slug: stringOrNull,
    name: string,
    description: string,
    service_id: string,
    status: oneOf("active", "inactive"),
    tags: stringArray,
    method: string,
    path: string,
    parameters: { type: "object", additionalProperties: toolParameter },
    output: { type: ["object", "null"] },
    tips: stringOrNull,
    version: string,
    is_paid: boolean,
    price_per_call_cents: integer,
    readiness,
    configuration_url: stringOrNull,
    reliability,
    deprecated: boolean,
    deprecation_message: stringOrNull,
    sunset_date: timestampOrNull,
    created_at: timestamp,
    updated_at: timestamp,
  },
  {},
  { allOf: [configurationUrlRule] },
);

/** Spec "Tool (trimmed public shape, returned by public search)". */
export const publicTool = closed(
  {
    id: string,
    name: string,
    slug: stringOrNull,
    description: string,
    service_id: string,
    parameters: { type: "object", additionalProperties: publicToolParameter },
    readiness,
    configuration_url: stringOrNull,
    reliability,
    deprecated: boolean,
    deprecation_message: stringOrNull,
    sunset_date: timestampOrNull,
  },
  {},
  { allOf: [configurationUrlRule] },
);

/** Spec "Service". */
export const service = closed({
  id: string,
  slug: string,
  name: string,
  summary: string,
  description: string,
  service_type: oneOf("api", "mcp_server", "internal"),
  category: string,
  logo: string,
  contact: closed({ name: string, url: string, email: string }),
  documentation_url: string,
  verification_tier: oneOf("unverified", "verified", "official"),
  status: oneOf("active", "degraded", "retired"),
  visibility: oneOf("public", "private", "internal", "local_only"),
  tool_count: integer,
  total_executions: integer,
  success_rate: number,
  avg_rating: number,
  rating_count: integer,
  is_popular: boolean,
  is_demo: boolean,
  version: string,
  created_at: timestamp,
  updated_at: timestamp,
});

// ---- workflow shapes --------------------------------------------------------------------------

/** "Step: step_number (integer, from 1), tool_id, tool_name, description, input_mapping (object ...)". */
export const workflowStep = closed({
  step_number: { type: "integer", minimum: 1 },
  tool_id: string,
  tool_name: string,
  description: string,
  input_mapping: { type: "object" },
});

/** "Full": the spec's fields, and ours (DESIGN "Workflows"): the inputs' schema and the run statistics. */
export const workflow = closed({
  id: string,
  name: { type: "string", maxLength: 128 },
  description: string,
  steps: { type: "array", items: workflowStep, minItems: 1 },
  owner_id: string,
  visibility: oneOf("private", "public"),
  tags: stringArray,
  created_at: timestamp,
  updated_at: timestamp,
  input_schema: { type: ["object", "null"] },
  total_executions: { type: "integer", minimum: 0 },
  success_rate: { type: "number", minimum: 0, maximum: 100 },
});

/** "Summary (public list)"; `visibility` is "always public" in the public list only. */
export const workflowSummary = (visibility: Schema) =>
  closed({
    id: string,
    name: { type: "string", maxLength: 128 },
    description: string,
    step_count: { type: "integer", minimum: 1 },
    owner_id: string,
    visibility,
    tags: stringArray,
    total_executions: { type: "integer", minimum: 0 },
    success_rate: { type: "number", minimum: 0, maximum: 100 },
    created_at: timestamp,
  });

// ---- execution shapes -------------------------------------------------------------------------

/** "dropped_items (per array path: kept and total)". */
export const droppedItems = { type: "object", additionalProperties: closed({ kept: integer, total: integer }) };

/** Spec "response_meta": only when truncated, so its own `truncated` is true. */
export const responseMeta = closed(
  {
    truncated: { type: "boolean", const: true },
    original_response_chars: integer,
    response_chars: integer,
    dropped_items: droppedItems,
  },
  { cursor: string },
);

/** Spec "stored_meta". */
export const storedMeta = closed(
  { truncated: boolean, original_chars: integer, stored_chars: integer, limit: integer, kind: oneOf("json", "text") },
  { dropped_items: droppedItems, partial_json_only: boolean },
);

/**
 * The extras the execution shapes may carry besides the spec's fields. The MCP server builds the spec's
 * "Result fields on the MCP surface" from these HTTP bodies, so the gateway passes `cursor`,
 * `passthrough_reason` and `_meta` {redaction, truncation_note, execution_id} through, typed as that
 * table draws them; nothing else is allowed.
 */
export const mcpSurfaceExtras = {
  cursor: string,
  passthrough_reason: string,
  _meta: closed(
    {},
    {
      redaction: closed({
        count: integer,
        fields: { type: "array", items: closed({ path: string, key: string, rule: string }) },
        mode: string,
      }),
      truncation_note: string,
      execution_id: string,
    },
  ),
};

export const errorMatchesStatus = rule(
  "a failed execution stores nothing: status error has an error message and a null result; success has no error",
  fieldIs("status", { const: "error" }),
  fieldsAre({ error: string, result: isNull }),
  fieldIs("error", isNull),
);

/** Spec "Execution result (stored handle)". */
export const executionResult = closed(
  {
    execution_id: string,
    tool_id: string,
    status: oneOf("success", "error"),
    executed_at: timestamp,
    error: stringOrNull,
    path: stringOrNull,
    result: anyValue,
    truncated: boolean,
    response_meta: { ...responseMeta, type: ["object", "null"] },
  },
  {
    path_matched: boolean,
    stored_truncated: { type: "boolean", const: true },
    stored_meta: storedMeta,
    ...mcpSurfaceExtras,
  },
  {
    allOf: [
      rule(
        "path_matched is present only when a path was given, and then always",
        fieldIs("path", isNull),
        absent("path_matched"),
        has("path_matched"),
      ),
      rule(
        "response_meta is null unless truncated, then an object",
        fieldIs("truncated", { const: true }),
        fieldIs("response_meta", { type: "object" }),
        fieldIs("response_meta", isNull),
      ),
      rule(
        "stored_meta is present with stored_truncated, and only then",
        has("stored_truncated"),
        has("stored_meta"),
        absent("stored_meta"),
      ),
      errorMatchesStatus,
    ],
  },
);

/** An array of `items`. */
export const arrayOf = (items: Schema) => ({ type: "array", items });

/** DESIGN "Batch element extras": consent and projection. */
export const consent = closed({
  tool_id: string,
  tool_name: string,
  parameters: { type: "object" },
  confirm_token: string,
  expires_at: timestamp,
});
export const projection = closed({ kept: stringArray, unmatched: stringArray });

/**
 * `error_details` of an element whose MCP tool asked a person a question (`error_code`
 * `mcp_input_required`): the questions, and the continuation that carries the answers back when the same
 * call is repeated with `input_responses`.
 */
export const inputRequiredDetails = {
  description:
    "The tool asked a person a question mid-call. Ask the person, then repeat the same call (same tool and " +
    "tool_input) with `input_responses: {continuation, answers: {<key>: {action, content}}}`.",
  ...closed({
    tool_id: string,
    questions: arrayOf({
      description: "One question: its key in `answers`, the text to show, and the JSON Schema of the answer's `content`.",
      ...closed({ key: string, message: string, requested_schema: { type: "object" } }),
    }),
    continuation: {
      ...string,
      description:
        "Opaque and signed: bound to this caller, tool and tool_input; usable once, until `expires_at` (a question a " +
        "2025-11-25 MCP server asked waits in the execution service that asked it, up to 5 minutes).",
    },
    expires_at: timestamp,
  }),
};

/** Spec "Batch result element" fields, shared by the single call's body. */
export const elementFields = { tool_id: string, success: boolean, result: anyValue, error: stringOrNull };

export const errorMatchesSuccess = rule(
  "a failed call carries an error message, a successful one error null",
  fieldIs("success", { const: false }),
  fieldIs("error", string),
  fieldIs("error", isNull),
);

/**
 * Spec "Batch result element" plus DESIGN's consent and projection. Extras, each optional and typed:
 * the element's own `truncated` (and `response_meta` when truncated), as the single call's body has them
 * (the spec's per-call cap applies to each element); `error_code`, the snake_case code of DESIGN's error
 * body, on an element refused before it ran (not found, not permitted, invalid input, consent needed, a
 * limit); and the MCP-surface extras. A refused element never ran, so it has no stored result and its
 * `execution_id` is null; every other element carries its handle.
 */
export const batchElement = closed(
  { ...elementFields, execution_id: stringOrNull },
  {
    consent,
    projection,
    truncated: boolean,
    response_meta: responseMeta,
    error_code: string,
    error_details: inputRequiredDetails,
    ...mcpSurfaceExtras,
  },
  {
    allOf: [
      errorMatchesSuccess,
      rule(
        "an element that ran (no error_code) carries its execution_id handle",
        { not: has("error_code") },
        fieldIs("execution_id", string),
        fieldIs("success", { const: false }),
      ),
      rule(
        "an element with a consent object was not run: success false, result null",
        has("consent"),
        fieldsAre({ success: { const: false }, result: isNull }),
      ),
      rule(
        "response_meta is present when the element is truncated, and only then",
        fieldIs("truncated", { const: true }),
        has("response_meta"),
        absent("response_meta"),
      ),
    ],
  },
);

/**
 * An async batch (POST /tools/call/batch with `Prefer: respond-async`, issue 31): `results` is null while
 * it works and the sync route's `results` once it ended; a batch refused as a whole (`failed`) carries the
 * error body and status the sync route would have answered.
 */
export const batchRecord = closed(
  {
    batch_id: string,
    status: oneOf("working", "completed", "cancelled", "failed"),
    created_at: { type: "string", format: "date-time" },
    finished_at: { type: ["string", "null"], format: "date-time" },
    calls_total: { type: "integer", minimum: 1, maximum: 10 },
    calls_done: { type: "integer", minimum: 0, maximum: 10 },
    results: { type: ["array", "null"], items: batchElement },
  },
  {
    error_status: { type: "integer", minimum: 400, maximum: 599 },
    error: closed({
      detail: {},
      error: closed({ code: string, message: string, details: { type: "object" } }),
    }),
  },
  {
    allOf: [
      rule(
        "results are there once the batch completed or was cancelled, and only then",
        { properties: { status: { enum: ["completed", "cancelled"] } } },
        fieldIs("results", { type: "array" }),
        fieldIs("results", isNull),
      ),
      rule("a failed batch says why (error, error_status)", fieldIs("status", { const: "failed" }), {
        required: ["error", "error_status"],
      }),
    ],
  },
);

/**
 * DESIGN "Single call": a batch element plus `truncated` and `response_meta`. A 200 means the call
 * ran, so it carries its execution_id and no consent object (that is the 409); `error_code` only when
 * its MCP tool asked a person a question (`mcp_input_required`, with `error_details`).
 */
export const singleCallResult = closed(
  {
    ...elementFields,
    execution_id: string,
    truncated: boolean,
    response_meta: { ...responseMeta, type: ["object", "null"] },
  },
  { projection, error_code: { const: "mcp_input_required" }, error_details: inputRequiredDetails, ...mcpSurfaceExtras },
  {
    allOf: [
      errorMatchesSuccess,
      rule(
        "response_meta is null unless truncated, then an object",
        fieldIs("truncated", { const: true }),
        fieldIs("response_meta", { type: "object" }),
        fieldIs("response_meta", isNull),
      ),
    ],
  },
);

/** A named schema of the description: `#/components/schemas/<name>` (components.ts). */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
