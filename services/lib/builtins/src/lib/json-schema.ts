/**
 * Validation of a caller's document against a caller's JSON Schema with Ajv. The schema is untrusted, so
 * (following Ajv's security notes): its size and depth are capped; `pattern` and `patternProperties` run on
 * RE2JS, a linear-time engine, so no pattern can backtrack; `uniqueItems` (quadratic in Ajv) is refused on
 * arrays over MAX_UNIQUE_ITEMS; remote `$ref`s are never fetched; each call compiles on its own Ajv instance,
 * so no schema (nor a nested `$id`) outlives its call. The meta-schema check, the costly part of a fresh
 * instance (about 6 ms), runs on one long-lived instance per draft, which never stores a caller's schema.
 */
import { Ajv, type ErrorObject, type Options } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsModule from "ajv-formats";
import { RE2JS } from "re2js";
import { BuiltinInputError } from "../types.js";
import { measureJson, usesKeyword } from "./json-size.js";

// Compiling costs about 0.1 ms per property; 2,000 nodes keeps a hostile schema near 150 ms.
export const MAX_SCHEMA_NODES = 2_000;
export const MAX_SCHEMA_DEPTH = 32;
export const MAX_DOCUMENT_NODES = 200_000;
export const MAX_DOCUMENT_DEPTH = 128;
export const MAX_UNIQUE_ITEMS = 1_000;
export const MAX_ERRORS = 50;

// ajv-formats is CommonJS; under Node ESM its plugin is the module itself or its `default`.
const addFormats = formatsModule.default;

/** Ajv's RegExpEngine backed by RE2JS: linear-time matching, so a schema's pattern cannot stall the process. */
function re2(pattern: string): { test: (s: string) => boolean } {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (cause) {
    throw new BuiltinInputError(
      `schema: pattern "${pattern.slice(0, 80)}" is not supported (${(cause as Error).message}); lookarounds and backreferences are not available`,
    );
  }
}
re2.code = "re2js";

const DRAFTS: Record<string, { label: string; make: (o: Options) => Ajv }> = {
  "http://json-schema.org/draft-07/schema": { label: "draft-07", make: (o) => new Ajv(o) },
  "https://json-schema.org/draft/2019-09/schema": { label: "2019-09", make: (o) => new Ajv2019(o) as unknown as Ajv },
  "https://json-schema.org/draft/2020-12/schema": { label: "2020-12", make: (o) => new Ajv2020(o) as unknown as Ajv },
};

const AJV_OPTIONS: Options = { allErrors: true, strict: false, logger: false, code: { regExp: re2 } };

const checkers = new Map<string, Ajv>();

/** The long-lived instance that checks schemas of one draft against its meta-schema (compiled once). */
function metaChecker(key: string, make: (o: Options) => Ajv): Ajv {
  let checker = checkers.get(key);
  if (!checker) {
    checker = make(AJV_OPTIONS);
    addFormats(checker);
    checkers.set(key, checker);
  }
  return checker;
}

export interface SchemaViolation {
  path: string;
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

export function validateAgainstSchema(
  document: unknown,
  schema: unknown,
): { valid: boolean; draft: string; errors: SchemaViolation[] } {
  if (typeof schema !== "boolean" && (schema === null || typeof schema !== "object" || Array.isArray(schema))) {
    throw new BuiltinInputError("schema: must be a JSON Schema object (or true/false)");
  }
  const schemaShape = measureJson(schema, MAX_SCHEMA_NODES);
  if (schemaShape.nodes > MAX_SCHEMA_NODES) throw new BuiltinInputError(`schema: more than ${MAX_SCHEMA_NODES} nodes`);
  if (schemaShape.depth > MAX_SCHEMA_DEPTH) throw new BuiltinInputError(`schema: nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  const docShape = measureJson(document, MAX_DOCUMENT_NODES);
  if (docShape.nodes > MAX_DOCUMENT_NODES) throw new BuiltinInputError(`document: more than ${MAX_DOCUMENT_NODES} values`);
  if (docShape.depth > MAX_DOCUMENT_DEPTH)
    throw new BuiltinInputError(`document: nests deeper than ${MAX_DOCUMENT_DEPTH} levels`);
  if (docShape.longestArray > MAX_UNIQUE_ITEMS && usesKeyword(schema, "uniqueItems")) {
    throw new BuiltinInputError(
      `schema: uniqueItems can be checked on arrays of up to ${MAX_UNIQUE_ITEMS} items; the document has one of ${docShape.longestArray}`,
    );
  }

  const declared = typeof schema === "object" ? (schema as Record<string, unknown>).$schema : undefined;
  const key = typeof declared === "string" ? declared.replace(/#$/, "") : "http://json-schema.org/draft-07/schema";
  const draft = DRAFTS[key];
  if (!draft) {
    throw new BuiltinInputError(
      `schema: $schema "${String(declared)}" is not supported; use draft-07, 2019-09 or 2020-12 (or leave $schema out for draft-07)`,
    );
  }
  const checker = metaChecker(key, draft.make);
  if (!checker.validateSchema(schema as object)) {
    throw new BuiltinInputError(
      `schema: invalid ${draft.label} JSON Schema: ${checker.errorsText(checker.errors, { dataVar: "schema" })}`,
    );
  }
  const ajv = draft.make({ ...AJV_OPTIONS, validateSchema: false });
  addFormats(ajv);

  let validate: ReturnType<Ajv["compile"]>;
  try {
    validate = ajv.compile(schema as object);
  } catch (cause) {
    if (cause instanceof BuiltinInputError) throw cause;
    throw new BuiltinInputError(`schema: invalid ${draft.label} JSON Schema: ${(cause as Error).message}`);
  }
  const valid = validate(document) as boolean;
  return { valid, draft: draft.label, errors: (validate.errors ?? []).slice(0, MAX_ERRORS).map(toViolation) };
}

function toViolation(error: ErrorObject): SchemaViolation {
  return {
    path: error.instancePath || "/",
    keyword: error.keyword,
    message: error.message ?? "is invalid",
    params: error.params,
  };
}
