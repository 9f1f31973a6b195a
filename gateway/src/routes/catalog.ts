/**
 * /v1 routes served by the catalog service. Each renders the spec's JSON itself (catalog-json.ts):
 * bare arrays where the spec says "array of Tool", snake_case names, enums as words, nulls. Query
 * values are checked here so bad input is a 400 naming the parameter before any service is called.
 * Auth per the spec's endpoint auth table; publishing routes (ours) take an API key or a JWT.
 */

import type { JsonObject, JsonValue, MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { RouterContext } from "@koa/router";
import { fromJsonBytes, optionalJsonBytes } from "@toolport/kit/json-bytes";
import type {
  CredentialMaterialSchema,
  McpServerSourceSchema,
  OpenApiSourceSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { ParameterLocation } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import type { CreateServiceRequestSchema } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { AppDeps } from "../deps.js";
import { HttpError } from "../http/errors.js";
import { objectBody } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import { accountOf, clientIp, rateLimit } from "../middleware/rate-limit.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { catalogOps as ops } from "../openapi/operations/catalog.js";
import {
  credentialJson,
  gapJson,
  publicToolJson,
  publishingJson,
  readinessJson,
  recommendationJson,
  schemeJson,
  serviceJson,
  serviceSummaryJson,
  toolJson,
} from "./catalog-json.js";

type Ctx = RouterContext;

const bad = (field: string, message: string, code = "invalid_request") => new HttpError(400, code, message, { field });

// ---- query parameters -------------------------------------------------------------------------

function queryValue(ctx: Ctx, name: string): string | undefined {
  const raw = ctx.query[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

function queryList(ctx: Ctx, name: string): string[] {
  const raw = ctx.query[name] ?? ctx.query[`${name}[]`];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A non-negative integer; anything else (words, negatives, fractions) is a 400 naming it. */
function queryLimit(ctx: Ctx, name = "limit"): number | undefined {
  const raw = queryValue(ctx, name);
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^\d+$/.test(raw.trim())) throw bad(name, `${name} must be a non-negative integer`, "invalid_limit");
  return Math.min(Number(raw.trim()), 1_000_000);
}

/**
 * A list route's page (`limit`, `cursor`) and, after it, the `Link: <...>; rel="next"` header (RFC 8288)
 * that carries the next page's address with the same page size: absent on the last page.
 */
function pageQuery(ctx: Ctx): { limit?: number; cursor?: string } {
  return { limit: queryLimit(ctx), cursor: queryValue(ctx, "cursor") || undefined };
}

function linkNext(ctx: Ctx, publicUrl: string, nextCursor: string | undefined): void {
  if (!nextCursor) return;
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(ctx.query)) {
    if (name === "cursor" || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) next.append(name, v);
  }
  next.set("cursor", nextCursor);
  ctx.set("Link", `<${publicUrl.replace(/\/$/, "")}${ctx.path}?${next.toString()}>; rel="next"`);
}

function queryBool(ctx: Ctx, name: string): boolean {
  const raw = queryValue(ctx, name);
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw bad(name, `${name} must be true or false`);
}

function queryRate(ctx: Ctx, name: string): number | undefined {
  const raw = queryValue(ctx, name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw bad(name, `${name} must be a number from 0 to 1`, "invalid_min_success_rate");
  }
  return value;
}

// ---- JSON bodies ------------------------------------------------------------------------------

function str(o: Record<string, unknown>, field: string, prefix = ""): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw bad(`${prefix}${field}`, `${prefix}${field} must be a string`);
  return v;
}

function bool(o: Record<string, unknown>, field: string): boolean | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw bad(field, `${field} must be true or false`);
  return v;
}

function cents(o: Record<string, unknown>, field: string): bigint | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    throw bad(field, `${field} must be a whole number of cents, 0 or more`);
  return BigInt(v);
}

function obj(o: Record<string, unknown>, field: string): Record<string, unknown> | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) throw bad(field, `${field} must be an object`);
  return v as Record<string, unknown>;
}

