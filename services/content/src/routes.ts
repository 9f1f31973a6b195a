/**
 * The content service's gRPC routes. Every RPC of ContentService is registered; those without a handler
 * yet answer UNIMPLEMENTED (the gateway maps that to 501) until their issue fills them in.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceContext } from "@toolport/kit/service";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";

export function routes(router: ConnectRouter, _ctx: ServiceContext<unknown>): void {
  router.service(ContentService, {});
}
