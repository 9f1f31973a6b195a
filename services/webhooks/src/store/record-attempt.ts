/**
 * Recording an attempt: its place in the delivery's history, the delivery's state and the webhook's
 * circuit, as domain/delivery-policy.ts decided them. A record applies only to the series it was made in
 * (a redelivery meanwhile started another), and lets go of the claim.
 */
import type { Pool } from "@toolport/kit/pg";
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
 * A failed attempt: the delivery as decided, in one statement that also reads the webhook's circuit at the
 * database's clock; then, only when `circuit` changes it (the first failure starts the clock, a failure
 * after circuitMs pauses the webhook), the new circuit, written only over the state it was decided from
 * (the row's version), and decided again from a fresh read when another attempt or the owner changed the
 * webhook meanwhile. `paused` when this record paused the webhook.
 */
export async function recordFailure(
  pool: Pool,
  attempt: RecordedAttempt,
  circuit: (state: CircuitState, now: Date) => CircuitState,
): Promise<{ result: RecordResult; paused: boolean }> {
  const { rows } = await pool.query<NonNullable<RecordResult> & CircuitRow>({
    name: "webhooks_record_failure",
    text: `WITH d AS (${RECORD})
           SELECT d.webhook_id, d.status, d.next_attempt_at, ${CIRCUIT_COLUMNS}
             FROM d JOIN webhooks w ON w.id = d.webhook_id`,
    values: recordValues(attempt),
  });
  const row = rows[0];
  if (!row) return { result: null, paused: false };
  const result = { webhook_id: row.webhook_id, status: row.status, next_attempt_at: row.next_attempt_at };
  let seen: CircuitRow | undefined = row;
  for (let tries = 0; seen && tries < CIRCUIT_WRITE_TRIES; tries++) {
    const before = circuitState(seen);
    const after = circuit(before, seen.now);
    if (!circuitChanged(before, after)) return { result, paused: false };
    const written = await pool.query({
      name: "webhooks_circuit_write",
      text: "UPDATE webhooks w SET is_active = $3, failing_since = $4, disabled_reason = $5 WHERE w.id = $1 AND w.xmin::text = $2",
      values: [result.webhook_id, seen.version, after.isActive, after.failingSince, after.disabledReason],
    });
    if (written.rowCount === 1) return { result, paused: before.isActive && !after.isActive };
    const again = await pool.query<CircuitRow>({
      name: "webhooks_circuit_read",
      text: `SELECT ${CIRCUIT_COLUMNS} FROM webhooks w WHERE w.id = $1`,
      values: [result.webhook_id],
    });
    seen = again.rows[0];
  }
  return { result, paused: false };
}

/** How often a circuit write is decided again after the webhook changed under it, at most (attempts in flight per webhook are few). */
const CIRCUIT_WRITE_TRIES = 20;

/** The circuit as a statement reads it: its state, the row's version (xmin, for the conditional write) and the database's clock. */
const CIRCUIT_COLUMNS = "w.is_active, w.failing_since, w.disabled_reason, w.xmin::text AS version, now() AS now";

interface CircuitRow {
  is_active: boolean;
  failing_since: Date | null;
  disabled_reason: string | null;
  version: string;
  now: Date;
}

const circuitState = (row: CircuitRow): CircuitState => ({
  isActive: row.is_active,
  failingSince: row.failing_since,
  disabledReason: row.disabled_reason,
});
