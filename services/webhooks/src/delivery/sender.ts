/**
 * The sender: attempts due deliveries and records each attempt.
 *
 * - Deliveries are claimed in Postgres (store/claim.ts: FOR UPDATE SKIP LOCKED) with a lease (`locked_until`,
 *   1.5 x the attempt timeout plus 5 s: 20 s by default), so replicas never claim the same delivery at once,
 *   and one whose sender died is claimed again when the lease ends: at least once, receivers dedupe on
 *   X-Svc-Delivery.
 * - At most WEBHOOKS_ENDPOINT_CONCURRENCY attempts per webhook are in flight: a claim takes for each
 *   webhook only as many deliveries as it has free slots (the cap minus its leased deliveries), and
 *   this process never runs more than that many for one webhook (what a racing claim of another
 *   replica left it beyond that is handed back at once).
 * - An attempt is one signed POST (clients/receiver.ts). What its outcome does to the delivery (retries,
 *   `failed` after the last of a series) and to the webhook's circuit is domain/delivery-policy.ts's to
 *   decide; store/record-attempt.ts writes it.
 * - Woken by NOTIFY toolport_webhooks (a statement that added deliveries, on any replica), by this
 *   process (redeliveries, retries falling due) and by a poll every WEBHOOKS_POLL_MS (idle: when the next
 *   pending delivery falls due or its lease runs out, or every 5 minutes with none pending).
 */
import type { Logger } from "@toolport/kit/logger";
import { webhookAttempts } from "@toolport/kit/metrics";
import type { Outbound } from "@toolport/kit/outbound";
import type { Pool } from "@toolport/kit/pg";
import type { Sealer } from "@toolport/kit/sealing";
import { type LookResult, Wakeup } from "@toolport/kit/wakeup";
import { post } from "../clients/receiver.js";
import { afterAttempt, attemptSucceeded, circuitAfter, leaseSeconds } from "../domain/delivery-policy.js";
import type { AttemptOutcome, AttemptRecord, ClaimedDelivery } from "../domain/model.js";
import { claimDue, handBack, nextDueInMs } from "../store/claim.js";
import { type RecordedAttempt, recordFailure, recordSuccess } from "../store/record-attempt.js";

/** Attempts in flight in this process, all webhooks together. */
const PROCESS_CONCURRENCY = 256;

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

  /**
   * Claims and starts due deliveries while there are any; when the first claim found none, when the next
   * pending one falls due (the idle poll waits until then).
   */
  private async claimLoop(): Promise<LookResult> {
    let found = false;
    try {
      for (;;) {
        const room = PROCESS_CONCURRENCY - this.total;
        if (room <= 0 || this.stopped) return true;
        const claimed = await claimDue(this.o.pool, {
          limit: Math.min(100, room),
          perWebhook: this.o.endpointConcurrency,
          leaseSeconds: leaseSeconds(this.o.timeoutMs),
        });
        if (claimed.length === 0) return found || { dueInMs: await nextDueInMs(this.o.pool) };
        found = true;
        const handingBack: string[] = [];
        for (const row of claimed) {
          const busy = this.inFlight.get(row.webhook_id) ?? 0;
          if (busy >= this.o.endpointConcurrency) {
            handingBack.push(row.id);
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
        if (handingBack.length > 0) {
          await handBack(this.o.pool, handingBack);
          return true;
        }
      }
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, "claiming due webhook deliveries failed; retrying on the next poll");
      return true;
    }
  }

  private async attempt(row: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      const secrets = [this.o.sealer.open(row.secret, `webhook:${row.webhook_id}`)];
      if (row.previous_secret) secrets.push(this.o.sealer.open(row.previous_secret, `webhook:${row.webhook_id}`));
      outcome = await post(this.o.outbound, row, secrets, this.o.timeoutMs);
    } catch (err) {
      this.o.log.error({ err, delivery_id: row.id }, "a webhook attempt could not be made");
      outcome = { status: null, error: "internal_error", durationMs: 0, body: null };
    }
    const ok = attemptSucceeded(outcome.status);
    const record: AttemptRecord = {
      series: row.series,
      attempt: row.attempts + 1,
      at: new Date(Date.now() - outcome.durationMs).toISOString(),
      status: outcome.status,
      error: outcome.error,
      duration_ms: outcome.durationMs,
      body: outcome.body,
    };
    const attempt: RecordedAttempt = {
      deliveryId: row.id,
      series: row.series,
      record,
      decision: afterAttempt(record.attempt, ok),
    };
    try {
      const { result, paused } = ok
        ? { result: await recordSuccess(this.o.pool, attempt), paused: false }
        : await recordFailure(this.o.pool, attempt, (state, now) => circuitAfter(state, false, now, this.o.circuitMs));
      if (result) webhookAttempts.observe({ status: result.status }, outcome.durationMs / 1000);
      if (paused) this.o.log.warn({ webhook_id: row.webhook_id }, "webhook paused: every attempt failed for too long");
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