/** The service fields that publishing and editing a service both take. */
function serviceFields(body: Record<string, unknown>) {
  return {
    name: str(body, "name"),
    slug: str(body, "slug"),
    summary: str(body, "summary"),
    description: str(body, "description"),
    category: str(body, "category"),
    logo: str(body, "logo"),
    contact: contact(body),
    documentationUrl: str(body, "documentation_url"),
    version: str(body, "version"),
    visibility: str(body, "visibility"),
  };
}

function contact(o: Record<string, unknown>) {
  const c = obj(o, "contact");
  return c
    ? { name: str(c, "name", "contact.") ?? "", url: str(c, "url", "contact.") ?? "", email: str(c, "email", "contact.") ?? "" }
    : undefined;
}

/**
 * `api`: {document_text | document | document_url, base_url}; `document` may be the OpenAPI object
 * itself, and `api` may be the document directly (it has an `openapi` key).
 */
function openApiSource(value: unknown): MessageInitShape<typeof OpenApiSourceSchema> {
  if (typeof value === "string") return { document: { case: "documentText", value } };
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad("api", "api must be an object");
  const api = value as Record<string, unknown>;
  if ("openapi" in api || "swagger" in api) return { document: { case: "documentText", value: JSON.stringify(api) } };
  const baseUrl = str(api, "base_url", "api.");
  const url = str(api, "document_url", "api.");
  const doc = api.document_text ?? api.document;
  if (doc !== undefined && doc !== null) {
    const text = typeof doc === "string" ? doc : JSON.stringify(doc);
    return { document: { case: "documentText", value: text }, baseUrl };
  }
  if (url !== undefined) return { document: { case: "documentUrl", value: url }, baseUrl };
  throw bad(
    "api",
    "api needs document (the OpenAPI document, JSON object or JSON/YAML text) or document_url",
    "missing_document",
  );
}

function credentialMaterial(body: Record<string, unknown>): MessageInitShape<typeof CredentialMaterialSchema> | undefined {
  const c = obj(body, "credential") ?? body;
  const apiKey = c.api_key;
  if (typeof apiKey === "string") return { kind: { case: "apiKey", value: { value: apiKey } } };
  if (apiKey && typeof apiKey === "object") {
    const k = apiKey as Record<string, unknown>;
    return {
      kind: {
        case: "apiKey",
        value: {
          value: str(k, "value", "credential.api_key.") ?? "",
          parameterName: str(k, "parameter_name", "credential.api_key."),
          location: str(k, "location", "credential.api_key."),
        },
      },
    };
  }
  const bearer = c.bearer ?? c.bearer_token ?? c.token;
  if (typeof bearer === "string") return { kind: { case: "bearer", value: { token: bearer } } };
  if (bearer && typeof bearer === "object")
    return {
      kind: { case: "bearer", value: { token: str(bearer as Record<string, unknown>, "token", "credential.bearer.") ?? "" } },
    };
  const basic = c.basic;
  if (basic && typeof basic === "object") {
    const b = basic as Record<string, unknown>;
    return {
      kind: {
        case: "basic",
        value: {
          username: str(b, "username", "credential.basic.") ?? "",
          password: str(b, "password", "credential.basic.") ?? "",
        },
      },
    };
  }
  return undefined;
}

const schemeLocations: Record<string, ParameterLocation> = {
  header: ParameterLocation.HEADER,
  query: ParameterLocation.QUERY,
  cookie: ParameterLocation.COOKIE,
};

/**
 * `mcp_server`: {url, security_scheme, credential}. security_scheme is an OpenAPI Security Scheme
 * Object ({type: "http", scheme: "bearer"} or {type: "apiKey", in: "header", name}); credential has the
 * shape of PUT /services/{id}/credentials' and is used only to list the tools. The catalog validates both.
 */
function mcpServerSource(mcp: Record<string, unknown>): MessageInitShape<typeof McpServerSourceSchema> {
  const scheme = obj(mcp, "security_scheme");
  const prefix = "mcp_server.security_scheme.";
  const where = scheme ? str(scheme, "in", prefix) : undefined;
  if (where !== undefined && !Object.hasOwn(schemeLocations, where)) throw bad(`${prefix}in`, `${prefix}in must be header`);
  return {
    url: str(mcp, "url", "mcp_server.") ?? "",
    securityScheme: scheme && {
      type: str(scheme, "type", prefix) ?? "",
      scheme: str(scheme, "scheme", prefix),
      location: where === undefined ? ParameterLocation.UNSPECIFIED : schemeLocations[where],
      parameterName: str(scheme, "name", prefix),
      description: str(scheme, "description", prefix) ?? "",
    },
    credential: mcp.credential === undefined || mcp.credential === null ? undefined : credentialMaterial(mcp),
  };
}

