/** Credits from outside: confirmed on-chain deposits and paid card checkouts, each booked exactly once. */
import { conflict } from "@toolport/kit/errors";
import type { Pool } from "@toolport/kit/pg";
import type { WalletLedgerEntry } from "../domain/types.js";
import { inTransaction, PgCode, pgCode } from "./db.js";
import type { Ledger } from "./ledger.js";
import type { WalletStore } from "./wallets.js";

export interface Credited {
  walletId: string;
  balance: bigint;
  entry: WalletLedgerEntry;
}

export class FundingStore {
  constructor(
    private readonly pool: Pool,
    private readonly wallets: WalletStore,
    private readonly ledger: Ledger,
  ) {}

  async refuseCreditedDeposit(txHash: string): Promise<void> {
    const earlier = await this.pool.query("SELECT 1 FROM deposits WHERE tx_hash = $1", [txHash]);
    if (earlier.rowCount) throw alreadyCredited(txHash);
  }

  /** Which of `txHashes` were credited already (by a confirm or by the watcher). */
  async creditedDeposits(txHashes: string[]): Promise<Set<string>> {
    if (txHashes.length === 0) return new Set();
    const { rows } = await this.pool.query<{ tx_hash: string }>("SELECT tx_hash FROM deposits WHERE tx_hash = ANY($1::text[])", [
      txHashes,
    ]);
    return new Set(rows.map((r) => r.tx_hash));
  }

  /**
   * Credits a verified deposit; a hash already credited (to anyone, by a confirm or by the watcher) is a
   * conflict, never a second credit: the `deposits` primary key and the ledger's unique (kind, reference)
   * are the one guard both paths go through.
   */
  async creditDeposit(args: {
    accountId: string;
    txHash: string;
    amount: bigint;
    blockNumber: bigint;
    creditedBy: "confirm" | "watcher";
  }): Promise<Credited> {
    try {
      return await inTransaction(this.pool, async (db) => {
        const earlier = await db.query("SELECT 1 FROM deposits WHERE tx_hash = $1", [args.txHash]);
        if (earlier.rowCount) throw alreadyCredited(args.txHash);
        const wallet = (await this.wallets.lockByAccount(db, args.accountId))!;
        const entry = await this.ledger.post(db, wallet, {
          kind: "deposit",
          reference: args.txHash,
          walletAmount: args.amount,
          postings: [
            { account: "external_onchain", amount: -args.amount },
            { account: "available", amount: args.amount },
          ],
        });
        await db.query(
          `INSERT INTO deposits (tx_hash, wallet_id, amount, block_number, transaction_id, credited_by)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [args.txHash, wallet.id, args.amount, args.blockNumber, entry.transactionId, args.creditedBy],
        );
        return { walletId: wallet.id, balance: wallet.available + wallet.held, entry };
      });
    } catch (err) {
      // A concurrent confirm of the same hash committed first.
      if (pgCode(err) === PgCode.uniqueViolation) throw alreadyCredited(args.txHash);
      throw err;
    }
  }

  async recordCheckout(sessionId: string, walletId: string, amountCents: bigint): Promise<void> {
    await this.pool.query(
      "INSERT INTO card_checkouts (session_id, wallet_id, amount_cents) VALUES ($1, $2, $3) ON CONFLICT (session_id) DO NOTHING",
      [sessionId, walletId, amountCents],
    );
  }

  /**
   * Credits a paid checkout session once. Returns null when this session was credited before (a
   * redelivered webhook), so the caller answers 200 without crediting again.
   */
  async creditCheckout(args: { sessionId: string; walletId: string; amountCents: bigint }): Promise<Credited | null> {
    const amount = args.amountCents * 10_000n;
    try {
      return await inTransaction(this.pool, async (db) => {
        const wallet = await this.wallets.lockById(db, args.walletId);
        if (await this.ledger.find(db, "card_payment", args.sessionId)) return null;
        const entry = await this.ledger.post(db, wallet, {
          kind: "card_payment",
          reference: args.sessionId,
          walletAmount: amount,
          postings: [
            { account: "external_card", amount: -amount },
            { account: "available", amount },
          ],
        });
        await db.query(
          `INSERT INTO card_checkouts (session_id, wallet_id, amount_cents, credited_at, transaction_id)
           VALUES ($1, $2, $3, now(), $4)
           ON CONFLICT (session_id) DO UPDATE SET credited_at = now(), transaction_id = EXCLUDED.transaction_id`,
          [args.sessionId, wallet.id, args.amountCents, entry.transactionId],
        );
        return { walletId: wallet.id, balance: wallet.available + wallet.held, entry };
      });
    } catch (err) {
      if (pgCode(err) === PgCode.uniqueViolation) return null;
      throw err;
    }
  }
}

function alreadyCredited(txHash: string) {
  return conflict("deposit_already_credited", `transaction ${txHash} was already credited; it is never credited twice`, {
    details: { field: "tx_hash", tx_hash: txHash },
  });
}
