/**
 * The outbox relay: publishes what the outbox holds, in order, with the event id as the message id.
 * Part of `@toolport/kit/events`, whose header says how events work.
 */
import { type JetStreamClient, type NatsConnection, headers as natsHeaders } from "nats";
import { REQUEST_ID_HEADER } from "../context.js";
import type { Logger } from "../logger.js";
import { outboxLagSeconds } from "../metrics.js";
import type { Pool, PoolClient } from "../pg.js";
import { beginSpan, contextFromStored, SpanKind, traceHeaders } from "../tracing.js";
import { currentNatsNames } from "./subjects.js";

export interface RelayOptions {
  pool: Pool;
  nc: NatsConnection;
  log: Logger;
  /**
   * How often to look for unpublished events when no notification arrives (default 1 s). While the relay
   * listens and its looks come back empty, the wait doubles from this up to IDLE_POLL_MAX_MS (or pollMs
   * if that is longer); any wake-up or published row brings it back to pollMs.
   */
  pollMs?: number;
  batchSize?: number;
  /** How long a nudged relay waits for more rows before it publishes (nudge); default 50 ms. */
  nudgeDelayMs?: number;
  /** The role whose outbox this is, for metrics. */
  role?: string;
}

/**
 * Publishes outbox rows in order. Rows are claimed with SKIP LOCKED so several replicas can run a
 * relay; a failed publish leaves the row for the next round, and JetStream's duplicate window plus
 * the consumers' inboxes absorb a row published twice (a crash between publish and mark).
 */
const PRUNE_EVERY_MS = 60_000;
/** How long a relay's claim on a batch lasts: far longer than a batch's publishes (2 s timeout each, in parallel). */
const CLAIM_LEASE_SECONDS = 30;
/** How often a relay whose LISTEN connection broke tries to listen again (it polls meanwhile). */
const LISTEN_RETRY_MS = 5_000;
/**
 * The longest wait between an idle listening relay's polls. With LISTEN (or a nudge) every commit wakes a
 * relay at once, so its poll only finds rows whose relay died after claiming them (free again after
 * CLAIM_LEASE_SECONDS) or before its nudge: a third of the lease at most adds little to that, and an idle
 * stack no longer asks Postgres once a second per relay.
 */
const IDLE_POLL_MAX_MS = 10_000;

export class OutboxRelay {
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly js: JetStreamClient;
  private listener: PoolClient | undefined;
  /** When a relay without a LISTEN connection tries to listen again. */
  private listenAgainAt = 0;
  private prunedAt = 0;
  private nudgeTimer: NodeJS.Timeout | undefined;
  /** A NOTIFY arrived since the current batch started (rows committed after its SELECT may wait). */
  private notified = false;
  /** Batches started so far, and flush() callers waiting for a batch started after their call. */
  private batchesStarted = 0;
  private readonly flushWaiters = new Set<{ after: number; done: (ok: boolean) => void }>();

  constructor(private readonly options: RelayOptions) {
    this.js = options.nc.jetstream();
  }

  async start(): Promise<void> {
    await this.listen();
    this.loop = this.run();
  }

  /** LISTENs for new rows; when the connection breaks (Postgres restarted), the relay polls and listens again. */
  private async listen(): Promise<void> {
    this.listenAgainAt = Date.now() + LISTEN_RETRY_MS;
    let client: PoolClient | undefined;
    let broken = false;
    const drop = () => {
      // After stop() the connection is stop()'s to release.
      if (broken || !client || (this.stopped && this.listener === client)) return;
      broken = true;
      if (this.listener === client) {
        this.listener = undefined;
        this.wake?.(); // a relay waiting out a long idle poll polls at pollMs again from now
      }
      client.release(true);
    };
    try {
      client = await this.options.pool.connect();
      client.on("notification", () => {
        this.notified = true;
        this.wake?.();
      });
      client.on("error", (err) => {
        this.options.log.warn({ err: err.message }, "outbox relay: LISTEN connection lost, polling until it is back");
        drop();
      });
      await client.query("LISTEN toolport_outbox");
      if (!broken) this.listener = client;
    } catch (err) {
      // Polling still works without notifications.
      this.options.log.warn({ err: (err as Error).message }, "outbox relay: LISTEN failed, polling only");
      drop();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.nudgeTimer);
    this.wake?.();
    await this.loop;
    for (const waiter of this.flushWaiters) waiter.done(false);
    this.flushWaiters.clear();
    if (this.listener) {
      await this.listener.query("UNLISTEN toolport_outbox").catch(() => {});
      this.listener.release();
    }
  }

