/**
 * /v1 routes served by the webhooks service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const webhooksRouteTable: RpcRoute[] = [
  ["post", "/webhooks", "jwt", "createWebhook"],
  ["get", "/webhooks", "jwt", "listWebhooks"],
  ["patch", "/webhooks/:webhook_id", "jwt", "updateWebhook"],
  ["delete", "/webhooks/:webhook_id", "jwt", "deleteWebhook"],
  ["get", "/webhooks/:webhook_id/deliveries", "jwt", "listDeliveries"],
];

export function webhooksRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, WebhooksService, deps.clients.webhooks, webhooksRouteTable);
}
