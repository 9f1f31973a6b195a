import { describe, expect, it } from "vitest";
import { atomicToCents, centsToAtomic, formatUsdc } from "./money.js";

describe("formatUsdc", () => {
  it("renders six decimals exactly", () => {
    expect(formatUsdc(0n)).toBe("0.000000");
    expect(formatUsdc(1n)).toBe("0.000001");
    expect(formatUsdc(12_500_000n)).toBe("12.500000");
    expect(formatUsdc(50_000_000n)).toBe("50.000000");
    expect(formatUsdc(-1_000_001n)).toBe("-1.000001");
  });

  it("keeps amounts beyond 2^53 exact", () => {
    expect(formatUsdc(9_007_199_254_740_993_123_456n)).toBe("9007199254740993.123456");
  });
});

describe("cents", () => {
  it("converts cents to atomic units and back, rounding partial cents down", () => {
    expect(centsToAtomic(150n)).toBe(1_500_000n);
    expect(atomicToCents(1_509_999n)).toBe(150n);
  });
});
