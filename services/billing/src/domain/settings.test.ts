import { describe, expect, it } from "vitest";
import { parseFundingRequest } from "./funding.js";
import { validateSettingsChange } from "./settings.js";

const fieldOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { details: { field: string } }).details.field;
  }
  return null;
};

describe("validateSettingsChange", () => {
  it("accepts 0..5,000,000 per call and any non-negative daily limit or null", () => {
    expect(fieldOf(() => validateSettingsChange({ maxPerCallAtomic: 0n, dailyLimitAtomic: null }))).toBeNull();
    expect(fieldOf(() => validateSettingsChange({ maxPerCallAtomic: 5_000_000n, dailyLimitAtomic: 100_000_000n }))).toBeNull();
  });
  it("names the field above the ceiling or negative", () => {
    expect(fieldOf(() => validateSettingsChange({ maxPerCallAtomic: 5_000_001n }))).toBe("max_per_call_atomic");
    expect(fieldOf(() => validateSettingsChange({ maxPerCallAtomic: -1n }))).toBe("max_per_call_atomic");
    expect(fieldOf(() => validateSettingsChange({ dailyLimitAtomic: -1n }))).toBe("daily_limit_atomic");
  });
});

describe("parseFundingRequest", () => {
  it("takes crypto without an amount and card_checkout from 100 cents", () => {
    expect(parseFundingRequest("crypto", undefined)).toEqual({ method: "crypto" });
    expect(parseFundingRequest("crypto", 5n)).toEqual({ method: "crypto" });
    expect(parseFundingRequest("card_checkout", 100n)).toEqual({ method: "card_checkout", amountCents: 100n });
  });
  it("names the field of an unknown method or a missing or small amount", () => {
    expect(fieldOf(() => parseFundingRequest("wire", 500n))).toBe("method");
    expect(fieldOf(() => parseFundingRequest("card_checkout", undefined))).toBe("amount_cents");
    expect(fieldOf(() => parseFundingRequest("card_checkout", 99n))).toBe("amount_cents");
  });
});
