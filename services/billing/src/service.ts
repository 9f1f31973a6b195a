/**
 * The billing service's definition: its variables, migrations, routes and background work (the hold
 * sweeper, and the deposit watcher when a deposit key and the deposit network's RPC endpoint are set).
 */
import { fileURLToPath } from "node:url";
import type { ServiceContext, ServiceDefinition } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { type Billing, createBilling } from "./billing.js";
import { startDepositWatcher } from "./chain/deposit-watcher.js";
import { billingEnv } from "./config.js";
import { routes } from "./routes.js";
import { startHoldSweeper } from "./sweeper.js";

// routes and background receive the same context object; both use the one Billing built from it.
const built = new WeakMap<object, Billing>();
function billingFor(ctx: ServiceContext<unknown>): Billing {
  let billing = built.get(ctx);
  if (!billing) {
    billing = createBilling(ctx.pool, ctx.config as Parameters<typeof createBilling>[1]);
    built.set(ctx, billing);
  }
  return billing;
}

export const billingService: ServiceDefinition<typeof billingEnv> = {
  name: "billing",
  defaultPort: 50053,
  env: billingEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [BillingService],
  routes(router, ctx) {
    routes(router, billingFor(ctx), ctx.log);
  },
  async background(ctx) {
    const billing = billingFor(ctx);
    const work = [startHoldSweeper(billing.holds, ctx.log, ctx.config.BILLING_HOLD_SWEEP_INTERVAL_MS)];
    if (billing.chain && billing.addresses && ctx.config.BILLING_DEPOSIT_WATCH) {
      work.push(
        startDepositWatcher({
          chain: billing.chain,
          cursors: billing.depositCursors,
          wallets: billing.wallets,
          funding: billing.funding,
          usdcContract: ctx.config.BILLING_USDC_CONTRACT,
          confirmations: ctx.config.BILLING_DEPOSIT_CONFIRMATIONS,
          maxBlocks: ctx.config.BILLING_DEPOSIT_WATCH_MAX_BLOCKS,
          intervalMs: ctx.config.BILLING_DEPOSIT_WATCH_INTERVAL_MS,
          startBlock: ctx.config.BILLING_DEPOSIT_WATCH_START_BLOCK,
          log: ctx.log.child({ part: "deposit-watcher" }),
        }),
      );
    }
    // Stopped in order: the sweeper and the watcher, then the chain client the watcher reads through.
    return [...work, { stop: async () => billing.chain?.destroy() }];
  },
};
