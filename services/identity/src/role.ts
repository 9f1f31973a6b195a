/** the identity role (a process of its own, or one of several in one process): see @toolport/kit/service. Its parts are built in deps.ts. */
import { fileURLToPath } from "node:url";
import { every, type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { identityEnv } from "./config.js";
import { createDeps } from "./deps.js";
import { startKeyUsageConsumer } from "./events/key-usage.js";
import type { IdentityDeps } from "./handlers/deps.js";
import { routes } from "./routes.js";
import { pruneRateLimitWindows } from "./store/counters.js";
import { pruneLeases, reconcileFreeTier } from "./store/leases.js";

const PRUNE_EVERY_MS = 10 * 60_000;

const identity: ServiceDefinition<typeof identityEnv, IdentityDeps> = {
  name: "identity",
  defaultPort: 50054,
  env: identityEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  // It runs a durable consumer: its readiness needs NATS too.
  consumesEvents: true,
  // It writes no events: its relay's idle safety-net poll can be rare.
  writesEvents: false,
  services: [IdentityService],
  deps: createDeps,
  routes,
  async background(deps, ctx) {
    // A signing key that cannot be loaded (wrong IDENTITY_SECRET_KEY) stops the start here.
    await deps.tokens;
    const consumer = await startKeyUsageConsumer(ctx);
    const housekeeping = every(PRUNE_EVERY_MS, "counter housekeeping", ctx.log, async () => {
      await pruneRateLimitWindows(ctx.pool);
      await pruneLeases(ctx.pool);
      const corrected = await reconcileFreeTier(ctx.pool);
      if (corrected > 0) ctx.log.info({ months: corrected }, "free-tier months reconciled with the recorded calls");
    });
    return [consumer, housekeeping];
  },
};

export const identityRole = serviceRole(identity);
