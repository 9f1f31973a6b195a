/**
 * The registry and the delivery history, as the handlers use them (domain/ports.ts): webhooks (secrets
 * sealed, bound to their webhook's id), a page of deliveries, a redelivery, the test delivery, and the
 * backlog and retention the role runs. The sender's statements are in claim.ts and record-attempt.ts,
 * the consumers' in fan-out.ts.
 */
import { randomUUID } from "node:crypto";
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { DeliveryRecord, WebhookPatch, WebhookRecord } from "../domain/model.js";
import type { DeliveryHistory, WebhookRegistry } from "../domain/ports.js";

const WEBHOOK_COLUMNS = "id, owner_id, url, events, is_active, description, disabled_reason, created_at, updated_at";
const DELIVERY_COLUMNS = `id, webhook_id, event, event_id, status, series, attempts, attempt_history, last_response_status,
  next_attempt_at, created_at, delivered_at`;

export class WebhookStore implements WebhookRegistry, DeliveryHistory {
  constructor(private readonly pool: Pool) {}

  /** Registers a webhook unless its owner already has `max`; null when at the limit. */
  async create(
    input: { ownerId: string; url: string; events: string[]; description: string },
    seal: (id: string) => Buffer,
    max: number,
  ): Promise<WebhookRecord | null> {
    return withTransaction(this.pool, async (client) => {
      // One owner's creations one at a time, so two at once cannot both pass the count.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('webhooks:' || $1))", [input.ownerId]);
      const { rows: count } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks WHERE owner_id = $1", [
        input.ownerId,
      ]);
      if (count[0]!.n >= max) return null;
      const id = randomUUID();
      const { rows } = await client.query<WebhookRecord>(
        `INSERT INTO webhooks (id, owner_id, url, events, description, secret) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING ${WEBHOOK_COLUMNS}`,
        [id, input.ownerId, input.url, input.events, input.description, seal(id)],
      );
      return rows[0]!;
    });
  }

  async list(ownerId: string): Promise<WebhookRecord[]> {
    const { rows } = await this.pool.query<WebhookRecord>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`,
      [ownerId],
    );
    return rows;
  }

  async get(ownerId: string, id: string): Promise<WebhookRecord | null> {
    const { rows } = await this.pool.query<WebhookRecord>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND owner_id = $2`,
      [id, ownerId],
    );
    return rows[0] ?? null;
  }

  /** Only the given fields change; resuming clears the circuit's reason and its failure clock. */
  async update(ownerId: string, id: string, patch: WebhookPatch): Promise<WebhookRecord | null> {
    const sets: string[] = ["updated_at = now()"];
    const values: unknown[] = [id, ownerId];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (patch.url !== undefined) set("url", patch.url);
    if (patch.events !== undefined) set("events", patch.events);
    if (patch.description !== undefined) set("description", patch.description);
    if (patch.is_active !== undefined) {
      set("is_active", patch.is_active);
      if (patch.is_active) sets.push("disabled_reason = NULL", "failing_since = NULL");
    }
    const { rows } = await this.pool.query<WebhookRecord>(
      `UPDATE webhooks SET ${sets.join(", ")} WHERE id = $1 AND owner_id = $2 RETURNING ${WEBHOOK_COLUMNS}`,
      values,
    );
    return rows[0] ?? null;
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM webhooks WHERE id = $1 AND owner_id = $2", [id, ownerId]);
    return rowCount === 1;
  }

  /** The new secret signs from now on; the one it replaces signs beside it for `overlapHours`. */
  async rotate(
    ownerId: string,
    id: string,
    sealed: Buffer,
    overlapHours: number,
  ): Promise<{ webhook: WebhookRecord; previousExpiresAt: Date } | null> {
    const { rows } = await this.pool.query<WebhookRecord & { previous_secret_expires_at: Date }>(
      `UPDATE webhooks SET previous_secret = secret, secret = $3,
              previous_secret_expires_at = now() + make_interval(hours => $4), updated_at = now()
        WHERE id = $1 AND owner_id = $2 RETURNING ${WEBHOOK_COLUMNS}, previous_secret_expires_at`,
      [id, ownerId, sealed, overlapHours],
    );
    const row = rows[0];
    return row ? { webhook: row, previousExpiresAt: row.previous_secret_expires_at } : null;
  }

  /** Newest first; the cursor is the last row's (created_at, id). */
  async deliveries(
    webhookId: string,
    options: { status?: string; limit: number; after?: { createdAt: Date; id: string } },
  ): Promise<{ rows: DeliveryRecord[]; more: boolean }> {
    const values: unknown[] = [webhookId, options.limit + 1];
    const where = ["webhook_id = $1"];
    if (options.status) {
      values.push(options.status);
      where.push(`status = $${values.length}`);
    }
    if (options.after) {
      values.push(options.after.createdAt, options.after.id);
      where.push(`(created_at, id) < ($${values.length - 1}, $${values.length}::uuid)`);
    }
    const { rows } = await this.pool.query<DeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT $2`,
      values,
    );
    return { rows: rows.slice(0, options.limit), more: rows.length > options.limit };
  }

  /**
   * Deliveries due now to active webhooks and not in flight (no sender holds them), and how long the
   * oldest has waited: the sender's backlog, for the metrics. A paused webhook's deliveries wait by design.
   */
  async backlog(): Promise<{ due: number; oldestDueSeconds: number }> {
    const { rows } = await this.pool.query<{ due: number; oldest: number }>(
      `SELECT count(*)::int AS due, coalesce(extract(epoch FROM now() - min(d.next_attempt_at)), 0)::float8 AS oldest
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.is_active
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until <= now())`,
    );
    return { due: rows[0]?.due ?? 0, oldestDueSeconds: rows[0]?.oldest ?? 0 };
  }

  /**
   * A new series of attempts for a delivery that is not pending (same id, its history kept). Null when
   * there is no such delivery of this webhook; "pending" when one is still being attempted.
   */
  async redeliver(webhookId: string, deliveryId: string): Promise<DeliveryRecord | "pending" | null> {
    const { rows } = await this.pool.query<DeliveryRecord>(
      `UPDATE deliveries SET series = series + 1, attempts = 0, status = 'pending', next_attempt_at = now(),
              delivered_at = NULL, locked_until = NULL
        WHERE id = $1 AND webhook_id = $2 AND status <> 'pending' RETURNING ${DELIVERY_COLUMNS}`,
      [deliveryId, webhookId],
    );
    if (rows[0]) return rows[0];
    const { rowCount } = await this.pool.query("SELECT 1 FROM deliveries WHERE id = $1 AND webhook_id = $2", [
      deliveryId,
      webhookId,
    ]);
    return rowCount === 1 ? "pending" : null;
  }

  /** A delivery for this webhook alone (the test event). */
  async addDelivery(webhookId: string, event: string, body: string): Promise<DeliveryRecord> {
    const { rows } = await this.pool.query<DeliveryRecord>(
      `INSERT INTO deliveries (id, webhook_id, event, event_id, body, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${DELIVERY_COLUMNS}`,
      [randomUUID(), webhookId, event, `test-${randomUUID()}`, body],
    );
    return rows[0]!;
  }

  /** Delivery records older than the retention. */
  async prune(retentionDays: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      "DELETE FROM deliveries WHERE created_at < now() - make_interval(days => $1) AND status <> 'pending'",
      [retentionDays],
    );
    return rowCount ?? 0;
  }
}
