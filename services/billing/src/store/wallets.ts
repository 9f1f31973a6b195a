/** Wallets: one per account, created idempotently with its two ledger accounts and its deposit address. */
import { notFound } from "@toolport/kit/errors";
import type { Pool } from "@toolport/kit/pg";
import type { DepositAddresses } from "../chain/deposit-addresses.js";
import type { Wallet } from "../domain/types.js";
import { type Db, inTransaction } from "./db.js";
import type { LockedWallet } from "./ledger.js";

interface WalletRow {
  id: string;
  account_id: string;
  deposit_index: bigint;
  deposit_address: string | null;
  created_at: Date;
  available_account_id: string;
  held_account_id: string;
  available: bigint;
  held: bigint;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const WALLET_SELECT = `
  SELECT w.id, w.account_id, w.deposit_index, w.deposit_address, w.created_at,
         a.id AS available_account_id, a.balance AS available, h.id AS held_account_id, h.balance AS held
    FROM wallets w
    JOIN ledger_accounts a ON a.wallet_id = w.id AND a.kind = 'wallet_available'
    JOIN ledger_accounts h ON h.wallet_id = w.id AND h.kind = 'wallet_held'`;

const LOCK = "FOR UPDATE OF w, a, h";

const toWallet = (r: WalletRow): Wallet => ({
  id: r.id,
  accountId: r.account_id,
  depositIndex: r.deposit_index,
  depositAddress: r.deposit_address,
  balance: r.available + r.held,
  held: r.held,
  available: r.available,
  createdAt: r.created_at,
});

const toLocked = (r: WalletRow): LockedWallet => ({
  id: r.id,
  accountId: r.account_id,
  availableAccountId: r.available_account_id,
  heldAccountId: r.held_account_id,
  available: r.available,
  held: r.held,
});

export class WalletStore {
  constructor(
    private readonly pool: Pool,
    /** Absent when no deposit xpub is configured: wallets then have no deposit address yet. */
    private readonly addresses: DepositAddresses | undefined,
  ) {}

  /** The account's wallet, created on first use (idempotent; concurrent calls get the same wallet). */
  async ensure(accountId: string): Promise<Wallet> {
    const found = await this.pool.query<WalletRow>(`${WALLET_SELECT} WHERE w.account_id = $1`, [accountId]);
    const existing = found.rows[0];
    if (existing && (existing.deposit_address || !this.addresses)) return toWallet(existing);
    return inTransaction(this.pool, async (db) => {
      const inserted = await db.query<{ id: string }>(
        "INSERT INTO wallets (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING RETURNING id",
        [accountId],
      );
      if (inserted.rows[0]) {
        await db.query(
          `INSERT INTO ledger_accounts (kind, wallet_id, balance) VALUES ('wallet_available', $1, 0), ('wallet_held', $1, 0)`,
          [inserted.rows[0].id],
        );
      }
      const row = (await db.query<WalletRow>(`${WALLET_SELECT} WHERE w.account_id = $1 FOR UPDATE OF w`, [accountId])).rows[0]!;
      if (!row.deposit_address && this.addresses) {
        row.deposit_address = this.addresses.addressAt(row.deposit_index);
        await db.query("UPDATE wallets SET deposit_address = $2 WHERE id = $1", [row.id, row.deposit_address]);
      }
      return toWallet(row);
    });
  }

  /** The wallets whose deposit address is one of `addresses` (lower-case): account and wallet id by address. */
  async byDepositAddresses(addresses: string[]): Promise<Map<string, { accountId: string; walletId: string }>> {
    if (addresses.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; account_id: string; deposit_address: string }>(
      "SELECT id, account_id, deposit_address FROM wallets WHERE deposit_address = ANY($1::text[])",
      [addresses],
    );
    return new Map(rows.map((r) => [r.deposit_address, { accountId: r.account_id, walletId: r.id }]));
  }

  async byAccount(accountId: string): Promise<Wallet | null> {
    const { rows } = await this.pool.query<WalletRow>(`${WALLET_SELECT} WHERE w.account_id = $1`, [accountId]);
    return rows[0] ? toWallet(rows[0]) : null;
  }

  /**
   * Locks the account's wallet row, and its two ledger account rows, for the rest of the transaction;
   * every balance change goes through here. Locking the account rows in the same statement matters:
   * under READ COMMITTED a statement that waited for a lock returns the newest version of each row it
   * locks, but rows it merely joins are seen as of the statement's start, which would miss the entries
   * of the transaction it waited for.
   */
  async lockByAccount(db: Db, accountId: string): Promise<LockedWallet | null> {
    const { rows } = await db.query<WalletRow>(`${WALLET_SELECT} WHERE w.account_id = $1 ${LOCK}`, [accountId]);
    return rows[0] ? toLocked(rows[0]) : null;
  }

  async lockById(db: Db, walletId: string): Promise<LockedWallet> {
    const { rows } = UUID.test(walletId)
      ? await db.query<WalletRow>(`${WALLET_SELECT} WHERE w.id = $1 ${LOCK}`, [walletId])
      : { rows: [] };
    if (!rows[0]) throw notFound("wallet_not_found", `wallet ${walletId} does not exist`, { details: { wallet_id: walletId } });
    return toLocked(rows[0]);
  }

  /** Locks the wallet a hold belongs to; null when there is no such hold. */
  async lockByHold(db: Db, executionId: string): Promise<LockedWallet | null> {
    const { rows } = await db.query<WalletRow>(
      `${WALLET_SELECT} WHERE w.id = (SELECT wallet_id FROM holds WHERE execution_id = $1) ${LOCK}`,
      [executionId],
    );
    return rows[0] ? toLocked(rows[0]) : null;
  }
}
