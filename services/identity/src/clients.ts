/**
 * The two services identity calls, adapted to the ports its rules use. Each boundary translates the
 * other service's failures in one place: billing's "cannot" becomes wallet_unavailable, catalog's
 * becomes an empty starter list (sign-up must not depend on the catalog) or catalog_unavailable
 * (allow-lists are never accepted unchecked).
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { unavailable } from "@toolport/kit/errors";
import { fromJsonBytes } from "@toolport/kit/json-bytes";
import type { Logger } from "@toolport/kit/logger";
import { createServiceClient } from "@toolport/kit/rpc";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { CatalogPort, WalletPort } from "./domain/ports.js";

/** How another service's failure reads in our logs and messages. */
function describeFailure(err: unknown): string {
  if (err instanceof ConnectError) {
    if (err.code === Code.Unimplemented) return "it answered UNIMPLEMENTED (not built yet)";
    if (err.code === Code.Unavailable) return "it is unreachable";
    if (err.code === Code.DeadlineExceeded) return "it did not answer in time";
    return `it answered ${Code[err.code]}`;
  }
  return "the call failed";
}

export function billingWallets(baseUrl: string, log: Logger, timeoutMs = 5000): WalletPort {
  const billing = createServiceClient(BillingService, baseUrl, { timeoutMs });
  return {
    async createWallet(accountId) {
      try {
        const { wallet } = await billing.createWallet({ accountId });
        if (!wallet?.walletId) throw new Error("billing returned no wallet");
        return { walletId: wallet.walletId, balanceUsdc: wallet.balanceUsdc, depositAddress: wallet.depositAddress ?? null };
      } catch (err) {
        const why = describeFailure(err);
        log.error({ err, account_id: accountId }, `wallet creation failed: billing ${why}`);
        // Every billing failure is the same for the caller: no wallet, so no account; try later.
        throw unavailable(
          "wallet_unavailable",
          `the wallet service could not create a wallet (${why}); no account was created, try again later`,
          { details: { retry_after_seconds: 30 }, cause: err },
        );
      }
    },
  };
}

export function catalogPort(baseUrl: string, log: Logger, timeoutMs = 5000): CatalogPort {
  const catalog = createServiceClient(CatalogService, baseUrl, { timeoutMs });
  return {
    async starterTools(limit) {
      try {
        const { tools } = await catalog.listStarterTools({ limit });
        return tools.slice(0, limit).map((t) => ({
          toolId: t.toolId,
          name: t.name,
          service: t.service,
          description: t.description,
          parameters: fromJsonBytes<JsonObject>(t.parametersJson) ?? { type: "object", properties: {} },
          exampleInput: fromJsonBytes<JsonObject>(t.exampleInputJson) ?? {},
        }));
      } catch (err) {
        log.warn({ err: (err as Error).message }, `try_first left empty: catalog ${describeFailure(err)}`);
        return [];
      }
    },

    async unknownIds(serviceIds, toolIds) {
      try {
        const res = await catalog.checkCatalogIds({ serviceIds, toolIds });
        return { services: res.unknownServiceIds, tools: res.unknownToolIds };
      } catch (err) {
        const why = describeFailure(err);
        log.error({ err }, `allow-list check failed: catalog ${why}`);
        throw unavailable(
          "catalog_unavailable",
          `the catalog cannot check the allow-list ids right now (${why}); the key was not created, try again later`,
          { details: { retry_after_seconds: 5 }, cause: err },
        );
      }
    },
  };
}
