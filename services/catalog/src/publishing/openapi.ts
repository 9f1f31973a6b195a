/**
 * OpenAPI 3.0 / 3.1 import: one tool per operation. The text is parsed with `yaml` (YAML is a
 * superset of JSON, so one parser reads both, and its errors carry line and column). A Swagger 2.0
 * document is first converted to OpenAPI 3.0 by swagger2openapi. The document is validated by
 * @apidevtools/swagger-parser (on a copy), which checks it against the official 3.0 and 3.1 schemas plus
 * the rules a schema cannot state (path parameters declared, operationIds unique); the importer then
 * reads the document with its `$ref`s intact and writes each schema by the rule in schema-defs.ts
 * (recursive schemas stay `$ref`s into `$defs`). External `$ref`s (files, URLs) are not followed, by
 * the converter either: a document someone sends us must not make the catalog read its disk or its
 * network. A document given by URL is fetched through the guarded outbound client (fetchDocument), which
 * refuses private and special-purpose addresses.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { invalidArgument } from "@toolport/kit/errors";
import { type Outbound, type OutboundResponse, ResponseTooLarge } from "@toolport/kit/outbound";
import { convertObj } from "swagger2openapi";
import { parseDocument } from "yaml";
import type {
  Contact,
  JsonSchema,
  OAuthFlowInfo,
  ParameterLocation,
  SecuritySchemeInfo,
  ToolDraft,
  ToolParameterInfo,
} from "../domain/model.js";
import { isObject, lookup, resolveRef, saysMore, schemaType } from "./json-schema.js";
import { validateOpenApiSchema } from "./openapi-schema.js";
import { addressNotAllowed } from "./refusal.js";
import { forEachSubschema, SchemaWriter } from "./schema-defs.js";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export interface ImportedApi {
  title: string;
  summary: string;
  description: string;
  version: string;
  contact: Contact;
  documentationUrl: string;
  logo: string;
  baseUrl: string | null;
  securitySchemes: SecuritySchemeInfo[];
  tools: (ToolDraft & { deprecated: boolean })[];
  warnings: string[];
}

/** A document that passed validation, `$ref`s intact, and what converting it (Swagger 2.0) reported. */
export interface ValidatedDocument {
  document: Record<string, unknown>;
  warnings: string[];
}

const invalidDocument = (message: string, location?: string) =>
  invalidArgument("invalid_openapi_document", location ? `invalid OpenAPI document at ${location}: ${message}` : message, {
    details: { field: "api", ...(location ? { location } : {}) },
  });

/**
 * Parses JSON or YAML text; a syntax error names its line and column. Text that is plain JSON goes
 * through JSON.parse, which reads the same values far faster than the YAML parser (~0.5 s -> ~10 ms on
 * Box's 1.7 MB document); anything else, and JSON with a syntax error, goes through `yaml`.
 */
export function parseDocumentText(text: string): unknown {
  if (text.trim() === "") throw invalidDocument("the OpenAPI document is empty");
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text);
    } catch {
      // Not strict JSON: YAML (a superset) reads it, or names the line and column where it is wrong.
    }
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false });
  const [first] = doc.errors;
  if (first) {
    const pos = first.linePos?.[0];
    const message = (first.message.split("\n")[0] ?? "syntax error").replace(/ at line \d+, column \d+:?$/, "");
    throw invalidDocument(
      `the document is not valid JSON or YAML: ${message}`,
      pos ? `line ${pos.line}, column ${pos.col}` : undefined,
    );
  }
  return doc.toJS({ maxAliasCount: 1000 });
}

/**
 * Largest OpenAPI document fetched by URL (bigger public specs run to a few MiB): the same 25 MiB the
 * gateway accepts inline on the publishing routes (PUBLISH_BODY_LIMIT_BYTES), so a document is not
 * refused for the way it was sent.
 */
export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;

/**
 * Fetches a document by URL (http or https only) through the guarded client: every hop of a redirect
 * (at most 5) is checked against the outbound address policy before it is dialled, the whole fetch has
 * a deadline, and the body is read only up to `maxBytes`. Errors name the field and never repeat the
 * fetched body.
 */
export async function fetchDocument(url: string, outbound: Outbound, maxBytes = MAX_DOCUMENT_BYTES): Promise<string> {
  const field = "api.document_url";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument("invalid_document_url", `${field} must be an absolute http(s) URL`, { details: { field } });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidArgument("invalid_document_url", `${field} must be an http(s) URL`, { details: { field } });
  }
  let res: OutboundResponse;
  try {
    res = await outbound.send(
      { method: "GET", url: parsed, headers: { accept: "application/json, application/yaml, text/yaml, */*" } },
      { timeoutMs: FETCH_TIMEOUT_MS, maxBytes },
    );
  } catch (err) {
    const refused = addressNotAllowed(err, field, parsed);
    if (refused) throw refused;
    if (err instanceof ResponseTooLarge) {
      throw invalidArgument("document_too_large", `the document at ${url} is larger than ${maxBytes} bytes`, {
        details: { field, limit_bytes: maxBytes },
      });
    }
    const why = (err as Error).name === "TimeoutError" ? `no answer within ${FETCH_TIMEOUT_MS} ms` : (err as Error).message;
    throw invalidArgument("document_unreachable", `could not fetch ${url}: ${why}`, { details: { field } });
  }
  if (res.status < 200 || res.status > 299) {
    throw invalidArgument("document_unreachable", `fetching ${url} answered HTTP ${res.status}`, { details: { field } });
  }
  return new TextDecoder().decode(res.body);
}

