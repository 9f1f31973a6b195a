/**
 * OpenAPI 3.0 / 3.1 import: one tool per operation. The text is parsed with `yaml` (YAML is a
 * superset of JSON, so one parser reads both, and its errors carry line and column); the document
 * is validated and its `$ref`s resolved by @apidevtools/swagger-parser, which checks it against the
 * official 3.0 and 3.1 schemas plus the rules a schema cannot state (path parameters declared,
 * operationIds unique). External `$ref`s (files, URLs) are not followed: a document someone sends us
 * must not make the catalog read its disk or its network. A document given by URL is fetched through the
 * guarded outbound client (fetchDocument), which refuses private and special-purpose addresses.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { invalidArgument } from "@toolport/kit/errors";
import { type Outbound, type OutboundResponse, ResponseTooLarge } from "@toolport/kit/outbound";
import { parseDocument } from "yaml";
import type {
  Contact,
  JsonSchema,
  ParameterLocation,
  SecuritySchemeInfo,
  ToolDraft,
  ToolParameterInfo,
} from "../domain/model.js";
import { isObject, saysMore, schemaType, withoutRefs } from "./json-schema.js";
import { addressNotAllowed } from "./refusal.js";

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

const invalidDocument = (message: string, location?: string) =>
  invalidArgument("invalid_openapi_document", location ? `invalid OpenAPI document at ${location}: ${message}` : message, {
    details: { field: "api", ...(location ? { location } : {}) },
  });

/** Parses JSON or YAML text; a syntax error names its line and column. */
export function parseDocumentText(text: string): unknown {
  if (text.trim() === "") throw invalidDocument("the OpenAPI document is empty");
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

/** Largest OpenAPI document fetched by URL (bigger public specs run to a few MiB). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
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

/** Validates and dereferences; every problem becomes a 400 naming where in the document it is. */
export async function validateDocument(raw: unknown): Promise<Record<string, unknown>> {
  if (!isObject(raw)) throw invalidDocument("the document must be a JSON or YAML object", "#/");
  if (typeof raw.swagger === "string")
    throw invalidDocument(`Swagger ${raw.swagger} is not supported; convert it to OpenAPI 3`, "#/swagger");
  if (typeof raw.openapi !== "string" || !/^3\.[01]\.\d+/.test(raw.openapi)) {
    throw invalidDocument("field `openapi` must be a 3.0.x or 3.1.x version string", "#/openapi");
  }
  const external = findExternalRef(raw, "#");
  if (external) {
    throw invalidDocument(`external $ref "${external.ref}" is not followed; bundle the document into one file`, external.at);
  }
  checkOperations(raw);
  try {
    const api = await SwaggerParser.validate(structuredClone(raw) as never, {
      resolve: { external: false },
      dereference: { circular: "ignore" },
      validate: { schema: true, spec: true },
    });
    return api as unknown as Record<string, unknown>;
  } catch (err) {
    throw describeValidationError(err);
  }
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
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
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
        if (!templated.includes(name))
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

function describeValidationError(err: unknown) {
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
    return invalidDocument(`${first.message ?? "is invalid"}${extra}`, `#${first.instancePath || "/"}`);
  }
  const message = String(e.message ?? err);
  // $ref failures name the pointer; spec-rule failures name the operation path.
  const ref = /\$ref pointer "([^"]+)"/.exec(message);
  if (ref) return invalidDocument(`cannot resolve $ref "${ref[1]}"`, ref[1]?.startsWith("#") ? ref[1] : undefined);
  const at = /Validation failed\. (\/\S+)/.exec(message);
  return invalidDocument(message.replace(/^Validation failed\.\s*/, ""), at ? `#/paths${at[1]}` : undefined);
}

/** Turns a validated, dereferenced document into the service facts and one tool draft per operation. */
export function importOpenApi(
  api: Record<string, unknown>,
  options: { documentUrl?: string; baseUrl?: string } = {},
): ImportedApi {
  const warnings: string[] = [];
  const info = (isObject(api.info) ? api.info : {}) as Record<string, unknown>;
  const description = str(info.description);
  const contact = isObject(info.contact) ? info.contact : {};
  const externalDocs = isObject(api.externalDocs) ? api.externalDocs : {};
  const securitySchemes = flattenSecuritySchemes(api, warnings);
  const schemeNames = new Set(securitySchemes.map((s) => s.name));
  const globalSecurity = Array.isArray(api.security) ? api.security : [];

  const tools: (ToolDraft & { deprecated: boolean })[] = [];
  const paths = isObject(api.paths) ? api.paths : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    if (!isObject(rawItem)) continue;
    const shared = Array.isArray(rawItem.parameters) ? rawItem.parameters : [];
    for (const method of METHODS) {
      const op = rawItem[method];
      if (!isObject(op)) continue;
      tools.push(
        toolFromOperation({ path, method, op, shared, globalSecurity, schemeNames, version: str(info.version), warnings }),
      );
    }
  }
  if (tools.length === 0) warnings.push("the document has no operations under `paths`; no tools were imported");

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
  path: string;
  method: (typeof METHODS)[number];
  op: Record<string, unknown>;
  shared: unknown[];
  globalSecurity: unknown[];
  schemeNames: Set<string>;
  version: string;
  warnings: string[];
}

