/** Small helpers over JSON Schema objects as OpenAPI and MCP documents give them. */
import type { JsonSchema } from "../domain/model.js";

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON type name a schema stands for: string, integer, number, boolean, array, object. */
export function schemaType(schema: JsonSchema | undefined): string {
  if (!schema) return "string";
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const first = t.find((x) => x !== "null");
    if (typeof first === "string") return first;
  }
  if (isObject(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const v = schema.enum[0];
    return typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v === "boolean" ? "boolean" : "string";
  }
  for (const key of ["oneOf", "anyOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list)) {
      const typed = list.find((s) => isObject(s) && s.type !== "null");
      if (isObject(typed)) return schemaType(typed);
    }
  }
  return "string";
}

const BASIC_KEYS = new Set(["type", "description", "default", "enum", "minimum", "maximum", "title", "nullable", "example"]);

/** Whether a parameter schema says more than type/description/default/enum/minimum/maximum. */
export function saysMore(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  if (Array.isArray(schema.type)) return true;
  return Object.keys(schema).some((k) => !BASIC_KEYS.has(k));
}

/**
 * Replaces `$ref`s left in a schema (circular ones the importer did not inline) with a plain object
 * schema naming what they referred to, so the stored schema is self-contained JSON.
 */
export function withoutRefs(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutRefs(v, seen));
  if (!isObject(value)) return value;
  if (seen.has(value)) return { type: "object", description: "(recursive)" };
  if (typeof value.$ref === "string") {
    const name = value.$ref.split("/").pop() ?? value.$ref;
    return { type: "object", description: `(recursive ${name})` };
  }
  seen.add(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withoutRefs(v, seen);
  seen.delete(value);
  return out;
}

/**
 * A value that satisfies the schema, for example calls: the schema's example, default, first enum
 * value, or a typed placeholder; objects get their required properties (all properties when none
 * are required and there are few).
 */
export function exampleFor(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = schemaType(schema);
  switch (type) {
    case "integer":
      return typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1;
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return isObject(schema.items) ? [exampleFor(schema.items as JsonSchema, depth + 1)] : [];
    case "object":
      return exampleObject(schema, depth);
    default:
      return exampleString(schema);
  }
}

export function exampleObject(schema: JsonSchema, depth = 0): Record<string, unknown> {
  const props = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const names = required.length > 0 ? required : Object.keys(props).length <= 3 ? Object.keys(props) : [];
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = exampleFor(props[name], depth + 1);
  return out;
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
