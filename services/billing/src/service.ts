/** The billing service's definition: its variables, migrations, routes and background work (the hold sweeper). */
import { fileURLToPath } from "node:url";
import type { ServiceContext, ServiceDefinition } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { type Billing, createBilling } from "./billing.js";
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
    return [
      startHoldSweeper(billing.holds, ctx.log, ctx.config.BILLING_HOLD_SWEEP_INTERVAL_MS),
      { stop: async () => billing.chain?.destroy() },
    ];
  },
};
