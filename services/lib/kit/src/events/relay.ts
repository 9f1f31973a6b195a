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
   * listens and its looks come back empty, the wait doubles from this up to idlePollMaxMs (or pollMs
   * if that is longer); any wake-up or published row brings it back to pollMs.
   */
  pollMs?: number;
  /**
   * The longest wait between an idle listening relay's polls (default IDLE_POLL_MAX_MS, 10 s). A role that
   * writes no events takes IDLE_POLL_MAX_QUIET_MS: its outbox has nothing a poll could find, and should it
   * ever write one, enqueueEvent's NOTIFY or a nudge still wakes the relay at once.
   */
  idlePollMaxMs?: number;
  batchSize?: number;
  /** How long a nudged relay waits for more rows before it publishes (nudge); default 50 ms. */
  nudgeDelayMs?: number;
  /** The role whose outbox this is, for metrics. */
  role?: string;
}

/**
 * How often an idle relay deletes published rows older than a week (and once at its start): an hour more
 * of week-old rows costs nothing, and an idle stack no longer deletes nothing once a minute per relay.
 */
const PRUNE_EVERY_MS = 60 * 60_000;
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
export const IDLE_POLL_MAX_MS = 10_000;
/** The longest idle poll wait of a role that writes no events (ServiceDefinition.writesEvents: false). */
export const IDLE_POLL_MAX_QUIET_MS = 5 * 60_000;

