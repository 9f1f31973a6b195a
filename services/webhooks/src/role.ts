/** the webhooks role (a process of its own, or one of several in one process): see @toolport/kit/service. Its parts are built in deps.ts. */
import { fileURLToPath } from "node:url";
import { pruneInbox } from "@toolport/kit/events";
import { reportWebhookBacklog } from "@toolport/kit/metrics";
import { every, type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { webhooksEnv } from "./config.js";
import { createDeps, type WebhooksDeps } from "./deps.js";
import { FAN_OUT_CONSUMERS, startFanOut } from "./events/fan-out.js";
import { routes } from "./routes.js";

const PRUNE_EVERY_MS = 60 * 60_000;

const webhooks: ServiceDefinition<typeof webhooksEnv, WebhooksDeps> = {
  name: "webhooks",
  defaultPort: 50056,
  env: webhooksEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  // It runs a durable consumer: its readiness needs NATS too.
  consumesEvents: true,
  // It writes no events: its relay's idle safety-net poll can be rare.
  writesEvents: false,
  services: [WebhooksService],
  deps: createDeps,
  routes,
  async background(d, ctx) {
    await d.sender.start();
    // The backlog gauges (toolport_webhook_deliveries_due, ..._oldest_due_seconds), read at each scrape.
    reportWebhookBacklog(() => d.store.backlog());
    const retentionDays = ctx.config.WEBHOOKS_RETENTION_DAYS;
    const consumers = await startFanOut({ nc: ctx.nc, pool: ctx.pool, log: ctx.log, inboxDays: retentionDays });
    // Delivery records and the consumers' inbox rows past the retention, hourly.
    const pruning = [
      every(PRUNE_EVERY_MS, "pruning delivery records", ctx.log, () => d.store.prune(retentionDays)),
      every(PRUNE_EVERY_MS, "pruning the consumers' inbox", ctx.log, () =>
        pruneInbox(ctx.pool, [...FAN_OUT_CONSUMERS], retentionDays),
      ),
    ];
    // Stopped in this order: no new deliveries, then the sender (its attempts in flight are recorded);
    // deps' close() then closes outbound HTTP.
    return [...consumers, { stop: () => d.sender.stop() }, ...pruning, { stop: async () => reportWebhookBacklog(undefined) }];
  },
};

export const webhooksRole = serviceRole(webhooks);
