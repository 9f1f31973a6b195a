/** The billing service's gRPC routes: every RPC of BillingService, served by its handlers. */
import type { ConnectRouter } from "@connectrpc/connect";
import type { Logger } from "@toolport/kit/logger";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { Billing } from "./billing.js";
import { createBillingHandlers } from "./handlers/billing-handlers.js";

export function routes(router: ConnectRouter, billing: Billing, log: Logger): void {
  router.service(BillingService, createBillingHandlers(billing, log));
}
