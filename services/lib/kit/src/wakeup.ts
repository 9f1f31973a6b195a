/**
 * What a Postgres-backed work queue needs to look for work at the right moments: a run of `look` is
 * started by `wake()`, by a NOTIFY on `channel` (work added by any replica), and by a poll every
 * `pollMs` (a missed notification, a lease that ran out). Wake-ups that come while a look runs are
 * coalesced into one more look after it. The LISTEN connection is re-established on the next look when
 * it breaks; meanwhile the poll carries on. Used by webhooks' sender and content's crawl queue.
 *
 * Idle, the poll slows down: while LISTEN is up and looks find nothing (`look` resolves false), each wait
 * doubles, from pollMs up to IDLE_POLL_FACTOR x pollMs; any wake-up, and any look that found work, brings
 * it back to pollMs. So pollMs is how often an idle process looks at most, IDLE_POLL_FACTOR x pollMs at
 * least (what only a poll finds, a lease that ran out, waits that much longer at worst).
 *
 * A queue that can tell when its next work falls due (a retry's time, a lease's end) resolves
 * `{ dueInMs }` instead of false: while LISTEN is up the next poll waits until then, and with nothing
 * queued at all (`dueInMs: null`) IDLE_WAIT_MAX_MS, since anything new comes with a NOTIFY. Work already
 * due that the look could not take (another replica holds it, its endpoint is at its cap) slows down as
 * false does. An idle stack's queues then ask Postgres every few minutes instead of every few seconds.
 */
import type { Logger } from "./logger.js";
import type { Pool, PoolClient } from "./pg.js";

/** An idle poll waits at most this many times pollMs. */
export const IDLE_POLL_FACTOR = 4;
/**
 * The longest wait of a listening Wakeup whose queue reported when its next work falls due, or that none
 * is queued: a NOTIFY brings new work at once, so this only bounds what a lost notification could delay.
 */
export const IDLE_WAIT_MAX_MS = 5 * 60_000;

/**
 * What a look found: work (true), nothing it can say more about (false), or nothing claimable now with the
 * next work due in `dueInMs` (measured by Postgres's clock), `null` when none is queued.
 */
export type LookResult = boolean | { dueInMs: number | null };

export class Wakeup {
  private running = false;
  /** The next poll's wait: pollMs, doubled after each poll that found nothing while listening. */
  private waitMs: number;
  private again = false;
  private stopped = false;
  private poll?: NodeJS.Timeout;
  private listener?: PoolClient;

  /** `look` resolves false or `{ dueInMs }` when it found nothing to do (then the idle poll may slow down), true otherwise. */
  constructor(private readonly o: { pool: Pool; channel: string; pollMs: number; log: Logger; look: () => Promise<LookResult> }) {
    if (!/^[a-z_][a-z0-9_]*$/.test(o.channel)) throw new Error(`not a channel name: ${o.channel}`);
    this.waitMs = o.pollMs;
  }

  /** How long the next poll waits: pollMs, or more while polls find nothing (tests, diagnostics). */
  get nextPollMs(): number {
    return this.waitMs;
  }

  async start(): Promise<void> {
    await this.listen();
    this.wake();
  }

  /** Looks now, or once more right after the look under way. */
  wake(): void {
    this.waitMs = this.o.pollMs;
    this.look();
  }

  /** The next poll, `waitMs` from now. */
  private schedule(): void {
    clearTimeout(this.poll);
    if (this.stopped) return;
    this.poll = setTimeout(() => this.look(true), this.waitMs);
    this.poll.unref();
  }

  private look(polled = false): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void (async () => {
      if (!this.listener) await this.listen();
      const found = await this.o.look();
      this.waitMs = this.nextWait(found, polled);
    })()
      .catch((err) => {
        this.waitMs = this.o.pollMs;
        this.o.log.warn({ err: (err as Error).message, channel: this.o.channel }, "looking for work failed");
      })
      .finally(() => {
        this.running = false;
        if (this.again && !this.stopped) {
          this.again = false;
          this.look();
        } else this.schedule();
      });
  }

  /** The wait before the next poll after a look that found `found`. */
  private nextWait(found: LookResult, polled: boolean): number {
    const { pollMs } = this.o;
    // Without notifications to wake it, a Wakeup polls at pollMs whatever it found.
    if (found === true || !this.listener) return pollMs;
    // Work falls due later (or none is queued): wait for that, whoever woke this look.
    if (typeof found === "object" && (found.dueInMs === null || found.dueInMs > 0)) {
      return found.dueInMs === null
        ? IDLE_WAIT_MAX_MS
        : Math.min(IDLE_WAIT_MAX_MS, Math.max(pollMs, Math.ceil(found.dueInMs) + 5));
    }
    // Nothing, or due work it could not take: only a poll that found it slows the next one down.
    return polled ? Math.min(this.waitMs * 2, pollMs * IDLE_POLL_FACTOR) : pollMs;
  }

  /** No more looks; the LISTEN connection goes back to the pool. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.poll);
    const client = this.listener;
    this.listener = undefined;
    if (client) {
      client.removeAllListeners("notification");
      await client.query(`UNLISTEN ${this.o.channel}`).catch(() => {});
      client.release();
    }
  }

  private async listen(): Promise<void> {
    try {
      const client = await this.o.pool.connect();
      client.on("notification", () => this.wake());
      client.on("error", (err) => {
        this.o.log.warn({ err: err.message, channel: this.o.channel }, "LISTEN connection failed; polling until it is back");
        if (this.listener === client) {
          this.listener = undefined;
          this.wake(); // back to polling every pollMs, and listening again on this look
        }
        client.release(true);
      });
      await client.query(`LISTEN ${this.o.channel}`);
      this.listener = client;
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, channel: this.o.channel }, "LISTEN failed; polling only");
    }
  }
}
