/** Transactions for billing's store: READ COMMITTED plus explicit row locks, retried on a deadlock. */
import { type Pool, type PoolClient, withTransaction } from "@toolport/kit/pg";

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
 * victim, the kit rolls it back and runs it again.
 */
export function inTransaction<T>(pool: Pool, fn: (db: Db) => Promise<T>, attempts = 3): Promise<T> {
  return withTransaction(pool, fn, { attempts });
}
