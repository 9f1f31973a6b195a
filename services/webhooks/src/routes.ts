/**
 * The webhooks service's gRPC routes. Every RPC of WebhooksService is registered; those without a handler
 * yet answer UNIMPLEMENTED (the gateway maps that to 501) until their issue fills them in.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceContext } from "@toolport/kit/service";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";

export function routes(router: ConnectRouter, _ctx: ServiceContext<unknown>): void {
  router.service(WebhooksService, {});
}
