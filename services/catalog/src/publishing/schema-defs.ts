/**
 * Standalone JSON Schemas out of schemas that `$ref` into a document: an OpenAPI document's components,
 * or an MCP tool's own `$defs`/`definitions`. The rule, per reference (`#/...` JSON pointer):
 * - a schema that takes part in a reference cycle (it refers to itself, directly or through others: a
 *   folder whose items are folders) stays a `$ref` to `#/$defs/<Name>`, wherever it appears;
 * - any other schema is written in place (agents read inline schemas best), except that a nested one
 *   whose fully inlined JSON exceeds `inlineLimit` (16 KiB) also stays a `$ref` into `$defs`: inlining a
 *   shared sub-schema at every place it is used multiplies its size (Box's search results came to 315 KB
 *   inline), while a `$defs` entry is written once per schema. The schema at the root (the one a
 *   parameter, request body or response names) is always written in place unless it is recursive.
 * The definitions a schema reaches (transitively) go into its own `$defs` (`standalone`), so every
 * schema the importer stores is valid JSON Schema on its own. Nested `$defs`/`definitions` of the
 * source, `$id` and `$schema` are dropped: what they held is reached through the rewritten references,
 * and an inner `$id` would change what `#/$defs/...` means.
 *
 * OpenAPI's schema dialect is turned into JSON Schema where validators disagree with it. In 3.0:
 * `nullable: true` beside a `type` becomes `type: [<type>, "null"]` (and `null` joins an `enum`);
 * `nullable` without a `type` has no effect (OpenAPI 3.0.3) and is dropped (ajv refuses to compile it);
 * boolean `exclusiveMinimum` / `exclusiveMaximum` (draft-04 style) become the numeric form. In 3.0 and
 * 3.1: `example` becomes JSON Schema's `examples: [...]` (ajv walks objects under unknown keywords for
 * `$id`s, and Box's examples hold `"$id"` values). Other annotation keywords (`discriminator`, `xml`,
 * `externalDocs`, `x-*`) stay: validators ignore unknown keywords outside strict mode, as the execution
 * service's ajv does (`strict: false`). An MCP tool's schema is JSON Schema already and keeps its keywords.
 *
 * Written schemas share sub-objects (a schema used in many places is written once); nothing here or in
 * the importer mutates them.
 */
import type { JsonSchema } from "../domain/model.js";
import { isObject, lookupPath, pointerSegments } from "./json-schema.js";

export type SchemaDialect = "openapi-3.0" | "openapi-3.1" | "json-schema";

/** Nested schemas larger than this as inlined JSON stay `$ref`s into `$defs`. */
export const INLINE_LIMIT_BYTES = 16 * 1024;

/** Keywords whose value is one schema, a list of schemas, or a map of name to schema. */
const ONE_SCHEMA = new Set([
  "additionalProperties",
  "additionalItems",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
]);
const SCHEMA_LIST = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
const SCHEMA_MAP = new Set(["properties", "patternProperties", "dependentSchemas", "dependencies"]);
const DROPPED = new Set(["$defs", "definitions", "$id", "$schema"]);
/** Keywords that may stand beside a `$ref` without changing what it validates. */
const ANNOTATIONS = new Set(["description", "title", "example", "examples", "default", "readOnly", "writeOnly", "deprecated"]);

export interface SchemaWriterOptions {
  dialect: SchemaDialect;
  /** Where the containers of named schemas are: `#/components/schemas` for OpenAPI. */
  containers?: string[][];
  inlineLimit?: number;
}

interface Target {
  key: string;
  value: unknown;
}

export class SchemaWriter {
  private readonly dialect: SchemaDialect;
  private readonly containers: string[][];
  private readonly inlineLimit: number;
  /** Written form of each referenced schema (by pointer) and of each raw schema object. */
  private readonly written = new Map<string, unknown>();
  private readonly writtenObjects = new WeakMap<object, unknown>();
  /** Names in `$defs`: pointer -> name, name -> pointer. */
  private readonly names = new Map<string, string>();
  private readonly pointers = new Map<string, string>();
  /** The path of each pointer met, by its canonical key. */
  private readonly segments = new Map<string, string[]>();
  /** Definition names a written value refers to directly (not through other definitions). */
  private readonly refsCache = new WeakMap<object, ReadonlySet<string>>();
  private readonly sizes = new WeakMap<object, number>();
  /** Reference graph (pointer -> pointers its schema refers to) and Tarjan's bookkeeping. */
  private readonly edges = new Map<string, string[]>();
  private readonly cyclic = new Set<string>();
  private readonly sccDone = new Set<string>();
  /** References that lead nowhere (outside the document, or to nothing): written as "any value". */
  readonly unresolved = new Set<string>();

