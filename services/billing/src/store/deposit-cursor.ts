/**
 * The deposit watcher's stored place on the deposit network: the first block it has not scanned yet
 * (every transfer before it is credited), per network and token contract. One watcher at a time moves it: a round holds a transaction
 * advisory lock while it scans, so replicas of billing take turns instead of scanning the same blocks.
 */
import type { Pool } from "@toolport/kit/pg";

/** Any constant: the advisory lock the watcher's rounds take (one lock per billing database). */
const WATCHER_LOCK = 8_453_001;

export class DepositCursorStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Runs one round of the watcher under the lock: `scan` gets the stored cursor (null when none yet)
   * and answers the block to store next, or null to leave it as it is. Answers false, without running
   * `scan`, when another replica's round holds the lock. The cursor is written after the scan's
   * credits committed, so a crash in between scans those blocks again (the credits' own guard makes the
   * second pass a no-op) and never skips them.
   */
  async round(network: string, token: string, scan: (next: bigint | null) => Promise<bigint | null>): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const locked = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [WATCHER_LOCK]);
      if (!locked.rows[0]?.ok) {
        await client.query("ROLLBACK");
        return false;
      }
      const found = await client.query<{ next_block: bigint }>(
        "SELECT next_block FROM deposit_watch_cursors WHERE network = $1 AND token = $2",
        [network, token],
      );
      const next = await scan(found.rows[0]?.next_block ?? null);
      if (next !== null) {
        await client.query(
          `INSERT INTO deposit_watch_cursors (network, token, next_block) VALUES ($1, $2, $3)
           ON CONFLICT (network, token) DO UPDATE SET next_block = EXCLUDED.next_block, updated_at = now()`,
          [network, token, next],
        );
      }
      await client.query("COMMIT");
      return true;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async get(network: string, token: string): Promise<bigint | null> {
    const { rows } = await this.pool.query<{ next_block: bigint }>(
      "SELECT next_block FROM deposit_watch_cursors WHERE network = $1 AND token = $2",
      [network, token],
    );
    return rows[0]?.next_block ?? null;
  }
}
