/** the execution role (a process of its own, or one of several in one process): see @toolport/kit/service. */
import { fileURLToPath } from "node:url";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { executionEnv } from "./config.js";
import { followLeaseDrops } from "./events/lease-drops.js";
import { followToolChanges } from "./events/tool-changed-follower.js";
import { createDeps, type ExecutionDeps, routes } from "./routes.js";
import { startSettlementSweeper } from "./settlement-sweeper.js";

export const executionRole = serviceRole((): ServiceDefinition<typeof executionEnv> => {
  let deps: ExecutionDeps | undefined;
  return {
    name: "execution",
    defaultPort: 50052,
    env: executionEnv,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [ExecutionService],
    routes(router, ctx) {
      deps = createDeps(ctx);
      routes(router, deps);
    },
    async background(ctx) {
      const sweeper = startSettlementSweeper(deps!, ctx.log, ctx.config.EXECUTION_SETTLEMENT_SWEEP_MS);
      const follower = await followToolChanges(ctx.nc, deps!.tools, ctx.log);
      const drops = followLeaseDrops(ctx.nc, deps!.allowance, ctx.log);
      const batches = deps!.batches.startUpkeep(ctx.config.SHUTDOWN_GRACE_MS);
      // Flushed so identity can reach this holder as soon as the role reports ready.
      await ctx.nc.flush();
      return [sweeper, follower, drops, batches, { stop: () => deps!.close() }];
    },
  };
});
