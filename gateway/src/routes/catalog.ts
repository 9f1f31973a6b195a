/**
 * /v1 routes served by the catalog service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const catalogRouteTable: RpcRoute[] = [
  ["get", "/tools", "api_key", "listTools"],
  ["get", "/tools/search", "api_key", "searchTools"],
  ["get", "/tools/public/search", "optional", "publicSearchTools"],
  ["get", "/tools/recommended", "optional", "getRecommendations"],
  ["get", "/tools/name/:tool_name", "api_key", "getToolByName"],
  ["get", "/tools/:tool_id/describe", "api_key", "describeTool"],
  ["get", "/tools/:tool_id", "api_key", "getTool"],
  ["patch", "/tools/:tool_id", "api_key_or_jwt", "updateTool"],
  ["delete", "/tools/:tool_id", "api_key_or_jwt", "deleteTool"],
  ["get", "/services/public", "none", "listPublicServices"],
  ["get", "/services/public/:service_id", "none", "getPublicService"],
  ["get", "/services/public/:service_id/tools", "none", "listPublicServiceTools"],
  ["post", "/services", "api_key_or_jwt", "createService"],
  ["get", "/services", "api_key_or_jwt", "listServices"],
  ["get", "/services/:service_id", "api_key_or_jwt", "getService"],
  ["get", "/services/:service_id/tools", "api_key_or_jwt", "listServiceTools"],
  ["patch", "/services/:service_id", "api_key_or_jwt", "updateService"],
  ["delete", "/services/:service_id", "api_key_or_jwt", "deleteService"],
  ["put", "/services/:service_id/credentials", "api_key_or_jwt", "putServiceCredential"],
  ["delete", "/services/:service_id/credentials", "api_key_or_jwt", "deleteServiceCredential"],
];

export function catalogRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, CatalogService, deps.clients.catalog, catalogRouteTable);
}
