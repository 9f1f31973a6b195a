import { describe, expect, it } from "vitest";
import {
  afterAttempt,
  attemptSucceeded,
  type CircuitState,
  circuitAfter,
  circuitChanged,
  leaseSeconds,
  MAX_ATTEMPTS,
  pausedReason,
} from "./delivery-policy.js";

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);

describe("an attempt's outcome", () => {
  it("succeeds on a 2xx only: no response, a 1xx, a redirect and an error all fail", () => {
    expect([200, 201, 204, 299].map(attemptSucceeded)).toEqual([true, true, true, true]);
    expect([null, 100, 199, 300, 301, 404, 500].map(attemptSucceeded)).toEqual([false, false, false, false, false, false, false]);
  });

  it("a success delivers at once, whichever attempt of the series it was", () => {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++)
      expect(afterAttempt(attempt, true)).toEqual({ status: "succeeded", retryInSeconds: null, delivered: true });
  });

  it("retries a failure about 1 s, then about 4 s later, and fails the delivery on the third", () => {
    const exact = () => 0.5; // no jitter
    expect(afterAttempt(1, false, exact)).toEqual({ status: "pending", retryInSeconds: 1, delivered: false });
    expect(afterAttempt(2, false, exact)).toEqual({ status: "pending", retryInSeconds: 4, delivered: false });
    expect(MAX_ATTEMPTS).toBe(3);
    expect(afterAttempt(3, false, exact)).toEqual({ status: "failed", retryInSeconds: null, delivered: false });
    // An attempt past the last (a redelivery's series is counted anew, so only a race makes one) fails too.
    expect(afterAttempt(4, false, exact).status).toBe("failed");
  });

  it("jitters a retry by ±20% of its delay", () => {
    expect(afterAttempt(1, false, () => 0).retryInSeconds).toBeCloseTo(0.8);
    expect(afterAttempt(1, false, () => 0.999999).retryInSeconds).toBeCloseTo(1.2);
    expect(afterAttempt(2, false, () => 0).retryInSeconds).toBeCloseTo(3.2);
    expect(afterAttempt(2, false, () => 0.999999).retryInSeconds).toBeCloseTo(4.8);
  });

  it("holds a claim for 1.5 x the attempt timeout plus 5 s, rounded up", () => {
    expect(leaseSeconds(10_000)).toBe(20);
    expect(leaseSeconds(100)).toBe(6);
    expect(leaseSeconds(1_500)).toBe(8); // 2.25 s -> 3 s
  });
});

describe("the circuit", () => {
  const now = at("2026-12-01T12:00:00.000Z");
  const healthy: CircuitState = { isActive: true, failingSince: null, disabledReason: null };

  it("starts the failure clock at the first failure, and keeps it running through the next", () => {
    const first = circuitAfter(healthy, false, now, HOUR);
    expect(first).toEqual({ isActive: true, failingSince: now, disabledReason: null });
    const later = circuitAfter(first, false, at("2026-12-01T12:30:00.000Z"), HOUR);
    expect(later).toEqual(first);
    expect(circuitChanged(first, later)).toBe(false);
  });

  it("pauses an active webhook whose every attempt failed for circuitMs, with a reason naming since when", () => {
    const since = at("2026-12-01T10:59:59.750Z");
    const failing: CircuitState = { isActive: true, failingSince: since, disabledReason: null };
    // Not yet: the clock has run for less than an hour.
    expect(circuitAfter(failing, false, at("2026-12-01T11:59:59.749Z"), HOUR).isActive).toBe(true);
    const paused = circuitAfter(failing, false, at("2026-12-01T11:59:59.750Z"), HOUR);
    expect(paused).toEqual({
      isActive: false,
      failingSince: since,
      disabledReason: "paused by Toolport: every delivery attempt failed since 2026-12-01T10:59:59Z",
    });
    expect(circuitChanged(failing, paused)).toBe(true);
  });

  it("leaves the reason of a webhook that is paused already as it is (its owner's pause has none)", () => {
    const ownersPause: CircuitState = { isActive: false, failingSince: at("2026-12-01T09:00:00Z"), disabledReason: null };
    expect(circuitAfter(ownersPause, false, now, HOUR)).toEqual(ownersPause);
  });

  it("stops the clock on a success, whatever it was, and changes nothing else", () => {
    expect(circuitAfter(healthy, true, now, HOUR)).toEqual(healthy);
    expect(circuitChanged(healthy, circuitAfter(healthy, true, now, HOUR))).toBe(false);
    const failing: CircuitState = { isActive: true, failingSince: at("2026-12-01T11:00:00Z"), disabledReason: null };
    expect(circuitAfter(failing, true, now, HOUR)).toEqual(healthy);
    const paused: CircuitState = { isActive: false, failingSince: at("2026-12-01T10:00:00Z"), disabledReason: "why" };
    expect(circuitAfter(paused, true, now, HOUR)).toEqual({ isActive: false, failingSince: null, disabledReason: "why" });
  });

  it("writes the reason at seconds precision in UTC", () => {
    expect(pausedReason(at("2026-03-04T05:06:07.999+02:00"))).toBe(
      "paused by Toolport: every delivery attempt failed since 2026-03-04T03:06:07Z",
    );
  });
});