/** The tools' source of a publish or its preview: `api` when given, else `mcp_server` (a URL or an object). */
function publishSource(body: Record<string, unknown>): MessageInitShape<typeof CreateServiceRequestSchema>["source"] {
  const mcp = body.mcp_server;
  if (body.api !== undefined && body.api !== null) return { case: "api", value: openApiSource(body.api) };
  if (typeof mcp === "string") return { case: "mcpServer", value: { url: mcp } };
  if (mcp && typeof mcp === "object") return { case: "mcpServer", value: mcpServerSource(mcp as Record<string, unknown>) };
  return undefined;
}

// ---- routes -----------------------------------------------------------------------------------

export function catalogRoutes(api: DescribedRouter, deps: AppDeps): void {
  const catalog = deps.clients.catalog;
  const identity = deps.clients.identity;
  const none = auth(identity, "none");
  const optional = auth(identity, "optional");
  const apiKey = auth(identity, "api_key");
  const publisher = auth(identity, "api_key_or_jwt");
  // Spec: 30 public searches per minute per client IP; identity holds the number (PUBLIC_SEARCHES_PER_MINUTE)
  // and counts for every gateway replica.
  const publicSearchLimit = rateLimit(identity, { bucket: "public_search", key: clientIp });
  // Authenticated search is counted per account instead (SEARCHES_PER_MINUTE, default 120): people behind
  // one address (an office) do not share a limit, and every key of one account does. After `apiKey`,
  // which sets the principal.
  const searchLimit = rateLimit(identity, { bucket: "search", key: accountOf });
  const toolsOut = (tools: Parameters<typeof toolJson>[0][]) => tools.map(toolJson) as JsonValue;
  // Importing a large document (Microsoft Graph: 20 MB, about a minute) takes longer than a call.
  const publishing = { timeoutMs: deps.config.PUBLISH_TIMEOUT_MS };

  // Catalog (spec items 1-10, 12).
  api.get("/tools", ops.listTools, apiKey, async (ctx) => {
    const page = await catalog.listTools({ ...pageQuery(ctx), serviceId: queryValue(ctx, "service_id") || undefined });
    linkNext(ctx, deps.config.PUBLIC_URL, page.nextCursor);
    ctx.body = toolsOut(page.tools);
  });
  api.get("/tools/search", ops.searchTools, apiKey, searchLimit, async (ctx) => {
    const { tools } = await catalog.searchTools({
      query: queryValue(ctx, "query") ?? queryValue(ctx, "q"),
      serviceId: queryValue(ctx, "service_id") || undefined,
      tags: queryList(ctx, "tags"),
      readyOnly: queryBool(ctx, "ready_only"),
      limit: queryLimit(ctx),
    });
    ctx.body = toolsOut(tools);
  });
  api.get("/tools/public/search", ops.publicSearchTools, publicSearchLimit, optional, async (ctx) => {
    const { tools } = await catalog.publicSearchTools({
      query: queryValue(ctx, "query") ?? queryValue(ctx, "q") ?? "",
      serviceId: queryValue(ctx, "service_id") || undefined,
      limit: queryLimit(ctx),
      readyOnly: queryBool(ctx, "ready_only"),
      minSuccessRate: queryRate(ctx, "min_success_rate"),
    });
    ctx.body = tools.map(publicToolJson) as JsonValue;
  });
  api.get("/tools/recommended", ops.getRecommendations, optional, async (ctx) => {
    const { recommendations } = await catalog.getRecommendations({
      toolId: queryValue(ctx, "tool_id") || undefined,
      limit: queryLimit(ctx),
    });
    ctx.body = recommendations.map(recommendationJson) as JsonValue;
  });
  api.get("/tools/name/:tool_name", ops.getToolByName, apiKey, async (ctx) => {
    const { tool } = await catalog.getToolByName({ toolName: ctx.params.tool_name as string });
    ctx.body = tool ? toolJson(tool) : null;
  });
  api.get("/tools/:tool_id/describe", ops.describeTool, apiKey, async (ctx) => {
    const d = await catalog.describeTool({ toolId: ctx.params.tool_id as string });
    const id = d.tool?.id ?? (ctx.params.tool_id as string);
    const callUrl = `${deps.config.PUBLIC_URL.replace(/\/$/, "")}/v1/tools/call/${id}`;
    ctx.body = {
      tool: d.tool ? toolJson(d.tool) : null,
      service: serviceSummaryJson(d.service),
      input_schema: fromJsonBytes(d.inputSchemaJson) ?? { type: "object", properties: {} },
      example_call: fromJsonBytes(d.exampleCallJson) ?? { tool_input: {} },
      execute: { method: "POST", url: callUrl, auth_header: "svc-api-key" },
      readiness: readinessJson(d.readiness),
      configuration_url: d.missing.find((g) => g.configurationUrl)?.configurationUrl ?? null,
      missing: d.missing.map(gapJson),
      requires_confirmation: d.requiresConfirmation,
      security_schemes: d.securitySchemes.map(schemeJson),
    } satisfies JsonObject;
  });
  api.get("/tools/:tool_id", ops.getTool, apiKey, async (ctx) => {
    const { tool } = await catalog.getTool({ toolId: ctx.params.tool_id as string });
    ctx.body = tool ? toolJson(tool) : null;
  });
  api.get("/services/public", ops.listPublicServices, none, async (ctx) => {
    const page = await catalog.listPublicServices(pageQuery(ctx));
    linkNext(ctx, deps.config.PUBLIC_URL, page.nextCursor);
    ctx.body = page.services.map(serviceJson) as JsonValue;
  });
  api.get("/services/public/:service_id", ops.getPublicService, none, async (ctx) => {
    const { service } = await catalog.getPublicService({ serviceId: ctx.params.service_id as string });
    ctx.body = service ? serviceJson(service) : null;
  });
  api.get("/services/public/:service_id/tools", ops.listPublicServiceTools, none, async (ctx) => {
    const page = await catalog.listPublicServiceTools({ serviceId: ctx.params.service_id as string, ...pageQuery(ctx) });
    linkNext(ctx, deps.config.PUBLIC_URL, page.nextCursor);
    ctx.body = toolsOut(page.tools);
  });

  // Publishing (DESIGN.md "Publishing").
  api.post("/services/preview", ops.previewService, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const res = await catalog.previewService(
      { source: publishSource(body), organizationId: str(body, "organization_id") },
      publishing,
    );
    ctx.body = {
      name: res.name,
      service_type: res.serviceType,
      description: res.description,
      version: res.version,
      base_url: res.baseUrl ?? null,
      security_schemes: res.securitySchemes,
      tools: res.tools.map((t) => ({
        name: t.name,
        description: t.description,
        method: t.method,
        path: t.path,
        parameters: t.parameters,
        deprecated: t.deprecated,
        side_effecting: t.sideEffecting,
      })),
      warnings: res.warnings,
    } satisfies JsonObject;
  });
  api.post("/services", ops.createService, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const source = publishSource(body);
    const res = await catalog.createService(
      {
        source,
        ...serviceFields(body),
        organizationId: str(body, "organization_id"),
        defaultPricePerCallCents: cents(body, "default_price_per_call_cents"),
      },
      publishing,
    );
    ctx.status = 201;
    ctx.body = {
      service: res.service ? serviceJson(res.service) : null,
      publishing: publishingJson(res.publishing),
      tools: res.tools.map(toolJson),
      warnings: res.warnings,
    };
  });
  api.get("/services", ops.listServices, publisher, async (ctx) => {
    const { services } = await catalog.listServices({ organizationId: queryValue(ctx, "organization_id") || undefined });
    ctx.body = services.map(serviceJson) as JsonValue;
  });
  api.get("/services/:service_id", ops.getService, publisher, async (ctx) => {
    const res = await catalog.getService({ serviceId: ctx.params.service_id as string });
    ctx.body = { service: res.service ? serviceJson(res.service) : null, publishing: publishingJson(res.publishing) };
  });
  api.get("/services/:service_id/tools", ops.listServiceTools, publisher, async (ctx) => {
    ctx.body = toolsOut((await catalog.listServiceTools({ serviceId: ctx.params.service_id as string })).tools);
  });
  api.patch("/services/:service_id", ops.updateService, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const res = await catalog.updateService({
      serviceId: ctx.params.service_id as string,
      ...serviceFields(body),
      status: str(body, "status"),
      verificationTier: str(body, "verification_tier"),
      baseUrl: str(body, "base_url"),
      mcpServerUrl: str(body, "mcp_server_url"),
    });
    ctx.body = { service: res.service ? serviceJson(res.service) : null, publishing: publishingJson(res.publishing) };
  });
  api.post("/services/:service_id/reimport", ops.reimportService, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const res = await catalog.reimportService(
      {
        serviceId: ctx.params.service_id as string,
        api: body.api !== undefined && body.api !== null ? openApiSource(body.api) : undefined,
      },
      publishing,
    );
    ctx.body = {
      service: res.service ? serviceJson(res.service) : null,
      tools: res.tools.map(toolJson),
      deactivated_tool_ids: res.deactivatedToolIds,
      warnings: res.warnings,
    };
  });
  api.delete("/services/:service_id", ops.deleteService, publisher, async (ctx) => {
    ctx.body = { deleted: (await catalog.deleteService({ serviceId: ctx.params.service_id as string })).deleted };
  });
  api.patch("/tools/:tool_id", ops.updateTool, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const tags = body.tags;
    if (tags !== undefined && tags !== null && (!Array.isArray(tags) || tags.some((t) => typeof t !== "string"))) {
      throw bad("tags", "tags must be an array of strings");
    }
    const sunset = str(body, "sunset_date");
    const sunsetDate = sunset === undefined ? undefined : new Date(sunset);
    if (sunsetDate && Number.isNaN(sunsetDate.getTime())) throw bad("sunset_date", "sunset_date must be an ISO 8601 timestamp");
    const { tool } = await catalog.updateTool({
      toolId: ctx.params.tool_id as string,
      name: str(body, "name"),
      slug: str(body, "slug"),
      description: str(body, "description"),
      tips: str(body, "tips"),
      tags: Array.isArray(tags) ? { values: tags as string[] } : undefined,
      outputJson: optionalJsonBytes(obj(body, "output")),
      version: str(body, "version"),
      pricePerCallCents: cents(body, "price_per_call_cents"),
      sideEffecting: bool(body, "side_effecting"),
      status: str(body, "status"),
      deprecated: bool(body, "deprecated"),
      deprecationMessage: str(body, "deprecation_message"),
      sunsetDate: sunsetDate ? timestampFromDate(sunsetDate) : undefined,
      passthroughReason: str(body, "passthrough_reason"),
    });
    ctx.body = tool ? toolJson(tool) : null;
  });
  api.delete("/tools/:tool_id", ops.deleteTool, publisher, async (ctx) => {
    ctx.body = { deleted: (await catalog.deleteTool({ toolId: ctx.params.tool_id as string })).deleted };
  });

  // Credentials.
  api.put("/services/:service_id/credentials", ops.putServiceCredential, publisher, async (ctx) => {
    const body = objectBody(ctx);
    const res = await catalog.putServiceCredential({
      serviceId: ctx.params.service_id as string,
      scope: str(body, "scope"),
      credential: credentialMaterial(body),
      schemeName: str(body, "scheme_name"),
    });
    ctx.body = { credential: credentialJson(res.credential), readiness: readinessJson(res.readiness) };
  });
  api.get("/services/:service_id/credentials", ops.listServiceCredentials, publisher, async (ctx) => {
    const { credentials } = await catalog.listServiceCredentials({ serviceId: ctx.params.service_id as string });
    ctx.body = credentials.map(credentialJson) as JsonValue;
  });
  api.delete("/services/:service_id/credentials", ops.deleteServiceCredential, publisher, async (ctx) => {
    const scope = queryValue(ctx, "scope") ?? str(objectBody(ctx), "scope");
    ctx.body = {
      deleted: (await catalog.deleteServiceCredential({ serviceId: ctx.params.service_id as string, scope })).deleted,
    };
  });
}
