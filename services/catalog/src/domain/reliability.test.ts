import { describe, expect, it } from "vitest";
import { passesMinSuccessRate, reliabilityBlock } from "./reliability.js";

const facts = (calls: number, successes: number) => ({
  calls7d: calls,
  calls30d: calls,
  successes30d: successes,
  p50Seconds: 0.2,
  p95Seconds: 1.5,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastErrorClass: "upstream",
  lastErrorType: "timeout",
  errorClasses: { upstream: calls - successes },
  faults: { timeout: calls - successes },
  distinctCallers30d: 2,
});

describe("reliability block", () => {
  it("is null when the tool was not called in the window", () => {
    expect(reliabilityBlock(undefined)).toBeNull();
    expect(reliabilityBlock(facts(0, 0))).toBeNull();
  });

  it("keeps the success rate null below 10 calls and never flags then", () => {
    const block = reliabilityBlock(facts(9, 0));
    expect(block?.successRate30d).toBeNull();
    expect(block?.flagged).toBe(false);
    expect(block?.upstreamFailures30d).toBe(9);
  });

  it("computes the rate at 10 calls and flags under 0.8", () => {
    expect(reliabilityBlock(facts(10, 7))).toMatchObject({ successRate30d: 0.7, flagged: true, windowDays: 30 });
    expect(reliabilityBlock(facts(10, 8))).toMatchObject({ successRate30d: 0.8, flagged: false });
  });

  it("min_success_rate drops known low rates and keeps unknown ones", () => {
    expect(passesMinSuccessRate(reliabilityBlock(facts(10, 5)), 0.9)).toBe(false);
    expect(passesMinSuccessRate(reliabilityBlock(facts(10, 10)), 0.9)).toBe(true);
    expect(passesMinSuccessRate(reliabilityBlock(facts(3, 0)), 0.9)).toBe(true);
    expect(passesMinSuccessRate(null, 0.9)).toBe(true);
  });
});
