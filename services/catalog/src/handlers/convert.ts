/** Domain records -> proto messages (and the few enums back). One place for every mapping. */

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { jsonBytes, textJsonBytes } from "@toolport/kit/json-bytes";
import {
  CredentialScope as CredentialScopeEnum,
  type CredentialSummary as CredentialSummaryMsg,
  CredentialSummarySchema,
  CredentialType as CredentialTypeEnum,
  OAuthFlowSchema,
  OAuthFlowsSchema,
  type ResolvedTool,
  ResolvedToolSchema,
  type SecurityScheme,
  SecuritySchemeSchema,
  type ServicePublishing,
  ServicePublishingSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import {
  ContactSchema,
  ParameterLocation as ParameterLocationEnum,
  type PublicTool,
  PublicToolSchema,
  Readiness as ReadinessEnum,
  type Reliability,
  ReliabilitySchema,
  type Service,
  ServiceSchema,
  ServiceStatus as ServiceStatusEnum,
  type ServiceSummary,
  ServiceSummarySchema,
  ServiceType as ServiceTypeEnum,
  type Tool,
  type ToolParameter,
  ToolParameterSchema,
  ToolSchema,
  ToolStatus as ToolStatusEnum,
  VerificationTier as VerificationTierEnum,
} from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { ErrorClass, Visibility as VisibilityEnum } from "@toolport/proto/toolport/common/v1/types_pb";
import type {
  CredentialScope,
  CredentialSummary,
  ParameterLocation,
  Readiness,
  ReliabilityBlock,
  SecuritySchemeInfo,
  ServiceRecord,
  ToolParameterInfo,
  ToolRecord,
} from "../domain/model.js";
import type { ServiceStats } from "../domain/ports.js";
import type { ToolView } from "../domain/views.js";

export const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export const credentialScopeToProto: Record<CredentialScope, CredentialScopeEnum> = {
  caller: CredentialScopeEnum.CALLER,
  organization: CredentialScopeEnum.ORGANIZATION,
};

export const readinessToProto: Record<Readiness, ReadinessEnum> = {
  ready: ReadinessEnum.READY,
  needs_credential: ReadinessEnum.NEEDS_CREDENTIAL,
  unavailable: ReadinessEnum.UNAVAILABLE,
};

const locationToProto: Record<ParameterLocation, ParameterLocationEnum> = {
  path: ParameterLocationEnum.PATH,
  query: ParameterLocationEnum.QUERY,
  header: ParameterLocationEnum.HEADER,
  cookie: ParameterLocationEnum.COOKIE,
  body: ParameterLocationEnum.BODY,
};

const errorClassToProto: Record<string, ErrorClass> = {
  auth: ErrorClass.AUTH,
  caller: ErrorClass.CALLER,
  platform: ErrorClass.PLATFORM,
  upstream: ErrorClass.UPSTREAM,
};

const visibilityToProto: Record<string, VisibilityEnum> = {
  public: VisibilityEnum.PUBLIC,
  private: VisibilityEnum.PRIVATE,
  internal: VisibilityEnum.INTERNAL,
  local_only: VisibilityEnum.LOCAL_ONLY,
};

export function parameterToProto(p: ToolParameterInfo): ToolParameter {
  return create(ToolParameterSchema, {
    name: p.name,
    location: locationToProto[p.location] ?? ParameterLocationEnum.UNSPECIFIED,
    description: p.description,
    type: p.type,
    required: p.required,
    defaultJson: jsonBytes(p.default),
    enumJson: jsonBytes(p.enum),
    minimum: p.minimum,
    maximum: p.maximum,
    encodeSlashes: p.encodeSlashes,
    jsonSchemaJson: jsonBytes(p.jsonSchema),
  });
}

/** With `schemas` (a page read's raw JSON texts by key), each schema goes on as Postgres wrote it. */
function parametersToProto(
  params: Record<string, ToolParameterInfo>,
  schemas?: Record<string, string>,
): Record<string, ToolParameter> {
  const out: Record<string, ToolParameter> = {};
  for (const [key, p] of Object.entries(params)) {
    const parameter = parameterToProto(p);
    const raw = schemas?.[key];
    if (raw !== undefined) parameter.jsonSchemaJson = textJsonBytes(raw);
    out[key] = parameter;
  }
  return out;
}

export function reliabilityToProto(r: ReliabilityBlock | null): Reliability | undefined {
  if (!r) return undefined;
  return create(ReliabilitySchema, {
    windowDays: r.windowDays,
    calls7d: BigInt(r.calls7d),
    calls30d: BigInt(r.calls30d),
    successRate30d: r.successRate30d ?? undefined,
    p50Seconds: r.p50Seconds ?? undefined,
    p95Seconds: r.p95Seconds ?? undefined,
    lastSuccessAt: ts(r.lastSuccessAt),
    lastFailureAt: ts(r.lastFailureAt),
    lastErrorClass: r.lastErrorClass ? (errorClassToProto[r.lastErrorClass] ?? ErrorClass.UNSPECIFIED) : ErrorClass.UNSPECIFIED,
    lastErrorType: r.lastErrorType ?? undefined,
    errorClasses: r.errorClasses,
    faults: r.faults,
    authFailures30d: BigInt(r.authFailures30d),
    callerFailures30d: BigInt(r.callerFailures30d),
    danubeFailures30d: BigInt(r.platformFailures30d),
    upstreamFailures30d: BigInt(r.upstreamFailures30d),
    distinctCallers30d: BigInt(r.distinctCallers30d),
    flagged: r.flagged,
    refreshedAt: ts(r.refreshedAt),
  });
}

export function toolToProto(v: ToolView): Tool {
  const { tool, service } = v;
  return create(ToolSchema, {
    id: tool.id,
    slug: tool.slug,
    name: tool.name,
    description: tool.description,
    serviceId: tool.serviceId,
    status: tool.status === "active" ? ToolStatusEnum.ACTIVE : ToolStatusEnum.INACTIVE,
    tags: tool.tags,
    method: tool.method,
    path: tool.path,
    parameters: parametersToProto(tool.parameters, tool.rawJson?.schemas),
    outputJson: tool.rawJson ? textJsonBytes(tool.rawJson.output) : jsonBytes(tool.output ?? undefined),
    tips: tool.tips ?? undefined,
    version: tool.version,
    isPaid: tool.pricePerCallCents > 0n,
    pricePerCallCents: tool.pricePerCallCents,
    readiness: readinessToProto[v.readiness],
    configurationUrl: v.readiness === "needs_credential" ? v.configurationUrl : undefined,
    reliability: reliabilityToProto(v.reliability),
    deprecated: tool.deprecated,
    deprecationMessage: tool.deprecationMessage ?? undefined,
    sunsetDate: ts(tool.sunsetDate),
    createdAt: ts(tool.createdAt),
    updatedAt: ts(tool.updatedAt),
    sideEffecting: tool.sideEffecting,
    serviceName: service.name,
  });
}

export function publicToolToProto(v: ToolView): PublicTool {
  const { tool } = v;
  return create(PublicToolSchema, {
    id: tool.id,
    name: tool.name,
    slug: tool.slug,
    description: tool.description,
    serviceId: tool.serviceId,
    parameters: parametersToProto(tool.parameters),
    readiness: readinessToProto[v.readiness],
    configurationUrl: v.readiness === "needs_credential" ? v.configurationUrl : undefined,
    reliability: reliabilityToProto(v.reliability),
    deprecated: tool.deprecated,
    deprecationMessage: tool.deprecationMessage ?? undefined,
    sunsetDate: ts(tool.sunsetDate),
  });
}

const serviceTypeToProto = {
  api: ServiceTypeEnum.API,
  mcp_server: ServiceTypeEnum.MCP_SERVER,
  internal: ServiceTypeEnum.INTERNAL,
};
const statusToProto = {
  active: ServiceStatusEnum.ACTIVE,
  degraded: ServiceStatusEnum.DEGRADED,
  retired: ServiceStatusEnum.RETIRED,
};
const tierToProto = {
  unverified: VerificationTierEnum.UNVERIFIED,
  verified: VerificationTierEnum.VERIFIED,
  official: VerificationTierEnum.OFFICIAL,
};

/** A service is popular from this many calls in 30 days. */
export const POPULAR_CALLS_30D = 100;

export function serviceToProto(s: ServiceRecord, stats: ServiceStats | undefined): Service {
  return create(ServiceSchema, {
    id: s.id,
    slug: s.slug,
    name: s.name,
    summary: s.summary,
    description: s.description,
    serviceType: serviceTypeToProto[s.serviceType],
    category: s.category,
    logo: s.logo,
    contact: create(ContactSchema, s.contact),
    documentationUrl: s.documentationUrl,
    verificationTier: tierToProto[s.verificationTier],
    status: statusToProto[s.status],
    visibility: visibilityToProto[s.visibility] ?? VisibilityEnum.UNSPECIFIED,
    toolCount: BigInt(stats?.toolCount ?? 0),
    totalExecutions: BigInt(stats?.totalExecutions ?? 0),
    successRate: stats?.successRate ?? 0,
    avgRating: 0,
    ratingCount: 0n,
    isPopular: (stats?.calls30d ?? 0) >= POPULAR_CALLS_30D,
    isDemo: s.isDemo,
    version: s.version,
    createdAt: ts(s.createdAt),
    updatedAt: ts(s.updatedAt),
  });
}

export function serviceSummaryToProto(s: ServiceRecord): ServiceSummary {
  return create(ServiceSummarySchema, {
    id: s.id,
    name: s.name,
    description: s.description,
    summary: s.summary,
    url: s.contact.url,
    logoUrl: s.logo,
    version: s.version,
  });
}

/** `connectFlow`: the flow a connection runs when the publisher registered an OAuth client for the scheme. */
export function securitySchemeToProto(s: SecuritySchemeInfo, connectFlow?: string): SecurityScheme {
  return create(SecuritySchemeSchema, {
    name: s.name,
    type: s.type,
    scheme: s.scheme,
    location: s.location ? (locationToProto[s.location] ?? ParameterLocationEnum.UNSPECIFIED) : ParameterLocationEnum.UNSPECIFIED,
    parameterName: s.parameterName,
    bearerFormat: s.bearerFormat,
    description: s.description,
    oauthFlows: s.oauthFlows
      ? create(OAuthFlowsSchema, {
          authorizationCode: s.oauthFlows.authorizationCode ? create(OAuthFlowSchema, s.oauthFlows.authorizationCode) : undefined,
          clientCredentials: s.oauthFlows.clientCredentials ? create(OAuthFlowSchema, s.oauthFlows.clientCredentials) : undefined,
        })
      : undefined,
    connectFlow,
  });
}

export function publishingToProto(s: ServiceRecord): ServicePublishing {
  return create(ServicePublishingSchema, {
    organizationId: s.organizationId ?? "",
    ownerAccountId: s.ownerAccountId ?? "",
    baseUrl: s.baseUrl ?? undefined,
    mcpServerUrl: s.mcpServerUrl ?? undefined,
    openapiDocumentUrl: s.openapiDocumentUrl ?? undefined,
    securitySchemes: s.securitySchemes.map((scheme) => securitySchemeToProto(scheme)),
    importedAt: ts(s.importedAt),
  });
}

export function credentialSummaryToProto(c: CredentialSummary): CredentialSummaryMsg {
  return create(CredentialSummarySchema, {
    serviceId: c.serviceId,
    scope: credentialScopeToProto[c.scope],
    type: {
      api_key: CredentialTypeEnum.API_KEY,
      bearer: CredentialTypeEnum.BEARER,
      basic: CredentialTypeEnum.BASIC,
      oauth2: CredentialTypeEnum.OAUTH2,
    }[c.type],
    isReference: c.isReference,
    hint: c.hint,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}

export function resolvedToolToProto(v: ToolView): ResolvedTool {
  const { tool, service } = v;
  const schemes = service.securitySchemes.filter((s) => tool.security.includes(s.name));
  return create(ResolvedToolSchema, {
    id: tool.id,
    slug: tool.slug,
    name: tool.name,
    serviceId: service.id,
    serviceName: service.name,
    serviceType: serviceTypeToProto[service.serviceType],
    serviceStatus: statusToProto[service.status],
    status: tool.status === "active" ? ToolStatusEnum.ACTIVE : ToolStatusEnum.INACTIVE,
    method: tool.method,
    path: tool.path,
    baseUrl: service.baseUrl ?? "",
    mcpServerUrl: service.mcpServerUrl ?? "",
    mcpToolName: tool.mcpToolName,
    internalHandler: tool.internalHandler,
    parameters: parametersToProto(tool.parameters),
    inputSchemaJson: jsonBytes(tool.inputSchema),
    requestBodySchemaJson: jsonBytes(tool.requestBodySchema ?? undefined),
    requestBodyContentType: tool.requestBodyContentType,
    securitySchemes: schemes.map((scheme) => securitySchemeToProto(scheme)),
    sideEffecting: tool.sideEffecting,
    isPaid: tool.pricePerCallCents > 0n,
    pricePerCallCents: tool.pricePerCallCents,
    deprecated: tool.deprecated,
    sunsetDate: ts(tool.sunsetDate),
    readiness: readinessToProto[v.readiness],
    passthroughReason: tool.passthroughReason ?? undefined,
    outputJson: jsonBytes(tool.output ?? undefined),
    isDemo: service.isDemo,
    revision: tool.revision,
  });
}

export type { ToolRecord };