/**
 * Publishes outbox rows in order. Rows are claimed with SKIP LOCKED so several replicas can run a
 * relay; a failed publish leaves the row for the next round, and JetStream's duplicate window plus
 * the consumers' inboxes absorb a row published twice (a crash between publish and mark).
 */
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
  /**
   * A wake-up since the current batch's claim (a NOTIFY, a flush, a nudge whose delay ran out): rows
   * committed after its snapshot may wait.
   */
  private notified = false;
  /** Batches started so far, and flush() callers waiting for a batch started after their call. */
  private batchesStarted = 0;
  private readonly flushWaiters = new Set<{ after: number; done: (ok: boolean) => void }>();

  /** The next idle wait: pollMs, doubled after each empty look while listening, up to idlePollMaxMs. */
  private idleMs: number;

  constructor(private readonly options: RelayOptions) {
    this.js = options.nc.jetstream();
    this.idleMs = options.pollMs ?? 1000;
  }

  /** How long the relay waits before its next poll if nothing wakes it (tests, diagnostics). */
  get nextPollMs(): number {
    return this.listener ? this.idleMs : (this.options.pollMs ?? 1000);
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
    // Rows committed within nudgeDelayMs of each other go out in one batch: one claim, one mark and one
    // round of acks for all, instead of per call at moderate load. That holds while a batch is out too:
    // a nudge then does not send the relay straight round again, its delay does (unless the batch outlasts
    // it). A batch that starts meanwhile claims the nudged rows and drops the timer. flush() does not wait.
    if (this.nudgeTimer) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.notified = true;
      this.wake?.();
    }, this.options.nudgeDelayMs ?? 50);
    this.nudgeTimer.unref();
  }

  private async run(): Promise<void> {
    const pollMs = this.options.pollMs ?? 1000;
    const idlePollMaxMs = Math.max(pollMs, this.options.idlePollMaxMs ?? IDLE_POLL_MAX_MS);
    let backoffMs = 0;
    while (!this.stopped) {
      let published = 0;
      if (!this.listener && Date.now() >= this.listenAgainAt) await this.listen();
      try {
        published = await this.drain();
        backoffMs = 0;
      } catch (err) {
        backoffMs = Math.min(Math.max(backoffMs * 2, 250), 5000);
        this.options.log.warn({ err: (err as Error).message, retry_in_ms: backoffMs }, "outbox relay: publish failed");
      }
      // A NOTIFY, a flush or a nudge's delay since the last claim: rows committed after its snapshot may be
      // waiting. Otherwise an empty re-poll would only cost a round trip: wait for the next wake-up.
      if (backoffMs === 0 && this.notified) continue;
      const listening = this.listener !== undefined;
      let woken = false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs || (listening ? this.idleMs : pollMs));
        this.wake = () => {
          woken = true;
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      // Slower idle polls only while notifications would wake the relay and nothing did.
      this.idleMs = !woken && listening && published === 0 && backoffMs === 0 ? Math.min(this.idleMs * 2, idlePollMaxMs) : pollMs;
    }
  }

  /**
   * Publishes batch after batch while more is due; returns how many rows it published, and throws on the
   * first failed publish (once the batch's mark is written). Per batch of up to batchSize rows it costs ONE
   * statement while more is due, two for the last, whatever the batch holds:
   *
   * - the claim: a lease on up to batchSize unpublished rows, in seq order, skipping rows another relay
   *   holds (`claim`);
   * - every publish of the batch in flight at once, one wait for all their acks (`publish`);
   * - the mark, which sets published_at and lets go of the claim: when more is due (a full batch, or a
   *   wake-up while the batch was out) in the same statement as the next batch's claim (`markAndClaim`),
   *   else on its own (`mark`, which also records failures).
   *
   * No transaction is held across the publishes. A relay that dies between its publishes and its mark leaves
   * its rows to whichever relay comes after the lease; that relay publishes them with the same Nats-Msg-Id
   * (the event id), which JetStream's duplicate window drops, and the consumers' inboxes absorb anything
   * older than the window.
   */
  private async drain(): Promise<number> {
    const batchSize = this.options.batchSize ?? 100;
    let batch = this.startBatch();
    let rows = await this.claim();
    let total = 0;
    while (rows.length > 0) {
      const acks = await this.publish(rows);
      const failed = acks.findIndex((ack) => ack.status === "rejected");
      const full = rows.length >= batchSize;
      // More is due: a full batch, a wake-up while it was out, or, without LISTEN, anything after a
      // non-empty batch (no notification would tell of rows committed meanwhile).
      const more = failed < 0 && !this.stopped && (full || this.notified || !this.listener);
      const nextBatch = more ? this.startBatch() : batch;
      const next = more ? await this.markAndClaim(rows) : [];
      if (!more) await this.mark(rows, acks);
      const publishedCount = failed < 0 ? rows.length : failed;
      this.observeLag(rows.slice(0, publishedCount));
      total += publishedCount;
      if (failed >= 0) throw (acks[failed] as PromiseRejectedResult).reason;
      // Drained: every row committed before this batch started is out (or held by another relay).
      if (!full) this.drained(batch);
      if (!more) return total;
      batch = nextBatch;
      rows = next;
    }
    this.drained(batch);
    // Published rows older than a week are no longer needed for anything. Pruning scans the table, so it
    // runs at most once an hour (PRUNE_EVERY_MS), and only when the relay is idle.
    if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
      await this.options.pool.query("DELETE FROM outbox WHERE published_at < now() - interval '7 days'");
      this.prunedAt = Date.now();
    }
    return total;
  }

  /** A batch starts (its claim is about to be sent): what woke the relay is now being handled. */
  private startBatch(): number {
    this.notified = false;
    // Rows nudged so far are committed, so this batch's claim sees them: their delay has nothing left to wait for.
    clearTimeout(this.nudgeTimer);
    this.nudgeTimer = undefined;
    return ++this.batchesStarted;
  }

  /** Resolves the flush() callers waiting for a batch that started before `batch`. */
  private drained(batch: number): void {
    for (const waiter of this.flushWaiters) {
      if (waiter.after < batch) {
        this.flushWaiters.delete(waiter);
        waiter.done(true);
      }
    }
  }

  /** The claim alone: a lease on the next batch. */
  private async claim(): Promise<ClaimedRow[]> {
    const { rows } = await this.options.pool.query<ClaimedRow>({
      name: "outbox_claim",
      text: `UPDATE outbox o SET claimed_until = now() + make_interval(secs => $2::int)
               FROM (SELECT seq FROM outbox
                      WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                      ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) c
              WHERE o.seq = c.seq
          RETURNING ${CLAIMED_COLUMNS}`,
      values: [this.options.batchSize ?? 100, CLAIM_LEASE_SECONDS],
    });
    return inSeqOrder(rows);
  }

  /**
   * A batch that went out in full marked published, and the next batch claimed, in one statement. The
   * claim leaves out the rows this statement marks: their lease has not run out, unless the batch took
   * longer than the lease, and a row must not be updated twice in one statement.
   */
  private async markAndClaim(published: ClaimedRow[]): Promise<ClaimedRow[]> {
    const { rows } = await this.options.pool.query<ClaimedRow>({
      name: "outbox_mark_claim",
      text: `WITH marked AS (
               UPDATE outbox SET published_at = now(), attempts = attempts + 1, claimed_until = NULL
                WHERE seq = ANY($3::bigint[])
             )
             UPDATE outbox o SET claimed_until = now() + make_interval(secs => $2::int)
               FROM (SELECT seq FROM outbox
                      WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                        AND seq <> ALL($3::bigint[])
                      ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) c
              WHERE o.seq = c.seq
          RETURNING ${CLAIMED_COLUMNS}`,
      values: [this.options.batchSize ?? 100, CLAIM_LEASE_SECONDS, published.map((row) => row.seq)],
    });
    return inSeqOrder(rows);
  }

  /**
   * One statement for the whole batch: rows up to the first failed publish marked published, every row
   * after it not (nothing after a failed row counts as published before it: those that did reach the
   * stream are sent again next round, and JetStream's duplicate window absorbs them), failures noted,
   * every claim released.
   */
  private async mark(rows: ClaimedRow[], acks: PromiseSettledResult<unknown>[]): Promise<void> {
    const firstFailure = acks.findIndex((ack) => ack.status === "rejected");
    const publishedCount = firstFailure < 0 ? rows.length : firstFailure;
    await this.options.pool.query({
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
  }

  /**
   * Every publish of the batch in flight at once, in seq order on the one connection, each with the event id
   * as its Nats-Msg-Id; one wait for all their acks (not one round trip per row). A row written inside a
   * trace is published in it: a producer span under the writer's, whose context the message carries to the
   * consumers (traceparent, tracestate headers).
   */
  private publish(rows: ClaimedRow[]): Promise<PromiseSettledResult<unknown>[]> {
    return Promise.allSettled(
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
  }

  private observeLag(published: ClaimedRow[]): void {
    const now = Date.now();
    for (const row of published)
      outboxLagSeconds.observe({ role: this.options.role ?? "unknown" }, Math.max(0, now - row.created_at.getTime()) / 1000);
  }
}

/** An outbox row as a claim returns it. */
interface ClaimedRow {
  seq: string;
  id: string;
  subject: string;
  payload: Buffer;
  request_id: string | null;
  trace_context: Record<string, string> | null;
  created_at: Date;
}

const CLAIMED_COLUMNS = "o.seq::text, o.id, o.subject, o.payload, o.request_id, o.trace_context, o.created_at";

/** RETURNING keeps no order: rows are published in seq order. */
function inSeqOrder(rows: ClaimedRow[]): ClaimedRow[] {
  return rows.sort((x, y) => (BigInt(x.seq) < BigInt(y.seq) ? -1 : 1));
}
