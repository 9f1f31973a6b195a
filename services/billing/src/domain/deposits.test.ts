import { describe, expect, it } from "vitest";
import {
  depositsIn,
  matchDeposit,
  type ReceiptFacts,
  type ScannedTransfer,
  validateDepositRequest,
  watchStep,
} from "./deposits.js";

const usdc = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";
const mine = "0x1111111111111111111111111111111111111111";
const other = "0x2222222222222222222222222222222222222222";
const receipt = (transfers: ReceiptFacts["transfers"], extra: Partial<ReceiptFacts> = {}): ReceiptFacts => ({
  succeeded: true,
  blockNumber: 100n,
  transfers,
  ...extra,
});
const args = (r: ReceiptFacts | null, expectedAmount = 5_000_000n, latestBlock = 111n) => ({
  receipt: r,
  latestBlock,
  requiredConfirmations: 12,
  usdcContract: usdc.toUpperCase().replace("0X", "0x"),
  depositAddress: mine,
  expectedAmount,
});
const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { reason: string }).reason;
  }
  return "accepted";
};

describe("matchDeposit", () => {
  it("accepts a confirmed USDC transfer of the expected amount to the deposit address", () => {
    const r = receipt([{ token: usdc, from: other, to: mine, value: 5_000_000n }]);
    expect(matchDeposit(args(r))).toEqual({ amount: 5_000_000n, blockNumber: 100n });
  });

  it("counts the transaction's own block: 12 confirmations at latest = block + 11", () => {
    const r = receipt([{ token: usdc, from: other, to: mine, value: 5_000_000n }]);
    expect(reasonOf(() => matchDeposit(args(r, 5_000_000n, 110n)))).toBe("deposit_not_confirmed");
    expect(reasonOf(() => matchDeposit(args(r, 5_000_000n, 111n)))).toBe("accepted");
  });

  it("sums several USDC transfers to the address and ignores other tokens and recipients", () => {
    const r = receipt([
      { token: usdc, from: other, to: mine, value: 2_000_000n },
      { token: usdc, from: other, to: mine, value: 3_000_000n },
      { token: usdc, from: other, to: other, value: 9n },
      { token: other, from: other, to: mine, value: 7n },
    ]);
    expect(matchDeposit(args(r)).amount).toBe(5_000_000n);
  });

  it.each([
    ["unknown or pending", null, "deposit_not_confirmed"],
    ["reverted", receipt([], { succeeded: false }), "deposit_transaction_failed"],
    ["no USDC transfer", receipt([{ token: other, from: other, to: mine, value: 5_000_000n }]), "deposit_transfer_not_found"],
    ["to another address", receipt([{ token: usdc, from: mine, to: other, value: 5_000_000n }]), "deposit_address_mismatch"],
    ["another amount", receipt([{ token: usdc, from: other, to: mine, value: 4_999_999n }]), "deposit_amount_mismatch"],
  ])("refuses %s", (_name, r, reason) => {
    expect(reasonOf(() => matchDeposit(args(r)))).toBe(reason);
  });
});

describe("validateDepositRequest", () => {
  it("lower-cases a valid hash and names the bad field", () => {
    expect(validateDepositRequest(`0x${"AB".repeat(32)}`, 1n)).toBe(`0x${"ab".repeat(32)}`);
    expect(() => validateDepositRequest("0x1234", 1n)).toThrow(/tx_hash/);
    expect(() => validateDepositRequest(`0x${"ab".repeat(32)}`, 0n)).toThrow(/expected_amount_atomic/);
  });
});

describe("watchStep", () => {
  const base = { latest: 100n, confirmations: 12, maxBlocks: 50 };

  it("starts after the newest confirmed block, or at the configured start block", () => {
    // Block 89 has 100 - 89 + 1 = 12 confirmations: the newest confirmed; the watcher starts at 90.
    expect(watchStep({ ...base, next: null })).toEqual({ kind: "start", next: 90n });
    expect(watchStep({ ...base, next: null, startBlock: 7 })).toEqual({ kind: "start", next: 7n });
    expect(watchStep({ ...base, latest: 3n, next: null })).toEqual({ kind: "start", next: 0n });
  });

  it("scans confirmed blocks only, at most maxBlocks at a time", () => {
    expect(watchStep({ ...base, next: 89n })).toEqual({ kind: "scan", from: 89n, to: 89n, more: false });
    expect(watchStep({ ...base, next: 90n })).toEqual({ kind: "wait" });
    expect(watchStep({ ...base, next: 0n })).toEqual({ kind: "scan", from: 0n, to: 49n, more: true });
    expect(watchStep({ ...base, next: 40n })).toEqual({ kind: "scan", from: 40n, to: 89n, more: false });
  });
});

describe("depositsIn", () => {
  const usdc = "0x00000000000000000000000000000000000000aa";
  const mine = "0x00000000000000000000000000000000000000b1";
  const theirs = "0x00000000000000000000000000000000000000b2";
  const t = (over: Partial<ScannedTransfer>): ScannedTransfer => ({
    token: usdc,
    from: "0x00000000000000000000000000000000000000f0",
    to: mine,
    value: 5n,
    txHash: "0x01",
    blockNumber: 10n,
    logIndex: 0,
    ...over,
  });

  it("sums a transaction's USDC transfers to one deposit address and ignores the rest", () => {
    const found = depositsIn(
      [
        t({ txHash: "0x02", blockNumber: 11n, value: 7n }),
        t({ value: 5n }),
        t({ value: 3n, logIndex: 1 }),
        t({ to: theirs, value: 100n, logIndex: 2 }),
        t({ token: "0x00000000000000000000000000000000000000cc", value: 100n, logIndex: 3 }),
        t({ txHash: "0x03", value: 0n }),
      ],
      usdc.toUpperCase().replace("0X", "0x"),
      new Set([mine]),
    );
    expect(found).toEqual([
      { txHash: "0x01", address: mine, amount: 8n, blockNumber: 10n },
      { txHash: "0x02", address: mine, amount: 7n, blockNumber: 11n },
    ]);
  });
});
