/**
 * /v1 routes served by the billing service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const billingRouteTable: RpcRoute[] = [
  ["post", "/agents/wallets/fund", "api_key", "fundWallet"],
  ["post", "/agents/wallets/confirm-deposit", "api_key_or_jwt", "confirmDeposit"],
  ["get", "/x402/settings", "api_key_or_jwt", "getSpendingSettings"],
  ["patch", "/x402/settings", "api_key_or_jwt", "updateSpendingSettings"],
];

export function billingRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, BillingService, deps.clients.billing, billingRouteTable);
}