function toolFromOperation(input: OperationInput): ToolDraft & { deprecated: boolean } {
  const { path, method, op } = input;
  const parameters: Record<string, ToolParameterInfo> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];

  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, Record<string, unknown>>();
  for (const p of [...input.shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    if (isObject(p) && typeof p.name === "string" && typeof p.in === "string") byKey.set(`${p.in}:${p.name}`, p);
  }
  for (const p of byKey.values()) {
    const location = p.in as ParameterLocation;
    const schema = parameterSchema(p);
    const key = parameters[p.name as string] ? `${location}_${p.name}` : (p.name as string);
    const isRequired = p.required === true || location === "path";
    parameters[key] = parameterInfo(p.name as string, location, schema, str(p.description), isRequired);
    properties[key] = describedSchema(schema, str(p.description));
    if (isRequired) required.push(key);
  }

  let requestBodySchema: JsonSchema | null = null;
  let requestBodyContentType = "";
  if (isObject(op.requestBody) && isObject(op.requestBody.content)) {
    const [contentType, media] = pickMedia(op.requestBody.content);
    if (contentType) {
      requestBodyContentType = contentType;
      const schema = (isObject(media?.schema) ? withoutRefs(media.schema) : {}) as JsonSchema;
      requestBodySchema = schema;
      const bodyRequired = op.requestBody.required === true;
      const props = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : null;
      if (props && schemaType(schema) === "object") {
        const inner = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
        for (const [name, propSchema] of Object.entries(props)) {
          // readOnly properties appear only in responses; the caller never sends them.
          if (propSchema.readOnly === true) continue;
          const key = parameters[name] ? `body_${name}` : name;
          const isRequired = bodyRequired && inner.has(name);
          parameters[key] = parameterInfo(name, "body", propSchema, str(propSchema.description), isRequired);
          properties[key] = propSchema;
          if (isRequired) required.push(key);
        }
      } else {
        const key = parameters.body ? "request_body" : "body";
        parameters[key] = parameterInfo(
          "body",
          "body",
          schema,
          str(op.requestBody.description) || str(schema.description),
          bodyRequired,
        );
        properties[key] = describedSchema(schema, str(op.requestBody.description));
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
    path,
    parameters,
    inputSchema: { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
    requestBodySchema,
    requestBodyContentType,
    output: declaredOutput(op),
    tips: typeof op["x-tips"] === "string" ? op["x-tips"] : null,
    version: input.version,
    sideEffecting: op["x-side-effecting"] === true,
    security: operationSecurity(op, input),
    mcpToolName: "",
    internalHandler: "",
    deprecated: op.deprecated === true,
  };
}

function parameterSchema(p: Record<string, unknown>): JsonSchema {
  if (isObject(p.schema)) return withoutRefs(p.schema) as JsonSchema;
  if (isObject(p.content)) {
    const [, media] = pickMedia(p.content);
    if (isObject(media?.schema)) return withoutRefs(media.schema) as JsonSchema;
  }
  return { type: "string" };
}

function parameterInfo(
  name: string,
  location: ParameterLocation,
  schema: JsonSchema,
  description: string,
  required: boolean,
): ToolParameterInfo {
  const info: ToolParameterInfo = {
    name,
    location,
    description: description || str(schema.description),
    type: schemaType(schema),
    required,
  };
  if (schema.default !== undefined) info.default = schema.default;
  if (Array.isArray(schema.enum)) info.enum = schema.enum;
  if (typeof schema.minimum === "number") info.minimum = schema.minimum;
  if (typeof schema.maximum === "number") info.maximum = schema.maximum;
  if (location === "path" && typeof schema["x-encode-slashes"] === "boolean") info.encodeSlashes = schema["x-encode-slashes"];
  if (saysMore(schema)) info.jsonSchema = schema;
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

/** The JSON Schema of the first success response (200, 201, other 2xx, 2XX, default). */
function declaredOutput(op: Record<string, unknown>): JsonSchema | null {
  if (!isObject(op.responses)) return null;
  const codes = Object.keys(op.responses);
  const order = [
    ...codes.filter((c) => c === "200"),
    ...codes.filter((c) => c === "201"),
    ...codes.filter((c) => /^2\d\d$/.test(c) && c !== "200" && c !== "201").sort(),
    ...codes.filter((c) => c.toUpperCase() === "2XX"),
    ...codes.filter((c) => c === "default"),
  ];
  for (const code of order) {
    const response = op.responses[code];
    if (!isObject(response) || !isObject(response.content)) continue;
    const [, media] = pickMedia(response.content);
    if (isObject(media?.schema)) {
      const schema = withoutRefs(media.schema) as JsonSchema;
      const description = str(response.description);
      return description && !schema.description ? { ...schema, description } : schema;
    }
  }
  return null;
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

function flattenSecuritySchemes(api: Record<string, unknown>, warnings: string[]): SecuritySchemeInfo[] {
  const components = isObject(api.components) ? api.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const out: SecuritySchemeInfo[] = [];
  for (const [name, raw] of Object.entries(schemes)) {
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
    } else if (type === "oauth2" || type === "openIdConnect") {
      warnings.push(
        `security scheme ${name} (${type}): the catalog does not run the OAuth flow; connect an access token as a bearer credential`,
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
