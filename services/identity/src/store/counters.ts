/**
 * The shared counters. Each rate-limit hit is one atomic upsert on its window row, and each free-tier
 * call one short transaction holding the account's month row, so concurrent replicas never count
 * past a limit. Windows and months come from the database clock, which all replicas share.
 */
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { RateLimitRequest } from "../domain/counters.js";

export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAt: Date;
  retryAfterSeconds: number;
}

export async function consumeRateLimit(pool: Pool, req: RateLimitRequest): Promise<RateLimitOutcome> {
  // Hits beyond the limit are not added, so a refused caller's window still ends on time and the
  // count stays meaningful for monitoring.
  const { rows } = await pool.query<{ hits: number; window_end: Date; now: Date; allowed: boolean }>(
    `WITH w AS (
       SELECT to_timestamp(floor(extract(epoch FROM now()) / $4::int) * $4::int) AS start
     ), upsert AS (
       INSERT INTO rate_limit_windows AS r (bucket, subject_key, window_start, window_seconds, hits)
       SELECT $1::text, $2::text, w.start, $4::int, $5::int FROM w WHERE $5::int <= $3::int
       ON CONFLICT (bucket, subject_key, window_start)
       DO UPDATE SET hits = r.hits + EXCLUDED.hits WHERE r.hits + EXCLUDED.hits <= $3::int
       RETURNING r.hits
     )
     SELECT coalesce((SELECT hits FROM upsert),
                     (SELECT hits FROM rate_limit_windows, w
                       WHERE bucket = $1::text AND subject_key = $2::text AND window_start = w.start), 0) AS hits,
            EXISTS (SELECT 1 FROM upsert) AS allowed,
            (SELECT start FROM w) + make_interval(secs => $4::int) AS window_end,
            now() AS now`,
    [req.bucket, req.subjectKey, req.limit, req.windowSeconds, req.cost],
  );
  const row = rows[0]!;
  const retryAfterSeconds = row.allowed ? 0 : Math.max(1, Math.ceil((row.window_end.getTime() - row.now.getTime()) / 1000));
  return {
    allowed: row.allowed,
    limit: req.limit,
    remaining: remainingAfter(row.allowed, row.hits, req),
    resetAt: row.window_end,
    retryAfterSeconds,
  };
}

/**
 * What is left in the window. A refused hit reads the count in its statement's snapshot, which may
 * predate the concurrent hit that filled the window (the upsert itself saw the latest row): refused
 * means fewer than `cost` hits are left, whatever that snapshot said.
 */
function remainingAfter(allowed: boolean, hits: number, req: { limit: number; cost: number }): number {
  const left = Math.max(0, req.limit - hits);
  return allowed ? left : Math.min(left, req.cost - 1);
}

/** Windows that ended more than a day ago are no longer read by anything. */
export async function pruneRateLimitWindows(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    "DELETE FROM rate_limit_windows WHERE window_start + make_interval(secs => window_seconds) < now() - interval '1 day'",
  );
  return rowCount ?? 0;
}

export interface FreeTierOutcome {
  allowed: boolean;
  callsThisMonth: bigint;
  limit: bigint;
  resetsAt: Date;
}

/**
 * Counts one free-tier call for the account in the current UTC month, once per execution id: a
 * repeated execution id reports the state without counting again (allowed, since it was counted).
 */
export async function consumeFreeTierCall(
  pool: Pool,
  input: { accountId: string; executionId: string; limit: number },
): Promise<FreeTierOutcome> {
  return withTransaction(pool, async (client) => {
    const month = await client.query<{ month: string; resets_at: Date }>(
      `SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS month,
              (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC' AS resets_at`,
    );
    const { month: current, resets_at: resetsAt } = month.rows[0]!;
    const limit = BigInt(input.limit);
    await client.query("INSERT INTO free_tier_usage (account_id, month, calls) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING", [
      input.accountId,
      current,
    ]);
    // Serialises the account's concurrent calls for this month; everything below sees their effects.
    const usage = await client.query<{ calls: bigint }>(
      "SELECT calls FROM free_tier_usage WHERE account_id = $1 AND month = $2 FOR UPDATE",
      [input.accountId, current],
    );
    const seen = await client.query("SELECT 1 FROM free_tier_calls WHERE execution_id = $1", [input.executionId]);
    const calls = usage.rows[0]!.calls;
    if (seen.rowCount === 1) return { allowed: true, callsThisMonth: calls, limit, resetsAt };
    if (calls >= limit) return { allowed: false, callsThisMonth: calls, limit, resetsAt };
    const inserted = await client.query(
      "INSERT INTO free_tier_calls (execution_id, account_id, month) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [input.executionId, input.accountId, current],
    );
    // The same execution counted under another account's lock meanwhile: it counted once already.
    if (inserted.rowCount === 0) return { allowed: true, callsThisMonth: calls, limit, resetsAt };
    await client.query("UPDATE free_tier_usage SET calls = calls + 1 WHERE account_id = $1 AND month = $2", [
      input.accountId,
      current,
    ]);
    return { allowed: true, callsThisMonth: calls + 1n, limit, resetsAt };
  });
}
