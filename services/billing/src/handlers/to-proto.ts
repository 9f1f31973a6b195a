/** Billing's domain records as the proto messages of toolport.billing.v1. */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type FundingOptions,
  FundingOptionsSchema,
  type HoldRecord,
  HoldRecordSchema,
  HoldStatus,
  type LedgerEntry,
  LedgerEntryKind,
  LedgerEntrySchema,
  type SpendingSettings as SpendingSettingsMessage,
  SpendingSettingsSchema,
  type Wallet as WalletMessage,
  WalletSchema,
} from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import { checksumAddress } from "../chain/addresses.js";
import { DEPOSIT_NETWORK } from "../config.js";
import type { FundingOptionsFacts } from "../domain/funding.js";
import { formatUsdc } from "../domain/money.js";
import type {
  HoldStatus as DomainHoldStatus,
  Hold,
  LedgerKind,
  SpendingSettings,
  Wallet,
  WalletLedgerEntry,
} from "../domain/types.js";

const holdStatus: Record<DomainHoldStatus, HoldStatus> = {
  held: HoldStatus.HELD,
  captured: HoldStatus.CAPTURED,
  released: HoldStatus.RELEASED,
  expired: HoldStatus.EXPIRED,
  refunded: HoldStatus.REFUNDED,
};

const entryKind: Record<LedgerKind, LedgerEntryKind> = {
  deposit: LedgerEntryKind.DEPOSIT,
  card_payment: LedgerEntryKind.CARD_PAYMENT,
  hold: LedgerEntryKind.HOLD,
  capture: LedgerEntryKind.CAPTURE,
  release: LedgerEntryKind.RELEASE,
  refund: LedgerEntryKind.REFUND,
};

export function walletMessage(w: Wallet): WalletMessage {
  return create(WalletSchema, {
    walletId: w.id,
    accountId: w.accountId,
    balanceAtomic: w.balance,
    balanceUsdc: formatUsdc(w.balance),
    heldAtomic: w.held,
    availableAtomic: w.available,
    depositAddress: w.depositAddress ? checksumAddress(w.depositAddress) : undefined,
    network: DEPOSIT_NETWORK,
    createdAt: timestampFromDate(w.createdAt),
  });
}

export function holdMessage(h: Hold): HoldRecord {
  return create(HoldRecordSchema, {
    executionId: h.executionId,
    accountId: h.accountId,
    keyId: h.keyId ?? undefined,
    walletId: h.walletId,
    amountAtomic: h.amount,
    status: holdStatus[h.status],
    createdAt: timestampFromDate(h.createdAt),
    expiresAt: timestampFromDate(h.expiresAt),
    settledAt: h.settledAt ? timestampFromDate(h.settledAt) : undefined,
  });
}

export function entryMessage(e: WalletLedgerEntry): LedgerEntry {
  return create(LedgerEntrySchema, {
    id: e.id,
    transactionId: e.transactionId,
    walletId: e.walletId,
    kind: entryKind[e.kind],
    amountAtomic: e.amount,
    balanceAfterAtomic: e.balanceAfter,
    balanceAfterUsdc: formatUsdc(e.balanceAfter),
    reference: e.reference,
    createdAt: timestampFromDate(e.createdAt),
  });
}

export function settingsMessage(s: SpendingSettings): SpendingSettingsMessage {
  return create(SpendingSettingsSchema, {
    id: s.id,
    userId: s.accountId,
    maxPerCallAtomic: s.maxPerCallAtomic,
    dailyLimitAtomic: s.dailyLimitAtomic ?? undefined,
    createdAt: timestampFromDate(s.createdAt),
    updatedAt: timestampFromDate(s.updatedAt),
  });
}

export function fundingOptionsMessage(o: FundingOptionsFacts): FundingOptions {
  return create(FundingOptionsSchema, {
    cardCheckout: o.cardCheckout,
    crypto: o.crypto,
    confirmDeposit: o.confirmDeposit,
    automaticDeposits: o.automaticDeposits,
    requiredConfirmations: o.requiredConfirmations,
  });
}
