/**
 * Recording an attempt: its place in the delivery's history, the delivery's state and the webhook's
 * circuit, as domain/delivery-policy.ts decided them. A record applies only to the series it was made in
 * (a redelivery meanwhile started another), and lets go of the claim.
 */
import { type Pool, type PoolClient, withTransaction } from "@toolport/kit/pg";
import { type AttemptDecision, type CircuitState, circuitChanged } from "../domain/delivery-policy.js";
import type { AttemptRecord } from "../domain/model.js";

export interface RecordedAttempt {
  deliveryId: string;
  series: number;
  record: AttemptRecord;
  decision: AttemptDecision;
}

/** The delivery after the record: its status and next attempt; null when its series had ended (not recorded). */
export type RecordResult = { status: string; next_attempt_at: Date | null; webhook_id: string } | null;

const RECORD = `UPDATE deliveries SET attempts = attempts + 1,
                       attempt_history = attempt_history || jsonb_build_array($2::jsonb),
                       last_response_status = $3,
                       status = $4,
                       next_attempt_at = now() + make_interval(secs => $5::float8),
                       delivered_at = CASE WHEN $6::boolean THEN now() END,
                       locked_until = NULL
                 WHERE id = $1 AND series = $7
             RETURNING webhook_id, status, next_attempt_at`;

const recordValues = (a: RecordedAttempt) => [
  a.deliveryId,
  JSON.stringify(a.record),
  a.record.status,
  a.decision.status,
  a.decision.retryInSeconds, // null: no next attempt (make_interval of null is null)
  a.decision.delivered,
  a.series,
];

/**
 * A successful attempt, in one statement: the delivery as decided, and the webhook's failure clock
 * stopped (after a success the circuit keeps no clock, whatever it was: delivery-policy circuitAfter).
 */
export async function recordSuccess(pool: Pool, attempt: RecordedAttempt): Promise<RecordResult> {
  const { rows } = await pool.query<NonNullable<RecordResult>>({
    name: "webhooks_record_success",
    text: `WITH d AS (${RECORD}),
                w AS (UPDATE webhooks SET failing_since = NULL
                       WHERE id = (SELECT webhook_id FROM d) AND failing_since IS NOT NULL)
           SELECT d.webhook_id, d.status, d.next_attempt_at FROM d`,
    values: recordValues(attempt),
  });
  return rows[0] ?? null;
}

/**
 * A failed attempt, in one transaction: the delivery as decided, then the webhook's circuit as `circuit`
 * decides from its state (read under a row lock, so attempts failing at once each see the one before)
 * at the database's clock. `paused` when this record paused the webhook.
 */
export async function recordFailure(
  pool: Pool,
  attempt: RecordedAttempt,
  circuit: (state: CircuitState, now: Date) => CircuitState,
): Promise<{ result: RecordResult; paused: boolean }> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<NonNullable<RecordResult>>({
      name: "webhooks_record_failure",
      text: RECORD,
      values: recordValues(attempt),
    });
    const result = rows[0] ?? null;
    if (!result) return { result, paused: false };
    return { result, paused: await updateCircuit(client, result.webhook_id, circuit) };
  });
}

async function updateCircuit(
  client: PoolClient,
  webhookId: string,
  circuit: (state: CircuitState, now: Date) => CircuitState,
): Promise<boolean> {
  const { rows } = await client.query<{
    is_active: boolean;
    failing_since: Date | null;
    disabled_reason: string | null;
    now: Date;
  }>({
    name: "webhooks_circuit_state",
    text: "SELECT is_active, failing_since, disabled_reason, now() AS now FROM webhooks WHERE id = $1 FOR UPDATE",
    values: [webhookId],
  });
  const row = rows[0];
  if (!row) return false;
  const before: CircuitState = { isActive: row.is_active, failingSince: row.failing_since, disabledReason: row.disabled_reason };
  const after = circuit(before, row.now);
  if (!circuitChanged(before, after)) return false;
  await client.query({
    name: "webhooks_circuit_write",
    text: "UPDATE webhooks SET is_active = $2, failing_since = $3, disabled_reason = $4 WHERE id = $1",
    values: [webhookId, after.isActive, after.failingSince, after.disabledReason],
  });
  return before.isActive && !after.isActive;
}
