/**
 * Every reply the end-to-end harness receives from /v1, checked against the gateway's own description
 * (GET /v1/openapi.json, fetched once per gateway): the route must be described, the status must be one
 * its operation lists, and a JSON body must match that status's schema. A route that answers something
 * the description does not say fails the test that received it (gatewayClient in http.ts throws
 * DescriptionMismatchError). A path no route matches must answer the described error shape (404, 405).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { addDescriptionFormats } from "../../gateway/src/openapi/formats.js";

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, Json>;
}
interface Described {
  doc: Json & { paths: Record<string, Record<string, Operation>> };
  routes: Array<{ template: string; regex: RegExp; methods: Record<string, Operation> }>;
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
}

const descriptions = new Map<string, Promise<Described>>();

async function load(baseUrl: string): Promise<Described> {
  const res = await fetch(`${baseUrl}/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/v1/openapi.json answered ${res.status}`);
  const doc = (await res.json()) as Described["doc"];
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document's other keywords are not schema keywords.
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
  addDescriptionFormats(ajv);
  ajv.addSchema(doc as object, "openapi");
  const routes = Object.entries(doc.paths).map(([template, methods]) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
    methods,
  }));
  return { doc, routes, ajv, compiled: new Map() };
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

export interface DescribedReply {
  baseUrl: string;
  method: string;
  /** The path under /v1, with its query string. */
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

export class DescriptionMismatchError extends Error {
  constructor(reply: DescribedReply, problem: string) {
    super(
      `${reply.method.toUpperCase()} /v1${reply.path} -> ${reply.status}: ${problem} (the description, GET /v1/openapi.json)`,
    );
    this.name = "DescriptionMismatchError";
  }
}

/** The operation a request reaches: literal segments win over parameters, as the gateway's router orders them. */
function operationFor(d: Described, method: string, path: string) {
  const bare = `/v1${path.split(/[?#]/)[0]!}`.replace(/(.)\/+$/, "$1");
  const verb = method.toLowerCase();
  const candidates = d.routes.filter((r) => r.regex.test(bare));
  const literal = (t: string) => t.split("/").filter((s) => !s.startsWith("{")).length;
  candidates.sort((a, b) => literal(b.template) - literal(a.template));
  const route = candidates.find((r) => r.methods[verb]);
  return { route, operation: route?.methods[verb], pathMatched: candidates.length > 0 };
}

/** Throws DescriptionMismatchError when the reply is not one the description allows. */
export async function checkDescribed(reply: DescribedReply): Promise<void> {
  let pending = descriptions.get(reply.baseUrl);
  if (!pending) {
    pending = load(reply.baseUrl);
    descriptions.set(reply.baseUrl, pending);
    pending.catch(() => descriptions.delete(reply.baseUrl));
  }
  const d = await pending;
  const { route, operation, pathMatched } = operationFor(d, reply.method, reply.path);
  let pointer: string;
  // The edge refuses U+0000 in the path or the query before any route is chosen (README "Input limits":
  // 400 invalid_character), so a path with NUL gets that 400 whether or not a route would match it.
  const code = (reply.body as { error?: { code?: unknown } } | null)?.error?.code;
  if (!operation && reply.status === 400 && code === "invalid_character" && /%00/i.test(reply.path)) return;
  // The HTTP server refuses a request line and headers past its limit (400 headers_too_large) before any
  // route is chosen, so an unrouted request that long gets that 400 too (still in the error shape, below).
  const tooLarge = reply.status === 400 && code === "headers_too_large";
  if (!operation) {
    // No route: the gateway's 404 (unknown path) or 405 (known path, other method), in the error shape.
    const expected = pathMatched ? 405 : 404;
    if (reply.status !== expected && !tooLarge) {
      throw new DescriptionMismatchError(reply, `no described route, so ${expected} was expected`);
    }
    pointer = "#/components/schemas/Error";
  } else {
    const response = operation.responses[String(reply.status)];
    if (!response) {
      throw new DescriptionMismatchError(
        reply,
        `status ${reply.status} is not described for ${reply.method.toUpperCase()} ${route!.template} ` +
          `(described: ${Object.keys(operation.responses).join(", ")})`,
      );
    }
    const resolved = (response.$ref ? resolveRef(d.doc, response.$ref as string) : response) as Json;
    const content = resolved.content as Record<string, { schema?: unknown }> | undefined;
    if (!content) {
      if (reply.body !== null && reply.body !== "") throw new DescriptionMismatchError(reply, "a body where none is described");
      return;
    }
    const type = (reply.contentType ?? "").split(";")[0]!.trim();
    const media = Object.keys(content);
    if (!media.includes(type)) {
      throw new DescriptionMismatchError(reply, `content type ${type || "(none)"}, described: ${media.join(", ")}`);
    }
    if (type !== "application/json" || content[type]!.schema === undefined) return;
    const responsePointer = response.$ref
      ? (response.$ref as string)
      : `#/paths/${escapePointer(route!.template)}/${reply.method.toLowerCase()}/responses/${reply.status}`;
    pointer = `${responsePointer}/content/${escapePointer(type)}/schema`;
  }
  let validate = d.compiled.get(pointer);
  if (!validate) {
    validate = d.ajv.getSchema(`openapi${pointer}`);
    if (!validate) throw new DescriptionMismatchError(reply, `the schema at ${pointer} does not compile`);
    d.compiled.set(pointer, validate);
  }
  if (!validate(reply.body)) {
    const errors = (validate.errors ?? [])
      .slice(0, 12)
      .map((e) => `  ${e.instancePath || "(body)"}: ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
    throw new DescriptionMismatchError(reply, `body does not match the described schema:\n${errors.join("\n")}`);
  }
}

function resolveRef(doc: Json, ref: string): unknown {
  let value: unknown = doc;
  for (const key of ref.replace(/^#\//, "").split("/")) {
    value = (value as Json)[key.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return value;
}
