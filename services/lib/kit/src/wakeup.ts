/**
 * What a Postgres-backed work queue needs to look for work at the right moments: a run of `look` is
 * started by `wake()`, by a NOTIFY on `channel` (work added by any replica), and by a poll every
 * `pollMs` (a missed notification, a lease that ran out). Wake-ups that come while a look runs are
 * coalesced into one more look after it. The LISTEN connection is re-established on the next look when
 * it breaks; meanwhile the poll carries on. Used by webhooks' sender and content's crawl queue.
 */
import type { Logger } from "./logger.js";
import type { Pool, PoolClient } from "./pg.js";

export class Wakeup {
  private running = false;
  private again = false;
  private stopped = false;
  private poll?: NodeJS.Timeout;
  private listener?: PoolClient;

  constructor(private readonly o: { pool: Pool; channel: string; pollMs: number; log: Logger; look: () => Promise<void> }) {
    if (!/^[a-z_][a-z0-9_]*$/.test(o.channel)) throw new Error(`not a channel name: ${o.channel}`);
  }

  async start(): Promise<void> {
    await this.listen();
    this.poll = setInterval(() => this.wake(), this.o.pollMs);
    this.poll.unref();
    this.wake();
  }

  /** Looks now, or once more right after the look under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void (async () => {
      if (!this.listener) await this.listen();
      await this.o.look();
    })()
      .catch((err) => this.o.log.warn({ err: (err as Error).message, channel: this.o.channel }, "looking for work failed"))
      .finally(() => {
        this.running = false;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** No more looks; the LISTEN connection goes back to the pool. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
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
        if (this.listener === client) this.listener = undefined;
        client.release(true);
      });
      await client.query(`LISTEN ${this.o.channel}`);
      this.listener = client;
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, channel: this.o.channel }, "LISTEN failed; polling only");
    }
  }
}
