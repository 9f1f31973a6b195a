/**
 * The machine-readable description of /v1: an OpenAPI 3.1 document, version 1.0.0, built from the
 * operations the routes registered with (describe.ts) and the spec's shapes (schemas.ts), served at
 * `GET /v1/openapi.json` and `.yaml`.
 *
 * Each operation gets, besides what it declares:
 * - its path parameters (from the path), the `svc-org-id` header when its auth reads it, and its security
 *   from its auth mode: `svc-api-key`, a bearer JWT, either, or public (optional credentials list the
 *   empty requirement too);
 * - the errors every route of its kind can answer: 400 (its input, or a URL the gateway refuses), 401
 *   and 403 with credentials, 404 with a path parameter or the `svc-org-id` header, 413 and 415 on a
 *   write (a body too large, or not JSON), 429 behind a rate limit, and 500, 503, 504 for every route (a
 *   service failed, is down, or ran out of time).
 * Every error body is the dual shape (DESIGN.md "Errors"): `{detail, error: {code, message, details}}`;
 * `detail` is the usage object on a tool call's 429.
 */
import { componentSchemas } from "./components.js";
import type { DescribedOperation, DescribedRouter, OperationDoc, ParameterDoc, ResponseDoc } from "./describe.js";
import { closed, integer, ref, type Schema, string } from "./schemas.js";

export const API_VERSION = "1.0.0";

/** The reference's sections, in order. */
export const TAGS: Array<{ name: string; description: string }> = [
  { name: "Agents", description: "Registration, API keys, accounts, organizations and usage." },
  { name: "Tools", description: "Searching and reading the catalog's tools." },
  { name: "Services", description: "Publishing and reading services (OpenAPI imports, MCP servers)." },
  { name: "Execution", description: "Calling tools singly or in batches, consent, and stored results by handle." },
  { name: "Billing", description: "Wallets, balances, funding and spending limits." },
  { name: "Skills", description: "Agent skills." },
  { name: "Workflows", description: "Saved multi-step workflows and their runs." },
  { name: "Sites", description: "Site records." },
  { name: "Webhooks", description: "Signed event deliveries to your endpoints." },
  { name: "System", description: "Health and this description." },
];

/** The error shapes (SERVICE-SPEC "Errors"); the gateway sends the two plain ones together. */
const errorSchemas: Record<string, Schema> = {
  ErrorDetail: {
    description: "The plain error shape of the machine-readable description: `{detail: string}`.",
    ...closed({ detail: string }),
  },
  ErrorCode: {
    description: "The catalog's error shape: `{error: {code, message, details}}`.",
    ...closed({ error: closed({ code: string, message: string, details: { type: "object" } }) }),
  },
  UsageDetail: {
    description: "`detail` of a 429 on a tool call (usage or rate limit).",
    type: "object",
    required: ["message", "usage", "upgrade_url"],
    properties: { message: string, usage: { type: "object" }, upgrade_url: string },
  },
  Error: {
    description:
      "Every error: both plain shapes in one body, so a client of either parses it. `detail` repeats `error.message`, " +
      "except on a tool call's 429, where it is the usage object.",
    ...closed({
      detail: { anyOf: [string, ref("UsageDetail")] },
      error: closed({ code: string, message: string, details: { type: "object" } }),
    }),
  },
};

const retryAfter = { description: "Seconds to wait before trying again.", schema: integer };
const errorResponse = (description: string, headers?: ResponseDoc["headers"]): ResponseDoc => ({
  description,
  schema: ref("Error"),
  ...(headers ? { headers } : {}),
});

/** The errors any route of a kind may answer, by status. */
const commonErrors = {
  400: errorResponse("The request is not valid: a parameter or the body (the error names the field)."),
  401: errorResponse("Missing or invalid credentials."),
  403: errorResponse("The credentials do not allow this."),
  404: errorResponse("Not found, or not visible to the caller."),
  413: errorResponse("The body is larger than the limit."),
  415: errorResponse("The body is not JSON (send Content-Type: application/json)."),
  429: errorResponse("Rate limit exceeded.", {
    "Retry-After": retryAfter,
    "RateLimit-Limit": { description: "Requests allowed per window.", schema: integer },
    "RateLimit-Remaining": { description: "Requests left in this window.", schema: integer },
    "RateLimit-Reset": { description: "Seconds until the window resets.", schema: integer },
  }),
  500: errorResponse("An unexpected failure (it is logged with the request id)."),
  503: errorResponse("A service behind the gateway is unavailable; retry.", { "Retry-After": retryAfter }),
  504: errorResponse("A service behind the gateway did not answer in time."),
} satisfies Record<number, ResponseDoc>;

const responseNames: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  429: "RateLimited",
  500: "InternalError",
  503: "Unavailable",
  504: "Timeout",
};

