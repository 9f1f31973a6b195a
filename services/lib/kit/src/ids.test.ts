import { describe, expect, it } from "vitest";
import { timeOrderedUuid } from "./ids.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds a version 7 UUID carries in its first 48 bits. */
const msOf = (id: string) => Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);

describe("timeOrderedUuid", () => {
  it("is a version 7 UUID whose first 48 bits are the time in milliseconds", () => {
    const at = Date.UTC(2026, 11, 2, 13, 40, 5, 123);
    const id = timeOrderedUuid(at);
    expect(id).toMatch(V7);
    expect(msOf(id)).toBe(at);
    expect(timeOrderedUuid(0).startsWith("00000000-0000-7")).toBe(true);
    expect(msOf(timeOrderedUuid(2 ** 48 - 1))).toBe(2 ** 48 - 1);
  });

  it("takes the current time by default", () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(Date.now());
  });

  it("sorts as text and as a Postgres uuid in the order of its times", () => {
    const times = [1, 255, 256, 65_536, Date.UTC(2000, 0, 1), Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1) + 1, 2 ** 44];
    const ids = times.map((t) => timeOrderedUuid(t));
    // Postgres compares uuids byte by byte, which for lowercase hex is the order of the text.
    expect([...ids].sort()).toEqual(ids);
  });

  it("keeps 74 random bits: ids of one millisecond differ", () => {
    const at = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid(at)));
    expect(ids.size).toBe(10_000);
    // Not only the last bits vary: rand_a, the 12 bits right after the version, does too.
    const randA = new Set([...ids].map((id) => id.slice(15, 18)));
    expect(randA.size).toBeGreaterThan(1000);
  });

  it("refuses a time it cannot hold", () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 48, Number.POSITIVE_INFINITY])
      expect(() => timeOrderedUuid(bad)).toThrow(RangeError);
  });
});
