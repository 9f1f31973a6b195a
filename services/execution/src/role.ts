/** the execution role (a process of its own, or one of several in one process): see @toolport/kit/service. Its parts are built in deps.ts. */
import { fileURLToPath } from "node:url";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { executionEnv } from "./config.js";
import { createDeps, type ExecutionDeps } from "./deps.js";
import { followLeaseDrops } from "./events/lease-drops.js";
import { followToolChanges } from "./events/tool-changed-follower.js";
import { routes } from "./routes.js";
import { startSettlementSweeper } from "./settlement-sweeper.js";

const execution: ServiceDefinition<typeof executionEnv, ExecutionDeps> = {
  name: "execution",
  defaultPort: 50052,
  env: executionEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [ExecutionService],
  deps: createDeps,
  routes,
  async background(deps, ctx) {
    const sweeper = startSettlementSweeper(deps, ctx.log, ctx.config.EXECUTION_SETTLEMENT_SWEEP_MS);
    const follower = await followToolChanges(ctx.nc, deps.tools, ctx.log);
    const drops = followLeaseDrops(ctx.nc, deps.allowance, ctx.log);
    const batches = deps.batches.startUpkeep(ctx.config.SHUTDOWN_GRACE_MS);
    // Flushed so identity can reach this holder as soon as the role reports ready.
    await ctx.nc.flush();
    // Stopped in this order, then deps' close().
    return [sweeper, follower, drops, batches];
  },
};

export const executionRole = serviceRole(execution);
