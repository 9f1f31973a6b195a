/**
 * Price holds. Each operation locks the wallet row first (then the hold row), reads every figure it
 * judges by inside that transaction, and books its ledger transaction there too: concurrent holds on
 * one wallet queue on the lock, so none can squeeze under a limit or the balance together with another.
 */
import { invalidArgument, notFound } from "@toolport/kit/errors";
import type { Pool } from "@toolport/kit/pg";
import { captureStep, type HoldRequestInput, holdRefusal, refundStep, releaseStep } from "../domain/holds.js";
import { DEFAULT_MAX_PER_CALL_ATOMIC } from "../domain/money.js";
import type { Hold, HoldStatus, WalletLedgerEntry } from "../domain/types.js";
import type { SpendWarnings } from "../events/spend-warnings.js";
import { type Db, inTransaction, PgCode, pgCode } from "./db.js";
import type { Ledger, LockedWallet } from "./ledger.js";
import type { WalletStore } from "./wallets.js";

interface HoldRow {
  execution_id: string;
  wallet_id: string;
  account_id: string;
  key_id: string | null;
  organization_id: string;
  amount: bigint;
  status: HoldStatus;
  day: string;
  key_daily_limit_cents: bigint | null;
  created_at: Date;
  expires_at: Date;
  settled_at: Date | null;
  expired_now: boolean;
}

const HOLD_COLUMNS = `execution_id, wallet_id, account_id, key_id, organization_id, amount, status, day::text AS day,
  key_daily_limit_cents, created_at, expires_at, settled_at, expires_at <= now() AS expired_now`;

const toHold = (r: HoldRow): Hold => ({
  executionId: r.execution_id,
  walletId: r.wallet_id,
  accountId: r.account_id,
  keyId: r.key_id,
  amount: r.amount,
  status: r.status,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  settledAt: r.settled_at,
});

export interface HoldOptions extends HoldRequestInput {
  toolId: string;
  organizationId: string;
}

export interface HoldResult {
  hold: Hold;
  replayed: boolean;
  available: bigint;
}

export interface SettleResult {
  hold: Hold;
  replayed: boolean;
  entry: WalletLedgerEntry | null;
}

export class HoldStore {
  /** Told the TTL of each hold placed here (not a replay), once it is committed: the sweeper plans its next look by it. */
  onPlaced?: (ttlMs: number) => void;

  constructor(
    private readonly pool: Pool,
    private readonly wallets: WalletStore,
    private readonly ledger: Ledger,
    private readonly warnings: SpendWarnings,
    private readonly defaultTtlSeconds: number,
  ) {}

