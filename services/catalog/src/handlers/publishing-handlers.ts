/** CatalogService publishing and credential RPCs: thin, proto in -> app call -> proto out. */

import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampNow } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { permissionDenied } from "@toolport/kit/errors";
import { objectFromJsonBytes } from "@toolport/kit/json-bytes";
import type {
  CredentialMaterial as CredentialMaterialMsg,
  OpenApiSource,
  SecurityScheme as SecuritySchemeMsg,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import type { Contact as ContactMsg } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { ParameterLocation, Readiness } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import {
  type CatalogService,
  type CreateServiceRequest,
  ReindexSearchResponseSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { requireCaller } from "../domain/checks.js";
import { deleteServiceCredential, listServiceCredentials, putServiceCredential } from "../domain/credentials.js";
import type { CatalogDeps } from "../domain/deps.js";
import type { Contact, CredentialMaterial, SecuritySchemeInfo } from "../domain/model.js";
import {
  createService,
  deleteService,
  deleteTool,
  listManagedServices,
  listManagedServiceTools,
  managedService,
  previewService,
  readableService,
  reimportService,
  updateService,
  updateTool,
} from "../domain/publishing.js";
import { viewTools } from "../domain/views.js";
import { callerOf } from "./caller.js";
import { credentialSummaryToProto, publishingToProto, serviceToProto, toolToProto } from "./convert.js";

type Impl = Pick<
  ServiceImpl<typeof CatalogService>,
  | "createService"
  | "previewService"
  | "listServices"
  | "getService"
  | "listServiceTools"
  | "updateService"
  | "reimportService"
  | "deleteService"
  | "updateTool"
  | "deleteTool"
  | "putServiceCredential"
  | "listServiceCredentials"
  | "deleteServiceCredential"
  | "reindexSearch"
>;

function contactPatch(c: ContactMsg | undefined): Partial<Contact> | undefined {
  if (!c) return undefined;
  const out: Partial<Contact> = {};
  if (c.name) out.name = c.name;
  if (c.url) out.url = c.url;
  if (c.email) out.email = c.email;
  return out;
}

function apiSource(api: OpenApiSource) {
  return {
    documentText: api.document.case === "documentText" ? api.document.value : undefined,
    documentUrl: api.document.case === "documentUrl" ? api.document.value : undefined,
    baseUrl: api.baseUrl,
  };
}

const schemeLocations: Partial<Record<ParameterLocation, SecuritySchemeInfo["location"]>> = {
  [ParameterLocation.HEADER]: "header",
  [ParameterLocation.QUERY]: "query",
  [ParameterLocation.COOKIE]: "cookie",
};

function schemeFromProto(s: SecuritySchemeMsg | undefined): SecuritySchemeInfo | undefined {
  if (!s) return undefined;
  return {
    name: s.name,
    type: s.type,
    scheme: s.scheme,
    location: schemeLocations[s.location],
    parameterName: s.parameterName,
    description: s.description,
  };
}

export function materialFromProto(m: CredentialMaterialMsg | undefined): CredentialMaterial | undefined {
  switch (m?.kind.case) {
    case "apiKey":
      return {
        type: "api_key",
        value: m.kind.value.value,
        parameterName: m.kind.value.parameterName,
        location: m.kind.value.location,
      };
    case "bearer":
      return { type: "bearer", token: m.kind.value.token };
    case "basic":
      return { type: "basic", username: m.kind.value.username, password: m.kind.value.password };
    default:
      return undefined;
  }
}

function sourceFromProto(source: CreateServiceRequest["source"]) {
  return source.case === "api"
    ? ({ kind: "api", ...apiSource(source.value) } as const)
    : source.case === "mcpServer"
      ? ({
          kind: "mcp_server",
          url: source.value.url,
          securityScheme: schemeFromProto(source.value.securityScheme),
          credential: materialFromProto(source.value.credential),
        } as const)
      : undefined;
}

export function createPublishingHandlers(deps: CatalogDeps): Impl {
  const views = (pairs: Parameters<typeof viewTools>[1], context: Parameters<typeof callerOf>[0]) =>
    viewTools(deps, pairs, callerOf(context));

  return {
    async previewService(req, context) {
      const preview = await previewService(
        deps,
        { source: sourceFromProto(req.source), organizationId: req.organizationId },
        callerOf(context),
        context.signal,
      );
      return {
        name: preview.name,
        serviceType: preview.serviceType,
        description: preview.description,
        version: preview.version,
        baseUrl: preview.baseUrl ?? undefined,
        securitySchemes: preview.securitySchemes,
        tools: preview.tools.map((t) => ({
          name: t.name,
          description: t.description,
          method: t.method,
          path: t.path,
          parameters: Object.keys(t.parameters),
          deprecated: t.deprecated ?? false,
          sideEffecting: t.sideEffecting,
        })),
        warnings: preview.warnings,
      };
    },
    async createService(req, context) {
      const caller = callerOf(context);
      const source = sourceFromProto(req.source);
      const result = await createService(
        deps,
        {
          source,
          name: req.name,
          slug: req.slug,
          summary: req.summary,
          description: req.description,
          category: req.category,
          logo: req.logo,
          contact: contactPatch(req.contact),
          documentationUrl: req.documentationUrl,
          version: req.version,
          visibility: req.visibility,
          organizationId: req.organizationId,
          defaultPricePerCallCents: req.defaultPricePerCallCents,
        },
        caller,
        context.signal,
      );
      const stats = await deps.store.serviceStats([result.service.id]);
      const tools = await views(
        result.tools.map((tool) => ({ tool, service: result.service })),
        context,
      );
      return {
        service: serviceToProto(result.service, stats.get(result.service.id)),
        publishing: publishingToProto(result.service),
        tools: tools.map(toolToProto),
        warnings: result.warnings,
      };
    },
    async listServices(req, context) {
      const services = await listManagedServices(deps, callerOf(context), req.organizationId);
      const stats = await deps.store.serviceStats(services.map((s) => s.id));
      return { services: services.map((s) => serviceToProto(s, stats.get(s.id))) };
    },
    async getService(req, context) {
      const service = await readableService(deps, req.serviceId, callerOf(context));
      const stats = await deps.store.serviceStats([service.id]);
      return { service: serviceToProto(service, stats.get(service.id)), publishing: publishingToProto(service) };
    },
    async listServiceTools(req, context) {
      const pairs = await listManagedServiceTools(deps, req.serviceId, callerOf(context));
      return { tools: (await views(pairs, context)).map(toolToProto) };
    },
    async updateService(req, context) {
      const service = await updateService(
        deps,
        req.serviceId,
        {
          name: req.name,
          slug: req.slug,
          summary: req.summary,
          description: req.description,
          category: req.category,
          logo: req.logo,
          contact: contactPatch(req.contact),
          documentationUrl: req.documentationUrl,
          version: req.version,
          visibility: req.visibility,
          status: req.status,
          verificationTier: req.verificationTier,
          baseUrl: req.baseUrl,
          mcpServerUrl: req.mcpServerUrl,
        },
        callerOf(context),
      );
      const stats = await deps.store.serviceStats([service.id]);
      return { service: serviceToProto(service, stats.get(service.id)), publishing: publishingToProto(service) };
    },
    async reimportService(req, context) {
      const result = await reimportService(
        deps,
        req.serviceId,
        req.api ? apiSource(req.api) : undefined,
        callerOf(context),
        context.signal,
      );
      const stats = await deps.store.serviceStats([result.service.id]);
      const tools = await views(
        result.tools.map((tool) => ({ tool, service: result.service })),
        context,
      );
      return {
        service: serviceToProto(result.service, stats.get(result.service.id)),
        tools: tools.map(toolToProto),
        deactivatedToolIds: result.deactivatedToolIds ?? [],
        warnings: result.warnings,
      };
    },
    async deleteService(req, context) {
      await deleteService(deps, req.serviceId, callerOf(context));
      return { deleted: true };
    },
    async updateTool(req, context) {
      const caller = callerOf(context);
      const tool = await updateTool(
        deps,
        req.toolId,
        {
          name: req.name,
          slug: req.slug,
          description: req.description,
          tips: req.tips,
          tags: req.tags?.values,
          output: req.outputJson === undefined ? undefined : objectFromJsonBytes(req.outputJson),
          version: req.version,
          pricePerCallCents: req.pricePerCallCents,
          sideEffecting: req.sideEffecting,
          status: req.status,
          deprecated: req.deprecated,
          deprecationMessage: req.deprecationMessage,
          sunsetDate: req.sunsetDate ? timestampDate(req.sunsetDate) : undefined,
          passthroughReason: req.passthroughReason,
        },
        caller,
      );
      const service = await managedService(deps, tool.serviceId, caller);
      const [view] = await views([{ tool, service }], context);
      return { tool: toolToProto(view as NonNullable<typeof view>) };
    },
    async deleteTool(req, context) {
      await deleteTool(deps, req.toolId, callerOf(context));
      return { deleted: true };
    },
    async putServiceCredential(req, context) {
      const caller = callerOf(context);
      const summary = await putServiceCredential(
        deps,
        { serviceId: req.serviceId, scope: req.scope, material: materialFromProto(req.credential), schemeName: req.schemeName },
        caller,
      );
      // The service's tools are now ready for this caller, unless the service is retired.
      const service = await deps.store.findService(summary.serviceId);
      return {
        credential: credentialSummaryToProto(summary),
        readiness: service?.status === "retired" ? Readiness.UNAVAILABLE : Readiness.READY,
      };
    },
    async listServiceCredentials(req, context) {
      return {
        credentials: (await listServiceCredentials(deps, req.serviceId, callerOf(context))).map(credentialSummaryToProto),
      };
    },
    async deleteServiceCredential(req, context) {
      return { deleted: await deleteServiceCredential(deps, req.serviceId, req.scope, callerOf(context)) };
    },
    async reindexSearch(_req, context) {
      const caller = requireCaller(callerOf(context));
      if (!caller.isPlatformAdmin) throw permissionDenied("platform_admin_only", "only platform admins rebuild the search index");
      const count = await deps.index.rebuild();
      return create(ReindexSearchResponseSchema, {
        engine: deps.index.engine.name,
        indexedTools: BigInt(count),
        completedAt: timestampNow(),
      });
    },
  };
}
