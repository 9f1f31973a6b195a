/**
 * /v1 routes served by the catalog service. Each renders the spec's JSON itself (catalog-json.ts):
 * bare arrays where the spec says "array of Tool", snake_case names, enums as words, nulls. Query
 * values are checked here so bad input is a 400 naming the parameter before any service is called.
 * Auth per the spec's endpoint auth table; publishing routes (ours) take an API key or a JWT.
 */

import type { JsonObject, JsonValue, MessageInitShape } from "@bufbuild/protobuf";
import { fromJsonBytes, optionalJsonBytes } from "@toolport/kit/json-bytes";
import type {
  CredentialMaterialSchema,
  McpServerSourceSchema,
  OpenApiSourceSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { ParameterLocation } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import type { CreateServiceRequestSchema } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { AppDeps } from "../deps.js";
import {
  centsField,
  fieldError,
  limitQuery,
  linkNext,
  namedField,
  objectBody,
  pageQuery,
  queryList,
  queryValue,
  rateQuery,
  timeValue,
  withWording,
} from "../http/input.js";
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

/** The catalog routes' 400s read `slug must be a string` (http/input.ts). */
const named = withWording(namedField);

// ---- JSON bodies ------------------------------------------------------------------------------

/** The service fields that publishing and editing a service both take. */
function serviceFields(body: Record<string, unknown>) {
  return {
    name: named.string(body, "name"),
    slug: named.string(body, "slug"),
    summary: named.string(body, "summary"),
    description: named.string(body, "description"),
    category: named.string(body, "category"),
    logo: named.string(body, "logo"),
    contact: contact(body),
    documentationUrl: named.string(body, "documentation_url"),
    version: named.string(body, "version"),
    visibility: named.string(body, "visibility"),
  };
}

function contact(o: Record<string, unknown>) {
  const c = named.object(o, "contact");
  return c
    ? {
        name: named.string(c, "name", "contact.") ?? "",
        url: named.string(c, "url", "contact.") ?? "",
        email: named.string(c, "email", "contact.") ?? "",
      }
    : undefined;
}

/**
 * `api`: {document_text | document | document_url, base_url}; `document` may be the OpenAPI object
 * itself, and `api` may be the document directly (it has an `openapi` key).
 */
function openApiSource(value: unknown): MessageInitShape<typeof OpenApiSourceSchema> {
  if (typeof value === "string") return { document: { case: "documentText", value } };
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw fieldError("api", "api must be an object");
  const api = value as Record<string, unknown>;
  if ("openapi" in api || "swagger" in api) return { document: { case: "documentText", value: JSON.stringify(api) } };
  const baseUrl = named.string(api, "base_url", "api.");
  const url = named.string(api, "document_url", "api.");
  const doc = api.document_text ?? api.document;
  if (doc !== undefined && doc !== null) {
    const text = typeof doc === "string" ? doc : JSON.stringify(doc);
    return { document: { case: "documentText", value: text }, baseUrl };
  }
  if (url !== undefined) return { document: { case: "documentUrl", value: url }, baseUrl };
  throw fieldError(
    "api",
    "api needs document (the OpenAPI document, JSON object or JSON/YAML text) or document_url",
    "missing_document",
  );
}

function credentialMaterial(body: Record<string, unknown>): MessageInitShape<typeof CredentialMaterialSchema> | undefined {
  const c = named.object(body, "credential") ?? body;
  const apiKey = c.api_key;
  if (typeof apiKey === "string") return { kind: { case: "apiKey", value: { value: apiKey } } };
  if (apiKey && typeof apiKey === "object") {
    const k = apiKey as Record<string, unknown>;
    return {
      kind: {
        case: "apiKey",
        value: {
          value: named.string(k, "value", "credential.api_key.") ?? "",
          parameterName: named.string(k, "parameter_name", "credential.api_key."),
          location: named.string(k, "location", "credential.api_key."),
        },
      },
    };
  }
  const bearer = c.bearer ?? c.bearer_token ?? c.token;
  if (typeof bearer === "string") return { kind: { case: "bearer", value: { token: bearer } } };
  if (bearer && typeof bearer === "object")
    return {
      kind: {
        case: "bearer",
        value: { token: named.string(bearer as Record<string, unknown>, "token", "credential.bearer.") ?? "" },
      },
    };
  const basic = c.basic;
  if (basic && typeof basic === "object") {
    const b = basic as Record<string, unknown>;
    return {
      kind: {
        case: "basic",
        value: {
          username: named.string(b, "username", "credential.basic.") ?? "",
          password: named.string(b, "password", "credential.basic.") ?? "",
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
  const scheme = named.object(mcp, "security_scheme");
  const prefix = "mcp_server.security_scheme.";
  const where = scheme ? named.string(scheme, "in", prefix) : undefined;
  if (where !== undefined && !Object.hasOwn(schemeLocations, where))
    throw fieldError(`${prefix}in`, `${prefix}in must be header`);
  return {
    url: named.string(mcp, "url", "mcp_server.") ?? "",
    securityScheme: scheme && {
      type: named.string(scheme, "type", prefix) ?? "",
      scheme: named.string(scheme, "scheme", prefix),
      location: where === undefined ? ParameterLocation.UNSPECIFIED : schemeLocations[where],
      parameterName: named.string(scheme, "name", prefix),
      description: named.string(scheme, "description", prefix) ?? "",
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
      readyOnly: named.boolQuery(ctx.query.ready_only, "ready_only"),
      limit: limitQuery(ctx),
    });
    ctx.body = toolsOut(tools);
  });
  api.get("/tools/public/search", ops.publicSearchTools, publicSearchLimit, optional, async (ctx) => {
    const { tools } = await catalog.publicSearchTools({
      query: queryValue(ctx, "query") ?? queryValue(ctx, "q") ?? "",
      serviceId: queryValue(ctx, "service_id") || undefined,
      limit: limitQuery(ctx),
      readyOnly: named.boolQuery(ctx.query.ready_only, "ready_only"),
      minSuccessRate: rateQuery(ctx, "min_success_rate"),
    });
    ctx.body = tools.map(publicToolJson) as JsonValue;
  });
  api.get("/tools/recommended", ops.getRecommendations, optional, async (ctx) => {
    const { recommendations } = await catalog.getRecommendations({
      toolId: queryValue(ctx, "tool_id") || undefined,
      limit: limitQuery(ctx),
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
      { source: publishSource(body), organizationId: named.string(body, "organization_id") },
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
        organizationId: named.string(body, "organization_id"),
        defaultPricePerCallCents: centsField(body, "default_price_per_call_cents"),
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
      status: named.string(body, "status"),
      verificationTier: named.string(body, "verification_tier"),
      baseUrl: named.string(body, "base_url"),
      mcpServerUrl: named.string(body, "mcp_server_url"),
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
      throw fieldError("tags", "tags must be an array of strings");
    }
    const sunsetDate = timeValue(named.string(body, "sunset_date"), "sunset_date", namedField);
    const { tool } = await catalog.updateTool({
      toolId: ctx.params.tool_id as string,
      name: named.string(body, "name"),
      slug: named.string(body, "slug"),
      description: named.string(body, "description"),
      tips: named.string(body, "tips"),
      tags: Array.isArray(tags) ? { values: tags as string[] } : undefined,
      outputJson: optionalJsonBytes(named.object(body, "output")),
      version: named.string(body, "version"),
      pricePerCallCents: centsField(body, "price_per_call_cents"),
      sideEffecting: named.bool(body, "side_effecting"),
      status: named.string(body, "status"),
      deprecated: named.bool(body, "deprecated"),
      deprecationMessage: named.string(body, "deprecation_message"),
      sunsetDate,
      passthroughReason: named.string(body, "passthrough_reason"),
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
      scope: named.string(body, "scope"),
      credential: credentialMaterial(body),
      schemeName: named.string(body, "scheme_name"),
    });
    ctx.body = { credential: credentialJson(res.credential), readiness: readinessJson(res.readiness) };
  });
  api.get("/services/:service_id/credentials", ops.listServiceCredentials, publisher, async (ctx) => {
    const { credentials } = await catalog.listServiceCredentials({ serviceId: ctx.params.service_id as string });
    ctx.body = credentials.map(credentialJson) as JsonValue;
  });
  api.delete("/services/:service_id/credentials", ops.deleteServiceCredential, publisher, async (ctx) => {
    const scope = queryValue(ctx, "scope") ?? named.string(objectBody(ctx), "scope");
    ctx.body = {
      deleted: (await catalog.deleteServiceCredential({ serviceId: ctx.params.service_id as string, scope })).deleted,
    };
  });
}
