/**
 * The response shapes of the spec (SERVICE-SPEC.md "Resources and their fields", DESIGN.md "Decisions
 * where the spec says 'not shown'") compiled once with ajv, and the table of /v1 routes whose 2xx bodies
 * carry them. gatewayClient (http.ts) checks every 2xx reply with `checkReply`, so a shape regression on
 * any route fails the test that received it.
 *
 * The shapes themselves are the API description's components (gateway/src/openapi/schemas.ts, which says
 * how the spec's tables are read). Our publishing envelopes ({service, publishing, tools, warnings}) are
 * open here: only the Service and Tools inside them are checked. Rules that need the request (the path
 * echoed, one batch element per call, projection when `fields` was sent) are checked in
 * `requestMismatches`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import {
  batchElement,
  batchRecord,
  closed,
  executionResult,
  oneOf,
  publicTool,
  reliability,
  type Schema,
  service,
  singleCallResult,
  tool,
  workflow,
  workflowSummary,
} from "../../gateway/src/openapi/schemas.js";

// ---- the shapes and the route bodies that carry them ------------------------------------------

/** One schema per shape, with where the spec draws it. */
export const shapes = {
  Tool: { spec: 'SERVICE-SPEC "Tool (full shape)"', schema: tool },
  PublicTool: { spec: 'SERVICE-SPEC "Tool (trimmed public shape)"', schema: publicTool },
  Reliability: { spec: 'SERVICE-SPEC "Reliability block"', schema: reliability },
  Service: { spec: 'SERVICE-SPEC "Service"', schema: service },
  ExecutionResult: { spec: 'SERVICE-SPEC "Execution result (stored handle)"', schema: executionResult },
  BatchElement: { spec: 'SERVICE-SPEC "Batch result element" + DESIGN "Batch element extras"', schema: batchElement },
  SingleCallResult: { spec: 'DESIGN "Single call" (a batch element + truncated, response_meta)', schema: singleCallResult },
  Workflow: { spec: 'SERVICE-SPEC "Workflow" (Full) + DESIGN "Workflows"', schema: workflow },
  WorkflowSummary: { spec: 'SERVICE-SPEC "Workflow" (Summary)', schema: workflowSummary(oneOf("private", "public")) },
} as const;

export type ShapeName = keyof typeof shapes;

const arrayOf = (schema: Schema) => ({ type: "array", items: schema });

/**
 * Bodies of routes: a shape, an array of one, or an envelope of ours that carries them. Envelopes are
 * checked only for the shapes inside them (their other keys are DESIGN's publishing extras).
 */
const bodies = {
  Tool: { label: "Tool", spec: shapes.Tool.spec, schema: tool },
  "Tool[]": { label: "Tool[]", spec: shapes.Tool.spec, schema: arrayOf(tool) },
  "PublicTool[]": { label: "trimmed Tool[]", spec: shapes.PublicTool.spec, schema: arrayOf(publicTool) },
  Service: { label: "Service", spec: shapes.Service.spec, schema: service },
  "Service[]": { label: "Service[]", spec: shapes.Service.spec, schema: arrayOf(service) },
  ExecutionResult: { label: "Execution result", spec: shapes.ExecutionResult.spec, schema: executionResult },
  SingleCallResult: { label: "single-call result", spec: shapes.SingleCallResult.spec, schema: singleCallResult },
  BatchResults: {
    label: "{results: Batch element[]}",
    spec: `SERVICE-SPEC endpoint 14 + ${shapes.BatchElement.spec}`,
    schema: closed({ results: arrayOf(batchElement) }),
  },
  BatchRecord: {
    label: "async batch record",
    spec: "issue 31 (POST /tools/call/batch with Prefer: respond-async) + endpoint 14's elements",
    schema: batchRecord,
  },
  ServiceEnvelope: {
    label: "{service: Service}",
    spec: `DESIGN "Publishing" carrying ${shapes.Service.spec}`,
    schema: { type: "object", required: ["service"], properties: { service } },
  },
  ServiceWithTools: {
    label: "{service: Service, tools: Tool[]}",
    spec: `DESIGN "Publishing" carrying ${shapes.Service.spec} and ${shapes.Tool.spec}`,
    schema: { type: "object", required: ["service", "tools"], properties: { service, tools: arrayOf(tool) } },
  },
  Workflow: { label: "Workflow", spec: shapes.Workflow.spec, schema: workflow },
  "PublicWorkflowSummary[]": {
    label: "Workflow summary[] (public)",
    spec: `endpoint 31 + ${shapes.WorkflowSummary.spec}`,
    schema: arrayOf(workflowSummary({ const: "public" })),
  },
  "WorkflowSummary[]": {
    label: "Workflow summary[]",
    spec: shapes.WorkflowSummary.spec,
    schema: arrayOf(workflowSummary(oneOf("private", "public"))),
  },
  Deleted: { label: "{deleted: true}", spec: "endpoint 33", schema: closed({ deleted: { const: true } }) },
  Describe: {
    label: "{tool: Tool}",
    spec: `endpoint 5 (describe) carrying ${shapes.Tool.spec}`,
    schema: { type: "object", required: ["tool"], properties: { tool } },
  },
} as const;

