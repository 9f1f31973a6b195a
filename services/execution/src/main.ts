/** execution service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { executionEnv } from "./config.js";
import { followToolChanges } from "./events/tool-changed-follower.js";
import { createDeps, type ExecutionDeps, routes } from "./routes.js";
import { startSettlementSweeper } from "./settlement-sweeper.js";

runMain("execution", () => {
  let deps: ExecutionDeps | undefined;
  return runService({
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
      return [sweeper, follower, { stop: () => deps!.close() }];
    },
  });
});
