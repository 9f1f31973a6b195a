/**
 * The sender: attempts due deliveries and records each attempt.
 *
 * - Deliveries are claimed in Postgres (FOR UPDATE SKIP LOCKED) with a lease (`locked_until`, 1.5 x
 *   the attempt timeout plus 5 s: 20 s by default), so replicas never claim the same delivery at once, and one whose sender
 *   died is claimed again when the lease ends: at least once, receivers dedupe on X-Svc-Delivery.
 * - At most WEBHOOKS_ENDPOINT_CONCURRENCY attempts per webhook are in flight: a claim takes for each
 *   webhook only as many deliveries as it has free slots (the cap minus its leased deliveries), and
 *   this process never runs more than that many for one webhook (what a racing claim of another
 *   replica left it beyond that is handed back at once).
 * - An attempt is one POST through the guarded dialer (@toolport/kit/outbound: only public addresses,
 *   checked on the address dialled; WEBHOOKS_OUTBOUND_ALLOW for local receivers), signed with the
 *   webhook's secret and, for 24 h after a rotation, its previous one. A 2xx within the timeout
 *   succeeds; anything else fails, redirects included (never followed). Failures are retried ~1 s, then
 *   ~4 s later (±20% jitter); the third failure of a series marks the delivery `failed`.
 * - The circuit: a webhook whose every attempt has failed for WEBHOOKS_CIRCUIT_MS (an hour) is paused,
 *   with a reason its owner sees; resuming it (PATCH is_active true) clears both.
 * - Woken by NOTIFY toolport_webhooks (a statement that added deliveries, on any replica), by this
 *   process (redeliveries, retries falling due) and by a poll every WEBHOOKS_POLL_MS.
 */
import type { Logger } from "@toolport/kit/logger";
import { webhookAttempts } from "@toolport/kit/metrics";
import { type Outbound, outboundFailureKind } from "@toolport/kit/outbound";
import type { Pool } from "@toolport/kit/pg";
import type { Sealer } from "@toolport/kit/sealing";
import { Wakeup } from "@toolport/kit/wakeup";
import { signatureHeader } from "@toolport/webhooks-verify";
import { request } from "undici";

export const USER_AGENT = "Svc-Webhooks/1.0";
export const MAX_ATTEMPTS = 3;
/** The retry after the first failure, and after the second (seconds, before jitter). */
export const RETRY_DELAYS_S = [1, 4];
const RESPONSE_BODY_BYTES = 1024;
/** Attempts in flight in this process, all webhooks together. */
const PROCESS_CONCURRENCY = 256;

/** How long a claim holds a delivery: longer than any attempt, short enough to take up a dead sender's work soon. */
export const leaseSeconds = (timeoutMs: number) => Math.ceil((timeoutMs * 1.5) / 1000) + 5;

export interface SenderOptions {
  pool: Pool;
  outbound: Outbound;
  sealer: Sealer;
  log: Logger;
  timeoutMs: number;
  endpointConcurrency: number;
  circuitMs: number;
  pollMs: number;
}

interface Claimed {
  id: string;
  webhook_id: string;
  event: string;
  body: string;
  series: number;
  attempts: number;
  url: string;
  secret: Buffer;
  previous_secret: Buffer | null;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  body: string | null;
}

export class Sender {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private stopped = false;
  private dueTimer?: { at: number; timer: NodeJS.Timeout };
  private readonly attempts = new Set<Promise<void>>();
  private readonly wakeup: Wakeup;

  constructor(private readonly o: SenderOptions) {
    this.wakeup = new Wakeup({
      pool: o.pool,
      channel: "toolport_webhooks",
      pollMs: o.pollMs,
      log: o.log,
      look: () => this.claimLoop(),
    });
  }

  start(): Promise<void> {
    return this.wakeup.start();
  }

  /** Stops claiming, and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.dueTimer) clearTimeout(this.dueTimer.timer);
    await this.wakeup.stop();
    await Promise.allSettled([...this.attempts]);
  }

  /** Looks for due deliveries now (coalesced with a look already under way). */
  wake(): void {
    if (!this.stopped) this.wakeup.wake();
  }