type BodyName = keyof typeof bodies;

/**
 * Which 2xx bodies are checked, first match wins, in the gateway's own route order
 * (gateway/src/routes/: execution, then catalog; a literal segment before the parameter that would
 * swallow it). `null` = a route that would otherwise match a later pattern but carries none of these shapes.
 */
const routes: [method: string, pattern: string, body: BodyName | null][] = [
  // Execution (spec items 13-15).
  ["POST", "/tools/call/batch", "BatchResults"],
  ["GET", "/tools/call/batch/:batch_id", "BatchRecord"],
  ["POST", "/tools/call/batch/:batch_id/cancel", "BatchRecord"],
  ["POST", "/tools/call/:tool_id", "SingleCallResult"],
  ["GET", "/tools/executions/:execution_id/result", "ExecutionResult"],
  // Catalog (spec items 1-10).
  ["GET", "/tools", "Tool[]"],
  ["GET", "/tools/search", "Tool[]"],
  ["GET", "/tools/public/search", "PublicTool[]"],
  ["GET", "/tools/recommended", null],
  ["GET", "/tools/name/:tool_name", "Tool"],
  ["GET", "/tools/:tool_id/describe", "Describe"],
  ["GET", "/tools/:tool_id", "Tool"],
  ["GET", "/services/public", "Service[]"],
  ["GET", "/services/public/:service_id", "Service"],
  ["GET", "/services/public/:service_id/tools", "Tool[]"],
  // Publishing (DESIGN "Publishing"): the same Service and Tool shapes.
  ["POST", "/services", "ServiceWithTools"],
  ["GET", "/services", "Service[]"],
  ["GET", "/services/:service_id", "ServiceEnvelope"],
  ["GET", "/services/:service_id/tools", "Tool[]"],
  ["PATCH", "/services/:service_id", "ServiceEnvelope"],
  ["POST", "/services/:service_id/reimport", "ServiceWithTools"],
  ["PATCH", "/tools/:tool_id", "Tool"],
  // Workflows (spec items 31-34).
  ["GET", "/workflows/public", "PublicWorkflowSummary[]"],
  ["GET", "/workflows/my", "WorkflowSummary[]"],
  ["POST", "/workflows", "Workflow"],
  ["GET", "/workflows/:workflow_id", "Workflow"],
  ["PATCH", "/workflows/:workflow_id", "Workflow"],
  ["DELETE", "/workflows/:workflow_id", "Deleted"],
];

const routeTable = routes.map(([method, pattern, body]) => ({
  method,
  pattern,
  body,
  regex: new RegExp(`^${pattern.replace(/:[a-z_]+/g, "[^/]+")}$`),
}));

// ---- compiling --------------------------------------------------------------------------------

/** ISO 8601 date-time with a zone (`Z` or an offset); fractional seconds optional. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

// strictRequired off: the rules name fields in `required` of if/then branches that declare no properties.
const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addFormat("date-time", {
  type: "string",
  validate: (s: string) => ISO_TIMESTAMP.test(s) && !Number.isNaN(Date.parse(s)),
});

const compile = (schema: Schema) => ({ schema, validate: ajv.compile(schema as object) });
const compiledShapes = Object.fromEntries(Object.entries(shapes).map(([name, s]) => [name, compile(s.schema)])) as Record<
  ShapeName,
  { schema: Schema; validate: ValidateFunction }
>;
const compiledBodies = Object.fromEntries(Object.entries(bodies).map(([name, b]) => [name, compile(b.schema)])) as Record<
  BodyName,
  { schema: Schema; validate: ValidateFunction }
>;

// ---- failures ---------------------------------------------------------------------------------

/** One bad field: its JSON pointer in the body, what it was and what the spec wants. */
export interface Mismatch {
  pointer: string;
  got: string;
  expected: string;
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
const unescapePointer = (key: string) => key.replace(/~1/g, "/").replace(/~0/g, "~");

function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const key of pointer.split("/").slice(1).map(unescapePointer)) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The value's type, and the value itself when it is short. */
function describeValue(value: unknown): string {
  if (value === undefined) return "nothing (missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return `array (${value.length} items)`;
  if (typeof value === "number") return Number.isInteger(value) ? `integer ${value}` : `number ${value} (not an integer)`;
  if (typeof value === "string") return `string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value)}`;
  if (typeof value === "object") return `object with keys [${Object.keys(value).slice(0, 8).join(", ")}]`;
  return `${typeof value} ${String(value)}`;
}

