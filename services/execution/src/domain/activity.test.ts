import { describe, expect, it } from "vitest";
import {
  activityLimit,
  activityScope,
  activityStatus,
  checkTimeRange,
  decodeCursor,
  encodeCursor,
  LimitRefusals,
  RECORDED_REFUSALS,
  usageWindowStart,
} from "./activity.js";

const reader = { accountId: "acct", organizationId: "org", managesOrganization: false };

describe("who reads which calls", () => {
  it("gives a key its own calls only, even a key of an owner", () => {
    expect(activityScope({ ...reader, keyId: "k1", managesOrganization: true })).toEqual({ kind: "key", keyId: "k1" });
  });
  it("gives a signed-in owner or admin the organization, anyone else their own calls in it", () => {
    expect(activityScope({ ...reader, managesOrganization: true })).toEqual({ kind: "organization", organizationId: "org" });
    expect(activityScope(reader)).toEqual({ kind: "account", accountId: "acct", organizationId: "org" });
  });
});

describe("the page's cursor and filters", () => {
  const cursor = { at: "2026-03-01T12:00:00.123456Z", id: "5d0c6a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f" };

  it("round-trips a cursor and refuses anything else as invalid_cursor", () => {
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of ["", "not-a-cursor", encodeCursor({ ...cursor, id: "x" }), encodeCursor({ ...cursor, at: "yesterday" })]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ reason: "invalid_cursor" }));
    }
    expect(() => decodeCursor(Buffer.from(`${cursor.at}|${cursor.id}|more`).toString("base64url"))).toThrow();
  });

  it("clamps the page size to 1..200, default 50", () => {
    expect(activityLimit(undefined)).toBe(50);
    expect(activityLimit(0)).toBe(1);
    expect(activityLimit(-5)).toBe(1);
    expect(activityLimit(1000)).toBe(200);
    expect(activityLimit(20)).toBe(20);
  });

  it("takes the three statuses and refuses others", () => {
    expect(activityStatus("refused")).toBe("refused");
    expect(activityStatus("")).toBeUndefined();
    expect(() => activityStatus("pending")).toThrow(expect.objectContaining({ reason: "invalid_status" }));
  });

  it("refuses a time range that ends before it starts", () => {
    const t = new Date("2026-03-01T00:00:00Z");
    expect(() => checkTimeRange(t, t)).toThrow(expect.objectContaining({ reason: "invalid_time_range" }));
    expect(() => checkTimeRange(t, new Date(t.getTime() + 1))).not.toThrow();
    expect(() => checkTimeRange(undefined, t)).not.toThrow();
  });

  it("uses the key usage window: default 30 days, clamped 1..90", () => {
    const now = new Date("2026-03-31T00:00:00Z");
    expect(usageWindowStart(undefined, now).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    expect(usageWindowStart(0, now).toISOString()).toBe("2026-03-30T00:00:00.000Z");
    expect(usageWindowStart(365, now).getTime()).toBe(now.getTime() - 90 * 86_400_000);
  });

  it("records the refusals the log lists, not an unknown tool or bad input", () => {
    expect([...RECORDED_REFUSALS].sort()).toEqual([
      "confirmation_required",
      "insufficient_balance",
      "rate_limited",
      "spend_limit_exceeded",
      "tool_not_permitted",
      "usage_limit_reached",
    ]);
    expect(RECORDED_REFUSALS.has("tool_not_found")).toBe(false);
  });
});

describe("which refusals are recorded", () => {
  it("records a limit's refusal once a minute per caller and reason, every other refusal each time", () => {
    const refusals = new LimitRefusals();
    const t = 1_000_000;
    expect(refusals.shouldRecord("rate_limited", "key-a", t)).toBe(true);
    expect(refusals.shouldRecord("rate_limited", "key-a", t + 59_999)).toBe(false);
    expect(refusals.shouldRecord("rate_limited", "key-b", t + 1)).toBe(true);
    expect(refusals.shouldRecord("usage_limit_reached", "key-a", t + 2)).toBe(true);
    expect(refusals.shouldRecord("rate_limited", "key-a", t + 60_000)).toBe(true);
    for (let i = 0; i < 3; i++) expect(refusals.shouldRecord("tool_not_permitted", "key-a", t)).toBe(true);
  });

  it("forgets callers older than a minute once it remembers many, and still records their next refusal", () => {
    const refusals = new LimitRefusals();
    for (let i = 0; i <= 10_000; i++) refusals.shouldRecord("rate_limited", `key-${i}`, 0);
    expect(refusals.shouldRecord("rate_limited", "key-new", 60_000)).toBe(true);
    expect(refusals.shouldRecord("rate_limited", "key-0", 60_000)).toBe(true);
    expect(refusals.shouldRecord("rate_limited", "key-0", 60_001)).toBe(false);
  });
});