  private async claimLoop(): Promise<void> {
    try {
      for (;;) {
        const room = PROCESS_CONCURRENCY - this.total;
        if (room <= 0 || this.stopped) return;
        const claimed = await this.claim(Math.min(100, room));
        if (claimed.length === 0) return;
        const handBack: string[] = [];
        for (const row of claimed) {
          const busy = this.inFlight.get(row.webhook_id) ?? 0;
          if (busy >= this.o.endpointConcurrency) {
            handBack.push(row.id);
            continue;
          }
          this.inFlight.set(row.webhook_id, busy + 1);
          this.total++;
          const attempt = this.attempt(row).finally(() => {
            this.attempts.delete(attempt);
            this.total--;
            const left = (this.inFlight.get(row.webhook_id) ?? 1) - 1;
            if (left > 0) this.inFlight.set(row.webhook_id, left);
            else this.inFlight.delete(row.webhook_id);
            // A slot came free: deliveries of this webhook may be waiting for it.
            this.wake();
          });
          this.attempts.add(attempt);
        }
        if (handBack.length > 0) {
          await this.o.pool.query("UPDATE deliveries SET locked_until = NULL WHERE id = ANY($1::uuid[])", [handBack]);
          return;
        }
      }
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, "claiming due webhook deliveries failed; retrying on the next poll");
    }
  }

  private async claim(limit: number): Promise<Claimed[]> {
    const { rows } = await this.o.pool.query<Claimed>({
      name: "webhooks_claim",
      // Per webhook, not by global due order, so one webhook's backlog never holds up the others': the
      // webhooks with pending deliveries (a skip scan of deliveries_pending_by_webhook), each one's free
      // slots (the cap minus its leased deliveries), then each one's earliest due deliveries up to that.
      text: `WITH RECURSIVE pending_hooks AS (
               (SELECT d.webhook_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.webhook_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.webhook_id FROM deliveries d
                        WHERE d.status = 'pending' AND d.webhook_id > p.webhook_id ORDER BY d.webhook_id LIMIT 1)
                 FROM pending_hooks p WHERE p.webhook_id IS NOT NULL
             ), slots AS (
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
      values: [leaseSeconds(this.o.timeoutMs), limit, this.o.endpointConcurrency],
    });
    return rows;
  }

  private async attempt(row: Claimed): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      const secrets = [this.o.sealer.open(row.secret, `webhook:${row.webhook_id}`)];
      if (row.previous_secret) secrets.push(this.o.sealer.open(row.previous_secret, `webhook:${row.webhook_id}`));
      outcome = await post(this.o.outbound, row, secrets, this.o.timeoutMs);
    } catch (err) {
      this.o.log.error({ err, delivery_id: row.id }, "a webhook attempt could not be made");
      outcome = { status: null, error: "internal_error", durationMs: 0, body: null };
    }
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const delay = RETRY_DELAYS_S[Math.min(row.attempts, RETRY_DELAYS_S.length - 1)]! * (0.8 + Math.random() * 0.4);
    try {
      const { rows } = await this.o.pool.query<{ status: string; next_attempt_at: Date | null; paused: boolean }>({
        name: "webhooks_record_attempt",
        text: `WITH d AS (
                 UPDATE deliveries SET attempts = attempts + 1,
                        attempt_history = attempt_history || jsonb_build_array($2::jsonb),
                        last_response_status = $3,
                        status = CASE WHEN $4 THEN 'succeeded' WHEN attempts + 1 >= ${MAX_ATTEMPTS} THEN 'failed' ELSE 'pending' END,
                        next_attempt_at = CASE WHEN $4 OR attempts + 1 >= ${MAX_ATTEMPTS} THEN NULL
                                               ELSE now() + make_interval(secs => $5) END,
                        delivered_at = CASE WHEN $4 THEN now() END,
                        locked_until = NULL
                  WHERE id = $1 AND series = $6
                  RETURNING webhook_id, status, next_attempt_at
               ), w AS (
                 UPDATE webhooks SET
                        failing_since = CASE WHEN $4 THEN NULL ELSE coalesce(failing_since, now()) END,
                        is_active = is_active AND ($4 OR failing_since IS NULL OR failing_since > now() - make_interval(secs => $7)),
                        disabled_reason = CASE
                          WHEN NOT $4 AND is_active AND failing_since <= now() - make_interval(secs => $7)
                          THEN 'paused by Toolport: every delivery attempt failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                          ELSE disabled_reason END
                  WHERE id = (SELECT webhook_id FROM d) AND (NOT $4 OR failing_since IS NOT NULL)
                  RETURNING is_active
               )
               SELECT d.status, d.next_attempt_at, coalesce((SELECT NOT is_active FROM w), false) AS paused FROM d`,
        values: [
          row.id,
          JSON.stringify({
            series: row.series,
            attempt: row.attempts + 1,
            at: new Date(Date.now() - outcome.durationMs).toISOString(),
            status: outcome.status,
            error: outcome.error,
            duration_ms: outcome.durationMs,
            body: outcome.body,
          }),
          outcome.status,
          ok,
          delay,
          row.series,
          this.o.circuitMs / 1000,
        ],
      });
      const result = rows[0];
      if (result) webhookAttempts.observe({ status: result.status }, outcome.durationMs / 1000);
      if (result?.paused) this.o.log.warn({ webhook_id: row.webhook_id }, "webhook paused: every attempt failed for too long");
      if (result?.next_attempt_at) this.wakeAt(result.next_attempt_at.getTime());
    } catch (err) {
      // Not recorded: the lease runs out and the delivery is attempted again (at least once).
      this.o.log.error({ err, delivery_id: row.id }, "recording a webhook attempt failed");
    }
  }

  /** A retry falls due then: look again at that moment (one timer, for the earliest). */
  private wakeAt(at: number): void {
    if (this.stopped || (this.dueTimer && this.dueTimer.at <= at)) return;
    if (this.dueTimer) clearTimeout(this.dueTimer.timer);
    const timer = setTimeout(
      () => {
        this.dueTimer = undefined;
        this.wake();
      },
      Math.max(0, at - Date.now() + 5),
    );
    timer.unref();
    this.dueTimer = { at, timer };
  }
}

/** One signed POST; never throws for what the receiver or the network does. */
export async function post(outbound: Outbound, row: Claimed, secrets: string[], timeoutMs: number): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(row.url, {
      method: "POST",
      dispatcher: outbound.agent,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-svc-event": row.event,
        "x-svc-delivery": row.id,
        "x-svc-signature": signatureHeader(secrets, row.body, Math.floor(Date.now() / 1000)),
      },
      body: row.body,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= RESPONSE_BODY_BYTES) break;
      }
    } catch {
      // The status is what counts; a body cut short is kept as far as it came.
    } finally {
      res.body.destroy();
    }
    const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString("utf8");
    return { status: res.statusCode, error: null, durationMs: elapsed(), body: text };
  } catch (err) {
    return { status: null, error: errorClass(err), durationMs: elapsed(), body: null };
  }
}

/** What kind of failure an attempt without a response was (the history's `error`). */
export function errorClass(err: unknown): string {
  const { kind } = outboundFailureKind(err);
  if (kind === "address_not_allowed" || kind === "timeout") return kind;
  return kind === "tls_error" ? "tls_error" : "connection_error";
}