  constructor(
    private readonly root: unknown,
    options: SchemaWriterOptions,
  ) {
    this.dialect = options.dialect;
    this.containers = options.containers ?? [["$defs"], ["definitions"]];
    this.inlineLimit = options.inlineLimit ?? INLINE_LIMIT_BYTES;
  }

  /** The schema rewritten by the rule above; its `$ref`s point into `$defs` (see `standalone`). */
  write(raw: unknown): JsonSchema {
    const out = this.node(raw, true);
    return (isObject(out) ? out : out === false ? { not: {} } : {}) as JsonSchema;
  }

  /**
   * `standalone(schema)` when its JSON stays within `limitBytes`; otherwise the schema without `$defs`,
   * each reference written as what it names (`{ title: <Name>, description }`, not expanded), and `null`
   * when even that is over the limit. For what a tool answers (its declared output), which agents read
   * and nothing validates: a response that reaches much of a large API's object graph (Stripe's: 500 KB a
   * tool on average, 225 MB for the document) would otherwise be stored whole with every tool.
   */
  boundedStandalone(schema: JsonSchema, limitBytes: number): { schema: JsonSchema | null; trimmed: boolean } {
    const defs = this.defsFor(schema);
    let size = this.size(schema);
    for (const [name, body] of Object.entries(defs)) size += name.length + 4 + this.size(body);
    if (size <= limitBytes)
      return { schema: Object.keys(defs).length === 0 ? schema : { ...schema, $defs: defs }, trimmed: false };
    const named = unexpandReferences(schema) as JsonSchema;
    return { schema: JSON.stringify(named).length <= limitBytes ? named : null, trimmed: true };
  }

  /** `schema` (a written one, or built from written ones) with the `$defs` it reaches at its root. */
  standalone(schema: JsonSchema): JsonSchema {
    const defs = this.defsFor(schema);
    return Object.keys(defs).length === 0 ? schema : { ...schema, $defs: defs };
  }

  /** The definitions `value` reaches, transitively, by name (sorted, so output is stable). */
  defsFor(value: unknown): Record<string, JsonSchema> {
    const reached = new Set<string>();
    const queue = [...this.refsOf(value)];
    while (queue.length > 0) {
      const name = queue.pop() as string;
      if (reached.has(name)) continue;
      reached.add(name);
      queue.push(...this.refsOf(this.body(name)));
    }
    const out: Record<string, JsonSchema> = {};
    for (const name of [...reached].sort()) out[name] = this.body(name) as JsonSchema;
    return out;
  }

