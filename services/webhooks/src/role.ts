/** the webhooks role (a process of its own, or one of several in one process): see @toolport/kit/service. */
import { fileURLToPath } from "node:url";
import { reportWebhookBacklog } from "@toolport/kit/metrics";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { webhooksEnv } from "./config.js";
import { startFanOut } from "./events/fan-out.js";
import { createDeps, routes } from "./routes.js";

const PRUNE_EVERY_MS = 60 * 60_000;

export const webhooksRole = serviceRole((): ServiceDefinition<typeof webhooksEnv> => {
  let deps: ReturnType<typeof createDeps> | undefined;
  return {
    name: "webhooks",
    defaultPort: 50056,
    env: webhooksEnv,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    // It runs a durable consumer: its readiness needs NATS too.
    consumesEvents: true,
    services: [WebhooksService],
    routes(router, ctx) {
      deps = createDeps(ctx);
      routes(router, ctx, deps);
    },
    async background(ctx) {
      const d = deps!;
      await d.sender.start();
      // The backlog gauges (toolport_webhook_deliveries_due, ..._oldest_due_seconds), read at each scrape.
      reportWebhookBacklog(() => d.store.backlog());
      const consumers = await startFanOut(ctx);
      const prune = setInterval(() => {
        d.store
          .prune(ctx.config.WEBHOOKS_RETENTION_DAYS)
          .catch((err) => ctx.log.warn({ err }, "pruning delivery records failed"));
      }, PRUNE_EVERY_MS);
      prune.unref();
      // Stopped in this order: no new deliveries, then the sender (its attempts in flight are recorded).
      return [
        ...consumers,
        {
          async stop() {
            await d.sender.stop();
            await d.outbound.close();
          },
        },
        { stop: async () => clearInterval(prune) },
        { stop: async () => reportWebhookBacklog(undefined) },
      ];
    },
  };
});