/**
 * Validates the document (converting Swagger 2.0 first); every problem becomes a 400 naming where in
 * the document it is. The document itself is returned as it came, `$ref`s intact: swagger-parser
 * validates (and dereferences) a copy.
 */
export async function validateDocument(raw: unknown): Promise<ValidatedDocument> {
  if (!isObject(raw)) throw invalidDocument("the document must be a JSON or YAML object", "#/");
  const warnings: string[] = [];
  const converted = typeof raw.swagger === "string";
  const api = converted ? await convertSwagger(raw, warnings) : raw;
  if (typeof api.openapi !== "string" || !/^3\.[01]\.\d+/.test(api.openapi)) {
    throw invalidDocument("field `openapi` must be a 3.0.x or 3.1.x version string", "#/openapi");
  }
  if (!converted) refuseExternalRefs(api);
  // swagger-parser refuses these with "[object Object] is not a valid Openapi API definition" (it names
  // the file it was given, and it was given an object): name what is missing instead.
  const is30 = api.openapi.startsWith("3.0");
  if (is30 && api.paths === undefined) {
    throw invalidDocument("an OpenAPI 3.0 document needs a `paths` object", "#/paths");
  }
  if (!is30 && api.paths === undefined && api.webhooks === undefined && api.components === undefined) {
    throw invalidDocument("an OpenAPI 3.1 document needs at least one of `paths`, `webhooks` or `components`", "#/");
  }
  checkOperations(api);
  // Locations then point into the converted document, which the publisher never saw: say so.
  const note = converted ? " (in the OpenAPI 3.0 document converted from Swagger 2.0)" : "";
  const ignored: IgnoredField[] = [];
  for (let round = 1; ; round++) {
    const copy = validationCopy(api, note);
    // A 3.1 document of components alone is valid (3.1 requires one of the three), which swagger-parser
    // does not know: it validates with empty paths.
    if (copy.paths === undefined && copy.webhooks === undefined) copy.paths = {};
    try {
      // swagger-parser resolves every $ref (a missing target is refused here); the schema check is
      // ours, compiled once (openapi-schema.ts). Its spec step checks nothing for OpenAPI 3.
      const dereferenced = await SwaggerParser.dereference(copy as never, {
        resolve: { external: false },
        dereference: { circular: "ignore" },
      });
      validateOpenApiSchema(dereferenced as { openapi: string });
      break;
    } catch (err) {
      // Each round drops at least one field, so a document with a real defect still reaches it.
      const fields = round <= MAX_REPAIR_ROUNDS ? ignorableFields(api, err) : [];
      if (fields.length === 0) throw describeValidationError(err, note);
      for (const field of fields) {
        delete field.holder[field.key];
        ignored.push(field);
      }
    }
  }
  warnings.push(...ignoredFieldWarnings(ignored, note));
  return { document: api, warnings };
}

const MAX_REPAIR_ROUNDS = 10;

interface IgnoredField {
  holder: Record<string, unknown>;
  key: string;
  pointer: string;
  kind: "beside_ref" | "unknown";
}

/**
 * Fields a validation failure names that are ignored with a warning instead of refusing the document
 * (the APIs.guru directory has each kind; the importer never reads them, so dropping them changes no tool):
 * - beside a `$ref` in an OpenAPI 3.0 document (xero.com's `{$ref, type: "string"}` parameters,
 *   cloudmersive.com's `{$ref, type: "application/json"}` schema): the 3.0 specification says a
 *   Reference Object's other properties SHALL be ignored, and swagger-parser's own dereferencing
 *   replaces the whole object. In 3.1 a schema's keywords beside `$ref` apply, so there they are still
 *   validated.
 * - a field OpenAPI does not define (googleapis.com:cloudbuild's top-level `source`, an `example` in an
 *   XML Object): Swagger UI and Postman's importer (openapi-to-postman) ignore fields they do not know.
 *   Not where the object failed a oneOf as a whole (a security scheme of the wrong shape makes every
 *   other branch report its fields as unknown), and not a key of `paths` (a path must start with `/`).
 * `err` comes from validating the dereferenced copy, so its paths are followed through `api`'s `$ref`s.
 */
function ignorableFields(api: Record<string, unknown>, err: unknown): IgnoredField[] {
  const details = (err as { details?: AjvError[] }).details;
  if (!Array.isArray(details)) return [];
  const is30 = String(api.openapi).startsWith("3.0");
  const undecided = new Set(details.filter((d) => d.keyword === "oneOf" || d.keyword === "anyOf").map((d) => d.instancePath));
  const found = new Map<string, IgnoredField>();
  // A field some `$ref` points into is part of the document (dnd5eapi.co's allOf beside a $ref is the
  // target of others): dropping it would break those, so its defect stays a refusal.
  const targets = referenceTargets(api);
  const referenced = (pointer: string) => {
    const p = decodePointer(pointer);
    return targets.some((t) => t === p || t.startsWith(`${p}/`));
  };
  for (const d of details) {
    const extra = d.keyword === "additionalProperties" ? String(d.params?.additionalProperty ?? "") : undefined;
    const segments = d.instancePath
      .split("/")
      .slice(1)
      .map((x) => x.replace(/~1/g, "/").replace(/~0/g, "~"));
    let node: unknown = api;
    let pointer = "#";
    let field: IgnoredField | null = null;
    for (let i = 0; i <= segments.length && !field; i++) {
      for (let hops = 0; isObject(node) && typeof node.$ref === "string"; hops++) {
        const key = i < segments.length ? segments[i] : extra;
        if (key !== undefined && key !== "$ref" && Object.hasOwn(node, key)) {
          if (is30) field = { holder: node, key, pointer: `${pointer}/${escapePointer(key)}`, kind: "beside_ref" };
          break;
        }
        if (hops > 20) break;
        pointer = node.$ref;
        node = lookup(api, node.$ref);
      }
      if (field || i === segments.length) break;
      const segment = segments[i] as string;
      node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined;
      pointer = `${pointer}/${escapePointer(segment)}`;
    }
    if (
      !field &&
      extra &&
      isObject(node) &&
      Object.hasOwn(node, extra) &&
      !undecided.has(d.instancePath) &&
      d.instancePath !== "/paths"
    ) {
      field = { holder: node, key: extra, pointer: `${pointer}/${escapePointer(extra)}`, kind: "unknown" };
    }
    if (field && !referenced(field.pointer)) found.set(field.pointer, field);
  }
  return [...found.values()];
}

