/**
 * The shared counters. Each rate-limit hit is one atomic upsert on its window row, and each free-tier
 * call one short transaction holding the account's month row, so concurrent replicas never count
 * past a limit. Windows and months come from the database clock, which all replicas share.
 */
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { RateLimitRequest } from "../domain/counters.js";
import { LAST_USED_RESOLUTION_SECONDS } from "./keys.js";

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

/** The API key a call was authenticated with (the principal's key, account and organization). */
export interface KeyCheck {
  keyId: string;
  accountId: string;
  organizationId: string;
}

export interface CallAllowanceOutcome {
  /** False when a key check was asked for and failed: then nothing was counted. */
  keyValid: boolean;
  rateLimit: RateLimitOutcome;
  /** Present when a free-tier call was asked for and the rate limit allowed the call. */
  freeTier?: FreeTierOutcome;
}

/**
 * The per-call counters of execution in ONE statement (one round trip, row locks held only for the
 * statement): the rate-limit hit first, then, only if it was allowed and a free-tier call is asked
 * for, the free-tier call, counted once per execution id. Same rules as consumeRateLimit and
 * consumeFreeTierCall above:
 *  - the month row is bumped only while below the limit (`calls < limit` under the row lock of the
 *    upsert), so concurrent replicas never count past it;
 *  - an execution id already counted reports the state without counting again.
 * A data-modifying CTE cannot see the rows another CTE of the same statement inserts, so two
 * concurrent calls with the SAME execution id (a retried RPC racing its original) can both bump the
 * month row; the one whose execution-id row then conflicts takes its bump back at once (a second
 * statement), so each execution still counts once; a copy refused at the limit while another copy
 * was counted is allowed (a second read, on the refusal path only). Between a double bump and its
 * take-back another call at the very limit may be refused: the error is on the safe side and needs
 * the same execution id sent twice at once, which execution never does.
 *
 * With a key check (the gateway caches principals for tool calls), the same statement first checks
 * what Authenticate's statement checks (store/keys.ts): the key exists, belongs to the account, is not
 * revoked, and its owner is still a member of the call's organization. When it fails, no counter CTE
 * proposes a row (nothing is counted) and `keyValid` is false. When it passes, the throttled
 * `last_used_at` write of Authenticate happens here too, so `last_used` keeps its resolution for calls
 * that skipped Authenticate. That write (`touched`) is read by nothing, so Postgres runs it after the
 * counter CTEs: every copy of this statement takes its row locks in the same order (counters, then the
 * key row, at most once per resolution window), so concurrent copies cannot deadlock.
 */
