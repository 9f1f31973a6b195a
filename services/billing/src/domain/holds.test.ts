import { Code } from "@toolport/kit/errors";
import { describe, expect, it } from "vitest";
import { captureStep, type HoldFigures, holdRefusal, releaseStep, validateHoldRequest } from "./holds.js";

const base: HoldFigures = {
  amount: 1_000_000n,
  available: 50_000_000n,
  accountMaxPerCall: 5_000_000n,
  accountDailyLimit: null,
  accountSpentToday: 0n,
  keyMaxPerCallCents: null,
  keyDailyLimitCents: null,
  keySpentToday: 0n,
};

const reasonOf = (f: Partial<HoldFigures>) => {
  const err = holdRefusal({ ...base, ...f });
  return err && { code: err.code, reason: err.reason, limit: err.details.limit };
};

describe("holdRefusal", () => {
  it("lets a hold within every limit through", () => {
    expect(holdRefusal(base)).toBeNull();
    expect(reasonOf({ amount: 5_000_000n, available: 5_000_000n })).toBeNull();
  });

  it("refuses above the 5,000,000 ceiling even when the settings allow more", () => {
    expect(reasonOf({ amount: 5_000_001n, accountMaxPerCall: 10_000_000n })).toEqual({
      code: Code.PermissionDenied,
      reason: "spend_limit_exceeded",
      limit: "per_call_ceiling",
    });
  });

  it("refuses above the account's max_per_call_atomic", () => {
    expect(reasonOf({ amount: 200n, accountMaxPerCall: 199n })?.limit).toBe("max_per_call_atomic");
  });

  it("refuses above the key's per-call cap in cents (1 cent = 10,000 atomic)", () => {
    expect(reasonOf({ amount: 10_000n, keyMaxPerCallCents: 1n })).toBeNull();
    expect(reasonOf({ amount: 10_001n, keyMaxPerCallCents: 1n })?.limit).toBe("key_max_cost_per_call_cents");
  });

  it("counts today's open and captured holds against the daily limits", () => {
    expect(reasonOf({ accountDailyLimit: 3_000_000n, accountSpentToday: 2_000_000n })).toBeNull();
    expect(reasonOf({ accountDailyLimit: 3_000_000n, accountSpentToday: 2_000_001n })?.limit).toBe("daily_limit_atomic");
    expect(reasonOf({ keyDailyLimitCents: 300n, keySpentToday: 2_000_001n })?.limit).toBe("key_daily_spend_limit_cents");
  });

  it("refuses with insufficient_balance when the available balance is short", () => {
    const err = holdRefusal({ ...base, available: 999_999n });
    expect(err?.code).toBe(Code.FailedPrecondition);
    expect(err?.reason).toBe("insufficient_balance");
    expect(err?.details).toMatchObject({ price_atomic: 1_000_000, available_atomic: 999_999, balance_usdc: "0.999999" });
  });
});

describe("validateHoldRequest", () => {
  const ok = {
    executionId: "e1",
    accountId: "a1",
    keyId: null,
    amountAtomic: 1n,
    keyMaxCostPerCallCents: null,
    keyDailySpendLimitCents: null,
    ttlSeconds: null,
  };
  it.each([
    [{ executionId: "" }, "execution_id"],
    [{ accountId: "" }, "account_id"],
    [{ amountAtomic: 0n }, "amount_atomic"],
    [{ keyDailySpendLimitCents: -1n }, "key_caps.daily_spend_limit_cents"],
    [{ ttlSeconds: 0 }, "ttl_seconds"],
  ])("names the field of a bad request %o", (bad, field) => {
    try {
      validateHoldRequest({ ...ok, ...bad });
      expect.unreachable();
    } catch (err) {
      expect((err as { code: Code }).code).toBe(Code.InvalidArgument);
      expect((err as { details: object }).details).toMatchObject({ field });
    }
  });
});

describe("settling", () => {
  it("captures a held hold once and replays a retry", () => {
    expect(captureStep("e", "held")).toBe("apply");
    expect(captureStep("e", "captured")).toBe("replay");
  });
  it("refuses a release after capture and a capture after release", () => {
    expect(() => releaseStep("e", "captured")).toThrow(/captured/);
    expect(() => captureStep("e", "released")).toThrow(/released/);
    expect(releaseStep("e", "expired")).toBe("replay");
  });
});