/** A JSON pointer in a URI fragment (`~1api~1%7Bid%7D`) with its percent-escapes undone. */
function decodePointer(pointer: string): string {
  try {
    return decodeURIComponent(pointer);
  } catch {
    return pointer;
  }
}

/** Every local `$ref` of the document, decoded. */
function referenceTargets(api: Record<string, unknown>): string[] {
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) visit(v);
    else if (isObject(value)) {
      if (typeof value.$ref === "string" && value.$ref.startsWith("#")) out.push(decodePointer(value.$ref));
      for (const v of Object.values(value)) visit(v);
    }
  };
  visit(api);
  return out;
}

function ignoredFieldWarnings(fields: IgnoredField[], note: string): string[] {
  const list = (kind: IgnoredField["kind"]) => {
    const pointers = fields.filter((f) => f.kind === kind).map((f) => f.pointer);
    return pointers.length <= 5 ? pointers.join(", ") : `${pointers.slice(0, 5).join(", ")} and ${pointers.length - 5} more`;
  };
  const out: string[] = [];
  if (fields.some((f) => f.kind === "beside_ref")) {
    out.push(`ignored fields beside a $ref, which OpenAPI 3.0 says are ignored${note}: ${list("beside_ref")}`);
  }
  if (fields.some((f) => f.kind === "unknown")) out.push(`ignored fields OpenAPI does not define${note}: ${list("unknown")}`);
  return out;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Where every schema `$ref` of the validation copy points: an empty schema. */
const SCHEMA_STUB = "x-toolport-schema-stub";

/**
 * The copy swagger-parser validates: each `$ref` in a schema is checked to lead somewhere in the
 * document (a 400 naming it if not) and then pointed at one empty stub schema. swagger-parser validates
 * the dereferenced document, and a document whose schemas share sub-schemas dereferences to a tree
 * exponentially larger than itself (24 levels of a schema using the next one twice took 200 s of CPU);
 * with the stub, each schema is validated once, where it is defined, and validation stays linear in
 * the document's size. References between other objects (parameters, responses, path items) are left
 * to swagger-parser.
 */
function validationCopy(api: Record<string, unknown>, note: string): Record<string, unknown> {
  const copy = structuredClone(api);
  const visit = (value: unknown, inSchema: boolean): void => {
    if (Array.isArray(value)) {
      for (const v of value) visit(v, inSchema);
      return;
    }
    if (!isObject(value)) return;
    if (!inSchema) {
      for (const [k, v] of Object.entries(value)) {
        // Examples and extensions are data, whatever keys they hold.
        if (k.startsWith("x-") || k === "example" || k === "examples") continue;
        visit(v, k === "schema");
      }
      return;
    }
    if (typeof value.$ref === "string") {
      if (lookup(api, value.$ref) === undefined) {
        throw invalidDocument(`cannot resolve $ref "${value.$ref}"${note}`, value.$ref.startsWith("#") ? value.$ref : undefined);
      }
      value.$ref = `#/${SCHEMA_STUB}`;
    }
    forEachSubschema(value, (s) => visit(s, true), true);
  };
  for (const [k, v] of Object.entries(copy)) {
    if (k !== "components" || !isObject(v)) visit(v, false);
    else
      for (const [kind, c] of Object.entries(v))
        kind === "schemas" && isObject(c) ? visit(Object.values(c), true) : visit(c, false);
  }
  copy[SCHEMA_STUB] = {};
  return copy;
}

function refuseExternalRefs(api: Record<string, unknown>): void {
  const external = findExternalRef(api, "#");
  if (external) {
    throw invalidDocument(`external $ref "${external.ref}" is not followed; bundle the document into one file`, external.at);
  }
}

/**
 * Swagger 2.0 -> OpenAPI 3.0 with swagger2openapi: `patch` fixes the usual small defects (a missing
 * response description, a path parameter not marked required); what it cannot carry over losslessly
 * (`warnOnly`, e.g. a tsv collectionFormat) becomes an import warning instead of a refusal. External
 * `$ref`s are refused before converting and `resolve` stays off, so the converter reads no file or
 * URL. Only what the converter cannot handle at all is a 400, naming its reason.
 */
async function convertSwagger(raw: Record<string, unknown>, warnings: string[]): Promise<Record<string, unknown>> {
  if (raw.swagger !== "2.0") {
    throw invalidDocument(`Swagger ${raw.swagger} is not supported; only Swagger 2.0 is converted (to OpenAPI 3.0)`, "#/swagger");
  }
  // The converter would invent an empty `info` and treat a missing `paths` as none; neither makes a
  // Swagger 2.0 document.
  for (const field of ["info", "paths"]) {
    if (!isObject(raw[field])) throw invalidDocument(`a Swagger 2.0 document needs an \`${field}\` object`, `#/${field}`);
  }
  refuseExternalRefs(raw);
  let converted: { openapi: unknown; patches: number };
  try {
    // A JSON copy: YAML aliases parse to shared objects, which the converter refuses as "anchors".
    // `text` stands in for the source text, which the converter would otherwise re-serialise as YAML
    // (hundreds of ms on a large document) only for its own validator, not run here.
    converted = await convertObj(JSON.parse(JSON.stringify(raw)), {
      patch: true,
      warnOnly: true,
      resolve: false,
      text: "{}",
    });
  } catch (err) {
    throw invalidDocument(`the Swagger 2.0 document could not be converted to OpenAPI 3.0: ${(err as Error).message}`);
  }
  const api = converted.openapi;
  if (!isObject(api)) throw invalidDocument("the Swagger 2.0 document could not be converted to OpenAPI 3.0");
  warnings.push(
    `converted from Swagger 2.0 to OpenAPI 3.0 (swagger2openapi)${converted.patches > 0 ? `; ${converted.patches} small defects patched` : ""}`,
  );
  for (const { at, message } of takeConversionWarnings(api, "#")) warnings.push(`Swagger 2.0 conversion, ${at}: ${message}`);
  return api;
}

/** Removes the converter's `x-s2o-warning` marks from the converted document and returns them. */
function takeConversionWarnings(value: unknown, at: string, out: { at: string; message: string }[] = []) {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) takeConversionWarnings(v, `${at}/${i}`, out);
  } else if (isObject(value)) {
    if (typeof value["x-s2o-warning"] === "string") {
      out.push({ at, message: value["x-s2o-warning"] });
      delete value["x-s2o-warning"];
    }
    for (const [k, v] of Object.entries(value))
      takeConversionWarnings(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
  }
  return out;
}

