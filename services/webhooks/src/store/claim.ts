/**
 * The sender's claims: due deliveries of active webhooks, held for an attempt until a lease runs out
 * (`locked_until`), so replicas never claim the same delivery at once and a dead sender's are claimed again.
 */
import type { Pool } from "@toolport/kit/pg";
import type { ClaimedDelivery } from "../domain/model.js";

/**
 * The webhooks with pending deliveries, as a recursive CTE `pending_hooks(webhook_id)` (its last row a
 * NULL): a skip scan of deliveries_pending_by_webhook, one index probe a webhook however many deliveries
 * each has pending. The claim and the next-due time both start from it.
 */
const PENDING_HOOKS = `WITH RECURSIVE pending_hooks AS (
             (SELECT d.webhook_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.webhook_id LIMIT 1)
             UNION ALL
             SELECT (SELECT d.webhook_id FROM deliveries d
                      WHERE d.status = 'pending' AND d.webhook_id > p.webhook_id ORDER BY d.webhook_id LIMIT 1)
               FROM pending_hooks p WHERE p.webhook_id IS NOT NULL
           )`;

/**
 * Up to `limit` due deliveries, per webhook rather than by global due order so that one webhook's backlog
 * never holds up the others': the webhooks with pending deliveries (a skip scan of
 * deliveries_pending_by_webhook), each one's free slots (`perWebhook` minus its leased deliveries), then
 * each one's earliest due deliveries up to that, held for `leaseSeconds`.
 */
export async function claimDue(
  pool: Pool,
  options: { limit: number; perWebhook: number; leaseSeconds: number },
): Promise<ClaimedDelivery[]> {
  const { rows } = await pool.query<ClaimedDelivery>({
    name: "webhooks_claim",
    text: `${PENDING_HOOKS}, slots AS (
             SELECT w.id AS webhook_id,
                    $3 - (SELECT count(*) FROM deliveries y WHERE y.webhook_id = w.id AND y.locked_until > now()) AS free
               FROM pending_hooks p JOIN webhooks w ON w.id = p.webhook_id AND w.is_active
           ), picked AS (
             SELECT x.id, x.next_attempt_at FROM slots s
               CROSS JOIN LATERAL (
                 SELECT d.id, d.next_attempt_at FROM deliveries d
                  WHERE d.webhook_id = s.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= now()
                    AND (d.locked_until IS NULL OR d.locked_until <= now())
                  ORDER BY d.next_attempt_at
                  LIMIT greatest(s.free, 0)
                  FOR UPDATE SKIP LOCKED) x
              ORDER BY x.next_attempt_at
              LIMIT $2
           )
           UPDATE deliveries d SET locked_until = now() + make_interval(secs => $1::int)
             FROM webhooks w
            WHERE d.id IN (SELECT id FROM picked) AND w.id = d.webhook_id
            RETURNING d.id, d.webhook_id, d.event, d.body, d.series, d.attempts, w.url, w.secret,
                      CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret`,
    values: [options.leaseSeconds, options.limit, options.perWebhook],
  });
  return rows;
}

/**
 * How long until a pending delivery may be claimed (its attempt due, its lease over), by Postgres's clock:
 * 0 or less when one already may (another replica holds it, its webhook is at its cap or inactive), null
 * when none is pending. The sender's idle poll waits that long (kit's Wakeup).
 *
 * Read without a pass over the pending deliveries, which a receiver that is down can make many: the
 * earliest unleased one of each webhook with any pending (the claim's skip scan of
 * deliveries_pending_by_webhook, one index probe a webhook), and the leased ones (those in flight,
 * deliveries_in_flight). With 220,000 pending over 21 webhooks: 0.9 ms a look instead of 21 ms
 * (test/bench/webhooks-backlog.mjs).
 */
export async function nextDueInMs(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ due_in_ms: number | null }>({
    name: "webhooks_next_due",
    text: `${PENDING_HOOKS}
           SELECT (EXTRACT(EPOCH FROM least(
                    (SELECT min((SELECT d.next_attempt_at FROM deliveries d
                                  WHERE d.status = 'pending' AND d.webhook_id = p.webhook_id AND d.locked_until IS NULL
                                  ORDER BY d.next_attempt_at LIMIT 1))
                       FROM pending_hooks p WHERE p.webhook_id IS NOT NULL),
                    (SELECT min(greatest(d.next_attempt_at, d.locked_until)) FROM deliveries d
                      WHERE d.status = 'pending' AND d.locked_until IS NOT NULL)
                  ) - now()) * 1000)::float8 AS due_in_ms`,
  });
  return rows[0]?.due_in_ms ?? null;
}

/** Lets go of claimed deliveries this process will not attempt now (its per-webhook cap was reached). */
export async function handBack(pool: Pool, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await pool.query("UPDATE deliveries SET locked_until = NULL WHERE id = ANY($1::uuid[])", [deliveryIds]);
}
