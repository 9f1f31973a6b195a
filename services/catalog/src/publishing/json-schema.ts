/** Small helpers over JSON Schema objects as OpenAPI and MCP documents give them. */
import type { JsonSchema } from "../domain/model.js";

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The segments of a local reference (`#/a/b~1c` -> ["a", "b/c"]; `#` -> []), or null for any other
 * reference (another document, an anchor).
 */
export function pointerSegments(ref: string): string[] | null {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return null;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(2));
  } catch {
    return null;
  }
  return fragment.split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The value a local reference points at inside `root`, or undefined. */
export function lookup(root: unknown, ref: string): unknown {
  const segments = pointerSegments(ref);
  return segments ? lookupPath(root, segments) : undefined;
}

/** The value at a path of object keys and array indexes inside `root`, or undefined. */
export function lookupPath(root: unknown, segments: readonly string[]): unknown {
  let at: unknown = root;
  for (const s of segments) {
    if (Array.isArray(at) && /^\d+$/.test(s)) at = at[Number(s)];
    else if (isObject(at) && Object.hasOwn(at, s)) at = at[s];
    else return undefined;
  }
  return at;
}

/**
 * The schema a `$ref` at the top of `schema` leads to inside `root` (the standalone schema that carries
 * the `$defs`), followed through a few aliases; `schema` itself when it is no reference or leads nowhere.
 */
export function resolveRef(schema: JsonSchema, root: JsonSchema = schema): JsonSchema {
  let at = schema;
  for (let hops = 0; hops < 8 && typeof at.$ref === "string"; hops++) {
    const target = lookup(root, at.$ref);
    if (!isObject(target)) break;
    at = target;
  }
  return at;
}

/**
 * The JSON type name a schema stands for: string, integer, number, boolean, array, object. `$ref`s
 * are followed inside `root` (a standalone schema with `$defs`), as are the members of allOf/oneOf/anyOf.
 */
export function schemaType(schema: JsonSchema | undefined, root: JsonSchema | undefined = schema, depth = 0): string {
  if (!schema || depth > 8) return "string";
  const s = root ? resolveRef(schema, root) : schema;
  const t = s.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const first = t.find((x) => x !== "null");
    if (typeof first === "string") return first;
  }
  if (isObject(s.properties)) return "object";
  if (s.items !== undefined) return "array";
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    const v = s.enum[0];
    return typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v === "boolean" ? "boolean" : "string";
  }
  for (const key of ["oneOf", "anyOf", "allOf"]) {
    const list = s[key];
    if (Array.isArray(list)) {
      const typed = list.find((m) => isObject(m) && (root ? resolveRef(m, root) : m).type !== "null");
      if (isObject(typed)) return schemaType(typed, root, depth + 1);
    }
  }
  return "string";
}

const BASIC_KEYS = new Set([
  "type",
  "description",
  "default",
  "enum",
  "minimum",
  "maximum",
  "title",
  "nullable",
  "example",
  "examples",
]);

/** Whether a parameter schema says more than type/description/default/enum/minimum/maximum. */
export function saysMore(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  if (Array.isArray(schema.type)) return true;
  return Object.keys(schema).some((k) => !BASIC_KEYS.has(k));
}

/**
 * A value that satisfies the schema, for example calls: the schema's example, default, first enum
 * value, or a typed placeholder; objects get their required properties (all properties when none
 * are required and there are few). `$ref`s are followed inside `root` (the standalone schema carrying
 * the `$defs`); each one followed counts as a level, so a recursive schema ends at the depth limit.
 */
export function exampleFor(schema: JsonSchema | undefined, depth = 0, root: JsonSchema | undefined = schema): unknown {
  if (!schema || depth > 6) return null;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (typeof schema.$ref === "string") {
    const target = root ? lookup(root, schema.$ref) : undefined;
    return isObject(target) ? exampleFor(target, depth + 1, root) : null;
  }
  const type = schemaType(schema, root);
  switch (type) {
    case "integer":
      return typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1;
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return isObject(schema.items) ? [exampleFor(schema.items as JsonSchema, depth + 1, root)] : [];
    case "object":
      return exampleObject(schema, depth, root);
    default:
      return exampleString(schema);
  }
}

export function exampleObject(schema: JsonSchema, depth = 0, root: JsonSchema = schema): Record<string, unknown> {
  const { properties: props, required } = objectShape(schema, root);
  const names = required.length > 0 ? required : Object.keys(props).length <= 3 ? Object.keys(props) : [];
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = exampleFor(props[name], depth + 1, root);
  return out;
}

/** The properties and required names of an object schema, its allOf members' (through `$ref`s) included. */
function objectShape(
  schema: JsonSchema,
  root: JsonSchema,
  depth = 0,
): { properties: Record<string, JsonSchema>; required: string[] } {
  const s = resolveRef(schema, root);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  if (Array.isArray(s.allOf) && depth < 8) {
    for (const member of s.allOf) {
      if (!isObject(member)) continue;
      const inner = objectShape(member, root, depth + 1);
      Object.assign(properties, inner.properties);
      for (const name of inner.required) if (!required.includes(name)) required.push(name);
    }
  }
  if (isObject(s.properties)) Object.assign(properties, s.properties);
  if (Array.isArray(s.required)) {
    for (const name of s.required) if (typeof name === "string" && !required.includes(name)) required.push(name);
  }
  return { properties, required };
}

function exampleString(schema: JsonSchema): string {
  switch (schema.format) {
    case "date-time":
      return "2025-01-01T00:00:00Z";
    case "date":
      return "2025-01-01";
    case "email":
      return "user@example.com";
    case "uri":
    case "url":
      return "https://example.com";
    case "uuid":
      return "00000000-0000-4000-8000-000000000000";
    default:
      return typeof schema.minLength === "number" && schema.minLength > 7 ? "x".repeat(schema.minLength) : "example";
  }
}