/** The first `$ref` outside the document (skipping `x-` extensions, which tools never read). */
function findExternalRef(value: unknown, at: string): { ref: string; at: string } | null {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = findExternalRef(v, `${at}/${i}`);
      if (found) return found;
    }
    return null;
  }
  if (!isObject(value)) return null;
  if (typeof value.$ref === "string" && !value.$ref.startsWith("#")) return { ref: value.$ref, at };
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith("x-")) continue;
    const found = findExternalRef(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`);
    if (found) return found;
  }
  return null;
}

/** A path key split at its query string: `/search?q={query}&v=2` is `/search`, `{query}` bound to `q`, and `v=2` fixed. */
export interface QueryInPath {
  /** The path without its query string (the whole key when it has none). */
  path: string;
  /** Template name -> the query parameter it fills (`q={query}`: query -> q). */
  bound: Map<string, string>;
  /** Query parameters the path fixes (`v=2`), in order. */
  fixed: [string, string][];
}

/**
 * Paths that carry a query string (`/search?query={query}`, `/rest?method=flickr.photos.search`):
 * the OpenAPI 3 schema allows any key starting with `/` and swagger-parser accepts them, and Redocly
 * CLI's `path-not-include-query` rule is off in its recommended configuration, so such documents are
 * imported, with a warning: the tool calls the path before the `?`, a `{name}` in the query string
 * fills the query parameter it stands after (whether the document declared `name` in the path or in
 * the query), and a fixed pair (`method=...`) becomes a query parameter whose only value is its default.
 */
export function splitQueryInPath(key: string): QueryInPath {
  const at = key.indexOf("?");
  if (at < 0) return { path: key, bound: new Map(), fixed: [] };
  const bound = new Map<string, string>();
  const fixed: [string, string][] = [];
  for (const pair of key.slice(at + 1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = safeDecode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? "" : pair.slice(eq + 1);
    const template = /^\{([^}]+)\}$/.exec(value);
    if (template) bound.set(template[1] as string, name);
    else fixed.push([name, safeDecode(value)]);
  }
  return { path: key.slice(0, at) || "/", bound, fixed };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/**
 * Rules the OpenAPI 3 schemas cannot state and swagger-parser checks only for Swagger 2: every
 * `{name}` in a path is a declared path parameter (and the reverse), and operationIds are unique.
 * `$ref`'d parameters are checked after dereferencing by the importer, so only inline ones here.
 */
function checkOperations(api: Record<string, unknown>): void {
  const paths = isObject(api.paths) ? api.paths : {};
  const operationIds = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const pointer = `#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    const query = splitQueryInPath(path);
    const templated = [...query.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const params = [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])];
      if (params.some((p) => isObject(p) && typeof p.$ref === "string")) continue;
      const declared = new Set(
        params.filter((p) => isObject(p) && p.in === "path").map((p) => String((p as Record<string, unknown>).name)),
      );
      for (const name of templated) {
        if (!declared.has(name))
          throw invalidDocument(`path parameter {${name}} is not declared in parameters`, `${pointer}/${method}`);
      }
      for (const name of declared) {
        if (!templated.includes(name) && !query.bound.has(name) && path.includes(`{${name}}`)) {
          throw invalidDocument(
            `path parameter {${name}} stands where a query parameter's name belongs in ${path.slice(path.indexOf("?"))}; a query string template is name={parameter}`,
            `${pointer}/${method}`,
          );
        }
        if (!templated.includes(name) && !query.bound.has(name))
          throw invalidDocument(`path parameter ${name} does not appear in the path`, `${pointer}/${method}`);
      }
      if (typeof op.operationId === "string") {
        const earlier = operationIds.get(op.operationId);
        if (earlier)
          throw invalidDocument(`operationId ${op.operationId} is also used at ${earlier}`, `${pointer}/${method}/operationId`);
        operationIds.set(op.operationId, `${pointer}/${method}`);
      }
    }
  }
}

