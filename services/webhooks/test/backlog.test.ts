/**
 * The webhook sender's backlog as the metrics report it (toolport_webhook_deliveries_due,
 * toolport_webhook_oldest_due_seconds), read from the webhooks database at each scrape: deliveries due to
 * active webhooks that no sender holds, and how long the oldest has waited. Against the run's Postgres.
 */
import { randomUUID } from "node:crypto";
import { metrics, reportWebhookBacklog } from "@toolport/kit/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { WebhookStore } from "../src/store/webhook-store.js";

describe("the webhook backlog metrics", () => {
  let db: TestDatabase;
  let store: WebhookStore;

  beforeAll(async () => {
    db = await migratedDatabase("webhook_backlog", "webhooks");
    store = new WebhookStore(db.pool);
  });
  afterAll(async () => {
    reportWebhookBacklog(undefined);
    await db?.pool.end();
  });

  async function webhook(active: boolean): Promise<string> {
    const id = randomUUID();
    await db.pool.query("INSERT INTO webhooks (id, owner_id, url, events, is_active, secret) VALUES ($1, $2, $3, $4, $5, $6)", [
      id,
      randomUUID(),
      "https://receiver.example/hook",
      ["execution.completed"],
      active,
      Buffer.from("sealed"),
    ]);
    return id;
  }

  async function delivery(webhookId: string, status: string, dueInSeconds: number, lockedForSeconds?: number): Promise<void> {
    await db.pool.query(
      `INSERT INTO deliveries (id, webhook_id, event, event_id, body, status, next_attempt_at, locked_until)
       VALUES ($1, $2, 'execution.completed', $3, '{}', $4, now() + make_interval(secs => $5),
               CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6) END)`,
      [randomUUID(), webhookId, randomUUID(), status, dueInSeconds, lockedForSeconds ?? null],
    );
  }

  it("counts the deliveries due to active webhooks that no sender holds, and the oldest one's wait", async () => {
    expect(await store.backlog()).toEqual({ due: 0, oldestDueSeconds: 0 });
    const active = await webhook(true);
    const paused = await webhook(false);
    await delivery(active, "pending", -120); // due two minutes ago: the oldest
    await delivery(active, "pending", -10);
    await delivery(active, "pending", 60); // not due yet
    await delivery(active, "pending", -300, 30); // being attempted (a sender holds it)
    await delivery(active, "succeeded", -900);
    await delivery(paused, "pending", -600); // its webhook is paused: waits by design

    const backlog = await store.backlog();
    expect(backlog.due).toBe(2);
    expect(backlog.oldestDueSeconds).toBeGreaterThanOrEqual(120);
    expect(backlog.oldestDueSeconds).toBeLessThan(300);

    reportWebhookBacklog(() => store.backlog());
    const text = await metrics.metrics();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    expect(value("toolport_webhook_deliveries_due")).toBe(2);
    expect(value("toolport_webhook_oldest_due_seconds")).toBeGreaterThanOrEqual(120);
  });
});