  private node(value: unknown, atRoot: boolean): unknown {
    if (!isObject(value)) return value;
    if (typeof value.$ref === "string") return this.reference(value, atRoot);
    const cached = this.writtenObjects.get(value);
    if (cached !== undefined) return cached;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (DROPPED.has(k)) continue;
      if (ONE_SCHEMA.has(k)) out[k] = this.node(v, false);
      else if (k === "items" || SCHEMA_LIST.has(k))
        out[k] = Array.isArray(v) ? v.map((s) => this.node(s, false)) : this.node(v, false);
      else if (SCHEMA_MAP.has(k) && isObject(v)) {
        out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, this.node(s, false)]));
      } else out[k] = v;
    }
    const fixed = this.fixDialect(out);
    this.writtenObjects.set(value, fixed);
    return fixed;
  }

  private reference(value: Record<string, unknown>, atRoot: boolean): unknown {
    const ref = value.$ref as string;
    const { $ref: _, ...rawSiblings } = value;
    const siblings = Object.keys(rawSiblings).length > 0 ? (this.node(rawSiblings, false) as Record<string, unknown>) : null;
    const target = this.resolve(ref);
    if (!target) {
      this.unresolved.add(ref);
      return { ...(siblings ?? {}), description: (siblings?.description as string) ?? `(unresolved reference ${ref})` };
    }
    if (this.isCyclic(target.key) || (!atRoot && this.size(this.target(target)) > this.inlineLimit)) {
      const pointer = { $ref: `#/$defs/${encodeName(this.nameOf(target.key))}` };
      if (!siblings) return pointer;
      if (Object.keys(siblings).every((k) => ANNOTATIONS.has(k) || k.startsWith("x-"))) return { ...siblings, ...pointer };
      // Draft-07 validators ignore keywords beside $ref: constraints go beside it in an allOf.
      const allOf = Array.isArray(siblings.allOf) ? siblings.allOf : [];
      return { ...siblings, allOf: [pointer, ...allOf] };
    }
    const inline = this.target(target);
    if (!siblings) return inline;
    return isObject(inline) ? this.fixDialect({ ...inline, ...siblings }) : siblings;
  }

  /** The written form of a referenced schema, computed once. */
  private target(target: Target): unknown {
    if (this.written.has(target.key)) return this.written.get(target.key);
    const out = this.node(target.value, true);
    this.written.set(target.key, out);
    return out;
  }

  /** A definition's body: the referenced schema written by the same rule. */
  private body(name: string): unknown {
    const key = this.pointers.get(name) as string;
    return this.target({ key, value: lookupPath(this.root, this.segments.get(key) ?? []) });
  }

  private fixDialect(schema: Record<string, unknown>): Record<string, unknown> {
    if (this.dialect === "json-schema") return schema;
    if (
      !("nullable" in schema) &&
      !("example" in schema) &&
      typeof schema.exclusiveMinimum !== "boolean" &&
      typeof schema.exclusiveMaximum !== "boolean"
    ) {
      return schema;
    }
    const { nullable, example, ...out } = schema;
    // OpenAPI's `example` is JSON Schema's `examples`. Validators that collect `$id`s walk every
    // object under an unknown keyword (ajv does), and Box's metadata examples hold `"$id"` values.
    if (example !== undefined) {
      const examples = Array.isArray(out.examples) ? out.examples : [];
      out.examples = examples.some((e) => Object.is(e, example)) ? examples : [example, ...examples];
    }
    if (this.dialect !== "openapi-3.0") return out;
    if (nullable === true && (typeof out.type === "string" || Array.isArray(out.type))) {
      const types = Array.isArray(out.type) ? out.type : [out.type];
      if (!types.includes("null")) out.type = [...types, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    for (const [exclusive, bound] of [
      ["exclusiveMinimum", "minimum"],
      ["exclusiveMaximum", "maximum"],
    ] as const) {
      if (typeof out[exclusive] !== "boolean") continue;
      if (out[exclusive] === true && typeof out[bound] === "number") {
        out[exclusive] = out[bound];
        delete out[bound];
      } else delete out[exclusive];
    }
    return out;
  }

  /** The local target of a `$ref` (`#` plus a JSON pointer into the root), or null. */
  private resolve(ref: string): Target | null {
    const segments = pointerSegments(ref);
    if (!segments) return null;
    const value = lookupPath(this.root, segments);
    if (value === undefined) return null;
    const key = pointerKey(segments);
    this.segments.set(key, segments);
    return { key, value };
  }

  private nameOf(key: string): string {
    const known = this.names.get(key);
    if (known) return known;
    const segments = this.segments.get(key) ?? [];
    const container = this.containers.find((c) => segments.length === c.length + 1 && c.every((part, i) => segments[i] === part));
    let name = container ? (segments[segments.length - 1] as string) : segments.join("/") || "root";
    // Two pointers reaching the same name (`#/$defs/X` and `#/definitions/X`): the later one keeps its path.
    if (this.pointers.has(name)) name = segments.join("/");
    for (let i = 2; this.pointers.has(name); i++) name = `${segments.join("/")}-${i}`;
    this.names.set(key, name);
    this.pointers.set(name, key);
    return name;
  }

  /** Definition names a written value refers to directly, cached per object (written values are shared). */
  private refsOf(value: unknown): ReadonlySet<string> {
    if (Array.isArray(value)) return union(value.map((v) => this.refsOf(v)));
    if (!isObject(value)) return EMPTY;
    const cached = this.refsCache.get(value);
    if (cached) return cached;
    const parts: ReadonlySet<string>[] = [];
    if (typeof value.$ref === "string" && value.$ref.startsWith("#/$defs/")) {
      const name = decodeName(value.$ref.slice("#/$defs/".length));
      if (this.pointers.has(name)) parts.push(new Set([name]));
    }
    for (const [k, v] of Object.entries(value)) {
      if (ONE_SCHEMA.has(k) || SCHEMA_LIST.has(k) || k === "items") parts.push(this.refsOf(v));
      else if (SCHEMA_MAP.has(k) && isObject(v)) parts.push(union(Object.values(v).map((s) => this.refsOf(s))));
    }
    const out = union(parts);
    this.refsCache.set(value, out);
    return out;
  }

  /** Length of the value as fully inlined JSON (shared sub-objects counted at every use), cached. */
  private size(value: unknown): number {
    if (Array.isArray(value)) return value.reduce((n: number, v) => n + this.size(v) + 1, 2);
    if (!isObject(value)) return value === undefined ? 0 : JSON.stringify(value).length;
    const cached = this.sizes.get(value);
    if (cached !== undefined) return cached;
    let n = 2;
    for (const [k, v] of Object.entries(value)) n += k.length + 4 + this.size(v);
    this.sizes.set(value, n);
    return n;
  }

  /** Whether the schema at `key` is on a reference cycle (Tarjan's strongly connected components). */
  private isCyclic(key: string): boolean {
    if (!this.sccDone.has(key)) this.findCycles(key);
    return this.cyclic.has(key);
  }

  /** Iterative Tarjan from `start` over the references not yet classified (deep chains do not recurse). */
  private findCycles(start: string): void {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const work: { key: string; next: number }[] = [];
    let counter = 0;
    const enter = (key: string) => {
      index.set(key, counter);
      low.set(key, counter++);
      stack.push(key);
      onStack.add(key);
      work.push({ key, next: 0 });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { key: string; next: number };
      const targets = this.edgesOf(frame.key);
      if (frame.next < targets.length) {
        const to = targets[frame.next++] as string;
        if (to === frame.key) this.cyclic.add(to);
        if (this.sccDone.has(to)) continue;
        if (!index.has(to)) enter(to);
        else if (onStack.has(to)) low.set(frame.key, Math.min(low.get(frame.key) as number, index.get(to) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.key, Math.min(low.get(parent.key) as number, low.get(frame.key) as number));
      if (low.get(frame.key) === index.get(frame.key)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.key);
        for (const m of component) {
          this.sccDone.add(m);
          if (component.length > 1) this.cyclic.add(m);
        }
      }
    }
  }

  /** The local references inside the schema at `key` (not following them). */
  private edgesOf(key: string): string[] {
    const known = this.edges.get(key);
    if (known) return known;
    const found = new Set<string>();
    const visit = (value: unknown) => {
      if (Array.isArray(value)) {
        for (const v of value) visit(v);
        return;
      }
      if (!isObject(value)) return;
      if (typeof value.$ref === "string") {
        const target = this.resolve(value.$ref);
        if (target) found.add(target.key);
      }
      for (const [k, v] of Object.entries(value)) {
        if (DROPPED.has(k)) continue;
        if (ONE_SCHEMA.has(k) || SCHEMA_LIST.has(k) || k === "items") visit(v);
        else if (SCHEMA_MAP.has(k) && isObject(v)) for (const s of Object.values(v)) visit(s);
      }
    };
    visit(lookupPath(this.root, this.segments.get(key) ?? []));
    const out = [...found];
    this.edges.set(key, out);
    return out;
  }
}

/**
 * Calls `fn` with each direct sub-schema of `schema` (the values of properties, items, allOf...), and
 * with the definitions under `$defs`/`definitions` when `withDefs`.
 */
export function forEachSubschema(schema: Record<string, unknown>, fn: (subschema: unknown) => void, withDefs = false): void {
  for (const [k, v] of Object.entries(schema)) {
    if (ONE_SCHEMA.has(k)) fn(v);
    else if (k === "items" || SCHEMA_LIST.has(k)) for (const s of Array.isArray(v) ? v : [v]) fn(s);
    else if ((SCHEMA_MAP.has(k) || (withDefs && (k === "$defs" || k === "definitions"))) && isObject(v)) {
      for (const s of Object.values(v)) fn(s);
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();

function union(sets: ReadonlySet<string>[]): ReadonlySet<string> {
  const nonEmpty = sets.filter((s) => s.size > 0);
  if (nonEmpty.length === 0) return EMPTY;
  if (nonEmpty.length === 1) return nonEmpty[0] as ReadonlySet<string>;
  const out = new Set<string>();
  for (const s of nonEmpty) for (const name of s) out.add(name);
  return out;
}

function pointerKey(segments: string[]): string {
  if (segments.length === 0) return "#";
  return `#/${segments.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
}

/** A `$defs` name as it appears in a `$ref` (JSON pointer escapes, then URI escapes). */
function encodeName(name: string): string {
  return encodeURIComponent(name.replace(/~/g, "~0").replace(/\//g, "~1"));
}

function decodeName(encoded: string): string {
  try {
    return decodeURIComponent(encoded).replace(/~1/g, "/").replace(/~0/g, "~");
  } catch {
    return encoded;
  }
}

/** A copy of a written schema with each `$ref` into `$defs` replaced by a note of what it names. */
function unexpandReferences(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unexpandReferences);
  if (!isObject(value)) return value;
  if (typeof value.$ref === "string" && value.$ref.startsWith("#/$defs/")) {
    const { $ref, ...annotations } = value;
    const name = decodeURIComponent($ref.slice("#/$defs/".length)).replace(/~1/g, "/").replace(/~0/g, "~");
    return { title: name, description: `a ${name} (not expanded: the whole schema is too large to store)`, ...annotations };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === "object" && v !== null ? unexpandReferences(v) : v;
  return out;
}