interface AjvError {
  instancePath: string;
  message?: string;
  keyword: string;
  params?: Record<string, unknown>;
}

/** The 400 for a validation failure; `note` (when set) follows the message. */
function describeValidationError(err: unknown, note = "") {
  const refuse = (message: string, location?: string) => invalidDocument(`${message}${note}`, location);
  const e = err as Error & { details?: AjvError[] };
  if (Array.isArray(e.details) && e.details.length > 0) {
    // Schema errors: the deepest locations are the most specific; oneOf/anyOf summaries add nothing.
    const specific = e.details.filter((d) => !["oneOf", "anyOf", "if", "$ref", "not"].includes(d.keyword));
    const errors = (specific.length > 0 ? specific : e.details)
      .slice()
      .sort((a, b) => b.instancePath.split("/").length - a.instancePath.split("/").length);
    const first = errors[0] as AjvError;
    const extra =
      first.params && typeof first.params.additionalProperty === "string" ? ` (${first.params.additionalProperty})` : "";
    return refuse(`${first.message ?? "is invalid"}${extra}`, `#${first.instancePath || "/"}`);
  }
  const message = String(e.message ?? err);
  // $ref failures name the pointer; spec-rule failures name the operation path.
  const ref = /\$ref pointer "([^"]+)"/.exec(message);
  if (ref) return refuse(`cannot resolve $ref "${ref[1]}"`, ref[1]?.startsWith("#") ? ref[1] : undefined);
  const at = /Validation failed\. (\/\S+)/.exec(message);
  return refuse(message.replace(/^Validation failed\.\s*/, ""), at ? `#/paths${at[1]}` : undefined);
}

/** Turns a validated document into the service facts and one tool draft per operation. */
export function importOpenApi(
  validated: ValidatedDocument,
  options: { documentUrl?: string; baseUrl?: string } = {},
): ImportedApi {
  const api = validated.document;
  const warnings = [...validated.warnings];
  const schemas = new SchemaWriter(api, {
    dialect: String(api.openapi).startsWith("3.0") ? "openapi-3.0" : "openapi-3.1",
    containers: [["components", "schemas"]],
  });
  const info = (isObject(api.info) ? api.info : {}) as Record<string, unknown>;
  const description = str(info.description);
  const contact = isObject(info.contact) ? info.contact : {};
  const externalDocs = isObject(api.externalDocs) ? api.externalDocs : {};
  const securitySchemes = flattenSecuritySchemes(api, warnings);
  const schemeNames = new Set(securitySchemes.map((s) => s.name));
  const globalSecurity = Array.isArray(api.security) ? api.security : [];

  const tools: (ToolDraft & { deprecated: boolean })[] = [];
  const trimmedOutputs: string[] = [];
  const paths = isObject(api.paths) ? api.paths : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = resolveObject(api, rawItem);
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    const query = splitQueryInPath(path);
    if (query.path !== path && METHODS.some((m) => isObject(item[m]))) {
      warnings.push(
        `path ${path} carries a query string: its tools call ${query.path} with the query parameters ${[...[...query.bound].map(([name, q]) => `${q}={${name}}`), ...query.fixed.map(([k, v]) => `${k}=${v}`)].join(", ")}`,
      );
    }
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      tools.push(
        toolFromOperation({
          api,
          schemas,
          path,
          query,
          method,
          op,
          shared,
          globalSecurity,
          schemeNames,
          version: str(info.version),
          warnings,
          trimmedOutputs,
        }),
      );
    }
  }
  if (trimmedOutputs.length > 0) {
    warnings.push(
      `the response schemas of ${trimmedOutputs.length} operations (${trimmedOutputs.slice(0, 3).join(", ")}${trimmedOutputs.length > 3 ? ", ..." : ""}) reach more than ${OUTPUT_LIMIT_BYTES / 1024} KB of schemas: their tools' output names the schemas it reaches without expanding them (or is left out where even that is too large)`,
    );
  }
  if (tools.length === 0) warnings.push("the document has no operations under `paths`; no tools were imported");
  for (const ref of schemas.unresolved) warnings.push(`$ref ${ref} does not resolve; that schema accepts any value`);

  return {
    title: str(info.title),
    summary: str(info.summary) || firstSentence(description),
    description,
    version: str(info.version),
    contact: { name: str(contact.name), url: str(contact.url), email: str(contact.email) },
    documentationUrl: str(externalDocs.url),
    logo: isObject(info["x-logo"]) ? str(info["x-logo"].url) : "",
    baseUrl: options.baseUrl ?? serverBaseUrl(api, options.documentUrl, warnings),
    securitySchemes,
    tools,
    warnings,
  };
}

