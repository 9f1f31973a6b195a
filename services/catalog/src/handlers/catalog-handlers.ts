/** CatalogService read RPCs: thin, proto in -> app call -> proto out. */

import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { notFound, unauthenticated } from "@toolport/kit/errors";
import { jsonBytes } from "@toolport/kit/json-bytes";
import { ReadinessGapSchema } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { RecommendationSchema } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import {
  type CatalogService,
  DescribeToolResponseSchema,
  GetRecommendationsResponseSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { isPublic } from "../domain/access.js";
import { listCallableTools } from "../domain/callable.js";
import type { CatalogDeps } from "../domain/deps.js";
import {
  describeTool,
  getTool,
  getToolByName,
  listPublicServiceTools,
  listTools,
  pageLimit,
  searchTools,
} from "../domain/reads.js";
import { recommend } from "../domain/recommendations.js";
import { callerOf } from "./caller.js";
import {
  publicToolToProto,
  readinessToProto,
  securitySchemeToProto,
  serviceSummaryToProto,
  serviceToProto,
  toolToProto,
} from "./convert.js";

type Impl = Pick<
  ServiceImpl<typeof CatalogService>,
  | "listTools"
  | "searchTools"
  | "getTool"
  | "getToolByName"
  | "describeTool"
  | "publicSearchTools"
  | "getRecommendations"
  | "listPublicServices"
  | "getPublicService"
  | "listPublicServiceTools"
  | "listCallableTools"
>;

export function createCatalogReadHandlers(deps: CatalogDeps): Impl {
  return {
    async listCallableTools(req, context) {
      const caller = callerOf(context);
      if (!caller) throw unauthenticated("unauthenticated", "this call needs an authenticated caller");
      const callable = await listCallableTools(deps, caller, {
        services: req.allowedServices ? req.allowedServices.values : null,
        tools: req.allowedTools ? req.allowedTools.values : null,
        limit: req.limit,
      });
      return {
        count: callable.count,
        tools: callable.tools.map((t) => ({ id: t.id, name: t.name, serviceId: t.serviceId, serviceName: t.serviceName })),
        warnings: callable.warnings,
      };
    },
    async listTools(req, context) {
      const page = await listTools(deps, callerOf(context), { limit: req.limit, cursor: req.cursor, serviceId: req.serviceId });
      return { tools: page.items.map(toolToProto), nextCursor: page.next };
    },
    async searchTools(req, context) {
      const views = await searchTools(
        deps,
        {
          query: req.query ?? "",
          serviceId: req.serviceId || undefined,
          tags: req.tags,
          readyOnly: req.readyOnly,
          limit: req.limit,
        },
        callerOf(context),
        "authenticated",
      );
      return { tools: views.map(toolToProto) };
    },
    async getTool(req, context) {
      return { tool: toolToProto(await getTool(deps, req.toolId, callerOf(context))) };
    },
    async getToolByName(req, context) {
      return { tool: toolToProto(await getToolByName(deps, req.toolName, callerOf(context))) };
    },
    async describeTool(req, context) {
      const d = await describeTool(deps, req.toolId, callerOf(context));
      return create(DescribeToolResponseSchema, {
        tool: toolToProto(d.view),
        service: serviceSummaryToProto(d.view.service),
        inputSchemaJson: jsonBytes(d.view.tool.inputSchema),
        exampleCallJson: jsonBytes({ tool_input: d.exampleInput }),
        readiness: readinessToProto[d.view.readiness],
        missing: d.view.gaps.map((g) =>
          create(ReadinessGapSchema, { kind: g.kind, message: g.message, configurationUrl: g.configurationUrl }),
        ),
        requiresConfirmation: d.requiresConfirmation,
        securitySchemes: d.view.service.securitySchemes
          .filter((scheme) => d.view.tool.security.includes(scheme.name))
          .map((scheme) =>
            securitySchemeToProto(scheme, d.oauthConnect?.schemeName === scheme.name ? d.oauthConnect.flow : undefined),
          ),
      });
    },
    async publicSearchTools(req, context) {
      const views = await searchTools(
        deps,
        {
          query: req.query,
          serviceId: req.serviceId || undefined,
          readyOnly: req.readyOnly,
          limit: req.limit,
          minSuccessRate: req.minSuccessRate,
        },
        callerOf(context),
        "public",
      );
      return { tools: views.map(publicToolToProto) };
    },
    async getRecommendations(req, context) {
      const recs = await recommend(deps, { toolId: req.toolId || undefined, limit: req.limit }, callerOf(context));
      return create(GetRecommendationsResponseSchema, {
        recommendations: recs.map((r) =>
          create(RecommendationSchema, {
            toolId: r.pair.tool.id,
            toolName: r.pair.tool.name,
            description: r.pair.tool.description,
            serviceId: r.pair.service.id,
            serviceName: r.pair.service.name,
            serviceLogo: r.pair.service.logo || undefined,
            reason: r.reason,
            score: r.score,
          }),
        ),
      });
    },
    async listPublicServices(req) {
      const page = await deps.store.publicServicePage({ limit: pageLimit(req.limit), cursor: req.cursor || undefined });
      const stats = await deps.store.serviceStats(page.items.map((s) => s.id));
      return { services: page.items.map((s) => serviceToProto(s, stats.get(s.id))), nextCursor: page.next };
    },
    async getPublicService(req) {
      const service = await deps.store.findService(req.serviceId.trim());
      if (!service || !isPublic(service)) {
        throw notFound("service_not_found", `service ${req.serviceId} not found`, { details: { service_id: req.serviceId } });
      }
      const stats = await deps.store.serviceStats([service.id]);
      return { service: serviceToProto(service, stats.get(service.id)) };
    },
    async listPublicServiceTools(req, context) {
      const page = await listPublicServiceTools(deps, req.serviceId, callerOf(context), { limit: req.limit, cursor: req.cursor });
      return { tools: page.items.map(toolToProto), nextCursor: page.next };
    },
  };
}
