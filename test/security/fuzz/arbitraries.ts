/**
 * fast-check arbitraries from the JSON Schema subset the gateway's description uses ($ref, type and
 * type lists, properties/required/additionalProperties, enum/const, items/minItems/maxItems,
 * minLength/maxLength/pattern, minimum/maximum, oneOf/anyOf/allOf, formats uri/uuid/date-time/email),
 * so a generated value is one the description allows. A string whose name has real values (`tool_id`,
 * `tool_name`, `webhook_id`, `svc-org-id`, ...) is mostly drawn from the objects the fuzz made, so
 * requests reach real objects and not only unknown ones.
 */
import fc from "fast-check";

type Json = Record<string, unknown>;

export interface SchemaContext {
  /** The description, for `$ref`. */
  doc: Json;
  /** Real ids by parameter or property name (`tool_id`, `webhook_id`, ...), mixed into generated values. */
  realIds: Record<string, string[]>;
}

/** The schema a local `#/...` reference points at. */
export function resolveRef(doc: Json, ref: string): Json {
  let value: unknown = doc;
  for (const key of ref.replace(/^#\//, "").split("/")) {
    value = (value as Json)[key.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return value as Json;
}

/** allOf's members folded into one object schema (the description only combines object schemas). */
function mergeAll(ctx: SchemaContext, schemas: Json[]): Json {
  const merged: Json = { type: "object", properties: {}, required: [] };
  for (const raw of schemas) {
    const s = raw.$ref ? resolveRef(ctx.doc, raw.$ref as string) : raw;
    Object.assign(merged.properties as Json, s.properties ?? {});
    (merged.required as string[]).push(...((s.required as string[]) ?? []));
  }
  return merged;
}

function withRealIds(ctx: SchemaContext, name: string | undefined, base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const real = name ? ctx.realIds[name] : undefined;
  if (!real?.length) return base;
  return fc.oneof({ arbitrary: fc.constantFrom(...real), weight: 3 }, { arbitrary: base, weight: 1 });
}

function stringArbitrary(ctx: SchemaContext, schema: Json, name: string | undefined): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxLength as number | undefined) ?? minLength + 24, minLength + 24);
  let base: fc.Arbitrary<string>;
  switch (schema.format) {
    case "uuid":
      base = fc.uuid();
      break;
    case "date-time":
      base = fc
        .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
        .map((d) => d.toISOString());
      break;
    case "email":
      base = fc.emailAddress();
      break;
    case "uri":
      base = fc.webUrl();
      break;
    default:
      // A pattern decides the length itself (a 64-digit hash has no maxLength of its own).
      base = schema.pattern
        ? fc
            .stringMatching(new RegExp(schema.pattern as string))
            .filter((s) => s.length >= minLength && s.length <= ((schema.maxLength as number | undefined) ?? Infinity))
        : fc.string({ minLength, maxLength, unit: "grapheme" });
  }
  return withRealIds(ctx, name, base);
}

/** An arbitrary of values valid against `schema`; `name` is the property or parameter it is for. */
export function arbitraryFor(ctx: SchemaContext, schema: Json | undefined, name?: string, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).filter((k) => k !== "description" && k !== "example").length === 0) {
    return fc.jsonValue({ maxDepth: 2 });
  }
  if (schema.$ref) return arbitraryFor(ctx, resolveRef(ctx.doc, schema.$ref as string), name, depth);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.allOf)) return arbitraryFor(ctx, mergeAll(ctx, schema.allOf as Json[]), name, depth);
  const alternatives = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => arbitraryFor(ctx, s, name, depth)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...(schema.type as string[]).map((type) => arbitraryFor(ctx, { ...schema, type }, name, depth)));
  }
  const type = (schema.type as string | undefined) ?? (schema.properties ? "object" : undefined);
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "string":
      return stringArbitrary(ctx, schema, name);
    case "integer":
      return fc.integer({
        min: (schema.minimum as number | undefined) ?? -1_000_000,
        max: (schema.maximum as number | undefined) ?? 1_000_000_000,
      });
    case "number":
      return fc.double({
        min: (schema.minimum as number | undefined) ?? -1e9,
        max: (schema.maximum as number | undefined) ?? 1e9,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case "array": {
      const minLength = (schema.minItems as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? minLength + 3, minLength + 3);
      if (depth > 4) return fc.constant([]);
      return fc.array(arbitraryFor(ctx, schema.items as Json | undefined, singular(name), depth + 1), { minLength, maxLength });
    }
    case "object":
      return objectArbitrary(ctx, schema, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** `calls` -> `call`: an array's elements get the ids of the singular name, if any. */
const singular = (name: string | undefined) => name?.replace(/s$/, "");

function objectArbitrary(ctx: SchemaContext, schema: Json, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = (schema.required ?? []) as string[];
  if (depth > 4) return fc.constant({});
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, sub] of Object.entries(properties)) model[key] = arbitraryFor(ctx, sub, key, depth + 1);
  const known = fc.record(model, { requiredKeys: required.filter((k) => k in properties) });
  if (schema.additionalProperties === false || schema.additionalProperties === undefined) return known;
  // Open objects (a tool's parameters, a credential): sometimes a few keys of their own.
  const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
  return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...(k as Json) }));
}

/**
 * The operation's example with every `<...>` placeholder and every id-named string replaced by a real
 * id of that name: a request the fuzz expects to be accepted, beside the generated ones.
 */
export function withRealExampleIds(ctx: SchemaContext, value: unknown, name?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => withRealExampleIds(ctx, v, singular(name)));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRealExampleIds(ctx, v, k)]));
  }
  if (typeof value === "string" && name && ctx.realIds[name]?.length) return ctx.realIds[name][0];
  return value;
}
