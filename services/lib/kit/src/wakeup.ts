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
 */
import type { Logger } from "./logger.js";
import type { Pool, PoolClient } from "./pg.js";

/** An idle poll waits at most this many times pollMs. */
export const IDLE_POLL_FACTOR = 4;

export class Wakeup {
  private running = false;
  /** The next poll's wait: pollMs, doubled after each poll that found nothing while listening. */
  private waitMs: number;
  private again = false;
  private stopped = false;
  private poll?: NodeJS.Timeout;
  private listener?: PoolClient;

  /** `look` resolves false when it found nothing to do (then the idle poll may slow down), true otherwise. */
  constructor(private readonly o: { pool: Pool; channel: string; pollMs: number; log: Logger; look: () => Promise<boolean> }) {
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
      // Only a poll that found nothing, with notifications to wake us, slows the next one down.
      this.waitMs =
        polled && found === false && this.listener ? Math.min(this.waitMs * 2, this.o.pollMs * IDLE_POLL_FACTOR) : this.o.pollMs;
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