interface OperationInput {
  api: Record<string, unknown>;
  schemas: SchemaWriter;
  /** The path key as the document spells it (the tool's source key). */
  path: string;
  /** The same key split at its query string; the tool calls `query.path`. */
  query: QueryInPath;
  method: (typeof METHODS)[number];
  op: Record<string, unknown>;
  shared: unknown[];
  globalSecurity: unknown[];
  schemeNames: Set<string>;
  version: string;
  warnings: string[];
  /** Operations whose declared output was over OUTPUT_LIMIT_BYTES (one warning names them). */
  trimmedOutputs: string[];
}

/**
 * Most JSON a tool's declared output may take with every schema it reaches; past it the output keeps its
 * own fields and names the schemas it reaches without them (SchemaWriter.boundedStandalone). Box's largest
 * is 96 KB, GitHub's 226 KB, Stripe's average 500 KB.
 */
const OUTPUT_LIMIT_BYTES = 128 * 1024;
/**
 * The same bound for each parameter's own JSON Schema. Every body property's schema carries the schemas
 * it reaches: DocuSign's 402 operations made 214 MB of parameter schemas that way (530 KB a tool), and its
 * publish passed jsonb's 256 MB in one statement.
 */
const PARAMETER_SCHEMA_LIMIT_BYTES = 64 * 1024;

function toolFromOperation(input: OperationInput): ToolDraft & { deprecated: boolean } {
  const { api, schemas, path, method, op } = input;
  const parameters: Record<string, ToolParameterInfo> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];

  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, Record<string, unknown>>();
  for (const raw of [...input.shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    const p = resolveObject(api, raw);
    if (isObject(p) && typeof p.name === "string" && typeof p.in === "string") byKey.set(`${p.in}:${p.name}`, p);
  }
  const { bound, fixed } = input.query;
  for (const p of byKey.values()) {
    // A `{name}` in the path's query string (splitQueryInPath) is sent as the query parameter it fills.
    const inQueryString = (p.in === "path" || p.in === "query") && bound.has(p.name as string);
    const location = (inQueryString ? "query" : p.in) as ParameterLocation;
    const wireName = inQueryString ? (bound.get(p.name as string) as string) : (p.name as string);
    const schema = parameterSchema(p, schemas);
    const key = parameters[p.name as string] ? `${location}_${p.name}` : (p.name as string);
    const isRequired = p.required === true || p.in === "path";
    parameters[key] = parameterInfo(schemas, wireName, location, schema, str(p.description), isRequired);
    properties[key] = describedSchema(schema, str(p.description));
    if (isRequired) required.push(key);
  }
  const sentInQuery = new Set(Object.values(parameters).flatMap((p) => (p.location === "query" ? [p.name] : [])));
  for (const [template, wireName] of bound) {
    // A template the document declares nowhere: a required string, as a path template would be.
    if (byKey.has(`path:${template}`) || byKey.has(`query:${template}`)) continue;
    const key = parameters[template] ? `query_${template}` : template;
    parameters[key] = parameterInfo(schemas, wireName, "query", { type: "string" }, "", true);
    properties[key] = { type: "string" };
    required.push(key);
    sentInQuery.add(wireName);
  }
  for (const [name, value] of fixed) {
    if (sentInQuery.has(name)) continue;
    const key = parameters[name] ? `query_${name}` : name;
    const schema = { type: "string", enum: [value], default: value, description: `fixed by the path ${path}` };
    parameters[key] = parameterInfo(schemas, name, "query", schema, schema.description, false);
    properties[key] = schema;
  }

  let requestBodySchema: JsonSchema | null = null;
  let requestBodyContentType = "";
  const requestBody = resolveObject(api, op.requestBody);
  if (isObject(requestBody) && isObject(requestBody.content)) {
    const [contentType, media] = pickMedia(requestBody.content);
    if (contentType) {
      requestBodyContentType = contentType;
      const schema = isObject(media?.schema) ? schemas.write(media.schema) : {};
      requestBodySchema = schemas.standalone(schema);
      // A recursive body is a `$ref` into `$defs`: its properties are the definition's.
      const top = resolveRef(schema, requestBodySchema);
      const bodyRequired = requestBody.required === true;
      const props = isObject(top.properties) ? (top.properties as Record<string, JsonSchema>) : null;
      if (props && schemaType(top, requestBodySchema) === "object") {
        const inner = new Set(Array.isArray(top.required) ? (top.required as string[]) : []);
        for (const [name, propSchema] of Object.entries(props)) {
          // readOnly properties appear only in responses; the caller never sends them.
          if (propSchema.readOnly === true || resolveRef(propSchema, requestBodySchema).readOnly === true) continue;
          const key = parameters[name] ? `body_${name}` : name;
          const isRequired = bodyRequired && inner.has(name);
          parameters[key] = parameterInfo(schemas, name, "body", propSchema, str(propSchema.description), isRequired);
          properties[key] = propSchema;
          if (isRequired) required.push(key);
        }
      } else {
        const key = parameters.body ? "request_body" : "body";
        parameters[key] = parameterInfo(schemas, "body", "body", schema, str(requestBody.description), bodyRequired);
        properties[key] = describedSchema(schema, str(requestBody.description));
        if (bodyRequired) required.push(key);
      }
    }
  }

  const summary = str(op.summary);
  const longer = str(op.description);
  const description =
    [summary, longer && longer !== summary ? longer : ""].filter(Boolean).join("\n\n") || `${method.toUpperCase()} ${path}`;
  const name =
    str(op.operationId) ||
    `${method}_${path
      .replace(/[{}]/g, "")
      .replace(/[^A-Za-z0-9]+/g, "_")
      .replace(/^_|_$/g, "")}`;

  return {
    sourceKey: `${method.toUpperCase()} ${path}`,
    name,
    description,
    tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === "string") : [],
    method: method.toUpperCase(),
    path: input.query.path,
    parameters,
    inputSchema: schemas.standalone({ type: "object", properties, ...(required.length > 0 ? { required } : {}) }),
    requestBodySchema,
    requestBodyContentType,
    output: declaredOutput(op, input),
    tips: typeof op["x-tips"] === "string" ? op["x-tips"] : null,
    version: input.version,
    sideEffecting: op["x-side-effecting"] === true,
    security: operationSecurity(op, input),
    securityScopes: operationScopes(op, input),
    mcpToolName: "",
    internalHandler: "",
    deprecated: op.deprecated === true,
  };
}