  async place(input: HoldOptions): Promise<HoldResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await inTransaction(this.pool, (db) => this.placeLocked(db, input));
        if (result) {
          if (!result.replayed) this.onPlaced?.((input.ttlSeconds ?? this.defaultTtlSeconds) * 1000);
          return result;
        }
        await this.wallets.ensure(input.accountId); // first hold of an account without a wallet yet
      } catch (err) {
        // The same execution id was inserted meanwhile under another wallet's lock: the retry replays it.
        if (pgCode(err) !== PgCode.uniqueViolation || attempt > 0) throw err;
      }
    }
  }

  private async placeLocked(db: Db, input: HoldOptions): Promise<HoldResult | null> {
    const wallet = await this.wallets.lockByAccount(db, input.accountId);
    if (!wallet) return null;
    // The earlier hold of this execution (a retry) and the account's settings, in one round trip.
    const { rows: found } = await db.query<HoldRow & { max_per_call_atomic: bigint | null; daily_limit_atomic: bigint | null }>(
      `SELECT h.*, s.max_per_call_atomic, s.daily_limit_atomic
         FROM (SELECT 1) one
         LEFT JOIN (SELECT ${HOLD_COLUMNS} FROM holds WHERE execution_id = $1) h ON true
         LEFT JOIN spending_settings s ON s.account_id = $2`,
      [input.executionId, input.accountId],
    );
    const row = found[0]!;
    if (row.execution_id !== null) {
      if (row.account_id !== input.accountId || row.amount !== input.amountAtomic) {
        throw invalidArgument(
          "idempotency_key_reused",
          `execution ${input.executionId} already holds ${row.amount} atomic units for another request`,
          { details: { field: "execution_id", execution_id: input.executionId } },
        );
      }
      return { hold: toHold(row), replayed: true, available: wallet.available };
    }
    const settings =
      row.max_per_call_atomic === null
        ? undefined
        : { max_per_call_atomic: row.max_per_call_atomic, daily_limit_atomic: row.daily_limit_atomic };
    const accountDailyLimit = settings?.daily_limit_atomic ?? null;
    const keyDailyLimitCents = input.keyId ? input.keyDailySpendLimitCents : null;
    let spent = { account: 0n, key: 0n };
    if (accountDailyLimit !== null || keyDailyLimitCents !== null) {
      const { rows } = await db.query<{ account: bigint; key: bigint }>(
        `SELECT COALESCE(SUM(amount), 0)::bigint AS account,
                COALESCE(SUM(amount) FILTER (WHERE key_id = $2), 0)::bigint AS key
           FROM holds WHERE account_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date AND status IN ('held', 'captured')`,
        [input.accountId, input.keyId],
      );
      spent = rows[0]!;
    }
    const refusal = holdRefusal({
      amount: input.amountAtomic,
      available: wallet.available,
      accountMaxPerCall: settings?.max_per_call_atomic ?? DEFAULT_MAX_PER_CALL_ATOMIC,
      accountDailyLimit,
      accountSpentToday: spent.account,
      keyMaxPerCallCents: input.keyId ? input.keyMaxCostPerCallCents : null,
      keyDailyLimitCents,
      keySpentToday: spent.key,
    });
    if (refusal) throw refusal;
    const { rows } = await db.query<HoldRow>(
      `INSERT INTO holds (execution_id, wallet_id, account_id, key_id, tool_id, organization_id, amount, status, day,
                          key_daily_limit_cents, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'held', (now() AT TIME ZONE 'UTC')::date, $8, now() + make_interval(secs => $9))
       RETURNING ${HOLD_COLUMNS}`,
      [
        input.executionId,
        wallet.id,
        input.accountId,
        input.keyId,
        input.toolId,
        input.organizationId,
        input.amountAtomic,
        keyDailyLimitCents,
        input.ttlSeconds ?? this.defaultTtlSeconds,
      ],
    );
    await this.ledger.post(db, wallet, {
      kind: "hold",
      reference: input.executionId,
      walletAmount: -input.amountAtomic,
      postings: [
        { account: "available", amount: -input.amountAtomic },
        { account: "held", amount: input.amountAtomic },
      ],
    });
    return { hold: toHold(rows[0]!), replayed: false, available: wallet.available };
  }

  async capture(executionId: string): Promise<SettleResult> {
    return this.settle(executionId, async (db, wallet, hold) => {
      if (captureStep(executionId, hold.status) === "replay") {
        return { hold: toHold(hold), replayed: true, entry: await this.ledger.find(db, "capture", executionId) };
      }
      const updated = await this.setStatus(db, executionId, "captured", null);
      const entry = await this.ledger.post(db, wallet, {
        kind: "capture",
        reference: executionId,
        walletAmount: -hold.amount,
        postings: [
          { account: "held", amount: -hold.amount },
          { account: "platform_revenue", amount: hold.amount },
        ],
      });
      if (hold.key_id && hold.key_daily_limit_cents !== null) {
        await this.warnings.afterCapture(db, {
          accountId: hold.account_id,
          organizationId: hold.organization_id,
          keyId: hold.key_id,
          day: hold.day,
          dailyLimitCents: hold.key_daily_limit_cents,
        });
      }
      return { hold: updated, replayed: false, entry };
    });
  }

  /** Returns an open hold's money. `expired` is the sweeper's variant: only a hold past its expiry. */
  async release(executionId: string, reason: string, mode: "release" | "expire" = "release"): Promise<SettleResult> {
    return this.settle(executionId, async (db, wallet, hold) => {
      if (mode === "expire" && (hold.status !== "held" || !hold.expired_now)) {
        return { hold: toHold(hold), replayed: true, entry: null };
      }
      if (releaseStep(executionId, hold.status) === "replay") {
        return { hold: toHold(hold), replayed: true, entry: await this.ledger.find(db, "release", executionId) };
      }
      const updated = await this.setStatus(db, executionId, mode === "expire" ? "expired" : "released", reason);
      const entry = await this.ledger.post(db, wallet, {
        kind: "release",
        reference: executionId,
        walletAmount: hold.amount,
        memo: reason || undefined,
        postings: [
          { account: "held", amount: -hold.amount },
          { account: "available", amount: hold.amount },
        ],
      });
      return { hold: updated, replayed: false, entry };
    });
  }

  async refund(executionId: string, reason: string): Promise<SettleResult> {
    return this.settle(executionId, async (db, wallet, hold) => {
      if (refundStep(executionId, hold.status) === "replay") {
        return { hold: toHold(hold), replayed: true, entry: await this.ledger.find(db, "refund", executionId) };
      }
      const updated = await this.setStatus(db, executionId, "refunded", reason);
      const entry = await this.ledger.post(db, wallet, {
        kind: "refund",
        reference: executionId,
        walletAmount: hold.amount,
        memo: reason || undefined,
        postings: [
          { account: "platform_revenue", amount: -hold.amount },
          { account: "available", amount: hold.amount },
        ],
      });
      return { hold: updated, replayed: false, entry };
    });
  }

  /** Execution ids of open holds past their expiry, oldest first. */
  async expiredOpenHolds(limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ execution_id: string }>(
      "SELECT execution_id FROM holds WHERE status = 'held' AND expires_at <= now() ORDER BY expires_at LIMIT $1",
      [limit],
    );
    return rows.map((r) => r.execution_id);
  }

  /** How long until the next open hold expires, by Postgres's clock (0 or less: one has); null when none is open. */
  async nextExpiryInMs(): Promise<number | null> {
    const { rows } = await this.pool.query<{ due_in_ms: number | null }>(
      "SELECT (EXTRACT(EPOCH FROM min(expires_at) - now()) * 1000)::float8 AS due_in_ms FROM holds WHERE status = 'held'",
    );
    return rows[0]?.due_in_ms ?? null;
  }

  private async settle(
    executionId: string,
    step: (db: Db, wallet: LockedWallet, hold: HoldRow) => Promise<SettleResult>,
  ): Promise<SettleResult> {
    if (!executionId) {
      throw invalidArgument("invalid_request", "execution_id is required", { details: { field: "execution_id" } });
    }
    return inTransaction(this.pool, async (db) => {
      const wallet = await this.wallets.lockByHold(db, executionId);
      // Read after the wallet lock is granted: every change to a hold happens under that lock.
      const hold = wallet && (await this.find(db, executionId));
      if (!wallet || !hold) {
        throw notFound("hold_not_found", `no hold exists for execution ${executionId}`, {
          details: { execution_id: executionId },
        });
      }
      return step(db, wallet, hold);
    });
  }

  private async find(db: Db, executionId: string): Promise<HoldRow | undefined> {
    const { rows } = await db.query<HoldRow>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE execution_id = $1`, [executionId]);
    return rows[0];
  }

  private async setStatus(db: Db, executionId: string, status: HoldStatus, reason: string | null): Promise<Hold> {
    const { rows } = await db.query<HoldRow>(
      `UPDATE holds SET status = $2, settled_at = now(), release_reason = COALESCE($3, release_reason)
        WHERE execution_id = $1 RETURNING ${HOLD_COLUMNS}`,
      [executionId, status, reason],
    );
    return toHold(rows[0]!);
  }
}
