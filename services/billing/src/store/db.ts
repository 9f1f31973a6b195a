/** Transactions for billing's store: READ COMMITTED plus explicit row locks, retried on a deadlock. */
import type { Pool, PoolClient } from "@toolport/kit/pg";

export type Db = PoolClient;

/** Postgres error codes billing reacts to. */
export const PgCode = {
  uniqueViolation: "23505",
  checkViolation: "23514",
  deadlock: "40P01",
  serialization: "40001",
} as const;

export const pgCode = (err: unknown): string | undefined => (err as { code?: string } | null)?.code;

/**
 * Runs `fn` in a transaction. Lock order everywhere is wallet row first, then hold row, then ledger
 * accounts, so deadlocks should not happen; should Postgres still pick this transaction as a deadlock
 * victim, it is rolled back and run again.
 */
export async function inTransaction<T>(pool: Pool, fn: (db: Db) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      const code = pgCode(err);
      if (attempt < attempts && (code === PgCode.deadlock || code === PgCode.serialization)) continue;
      throw err;
    } finally {
      client.release();
    }
  }
}
