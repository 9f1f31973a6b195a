/**
 * The billing service's gRPC routes. Every RPC of BillingService is registered; those without a handler
 * yet answer UNIMPLEMENTED (the gateway maps that to 501) until their issue fills them in.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceContext } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";

export function routes(router: ConnectRouter, _ctx: ServiceContext<unknown>): void {
  router.service(BillingService, {});
}