/** A parameter's schema, written by the `$defs` rule (not yet standalone). */
function parameterSchema(p: Record<string, unknown>, schemas: SchemaWriter): JsonSchema {
  if (isObject(p.schema)) return schemas.write(p.schema);
  if (isObject(p.content)) {
    const [, media] = pickMedia(p.content);
    if (isObject(media?.schema)) return schemas.write(media.schema);
  }
  return { type: "string" };
}

/**
 * What a tool says about one parameter, from its written schema (SchemaWriter.write): type, default,
 * enum and bounds, read through a `$ref` at its top. The standalone schema (its `$defs` at its root) is
 * kept as `jsonSchema` when it says more than those facts, within PARAMETER_SCHEMA_LIMIT_BYTES (past it,
 * the schemas it reaches are named, not expanded: SchemaWriter.boundedStandalone). It is what agents read;
 * calls are validated against the tool's input schema, which stays whole.
 */
function parameterInfo(
  schemas: SchemaWriter,
  name: string,
  location: ParameterLocation,
  written: JsonSchema,
  description: string,
  required: boolean,
): ToolParameterInfo {
  const schema = schemas.standalone(written);
  const top = resolveRef(schema);
  const info: ToolParameterInfo = {
    name,
    location,
    description: description || str(schema.description) || str(top.description),
    type: schemaType(schema),
    required,
  };
  if (top.default !== undefined) info.default = top.default;
  if (Array.isArray(top.enum)) info.enum = top.enum;
  if (typeof top.minimum === "number") info.minimum = top.minimum;
  if (typeof top.maximum === "number") info.maximum = top.maximum;
  if (location === "path" && typeof top["x-encode-slashes"] === "boolean") info.encodeSlashes = top["x-encode-slashes"];
  if (saysMore(schema)) {
    const bounded = schemas.boundedStandalone(written, PARAMETER_SCHEMA_LIMIT_BYTES).schema;
    if (bounded) info.jsonSchema = bounded;
  }
  return info;
}

function describedSchema(schema: JsonSchema, description: string): JsonSchema {
  return description && !schema.description ? { ...schema, description } : schema;
}

/** application/json first, then any +json, then forms, then whatever comes first. */
function pickMedia(content: Record<string, unknown>): [string, Record<string, unknown> | undefined] {
  const types = Object.keys(content);
  const chosen =
    types.find((t) => t === "application/json") ??
    types.find((t) => /[/+]json\b/.test(t)) ??
    types.find((t) => t === "application/x-www-form-urlencoded") ??
    types.find((t) => t === "multipart/form-data") ??
    types[0];
  if (!chosen) return ["", undefined];
  const media = content[chosen];
  return [chosen, isObject(media) ? media : undefined];
}

/** The JSON Schema of the first success response (200, 201, other 2xx, 2XX, default), standalone. */
function declaredOutput(op: Record<string, unknown>, input: OperationInput): JsonSchema | null {
  if (!isObject(op.responses)) return null;
  const responses = op.responses;
  const codes = Object.keys(responses);
  const order = [
    ...codes.filter((c) => c === "200"),
    ...codes.filter((c) => c === "201"),
    ...codes.filter((c) => /^2\d\d$/.test(c) && c !== "200" && c !== "201").sort(),
    ...codes.filter((c) => c.toUpperCase() === "2XX"),
    ...codes.filter((c) => c === "default"),
  ];
  for (const code of order) {
    const response = resolveObject(input.api, responses[code]);
    if (!isObject(response) || !isObject(response.content)) continue;
    const [, media] = pickMedia(response.content);
    if (isObject(media?.schema)) {
      const schema = input.schemas.write(media.schema);
      const bounded = input.schemas.boundedStandalone(describedSchema(schema, str(response.description)), OUTPUT_LIMIT_BYTES);
      if (bounded.trimmed) input.trimmedOutputs.push(`${input.method.toUpperCase()} ${input.path}`);
      return bounded.schema;
    }
  }
  return null;
}

/**
 * An OpenAPI object (path item, parameter, request body, response, security scheme) with a `$ref` at
 * its top followed inside the document; a Reference Object's own summary/description (3.1) win.
 */
function resolveObject(api: Record<string, unknown>, value: unknown, hops = 0): unknown {
  if (!isObject(value) || typeof value.$ref !== "string") return value;
  if (hops > 20) return undefined;
  const { $ref, ...siblings } = value;
  const resolved = resolveObject(api, lookup(api, $ref), hops + 1);
  return isObject(resolved) && Object.keys(siblings).length > 0 ? { ...resolved, ...siblings } : resolved;
}