/** Koa's `/v1/tools/:tool_id` as OpenAPI's `/v1/tools/{tool_id}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

function renderResponse(r: ResponseDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description };
  if (r.headers) {
    out.headers = Object.fromEntries(
      Object.entries(r.headers).map(([name, h]) => [name, { description: h.description, schema: h.schema }]),
    );
  }
  if (r.schema !== undefined) {
    const media: Record<string, unknown> = { schema: r.schema };
    if (r.example !== undefined) media.example = r.example;
    out.content = { [r.contentType ?? "application/json"]: media };
  }
  return out;
}

function parameter(name: string, where: "path" | "query" | "header", p: ParameterDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { name, in: where, required: where === "path" ? true : p.required === true };
  if (p.description) out.description = p.description;
  out.schema = p.schema;
  if (p.example !== undefined) out.example = p.example;
  return out;
}

const security: Record<string, Array<Record<string, string[]>>> = {
  none: [],
  optional: [{}, { ApiKey: [] }, { BearerJwt: [] }],
  api_key: [{ ApiKey: [] }],
  jwt: [{ BearerJwt: [] }],
  api_key_or_jwt: [{ ApiKey: [] }, { BearerJwt: [] }],
};

/** The statuses an operation answers: its own and the common ones of its kind. */
export function statusesOf(op: DescribedOperation): Record<number, ResponseDoc | { $ref: string }> {
  const { doc } = op;
  const mode = op.auth?.mode ?? "none";
  // 400 for any route: besides its own input, a NUL or a malformed escape in the URL is refused.
  const common: number[] = [400, 500, 503, 504];
  if (mode !== "none") common.push(401, 403);
  // A path parameter names something that may not exist; so does svc-org-id (an unknown organization, or
  // one the caller is not a member of, is a 404).
  if (doc.path || (mode !== "none" && op.auth?.orgHeader)) common.push(404);
  // A body is read on every write, declared or not: too large, or not JSON.
  if (doc.body || op.method !== "get") common.push(413, 415);
  if (op.rateLimitBucket) common.push(429);
  const out: Record<number, ResponseDoc | { $ref: string }> = {};
  for (const status of common) out[status] = { $ref: `#/components/responses/${responseNames[status]}` };
  for (const [status, r] of Object.entries(doc.responses)) out[Number(status)] = r;
  return out;
}

function operationObject(op: DescribedOperation): Record<string, unknown> {
  const doc: OperationDoc = op.doc;
  const parameters = [
    ...Object.entries(doc.path ?? {}).map(([n, p]) => parameter(n, "path", p)),
    ...Object.entries(doc.query ?? {}).map(([n, p]) => parameter(n, "query", p)),
    ...Object.entries(doc.headers ?? {}).map(([n, p]) => parameter(n, "header", p)),
  ];
  if (op.auth && op.auth.mode !== "none" && op.auth.orgHeader) parameters.push({ $ref: "#/components/parameters/OrgId" });
  const out: Record<string, unknown> = {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: doc.tags,
    ...(parameters.length > 0 ? { parameters } : {}),
  };
  if (doc.body) {
    const media: Record<string, unknown> = { schema: doc.body.schema };
    if (doc.body.example !== undefined) media.example = doc.body.example;
    out.requestBody = {
      required: doc.body.required ?? true,
      ...(doc.body.description ? { description: doc.body.description } : {}),
      content: { [doc.body.contentType ?? "application/json"]: media },
    };
  }
  const responses = statusesOf(op);
  out.responses = Object.fromEntries(
    Object.entries(responses)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, r]) => [status, "$ref" in r ? r : renderResponse(r as ResponseDoc)]),
  );
  out.security = security[op.auth?.mode ?? "none"];
  if (doc.deprecated) out.deprecated = true;
  return out;
}

export interface DocumentOptions {
  /** Where clients reach the gateway (PUBLIC_URL); the paths carry /v1. */
  serverUrl: string;
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

export function buildDocument(operations: DescribedOperation[], options: DocumentOptions): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    paths[path] ??= {};
    paths[path][op.method] = operationObject(op);
  }
  const used = new Set(operations.flatMap((o) => o.doc.tags));
  return {
    openapi: "3.1.0",
    info: {
      title: "Toolport API",
      version: API_VERSION,
      summary: "Catalog and execution gateway for callable tools, for AI assistants and autonomous agents.",
      description:
        "Register an agent (`POST /v1/agents`) to get an API key and a wallet, search the catalog, call tools singly or " +
        "in batches, read stored results back by handle, and pay for priced tools within spending limits. Send the API " +
        "key as `svc-api-key`; people signed in send a bearer JWT. `svc-org-id` selects the organization to act in.",
    },
    servers: [{ url: options.serverUrl }],
    tags: TAGS.filter((t) => used.has(t.name)),
    paths,
    components: {
      schemas: { ...errorSchemas, ...componentSchemas },
      responses: Object.fromEntries(
        Object.entries(commonErrors).map(([status, r]) => [responseNames[Number(status)], renderResponse(r)]),
      ),
      parameters: {
        OrgId: {
          name: "svc-org-id",
          in: "header",
          required: false,
          description: "The organization to act in (the caller must belong to it); default: the caller's own.",
          schema: { type: "string", format: "uuid" },
        },
      },
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "svc-api-key", description: "An agent's API key." },
        BearerJwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A person's session token (Authorization: Bearer <token>).",
        },
      },
    },
  };
}

const built = new WeakMap<DescribedRouter, OpenApiDocument>();

/**
 * The document of a router's operations, built once, on first use: every route is registered before the
 * gateway listens, so the first request sees them all.
 */
export function describedDocument(api: DescribedRouter, serverUrl: string): OpenApiDocument {
  let doc = built.get(api);
  if (!doc) {
    doc = buildDocument(api.operations, { serverUrl: serverUrl.replace(/\/+$/, "") });
    built.set(api, doc);
  }
  return doc;
}
