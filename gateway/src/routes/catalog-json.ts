/**
 * The catalog's HTTP JSON, exactly as the spec draws it (Tool, trimmed Tool, Reliability block,
 * Service, Recommendation) plus our publishing shapes: snake_case, enums as lower-case words, int64 as
 * numbers, absent values as null, and optional parameter keys left out when not set.
 */

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { fromJsonBytes, rawJsonBytes } from "@toolport/kit/json-bytes";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import type {
  CredentialSummary,
  OAuthFlow,
  ReadinessGap,
  SecurityScheme,
  ServicePublishing,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { CredentialScopeSchema, CredentialTypeSchema } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import {
  ParameterLocationSchema,
  type PublicTool,
  type Readiness,
  ReadinessSchema,
  type Recommendation,
  type Reliability,
  type Service,
  ServiceStatusSchema,
  type ServiceSummary,
  ServiceTypeSchema,
  type Tool,
  type ToolParameter,
  ToolStatusSchema,
  VerificationTierSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { ErrorClassSchema, VisibilitySchema } from "@toolport/proto/toolport/common/v1/types_pb";

const iso = isoTime;
const num = (n: bigint): number => Number(n);
const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** One parameter: name, location, description, type, required; the rest only when set. */
export function parameterJson(p: ToolParameter): JsonObject {
  const out: JsonObject = {
    name: p.name,
    location: enumName(ParameterLocationSchema, p.location),
    description: p.description,
    type: p.type,
    required: p.required,
  };
  const defaultValue = fromJsonBytes(p.defaultJson);
  if (defaultValue !== undefined) out.default = defaultValue;
  const enumValues = fromJsonBytes(p.enumJson);
  if (enumValues !== undefined) out.enum = enumValues;
  if (p.minimum !== undefined) out.minimum = p.minimum;
  if (p.maximum !== undefined) out.maximum = p.maximum;
  if (p.encodeSlashes !== undefined) out.encode_slashes = p.encodeSlashes;
  // Handed on as the catalog sent it (middleware/json-bytes.ts writes the text): a page of tools holds
  // megabytes of schemas the gateway has no reason to parse.
  const jsonSchema = rawJsonBytes(p.jsonSchemaJson);
  if (jsonSchema !== undefined) out.json_schema = jsonSchema as unknown as JsonValue;
  return out;
}

function parametersJson(params: Record<string, ToolParameter>): JsonObject {
  const out: JsonObject = {};
  for (const [key, p] of Object.entries(params)) out[key] = parameterJson(p);
  return out;
}

/** The spec's reliability block; null when the tool was not called in the window. */
export function reliabilityJson(r: Reliability | undefined): JsonObject | null {
  if (!r) return null;
  return {
    window_days: r.windowDays,
    calls_7d: num(r.calls7d),
    calls_30d: num(r.calls30d),
    success_rate_30d: orNull(r.successRate30d),
    p50_seconds: orNull(r.p50Seconds),
    p95_seconds: orNull(r.p95Seconds),
    last_success_at: iso(r.lastSuccessAt),
    last_failure_at: iso(r.lastFailureAt),
    last_error_class: enumName(ErrorClassSchema, r.lastErrorClass),
    last_error_type: orNull(r.lastErrorType),
    error_classes: r.errorClasses ?? {},
    faults: r.faults ?? {},
    auth_failures_30d: num(r.authFailures30d),
    caller_failures_30d: num(r.callerFailures30d),
    danube_failures_30d: num(r.danubeFailures30d),
    upstream_failures_30d: num(r.upstreamFailures30d),
    distinct_callers_30d: num(r.distinctCallers30d),
    flagged: r.flagged,
    refreshed_at: iso(r.refreshedAt),
  };
}

/** The spec's full Tool shape. */
export function toolJson(t: Tool): JsonObject {
  return {
    id: t.id,
    slug: orNull(t.slug),
    name: t.name,
    description: t.description,
    service_id: t.serviceId,
    status: enumName(ToolStatusSchema, t.status),
    tags: t.tags,
    // Always strings (spec): the method is empty for tools not on an `api` service, and the path of
    // MCP-served and built-in tools is the `<service_id>/` form.
    method: t.method,
    path: t.path,
    parameters: parametersJson(t.parameters),
    output: (rawJsonBytes(t.outputJson) as unknown as JsonValue) ?? null,
    tips: orNull(t.tips),
    version: t.version,
    is_paid: t.isPaid,
    price_per_call_cents: num(t.pricePerCallCents),
    readiness: enumName(ReadinessSchema, t.readiness),
    configuration_url: orNull(t.configurationUrl),
    reliability: reliabilityJson(t.reliability),
    deprecated: t.deprecated,
    deprecation_message: orNull(t.deprecationMessage),
    sunset_date: iso(t.sunsetDate),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

/** The spec's trimmed public Tool shape (public search). */
export function publicToolJson(t: PublicTool): JsonObject {
  return {
    id: t.id,
    name: t.name,
    slug: orNull(t.slug),
    description: t.description,
    service_id: t.serviceId,
    parameters: parametersJson(t.parameters),
    readiness: enumName(ReadinessSchema, t.readiness),
    configuration_url: orNull(t.configurationUrl),
    reliability: reliabilityJson(t.reliability),
    deprecated: t.deprecated,
    deprecation_message: orNull(t.deprecationMessage),
    sunset_date: iso(t.sunsetDate),
  };
}

/** The spec's Service shape. */
export function serviceJson(s: Service): JsonObject {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    summary: s.summary,
    description: s.description,
    service_type: enumName(ServiceTypeSchema, s.serviceType),
    category: s.category,
    logo: s.logo,
    contact: { name: s.contact?.name ?? "", url: s.contact?.url ?? "", email: s.contact?.email ?? "" },
    documentation_url: s.documentationUrl,
    verification_tier: enumName(VerificationTierSchema, s.verificationTier),
    status: enumName(ServiceStatusSchema, s.status),
    visibility: enumName(VisibilitySchema, s.visibility),
    tool_count: num(s.toolCount),
    total_executions: num(s.totalExecutions),
    success_rate: s.successRate,
    avg_rating: s.avgRating,
    rating_count: num(s.ratingCount),
    is_popular: s.isPopular,
    is_demo: s.isDemo,
    version: s.version,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
}

/** The machine-readable description's short service shape. */
export function serviceSummaryJson(s: ServiceSummary | undefined): JsonObject | null {
  if (!s) return null;
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    summary: s.summary,
    url: s.url,
    logo_url: s.logoUrl,
    version: s.version,
  };
}

/** The spec's Recommendation shape. */
export function recommendationJson(r: Recommendation): JsonObject {
  return {
    tool_id: r.toolId,
    tool_name: r.toolName,
    description: r.description,
    service_id: r.serviceId,
    service_name: orNull(r.serviceName),
    service_logo: orNull(r.serviceLogo),
    reason: r.reason,
    score: r.score,
  };
}

export function readinessJson(r: Readiness): string | null {
  return enumName(ReadinessSchema, r);
}

export function gapJson(g: ReadinessGap): JsonObject {
  return { kind: g.kind, message: g.message, configuration_url: orNull(g.configurationUrl) };
}

/** A service's security scheme (publishing facts, and the schemes a described tool accepts). */
export function schemeJson(s: SecurityScheme): JsonObject {
  return {
    name: s.name,
    type: s.type,
    scheme: orNull(s.scheme),
    location: enumName(ParameterLocationSchema, s.location),
    parameter_name: orNull(s.parameterName),
    bearer_format: orNull(s.bearerFormat),
    description: s.description,
    oauth_flows: s.oauthFlows
      ? {
          authorization_code: flowJson(s.oauthFlows.authorizationCode),
          client_credentials: flowJson(s.oauthFlows.clientCredentials),
        }
      : null,
    connect_flow: orNull(s.connectFlow),
  };
}

function flowJson(f: OAuthFlow | undefined): JsonObject | null {
  if (!f) return null;
  return {
    authorization_url: f.authorizationUrl || null,
    token_url: f.tokenUrl || null,
    refresh_url: f.refreshUrl || null,
    scopes: f.scopes,
  };
}

/** Publisher-only facts of a service. */
export function publishingJson(p: ServicePublishing | undefined): JsonObject | null {
  if (!p) return null;
  return {
    organization_id: p.organizationId || null,
    owner_account_id: p.ownerAccountId || null,
    base_url: orNull(p.baseUrl),
    mcp_server_url: orNull(p.mcpServerUrl),
    openapi_document_url: orNull(p.openapiDocumentUrl),
    security_schemes: p.securitySchemes.map(schemeJson),
    imported_at: iso(p.importedAt),
  };
}

export function credentialJson(c: CredentialSummary | undefined): JsonObject | null {
  if (!c) return null;
  return {
    service_id: c.serviceId,
    // CREDENTIAL_SCOPE_CALLER -> caller, CREDENTIAL_TYPE_API_KEY -> api_key, CREDENTIAL_TYPE_OAUTH2 -> oauth2.
    scope: enumName(CredentialScopeSchema, c.scope),
    type: enumName(CredentialTypeSchema, c.type),
    is_reference: c.isReference,
    hint: c.hint || null,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}