/**
 * The schemes an operation accepts, any one sufficing. An empty requirement (`{}`) among them means
 * the credential is optional, so none is needed; `security: []` on the operation turns it off.
 */
function operationSecurity(op: Record<string, unknown>, input: OperationInput): string[] {
  const requirements = Array.isArray(op.security) ? op.security : input.globalSecurity;
  const names: string[] = [];
  for (const requirement of requirements) {
    if (!isObject(requirement)) continue;
    const keys = Object.keys(requirement);
    if (keys.length === 0) return [];
    for (const key of keys) {
      if (!input.schemeNames.has(key)) {
        input.warnings.push(`${input.method.toUpperCase()} ${input.path}: security scheme ${key} is not declared`);
        continue;
      }
      if (!names.includes(key)) names.push(key);
    }
  }
  return names;
}

/**
 * The OAuth scopes an operation's requirements name, per scheme (`security: [{oauth: ["items:read"]}]`):
 * what a connection must be granted for the tool to work. Schemes without scopes are left out.
 */
function operationScopes(op: Record<string, unknown>, input: OperationInput): Record<string, string[]> {
  const requirements = Array.isArray(op.security) ? op.security : input.globalSecurity;
  const scopes: Record<string, string[]> = {};
  for (const requirement of requirements) {
    if (!isObject(requirement)) continue;
    for (const [name, list] of Object.entries(requirement)) {
      if (!input.schemeNames.has(name) || !Array.isArray(list)) continue;
      for (const scope of list) {
        if (typeof scope !== "string" || scope.trim() === "") continue;
        scopes[name] ??= [];
        if (!scopes[name].includes(scope.trim())) scopes[name].push(scope.trim());
      }
    }
  }
  return scopes;
}

/** An OAuth flow object's URLs and scope names (`flows.authorizationCode`, `flows.clientCredentials`). */
function oauthFlow(raw: unknown): OAuthFlowInfo | undefined {
  if (!isObject(raw)) return undefined;
  return {
    authorizationUrl: str(raw.authorizationUrl),
    tokenUrl: str(raw.tokenUrl),
    refreshUrl: str(raw.refreshUrl),
    scopes: isObject(raw.scopes) ? Object.keys(raw.scopes) : [],
  };
}

function flattenSecuritySchemes(api: Record<string, unknown>, warnings: string[]): SecuritySchemeInfo[] {
  const components = isObject(api.components) ? api.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const out: SecuritySchemeInfo[] = [];
  for (const [name, entry] of Object.entries(schemes)) {
    const raw = resolveObject(api, entry);
    if (!isObject(raw)) continue;
    const type = str(raw.type);
    const scheme: SecuritySchemeInfo = { name, type, description: str(raw.description) };
    if (type === "apiKey") {
      scheme.location = str(raw.in) as ParameterLocation;
      scheme.parameterName = str(raw.name);
    } else if (type === "http") {
      scheme.scheme = str(raw.scheme).toLowerCase();
      if (raw.bearerFormat) scheme.bearerFormat = str(raw.bearerFormat);
      if (scheme.scheme !== "bearer" && scheme.scheme !== "basic") {
        warnings.push(
          `security scheme ${name}: HTTP scheme ${scheme.scheme} is not supported; connect a bearer or basic credential`,
        );
      }
    } else if (type === "oauth2") {
      const flows = isObject(raw.flows) ? raw.flows : {};
      const authorizationCode = oauthFlow(flows.authorizationCode);
      const clientCredentials = oauthFlow(flows.clientCredentials);
      scheme.oauthFlows = {
        ...(authorizationCode ? { authorizationCode } : {}),
        ...(clientCredentials ? { clientCredentials } : {}),
      };
      if (!authorizationCode && !clientCredentials) {
        warnings.push(
          `security scheme ${name} (oauth2): only the authorizationCode and clientCredentials flows are run; register an OAuth client with its URLs, or connect an access token as a bearer credential`,
        );
      }
    } else if (type === "openIdConnect") {
      warnings.push(
        `security scheme ${name} (openIdConnect): discovery is not read; register an OAuth client with the provider's authorization and token URLs, or connect an access token as a bearer credential`,
      );
    } else {
      warnings.push(`security scheme ${name}: type ${type} is not supported`);
    }
    out.push(scheme);
  }
  return out;
}

/** The first server's URL with its variables at their defaults, made absolute against the document URL. */
function serverBaseUrl(api: Record<string, unknown>, documentUrl: string | undefined, warnings: string[]): string | null {
  const servers = Array.isArray(api.servers) ? api.servers : [];
  const first = servers.find(isObject);
  if (!first || typeof first.url !== "string") {
    if (documentUrl) return new URL("/", documentUrl).toString().replace(/\/$/, "");
    warnings.push("the document names no server; set base_url before calling its tools");
    return null;
  }
  let url = first.url;
  const variables = isObject(first.variables) ? first.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const v = variables[name];
    return isObject(v) && v.default !== undefined ? String(v.default) : whole;
  });
  try {
    return new URL(url).toString().replace(/\/$/, "");
  } catch {
    if (documentUrl) return new URL(url, documentUrl).toString().replace(/\/$/, "");
    warnings.push(`the server URL ${url} is relative; set base_url before calling its tools`);
    return url.replace(/\/$/, "") || null;
  }
}

function str(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

function firstSentence(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line.trim());
  return (sentence?.[1] ?? line.trim()).slice(0, 200);
}
