import { describe, expect, it } from "vitest";
import { matchDeposit, type ReceiptFacts, validateDepositRequest } from "./deposits.js";

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
