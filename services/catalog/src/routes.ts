/**
 * The catalog service's gRPC routes. Every RPC of CatalogService is registered; those without a handler
 * yet answer UNIMPLEMENTED (the gateway maps that to 501) until their issue fills them in.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceContext } from "@toolport/kit/service";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";

export function routes(router: ConnectRouter, _ctx: ServiceContext<unknown>): void {
  router.service(CatalogService, {});
}