function describeSchema(schema: unknown): string {
  if (schema === false) return "absent";
  if (schema === true || schema === undefined || schema === null || typeof schema !== "object") return "any value";
  const s = schema as Record<string, unknown>;
  if ("const" in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  const words = types.map((t) => (t === "string" && s.format === "date-time" ? "ISO 8601 timestamp string" : String(t)));
  if (types[0] === "array" && s.items && typeof s.items === "object" && "type" in (s.items as object)) {
    return `array of ${describeSchema(s.items)}`;
  }
  return words.length > 0 ? words.join(" or ") : "any value";
}

/** The description of the innermost rule or named block the failing keyword sits in. */
function ruleOf(root: Schema, schemaPath: string): string | undefined {
  let node: unknown = root;
  let found: string | undefined;
  for (const key of schemaPath.replace(/^#\/?/, "").split("/").map(unescapePointer)) {
    if (node === null || typeof node !== "object") break;
    node = (node as Record<string, unknown>)[key];
    if (node && typeof node === "object" && typeof (node as { description?: unknown }).description === "string") {
      found = (node as { description: string }).description;
    }
  }
  return found;
}

/** The schema of `field` in the innermost schema on the path that declares it (a rule's branch, else the shape). */
function declaredField(root: Schema, schemaPath: string, field: string): unknown {
  let node: unknown = root;
  let found: unknown;
  for (const key of ["", ...schemaPath.replace(/^#\/?/, "").split("/").map(unescapePointer)]) {
    if (key !== "") node = node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
    const declared = (node as { properties?: Record<string, unknown> } | undefined)?.properties?.[field];
    if (declared !== undefined) found = declared;
  }
  return found;
}

function mismatchOf(error: ErrorObject, body: unknown, root: Schema): Mismatch | undefined {
  const at = error.instancePath;
  const why = ruleOf(root, error.schemaPath);
  const because = why ? ` (${why})` : "";
  switch (error.keyword) {
    case "if":
      return undefined; // the failing then/else branch reports its own errors
    case "required": {
      const field = (error.params as { missingProperty: string }).missingProperty;
      const declared = declaredField(root, error.schemaPath, field);
      const fromRoot = valueAt(body, at);
      const parent = fromRoot && typeof fromRoot === "object" ? fromRoot : {};
      const expected = declared === undefined ? "present" : `present: ${describeSchema(declared)}`;
      return {
        pointer: `${at}/${escapePointer(field)}`,
        got: describeValue((parent as Record<string, unknown>)[field]),
        expected: expected + because,
      };
    }
    case "additionalProperties": {
      const field = (error.params as { additionalProperty: string }).additionalProperty;
      const pointer = `${at}/${escapePointer(field)}`;
      return {
        pointer,
        got: describeValue(valueAt(body, pointer)),
        expected: `no such field (the shape does not list it)${because}`,
      };
    }
    case "false schema":
      return { pointer: at, got: describeValue(valueAt(body, at)), expected: `absent${because}` };
    case "type":
    case "enum":
    case "const":
    case "format":
      return { pointer: at, got: describeValue(valueAt(body, at)), expected: describeSchema(error.parentSchema) + because };
    default:
      return { pointer: at, got: describeValue(valueAt(body, at)), expected: `${error.message ?? error.keyword}${because}` };
  }
}

function mismatches(compiled: { schema: Schema; validate: ValidateFunction }, value: unknown): Mismatch[] {
  if (compiled.validate(value)) return [];
  return (compiled.validate.errors ?? []).flatMap((e) => mismatchOf(e, value, compiled.schema) ?? []);
}

/** What is wrong with `value` as one of the spec's shapes; empty when it is one. */
export function shapeMismatches(shape: ShapeName, value: unknown): Mismatch[] {
  return mismatches(compiledShapes[shape], value);
}

// ---- checks that need the request ---------------------------------------------------------------

export interface CheckedReply {
  method: string;
  /** The path under /v1, with its query string. */
  path: string;
  status: number;
  body: unknown;
  /** The request body as sent (an object, or JSON text). */
  requestBody?: unknown;
}

function parsedRequest(body: unknown): Record<string, unknown> | undefined {
  let value = body;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

const sentFields = (call: unknown) => {
  const fields = (call as { fields?: unknown } | undefined)?.fields;
  return Array.isArray(fields) && fields.length > 0;
};

/** "projection: present when `fields` was sent" on a call that ran and succeeded; never without `fields`. */
function projectionMismatch(element: unknown, call: unknown, pointer: string): Mismatch[] {
  if (!element || typeof element !== "object") return [];
  const e = element as Record<string, unknown>;
  if (call === undefined) return [];
  if (!sentFields(call) && "projection" in e) {
    return [{ pointer: `${pointer}/projection`, got: describeValue(e.projection), expected: "absent (no fields were sent)" }];
  }
  if (sentFields(call) && e.success === true && !("projection" in e)) {
    return [{ pointer: `${pointer}/projection`, got: "nothing (missing)", expected: "present: object (fields were sent)" }];
  }
  return [];
}

function requestMismatches(body: BodyName, reply: CheckedReply, query: URLSearchParams): Mismatch[] {
  const res = reply.body as Record<string, unknown>;
  if (body === "ExecutionResult") {
    // "path: the path passed"; a blank one reads as none passed (the whole result, path null).
    const given = query.get("path");
    const want = given === null || given.trim() === "" ? null : given;
    return res.path === want
      ? []
      : [{ pointer: "/path", got: describeValue(res.path), expected: `${JSON.stringify(want)} (the path passed)` }];
  }
  const request = parsedRequest(reply.requestBody);
  if (!request) return [];
  if (body === "SingleCallResult") return projectionMismatch(res, request, "");
  if (body === "BatchResults" && Array.isArray(request.calls) && Array.isArray(res.results)) {
    const calls = request.calls;
    const results = res.results;
    if (results.length !== calls.length) {
      return [
        {
          pointer: "/results",
          got: describeValue(results),
          expected: `one element per call: ${calls.length} items, in input order`,
        },
      ];
    }
    return results.flatMap((element, i) => projectionMismatch(element, calls[i], `/results/${i}`));
  }
  return [];
}

// ---- the reply check --------------------------------------------------------------------------

/** The body a route's 2xx reply must have, by method and path (query string ignored); none if unchecked. */
export function routeBody(method: string, path: string): { label: string; spec: string } | undefined {
  const name = routeBodyName(method, path);
  return name ? { label: bodies[name].label, spec: bodies[name].spec } : undefined;
}

function routeBodyName(method: string, path: string): BodyName | undefined {
  const bare = path.split(/[?#]/)[0]!.replace(/(.)\/+$/, "$1");
  const verb = method.toUpperCase();
  return routeTable.find((r) => r.method === verb && r.regex.test(bare))?.body ?? undefined;
}

const MAX_LINES = 20;

export class ShapeMismatchError extends Error {
  constructor(
    readonly reply: CheckedReply,
    readonly label: string,
    readonly spec: string,
    readonly mismatches: Mismatch[],
  ) {
    const lines = mismatches.slice(0, MAX_LINES).map((m) => `  ${m.pointer || "(body)"}: got ${m.got}; expected ${m.expected}`);
    if (mismatches.length > MAX_LINES) lines.push(`  ... and ${mismatches.length - MAX_LINES} more`);
    super(
      `${reply.method.toUpperCase()} /v1${reply.path} -> ${reply.status}: body is not a ${label} (${spec}):\n${lines.join("\n")}`,
    );
    this.name = "ShapeMismatchError";
  }
}

/**
 * Checks a reply from /v1: a 2xx body of a route in the table must have that route's shape (errors,
 * 409 consent answers and other statuses are not checked here). Throws ShapeMismatchError.
 */
export function checkReply(reply: CheckedReply): void {
  if (reply.status < 200 || reply.status > 299) return;
  let name = routeBodyName(reply.method, reply.path);
  if (!name) return;
  // The batch route answers its record instead with `Prefer: respond-async`.
  if (name === "BatchResults" && reply.status === 202) name = "BatchRecord";
  const found = mismatches(compiledBodies[name], reply.body);
  if (found.length === 0) {
    const query = new URLSearchParams(reply.path.includes("?") ? reply.path.slice(reply.path.indexOf("?") + 1) : "");
    found.push(...requestMismatches(name, reply, query));
  }
  if (found.length > 0) throw new ShapeMismatchError(reply, bodies[name].label, bodies[name].spec, found);
}