export async function consumeCallAllowance(
  pool: Pool,
  rate: RateLimitRequest,
  free: { accountId: string; executionId: string; limit: number } | undefined,
  key?: KeyCheck,
): Promise<CallAllowanceOutcome> {
  const { rows } = await pool.query<{
    hits: number;
    allowed: boolean;
    window_end: Date;
    now: Date;
    month: string;
    resets_at: Date;
    bumped: string | null;
    recorded: boolean;
    seen: boolean;
    calls: string | null;
    key_ok: boolean;
  }>({
    // Named: prepared once per connection, so Postgres does not re-plan this statement on every call.
    name: "identity_consume_call_allowance",
    text: `WITH kc AS (
       SELECT $9::uuid IS NULL OR EXISTS (
                SELECT 1 FROM api_keys k
                  JOIN memberships mb ON mb.account_id = k.account_id AND mb.organization_id = $11::uuid
                 WHERE k.id = $9::uuid AND k.account_id = $10::uuid AND k.revoked_at IS NULL) AS ok
     ), touched AS (
       UPDATE api_keys t SET last_used_at = now()
         FROM kc
        WHERE kc.ok AND t.id = $9::uuid
          AND (t.last_used_at IS NULL OR t.last_used_at < now() - make_interval(secs => ${LAST_USED_RESOLUTION_SECONDS}))
       RETURNING t.id
     ), w AS (
       SELECT to_timestamp(floor(extract(epoch FROM now()) / $4::int) * $4::int) AS start
     ), rl AS (
       INSERT INTO rate_limit_windows AS r (bucket, subject_key, window_start, window_seconds, hits)
       SELECT $1::text, $2::text, w.start, $4::int, $5::int FROM w, kc WHERE kc.ok AND $5::int <= $3::int
       ON CONFLICT (bucket, subject_key, window_start)
       DO UPDATE SET hits = r.hits + EXCLUDED.hits WHERE r.hits + EXCLUDED.hits <= $3::int
       RETURNING r.hits
     ), m AS (
       SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS month,
              (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC' AS resets_at
     ), seen AS (
       SELECT 1 FROM free_tier_calls WHERE $6::uuid IS NOT NULL AND execution_id = $7::text
     ), ft AS (
       INSERT INTO free_tier_usage AS u (account_id, month, calls)
       SELECT $6::uuid, m.month, 1 FROM m
        WHERE $6::uuid IS NOT NULL AND $8::bigint >= 1
          AND EXISTS (SELECT 1 FROM rl) AND NOT EXISTS (SELECT 1 FROM seen)
       ON CONFLICT (account_id, month) DO UPDATE SET calls = u.calls + 1 WHERE u.calls < $8::bigint
       RETURNING u.calls
     ), rec AS (
       INSERT INTO free_tier_calls (execution_id, account_id, month)
       SELECT $7::text, $6::uuid, m.month FROM ft, m
       ON CONFLICT DO NOTHING
       RETURNING 1
     )
     SELECT coalesce((SELECT hits FROM rl),
                     (SELECT hits FROM rate_limit_windows, w
                       WHERE bucket = $1::text AND subject_key = $2::text AND window_start = w.start), 0) AS hits,
            EXISTS (SELECT 1 FROM rl) AS allowed,
            (SELECT start FROM w) + make_interval(secs => $4::int) AS window_end,
            now() AS now,
            to_char(m.month, 'YYYY-MM-DD') AS month,
            m.resets_at,
            (SELECT calls FROM ft)::text AS bumped,
            EXISTS (SELECT 1 FROM rec) AS recorded,
            EXISTS (SELECT 1 FROM seen) AS seen,
            (SELECT calls FROM free_tier_usage WHERE account_id = $6::uuid AND month = m.month)::text AS calls,
            (SELECT ok FROM kc) AS key_ok
       FROM m`,
    values: [
      rate.bucket,
      rate.subjectKey,
      rate.limit,
      rate.windowSeconds,
      rate.cost,
      free?.accountId ?? null,
      free?.executionId ?? null,
      free?.limit ?? null,
      key?.keyId ?? null,
      key?.accountId ?? null,
      key?.organizationId ?? null,
    ],
  });
  const row = rows[0]!;
  const retryAfterSeconds = row.allowed ? 0 : Math.max(1, Math.ceil((row.window_end.getTime() - row.now.getTime()) / 1000));
  const rateLimit: RateLimitOutcome = {
    allowed: row.allowed,
    limit: rate.limit,
    remaining: remainingAfter(row.allowed, row.hits, rate),
    resetAt: row.window_end,
    retryAfterSeconds,
  };
  if (!row.key_ok) return { keyValid: false, rateLimit };
  if (!free || !row.allowed) return { keyValid: true, rateLimit };
  const limit = BigInt(free.limit);
  const before = BigInt(row.calls ?? "0");
  const resetsAt = row.resets_at;
  if (row.seen) return { keyValid: true, rateLimit, freeTier: { allowed: true, callsThisMonth: before, limit, resetsAt } };
  if (row.bumped === null) {
    // Refused: the row was at the limit when the upsert held its lock (the snapshot read may predate
    // the last concurrent bump, so report at least the limit). A copy of this same execution may have
    // been counted meanwhile by a concurrent statement: then it is allowed, as a retry would be.
    const counted = await pool.query("SELECT 1 FROM free_tier_calls WHERE execution_id = $1", [free.executionId]);
    if (counted.rowCount === 1)
      return { keyValid: true, rateLimit, freeTier: { allowed: true, callsThisMonth: limit, limit, resetsAt } };
    return {
      keyValid: true,
      rateLimit,
      freeTier: { allowed: false, callsThisMonth: before > limit ? before : limit, limit, resetsAt },
    };
  }
  const bumped = BigInt(row.bumped);
  if (!row.recorded) {
    // The same execution id was counted concurrently by another statement: take this bump back.
    await pool.query("UPDATE free_tier_usage SET calls = calls - 1 WHERE account_id = $1 AND month = $2", [
      free.accountId,
      row.month,
    ]);
    return { keyValid: true, rateLimit, freeTier: { allowed: true, callsThisMonth: bumped - 1n, limit, resetsAt } };
  }
  return { keyValid: true, rateLimit, freeTier: { allowed: true, callsThisMonth: bumped, limit, resetsAt } };
}
