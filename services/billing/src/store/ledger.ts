/**
 * The double-entry ledger. `post` books one balanced transaction (its entries sum to zero; the database
 * refuses anything else at commit) while the caller holds the wallet's row lock; cached wallet balances
 * move with the entries through the entry trigger (migrations/0001_ledger.sql).
 */
import type { Pool } from "@toolport/kit/pg";
import type { LedgerKind, WalletLedgerEntry } from "../domain/types.js";
import type { Db } from "./db.js";

export type PlatformAccount = "platform_revenue" | "external_onchain" | "external_card";

/** A wallet's two accounts and their balances, as read under the wallet's lock. */
export interface LockedWallet {
  id: string;
  accountId: string;
  availableAccountId: string;
  heldAccountId: string;
  available: bigint;
  held: bigint;
}

export interface Posting {
  account: "available" | "held" | PlatformAccount;
  amount: bigint;
}

interface TransactionRow {
  transaction_id: string;
  kind: LedgerKind;
  reference: string;
  wallet_id: string;
  wallet_amount: bigint;
  wallet_balance_after: bigint;
  created_at: Date;
  entry_id: string;
}

const ENTRY_SELECT = `
  SELECT t.id AS transaction_id, t.kind, t.reference, t.wallet_id, t.wallet_amount, t.wallet_balance_after, t.created_at,
         (SELECT e.id::text FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
           WHERE e.transaction_id = t.id AND a.wallet_id = t.wallet_id
           ORDER BY (a.kind = 'wallet_available') DESC, e.id LIMIT 1) AS entry_id
    FROM ledger_transactions t`;

const toEntry = (r: TransactionRow): WalletLedgerEntry => ({
  id: r.entry_id,
  transactionId: r.transaction_id,
  walletId: r.wallet_id,
  kind: r.kind,
  amount: r.wallet_amount,
  balanceAfter: r.wallet_balance_after,
  reference: r.reference,
  createdAt: r.created_at,
});

export class Ledger {
  private platform: Record<PlatformAccount, string> | undefined;

  /** Ids of the platform accounts (created by the migration), read once. */
  private async platformAccounts(db: Db | Pool): Promise<Record<PlatformAccount, string>> {
    if (this.platform) return this.platform;
    const { rows } = await db.query<{ id: string; kind: PlatformAccount }>(
      "SELECT id, kind FROM ledger_accounts WHERE wallet_id IS NULL",
    );
    const found = Object.fromEntries(rows.map((r) => [r.kind, r.id])) as Record<PlatformAccount, string>;
    for (const kind of ["platform_revenue", "external_onchain", "external_card"] as const) {
      if (!found[kind]) throw new Error(`ledger account ${kind} is missing: migrations did not run`);
    }
    this.platform = found;
    return found;
  }

  /**
   * Books a balanced transaction touching `wallet`. `walletAmount` is the movement as the wallet's
   * owner sees it (README: Ledger view). Throws a unique violation when a transaction of this kind and
   * reference exists: the same deposit, checkout or settlement is never booked twice.
   */
  async post(
    db: Db,
    wallet: LockedWallet,
    tx: { kind: LedgerKind; reference: string; walletAmount: bigint; memo?: string; postings: Posting[] },
  ): Promise<WalletLedgerEntry> {
    const platform = await this.platformAccounts(db);
    const accountId = (p: Posting) =>
      p.account === "available" ? wallet.availableAccountId : p.account === "held" ? wallet.heldAccountId : platform[p.account];
    const walletDelta = tx.postings
      .filter((p) => p.account === "available" || p.account === "held")
      .reduce((sum, p) => sum + p.amount, 0n);
    const balanceAfter = wallet.available + wallet.held + walletDelta;
    // One statement: the transaction and its entries (the entry trigger moves the cached balances).
    const params: unknown[] = [tx.kind, tx.reference, wallet.id, tx.walletAmount, balanceAfter, tx.memo ?? null];
    const values = tx.postings.map((p) => {
      params.push(accountId(p), p.amount);
      return `($${params.length - 1}::uuid, $${params.length}::bigint)`;
    });
    const entries = await db.query<{ id: string; account_id: string; transaction_id: string; created_at: Date }>(
      `WITH t AS (
         INSERT INTO ledger_transactions (kind, reference, wallet_id, wallet_amount, wallet_balance_after, memo)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
       INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT t.id, v.account_id, v.amount FROM t, (VALUES ${values.join(", ")}) AS v (account_id, amount)
       RETURNING id::text, account_id, transaction_id, created_at`,
      params,
    );
    const created = { id: entries.rows[0]!.transaction_id, created_at: entries.rows[0]!.created_at };
    for (const p of tx.postings) {
      if (p.account === "available") wallet.available += p.amount;
      if (p.account === "held") wallet.held += p.amount;
    }
    const walletEntry =
      entries.rows.find((e) => e.account_id === wallet.availableAccountId) ??
      entries.rows.find((e) => e.account_id === wallet.heldAccountId)!;
    return {
      id: walletEntry.id,
      transactionId: created.id,
      walletId: wallet.id,
      kind: tx.kind,
      amount: tx.walletAmount,
      balanceAfter,
      reference: tx.reference,
      createdAt: created.created_at,
    };
  }

  /** The booked transaction of this kind and reference, as its wallet sees it. */
  async find(db: Db | Pool, kind: LedgerKind, reference: string): Promise<WalletLedgerEntry | null> {
    const { rows } = await db.query<TransactionRow>(`${ENTRY_SELECT} WHERE t.kind = $1 AND t.reference = $2`, [kind, reference]);
    return rows[0] ? toEntry(rows[0]) : null;
  }

  async list(db: Db | Pool, walletId: string, limit: number, before: Date | null): Promise<WalletLedgerEntry[]> {
    const { rows } = await db.query<TransactionRow>(
      `${ENTRY_SELECT} WHERE t.wallet_id = $1 AND ($2::timestamptz IS NULL OR t.created_at < $2)
        ORDER BY t.created_at DESC, t.id LIMIT $3`,
      [walletId, before, limit],
    );
    return rows.map(toEntry);
  }
}
