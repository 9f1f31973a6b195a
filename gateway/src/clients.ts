/** One gRPC client per service, each call with the configured deadline. */
import { createServiceClient } from "@toolport/kit/rpc";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import type { GatewayConfig } from "./config.js";

export function createServiceClients(config: GatewayConfig) {
  const options = { timeoutMs: config.RPC_TIMEOUT_MS };
  return {
    catalog: createServiceClient(CatalogService, config.CATALOG_URL, options),
    execution: createServiceClient(ExecutionService, config.EXECUTION_URL, options),
    billing: createServiceClient(BillingService, config.BILLING_URL, options),
    identity: createServiceClient(IdentityService, config.IDENTITY_URL, options),
    content: createServiceClient(ContentService, config.CONTENT_URL, options),
    webhooks: createServiceClient(WebhooksService, config.WEBHOOKS_URL, options),
  };
}

export type ServiceClients = ReturnType<typeof createServiceClients>;
