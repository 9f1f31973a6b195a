/** The webhooks service's gRPC routes: every RPC of WebhooksService, on the parts built in deps.ts. */
import type { ConnectRouter } from "@connectrpc/connect";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import type { WebhooksDeps } from "./deps.js";
import { createWebhookHandlers } from "./handlers/webhook-handlers.js";

export function routes(router: ConnectRouter, deps: WebhooksDeps): void {
  router.service(WebhooksService, createWebhookHandlers(deps));
}
