/** The billing service's gRPC routes: every RPC of BillingService, served by its handlers. */
import type { ConnectRouter } from "@connectrpc/connect";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { BillingDeps } from "./deps.js";
import { createBillingHandlers } from "./handlers/billing-handlers.js";

export function routes(router: ConnectRouter, deps: BillingDeps): void {
  router.service(BillingService, createBillingHandlers(deps, deps.log));
}
