/**
 * Input validation against a tool's JSON Schema with ajv (all errors, formats from ajv-formats, unknown
 * keywords such as OpenAPI's `example` or `x-*` tolerated). A 400 lists every bad field. Compiled
 * validators are cached per tool revision.
 */

import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import formatsModule from "ajv-formats";
import { invalidArgument } from "./errors.js";
import type { Logger } from "./logger.js";
import { TOOL_INPUT_AJV_OPTIONS } from "./tool-schema.js";

// ajv-formats is CommonJS with a default export; under NodeNext its default import is the module object.
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as (ajv: Ajv) => Ajv;

export interface FieldProblem {
  field: string;
  message: string;
}

const CACHE_LIMIT = 1000;

export class InputValidator {
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction | null>();

  constructor(private readonly log?: Logger) {
    this.ajv = new Ajv({ ...TOOL_INPUT_AJV_OPTIONS });
    addFormats(this.ajv);
  }

  /** Problems with `input` under `schema` (empty = valid). `cacheKey` names the schema's version. */
  problems(cacheKey: string, schema: Record<string, unknown> | undefined, input: unknown): FieldProblem[] {
    if (!schema || Object.keys(schema).length === 0) return [];
    const validate = this.compile(cacheKey, schema);
    if (!validate || validate(input)) return [];
    return (validate.errors ?? []).map(describe);
  }

  /** Throws 400 invalid_parameters listing every bad field. */
  check(cacheKey: string, schema: Record<string, unknown> | undefined, input: unknown): void {
    const problems = this.problems(cacheKey, schema, input);
    if (problems.length === 0) return;
    const summary = problems.map((p) => `${p.field}: ${p.message}`).join("; ");
    throw invalidArgument("invalid_parameters", `invalid parameters: ${summary}`, {
      details: { fields: problems.map((p) => ({ field: p.field, message: p.message })) },
    });
  }

  /** Why `schema` cannot validate anything (ajv cannot compile it), or undefined when it can. */
  schemaProblem(schema: Record<string, unknown>): string | undefined {
    try {
      this.ajv.compile(schema);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  private compile(cacheKey: string, schema: Record<string, unknown>): ValidateFunction | null {
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) return cached;
    let validate: ValidateFunction | null;
    try {
      validate = this.ajv.compile(schema);
    } catch (err) {
      // A publisher's schema ajv cannot compile must not make the tool uncallable; the upstream still
      // validates. Logged so the publisher can be told.
      this.log?.warn({ err: (err as Error).message, schema: cacheKey }, "tool input schema does not compile; not validating");
      validate = null;
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, validate);
    return validate;
  }
}

function describe(error: ErrorObject): FieldProblem {
  const base = error.instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
  const params = error.params as Record<string, unknown>;
  const child = (params.missingProperty ?? params.additionalProperty ?? params.propertyName) as string | undefined;
  const field = [base, child].filter((p) => p !== undefined && p !== "").join(".") || "tool_input";
  let message = error.message ?? "is invalid";
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    message = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
  } else if (error.keyword === "additionalProperties") message = "is not a known parameter";
  else if (error.keyword === "required") message = "is required";
  return { field, message };
}
