/** Billing's domain records, as the store returns them and the handlers render them. */

export interface Wallet {
  id: string;
  accountId: string;
  depositIndex: bigint;
  /** Null until a platform deposit xpub is configured. */
  depositAddress: string | null;
  /** Available + held: the ledger balance, holds included. */
  balance: bigint;
  held: bigint;
  available: bigint;
  createdAt: Date;
}

export type HoldStatus = "held" | "captured" | "released" | "expired" | "refunded";

export interface Hold {
  executionId: string;
  walletId: string;
  accountId: string;
  keyId: string | null;
  amount: bigint;
  status: HoldStatus;
  createdAt: Date;
  expiresAt: Date;
  settledAt: Date | null;
}

export type LedgerKind = "deposit" | "card_payment" | "hold" | "capture" | "release" | "refund";

/** One ledger transaction as the wallet's owner sees it (README: Ledger view). */
export interface WalletLedgerEntry {
  /** The ledger entry on the wallet's own account. */
  id: string;
  transactionId: string;
  walletId: string;
  kind: LedgerKind;
  amount: bigint;
  balanceAfter: bigint;
  reference: string;
  createdAt: Date;
}

export interface SpendingSettings {
  id: string;
  accountId: string;
  maxPerCallAtomic: bigint;
  /** Null: no daily limit. */
  dailyLimitAtomic: bigint | null;
  createdAt: Date;
  updatedAt: Date;
}
