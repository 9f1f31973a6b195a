import { describe, expect, it } from "vitest";
import { waitDeadline } from "./executor.js";

describe("waitDeadline: how long a duplicate of an idempotent call waits for the attempt holding its key", () => {
  const now = 1_000_000;
  const lease = 60_000;

  it("waits until the claim may be taken over when the caller set no deadline", () => {
    expect(waitDeadline(now, lease, undefined)).toBe(now + lease + 5_000);
  });

  it("stops 2 s before a caller's deadline that ends before the lease", () => {
    expect(waitDeadline(now, lease, now + 30_000)).toBe(now + 28_000);
  });

  it("keeps a quarter of a short deadline for the answer to travel", () => {
    expect(waitDeadline(now, lease, now + 4_000)).toBe(now + 3_000);
    expect(waitDeadline(now, lease, now)).toBe(now);
  });

  it("never waits past the lease, however long the caller waits", () => {
    expect(waitDeadline(now, lease, now + 10 * 60_000)).toBe(now + lease + 5_000);
  });
});