  /**
   * Publishes now what this process committed to the outbox before the call, and resolves once a batch
   * that started after the call has drained the outbox (true), or after timeoutMs (false: the rows stay
   * for the next round, nothing is lost). A producer whose events other services act on (catalog: tool
   * changes that empty execution's tool cache) awaits it before answering, so a change is published
   * before its caller can make the next request. Rows another replica's relay holds at that moment are
   * published by that replica, not awaited here.
   */
  flush(timeoutMs = 2_000): Promise<boolean> {
    if (this.stopped || !this.loop) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter = { after: this.batchesStarted, done: (ok: boolean) => resolve(ok) };
      const timer = setTimeout(() => {
        this.flushWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      waiter.done = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.flushWaiters.add(waiter);
      this.notified = true;
      this.wake?.();
    });
  }

  /**
   * Tells the relay that rows were just committed, without waiting: a producer in this process uses it
   * instead of a NOTIFY (which costs Postgres and this process a message per commit). Relays of other
   * processes still find those rows on their next poll if this one is gone.
   */
  nudge(): void {
    this.notified = true;
    // Rows committed within nudgeDelayMs of each other go out in one batch: one claim, one mark and one
    // round of acks for all, instead of per call at moderate load. flush() does not wait for this.
    if (this.nudgeTimer) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.wake?.();
    }, this.options.nudgeDelayMs ?? 50);
    this.nudgeTimer.unref();
  }

  private async run(): Promise<void> {
    const pollMs = this.options.pollMs ?? 1000;
    let backoffMs = 0;
    /** The next idle wait: pollMs, doubling after each empty look while listening (IDLE_POLL_MAX_MS). */
    let idleMs = pollMs;
    while (!this.stopped) {
      let published = 0;
      if (!this.listener && Date.now() >= this.listenAgainAt) await this.listen();
      this.notified = false;
      const batch = ++this.batchesStarted;
      try {
        published = await this.publishBatch();
        backoffMs = 0;
        if (published < (this.options.batchSize ?? 100)) {
          // Drained: every row committed before this batch started is out (or held by another relay).
          for (const waiter of this.flushWaiters) {
            if (waiter.after < batch) {
              this.flushWaiters.delete(waiter);
              waiter.done(true);
            }
          }
        }
      } catch (err) {
        backoffMs = Math.min(Math.max(backoffMs * 2, 250), 5000);
        this.options.log.warn({ err: (err as Error).message, retry_in_ms: backoffMs }, "outbox relay: publish failed");
      }
      if (backoffMs === 0) {
        // More may be waiting: a full batch, rows committed during this one (their NOTIFY arrived
        // meanwhile), or, without LISTEN, anything after a non-empty batch. Otherwise an empty re-poll
        // would only cost three round trips: wait for the next NOTIFY.
        const full = published >= (this.options.batchSize ?? 100);
        if (full || this.notified || (published > 0 && !this.listener)) continue;
      }
      const listening = this.listener !== undefined;
      let woken = false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs || (listening ? idleMs : pollMs));
        this.wake = () => {
          woken = true;
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      // Slower idle polls only while notifications would wake the relay and nothing did.
      idleMs =
        !woken && listening && published === 0 && backoffMs === 0
          ? Math.min(idleMs * 2, Math.max(pollMs, IDLE_POLL_MAX_MS))
          : pollMs;
    }
  }

  /**
   * Publishes one batch; returns how many rows it published. Throws on the first failure.
   * Two statements, no transaction: a claim (a lease on up to batchSize unpublished rows, in seq order,
   * skipping rows another relay holds), then, after the publishes, one update that marks the batch and
   * lets go of the claim. A relay that dies in between leaves its rows to whichever relay comes after
   * the lease; a row published twice that way is absorbed by JetStream's duplicate window and the
   * consumers' inboxes.
   */
  async publishBatch(): Promise<number> {
    const { pool } = this.options;
    const claimed = await pool.query<{
      seq: string;
      id: string;
      subject: string;
      payload: Buffer;
      request_id: string | null;
      trace_context: Record<string, string> | null;
      created_at: Date;
    }>({
      name: "outbox_claim",
      text: `UPDATE outbox o SET claimed_until = now() + make_interval(secs => $2::int)
               FROM (SELECT seq FROM outbox
                      WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                      ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) c
              WHERE o.seq = c.seq
          RETURNING o.seq::text, o.id, o.subject, o.payload, o.request_id, o.trace_context, o.created_at`,
      values: [this.options.batchSize ?? 100, CLAIM_LEASE_SECONDS],
    });
    // RETURNING keeps no order: publish in seq order.
    const rows = claimed.rows.sort((x, y) => (BigInt(x.seq) < BigInt(y.seq) ? -1 : 1));
    if (rows.length === 0) {
      // Published rows older than a week are no longer needed for anything. Pruning scans the table,
      // so it runs at most once a minute, and only when the relay is idle.
      if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
        await pool.query("DELETE FROM outbox WHERE published_at < now() - interval '7 days'");
        this.prunedAt = Date.now();
      }
      return 0;
    }
    // Every publish of the batch in flight at once, one wait for all their acks (not one round trip
    // per row). Rows are marked published only up to the first failure, so nothing after a failed
    // row counts as published before it; those that did reach the stream are sent again next round
    // and JetStream's duplicate window (same Nats-Msg-Id) absorbs them.
    // A row written inside a trace is published in it: a producer span under the writer's, whose context
    // the message carries to the consumers (traceparent, tracestate headers).
    const acks = await Promise.allSettled(
      rows.map(async (row) => {
        const h = natsHeaders();
        if (row.request_id) h.set(REQUEST_ID_HEADER, row.request_id);
        const span = row.trace_context
          ? beginSpan(`${row.subject} publish`, {
              kind: SpanKind.PRODUCER,
              attributes: {
                "messaging.system": "nats",
                "messaging.destination.name": row.subject,
                "messaging.message.id": row.id,
              },
              parent: contextFromStored(row.trace_context),
            })
          : undefined;
        if (span) for (const [name, value] of Object.entries(traceHeaders(span.context))) h.set(name, value);
        try {
          const ack = await this.js.publish(currentNatsNames().wire(row.subject), row.payload, {
            msgID: row.id,
            headers: h,
            timeout: 2000,
          });
          span?.end();
          return ack;
        } catch (err) {
          span?.end(err);
          throw err;
        }
      }),
    );
    const firstFailure = acks.findIndex((ack) => ack.status === "rejected");
    const publishedCount = firstFailure < 0 ? rows.length : firstFailure;
    // One statement for the whole batch: published rows marked, failed ones noted, every claim released.
    await pool.query({
      name: "outbox_mark",
      text: `UPDATE outbox o
                SET published_at = CASE WHEN f.published THEN now() END,
                    attempts = o.attempts + CASE WHEN f.published OR f.error IS NOT NULL THEN 1 ELSE 0 END,
                    last_error = coalesce(f.error, o.last_error),
                    claimed_until = NULL
               FROM unnest($1::bigint[], $2::boolean[], $3::text[]) AS f(seq, published, error)
              WHERE o.seq = f.seq`,
      values: [
        rows.map((row) => row.seq),
        rows.map((_, i) => i < publishedCount),
        rows.map((_, i) => {
          const ack = acks[i];
          return ack?.status === "rejected" ? String((ack.reason as Error)?.message).slice(0, 500) : null;
        }),
      ],
    });
    const now = Date.now();
    for (const row of rows.slice(0, publishedCount))
      outboxLagSeconds.observe({ role: this.options.role ?? "unknown" }, Math.max(0, now - row.created_at.getTime()) / 1000);
    if (firstFailure >= 0) throw (acks[firstFailure] as PromiseRejectedResult).reason;
    return publishedCount;
  }
}
