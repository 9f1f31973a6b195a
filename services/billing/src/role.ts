/**
 * The billing role (a process of its own, or one of several in one process): its variables, migrations,
 * routes and background work (the hold sweeper, and the deposit watcher when a deposit key and the
 * deposit network's RPC endpoint are set). Its parts are built in deps.ts; the start-up and shutdown
 * sequence is @toolport/kit/service's.
 */
import { fileURLToPath } from "node:url";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { startDepositWatcher } from "./chain/deposit-watcher.js";
import { billingEnv } from "./config.js";
import { type BillingDeps, createDeps } from "./deps.js";
import { routes } from "./routes.js";
import { SWEEP_IDLE_MAX_MS, startHoldSweeper } from "./sweeper.js";

export const billingService: ServiceDefinition<typeof billingEnv, BillingDeps> = {
  name: "billing",
  defaultPort: 50053,
  env: billingEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [BillingService],
  deps: createDeps,
  routes,
  async background(billing, ctx) {
    const sweepIdleMaxMs = Math.min(SWEEP_IDLE_MAX_MS, ctx.config.BILLING_HOLD_TTL_SECONDS * 1000);
    const work = [startHoldSweeper(billing.holds, ctx.log, ctx.config.BILLING_HOLD_SWEEP_INTERVAL_MS, sweepIdleMaxMs)];
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
    // Stopped in order: the sweeper and the watcher; then deps' close() ends the chain client they read through.
    return work;
  },
};

export const billingRole = serviceRole(billingService);
