/**
 * Quota leases on the shared counters (migration 0002): a block of tool-call allowance reserved in one
 * statement, the live holders of leases on a key (for revocation), and the free-tier reconciliation
 * from recorded calls.
 */
import type { Pool } from "@toolport/kit/pg";
import type { AllowanceLeaseStore, LeaseOutcome, LeaseRequest } from "../domain/allowance.js";
import { LAST_USED_RESOLUTION_SECONDS } from "./keys.js";

export async function leaseCallAllowance(pool: Pool, req: LeaseRequest): Promise<LeaseOutcome> {
  const { rows } = await pool.query<{
    key_ok: boolean;
    role_ok: boolean | null;
    granted: number;
    hits: number | null;
    window_start: Date;
    window_end: Date;
    db_now: Date;
    free_granted: string;
    free_calls: string | null;
    month: string;
    resets_at: Date;
    ttl_ms: number;
  }>({
    name: "identity_lease_call_allowance",
    text: `SELECT key_ok, role_ok, granted, hits, window_start, window_end, db_now, free_granted::text, free_calls::text,
                  to_char(month, 'YYYY-MM-DD') AS month, resets_at, ttl_ms
             FROM lease_call_allowance($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
    values: [
      req.rate.bucket,
      req.rate.subjectKey,
      req.rate.limit,
      req.rate.windowSeconds,
      req.want,
      req.free?.accountId ?? null,
      req.free?.want ?? 0,
      req.free?.limit ?? 0,
      req.key?.keyId ?? null,
      req.key?.accountId ?? null,
      req.key?.organizationId ?? null,
      req.holder,
      req.ttlMs,
      LAST_USED_RESOLUTION_SECONDS,
      req.giveBack?.windowStart ?? null,
      req.giveBack?.hits ?? 0,
      req.giveBack?.month ?? null,
      req.giveBack?.freeCalls ?? 0,
    ],
  });
  const row = rows[0]!;
  return {
    keyValid: row.key_ok,
    roleAllowsCalls: row.role_ok !== false,
    granted: row.granted,
    hits: row.hits ?? 0,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    now: row.db_now,
    freeGranted: Number(row.free_granted),
    freeCalls: Number(row.free_calls ?? 0),
    month: row.month,
    resetsAt: row.resets_at,
    ttlMs: row.ttl_ms,
  };
}

/** The allowance rules' store (domain/allowance.ts) on `pool`. */
export function allowanceLeaseStore(pool: Pool): AllowanceLeaseStore {
  return { lease: (request) => leaseCallAllowance(pool, request) };
}

/** Leases on one key, or on every key of one account in one organization (a member's removal). */
export type LeaseTarget = { keyId: string } | { accountId: string; organizationId: string };

/** The holders of live leases on `target`, each with how long its last lease still runs. */
export async function liveHolders(pool: Pool, target: LeaseTarget): Promise<{ holder: string; leftMs: number }[]> {
  const byKey = "keyId" in target;
  const { rows } = await pool.query<{ holder: string; left_ms: number }>(
    `SELECT holder, ceil(extract(epoch FROM max(expires_at) - now()) * 1000)::int AS left_ms
       FROM allowance_leases
      WHERE ${byKey ? "key_id = $1::uuid" : "account_id = $1::uuid AND organization_id = $2::uuid"} AND expires_at > now()
      GROUP BY holder`,
    byKey ? [target.keyId] : [target.accountId, target.organizationId],
  );
  return rows.map((r) => ({ holder: r.holder, leftMs: Math.max(0, r.left_ms) }));
}

/** Holder rows of leases that ended a minute ago or more. */
export async function pruneLeases(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query("DELETE FROM allowance_leases WHERE expires_at < now() - interval '1 minute'");
  return rowCount ?? 0;
}

/**
 * Free-tier months that have ended (the last three) get the exact count of the calls recorded from
 * execution events (free_tier_calls), replacing what leases reserved: a lease whose holder stopped
 * without giving back its unused calls left them counted. Returns the accounts' months corrected.
 */
export async function reconcileFreeTier(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE free_tier_usage u SET calls = c.n
       FROM (SELECT e.account_id, e.month,
                    (SELECT count(*) FROM free_tier_calls f WHERE f.account_id = e.account_id AND f.month = e.month) AS n
               FROM free_tier_usage e, (SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS current) b
              WHERE e.month < b.current AND e.month >= b.current - interval '3 months') c
      WHERE u.account_id = c.account_id AND u.month = c.month AND u.calls <> c.n`,
  );
  return rowCount ?? 0;
}
