/**
 * The shared counters on a running identity process: fixed-window rate limits that hold under
 * concurrency, the monthly free tier, counted once per execution id, and execution's quota leases on
 * both (blocks reserved under concurrency, given back, refused with a bad key; ended months reconciled).
 */

import { randomUUID } from "node:crypto";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { createPool } from "@toolport/kit/pg";
import { createServiceClient } from "@toolport/kit/rpc";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../test/harness/stack.js";
import { reconcileFreeTier } from "../src/store/leases.js";

/** Windows are aligned to the epoch: start a burst early enough in one that it cannot straddle two. */
async function awayFromWindowEdge(windowMs: number, needMs = 10_000) {
  const into = Date.now() % windowMs;
  if (into > windowMs - needMs) await new Promise((r) => setTimeout(r, windowMs - into + 250));
}

describe("identity counters", () => {
  let stack: Stack;
  let identity: ReturnType<typeof createServiceClient<typeof IdentityService>>;
  beforeAll(async () => {
    stack = await startStack(["identity"], { FREE_TIER_CALLS_PER_MONTH: "3" });
    identity = createServiceClient(IdentityService, `http://127.0.0.1:${stack.ports.identity}`);
  });
  afterAll(() => stack?.stopAll());

  it("allows exactly `limit` hits of many concurrent ones in a window, then says when to retry", async () => {
    const subjectKey = `ip-${randomUUID()}`;
    await awayFromWindowEdge(60_000);
    const hits = await Promise.all(
      Array.from({ length: 20 }, () =>
        identity.consumeRateLimit({ bucket: "test_burst", subjectKey, limit: 5, windowSeconds: 60 }),
      ),
    );
    expect(hits.filter((h) => h.allowed)).toHaveLength(5);
    const refused = hits.filter((h) => !h.allowed);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.remaining).toBe(0);
      expect(r.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(r.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(timestampDate(r.resetAt!).getTime()).toBeGreaterThan(Date.now());
    }
    expect(
      hits
        .filter((h) => h.allowed)
        .map((h) => h.remaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
    // Another subject in the same bucket has its own count.
    const other = await identity.consumeRateLimit({
      bucket: "test_burst",
      subjectKey: `ip-${randomUUID()}`,
      limit: 5,
      windowSeconds: 60,
    });
    expect(other.allowed).toBe(true);
  });

  it("opens a new window when the old one ends", async () => {
    const subjectKey = randomUUID();
    const hit = () => identity.consumeRateLimit({ bucket: "test_window", subjectKey, limit: 1, windowSeconds: 2 });
    const first = await hit();
    const second = await hit();
    const resetAt = timestampDate(first.resetAt!).getTime();
    expect(first.allowed).toBe(true);
    // Unless the window happened to end between the two calls, the second is refused.
    if (Date.now() < resetAt - 100) expect(second.allowed).toBe(false);
    // If it did end between them, the second call opened (and filled) the next window: wait for that one.
    const lastReset = Math.max(resetAt, timestampDate(second.resetAt!).getTime());
    await new Promise((r) => setTimeout(r, Math.max(0, lastReset - Date.now()) + 100));
    expect((await hit()).allowed).toBe(true);
  });

  it("takes a known bucket's configured default when limit and window are 0", async () => {
    const subjectKey = randomUUID();
    await awayFromWindowEdge(60_000);
    const results = [];
    for (let i = 0; i < 6; i++)
      results.push(await identity.consumeRateLimit({ bucket: "registration", subjectKey, limit: 0, windowSeconds: 0 }));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
    expect(results[0]!.limit).toBe(5);
  });

  it("refuses a bad bucket, an unknown bucket without a limit, and an empty subject, naming the field", async () => {
    const field = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      return (err as ConnectError).rawMessage;
    };
    expect(
      await field(identity.consumeRateLimit({ bucket: "Bad Bucket!", subjectKey: "x", limit: 1, windowSeconds: 1 })),
    ).toMatch(/^bucket:/);
    expect(await field(identity.consumeRateLimit({ bucket: "nameless", subjectKey: "x", limit: 0, windowSeconds: 60 }))).toMatch(
      /^limit:/,
    );
    expect(await field(identity.consumeRateLimit({ bucket: "x", subjectKey: " ", limit: 1, windowSeconds: 60 }))).toMatch(
      /^subject_key:/,
    );
  });

  it("counts free-tier calls once per execution id and refuses beyond the monthly limit with the usage", async () => {
    const accountId = randomUUID();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const first = await identity.consumeFreeTierCall({ accountId, executionId: ids[0]! });
    expect(first).toMatchObject({ allowed: true, callsThisMonth: 1n, limit: 3n });
    // A retry of the same execution is allowed and not counted again.
    expect(await identity.consumeFreeTierCall({ accountId, executionId: ids[0]! })).toMatchObject({
      allowed: true,
      callsThisMonth: 1n,
    });
    // Concurrent calls, including a duplicate, count each execution once.
    const burst = await Promise.all(
      [ids[1]!, ids[2]!, ids[2]!].map((executionId) => identity.consumeFreeTierCall({ accountId, executionId })),
    );
    expect(burst.every((b) => b.allowed)).toBe(true);
    const over = await identity.consumeFreeTierCall({ accountId, executionId: randomUUID() });
    expect(over).toMatchObject({ allowed: false, callsThisMonth: 3n, limit: 3n });
    const now = new Date();
    expect(timestampDate(over.resetsAt!).toISOString()).toBe(
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    );
    // Calls already counted stay allowed (a retry after the limit was reached is not refused).
    expect((await identity.consumeFreeTierCall({ accountId, executionId: ids[1]! })).allowed).toBe(true);
    // Another account has its own count.
    expect((await identity.consumeFreeTierCall({ accountId: randomUUID(), executionId: randomUUID() })).allowed).toBe(true);
  });

  describe("LeaseCallAllowance (quota leases)", () => {
    const holder = "test-holder";
    const lease = (
      subjectKey: string,
      limit: number,
      want: number,
      extra: {
        freeAccount?: string;
        freeWant?: number;
        giveBack?: { windowStart: Timestamp; hits: number; month?: string; freeCalls?: bigint };
      } = {},
    ) =>
      identity.leaseCallAllowance({
        rateLimit: { bucket: "tool_calls", subjectKey, limit, windowSeconds: 60 },
        want,
        freeTierAccountId: extra.freeAccount,
        freeWant: extra.freeWant ?? 0,
        holder,
        giveBack: extra.giveBack,
      });

    it("grants blocks of at most a sixteenth of the limit, never past it under concurrency", async () => {
      await awayFromWindowEdge(60_000);
      const subjectKey = randomUUID();
      const burst = await Promise.all(Array.from({ length: 40 }, () => lease(subjectKey, 32, 5)));
      // 32 / 16 = 2 at most per lease; 16 leases take the whole limit, the rest are refused.
      expect(Math.max(...burst.map((b) => b.granted))).toBe(2);
      expect(burst.reduce((t, b) => t + b.granted, 0)).toBe(32);
      const refused = burst.filter((b) => b.granted === 0);
      expect(refused.length).toBe(24);
      for (const r of refused) {
        expect(r.rateLimit).toMatchObject({ allowed: false, limit: 32, remaining: 0 });
        expect(r.rateLimit!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
        expect(r.ttlMs).toBe(0);
      }
      const granted = burst.find((b) => b.granted > 0)!;
      expect(granted.rateLimit!.allowed).toBe(true);
      // The lease ends within ALLOWANCE_LEASE_MS (2 s by default), and never after its window.
      expect(granted.ttlMs).toBeGreaterThan(0);
      expect(granted.ttlMs).toBeLessThanOrEqual(2000);
      expect(timestampDate(granted.windowStart!).getTime() % 60_000).toBe(0);
    });

    it("takes back what a lease gives back, in the lease's own window", async () => {
      await awayFromWindowEdge(60_000);
      const subjectKey = randomUUID();
      const first = await lease(subjectKey, 32, 2);
      expect(first.granted).toBe(2);
      expect(first.rateLimit!.remaining).toBe(30);
      const back = await lease(subjectKey, 32, 0, { giveBack: { windowStart: first.windowStart!, hits: 2 } });
      expect(back.granted).toBe(0);
      expect(back.rateLimit).toMatchObject({ allowed: true, remaining: 32 });
      // Giving back more than was counted stops at zero.
      const again = await lease(subjectKey, 32, 1, { giveBack: { windowStart: first.windowStart!, hits: 5 } });
      expect(again).toMatchObject({ granted: 1 });
      expect(again.rateLimit!.remaining).toBe(31);
    });

    it("reserves free-tier calls only with rate-limit hits, never past the month's limit", async () => {
      await awayFromWindowEdge(60_000);
      const accountId = randomUUID();
      // FREE_TIER_CALLS_PER_MONTH is 3 here: blocks of one.
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await lease(randomUUID(), 100, 2, { freeAccount: accountId, freeWant: 2 }));
      expect(got.map((g) => g.freeGranted)).toEqual([1n, 1n, 1n, 0n]);
      expect(got[3]!.granted).toBeGreaterThan(0);
      expect(got[3]!.freeTier).toMatchObject({ allowed: false, callsThisMonth: 3n, limit: 3n });
      const now = new Date();
      expect(timestampDate(got[3]!.freeTier!.resetsAt!).toISOString()).toBe(
        new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      );
      // A refused rate limit reserves no free-tier call.
      const full = randomUUID();
      await lease(full, 1, 1);
      const other = randomUUID();
      const refused = await lease(full, 1, 1, { freeAccount: other, freeWant: 1 });
      expect(refused.granted).toBe(0);
      expect(refused.freeGranted).toBe(0n);
      expect((await lease(randomUUID(), 100, 1, { freeAccount: other, freeWant: 1 })).freeTier).toMatchObject({
        callsThisMonth: 1n,
      });
      // Given back, a month's call can be reserved again.
      const back = await lease(randomUUID(), 100, 1, {
        freeAccount: accountId,
        freeWant: 1,
        giveBack: { windowStart: got[0]!.windowStart!, hits: 0, month: got[0]!.month, freeCalls: 1n },
      });
      expect(back.freeGranted).toBe(1n);
      expect(back.freeTier).toMatchObject({ allowed: true, callsThisMonth: 3n });
    });

    it("refuses a key that does not check out, reserving nothing", async () => {
      const subjectKey = randomUUID();
      const err = await identity
        .leaseCallAllowance({
          rateLimit: { bucket: "tool_calls", subjectKey, limit: 10, windowSeconds: 60 },
          want: 1,
          holder,
          keyCheck: { keyId: randomUUID(), accountId: randomUUID(), organizationId: randomUUID() },
        })
        .then(
          () => undefined,
          (e: unknown) => e as ConnectError,
        );
      expect(err?.code).toBe(Code.Unauthenticated);
      expect((await lease(subjectKey, 10, 1)).rateLimit!.remaining).toBe(9);
    });

    it("refuses bad requests, naming the field", async () => {
      const field = (req: Parameters<typeof identity.leaseCallAllowance>[0]) =>
        identity.leaseCallAllowance(req).then(
          () => undefined,
          (e: unknown) => ((e as ConnectError).code === Code.InvalidArgument ? (e as ConnectError).rawMessage : String(e)),
        );
      const rate = { bucket: "tool_calls", subjectKey: "s", limit: 10, windowSeconds: 60 };
      expect(await field({ want: 1, holder })).toMatch(/^rate_limit:/);
      expect(await field({ rateLimit: rate, want: 1001, holder })).toMatch(/^want:/);
      expect(await field({ rateLimit: rate, want: 1, holder: "a.b" })).toMatch(/^holder:/);
      expect(await field({ rateLimit: rate, want: 1, holder, freeTierAccountId: "nope" })).toMatch(/^free_tier_account_id:/);
      expect(await field({ rateLimit: rate, want: 1, holder, giveBack: { hits: 1, month: "", freeCalls: 0n } })).toMatch(
        /^give_back.window_start:/,
      );
    });
  });

  it("reconciles ended free-tier months with the recorded calls", async () => {
    const db = createPool(stack.env.IDENTITY_DATABASE_URL!, 1);
    try {
      const accountId = randomUUID();
      const lastMonth = new Date();
      lastMonth.setUTCDate(1);
      lastMonth.setUTCMonth(lastMonth.getUTCMonth() - 1);
      const month = lastMonth.toISOString().slice(0, 10);
      const current = new Date().toISOString().slice(0, 8) + "01";
      // Last month: 5 reserved (a holder died with 3 unused), 2 recorded. This month: reserved, not reconciled.
      await db.query("INSERT INTO free_tier_usage (account_id, month, calls) VALUES ($1, $2, 5), ($1, $3, 4)", [
        accountId,
        month,
        current,
      ]);
      await db.query(
        "INSERT INTO free_tier_calls (execution_id, account_id, month) VALUES ($1, $3, $4), ($2, $3, $4), ($5, $3, $6)",
        [randomUUID(), randomUUID(), accountId, month, randomUUID(), current],
      );
      expect(await reconcileFreeTier(db)).toBeGreaterThanOrEqual(1);
      const { rows } = await db.query<{ month: string; calls: string }>(
        "SELECT to_char(month, 'YYYY-MM-DD') AS month, calls::text FROM free_tier_usage WHERE account_id = $1 ORDER BY month",
        [accountId],
      );
      expect(rows).toEqual([
        { month, calls: "2" },
        { month: current, calls: "4" },
      ]);
      expect(await reconcileFreeTier(db)).toBe(0);
    } finally {
      await db.end();
    }
  });
});
