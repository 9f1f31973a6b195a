/**
 * The shared counters on a running identity process: fixed-window rate limits that hold under
 * concurrency, and the monthly free tier, counted once per execution id.
 */

import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { createServiceClient } from "@toolport/kit/rpc";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../test/harness/stack.js";

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
    await new Promise((r) => setTimeout(r, Math.max(0, resetAt - Date.now()) + 100));
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

  describe("ConsumeCallAllowance (rate limit and free tier in one round trip)", () => {
    const allowance = (subjectKey: string, limit: number, freeTier?: { accountId: string; executionId: string }) =>
      identity.consumeCallAllowance({ rateLimit: { bucket: "test_calls", subjectKey, limit, windowSeconds: 60 }, freeTier });

    it("counts the free-tier call only when the rate limit allowed it", async () => {
      await awayFromWindowEdge(60_000);
      const subjectKey = randomUUID();
      const accountId = randomUUID();
      const first = await allowance(subjectKey, 1, { accountId, executionId: randomUUID() });
      expect(first.rateLimit).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
      expect(first.freeTier).toMatchObject({ allowed: true, callsThisMonth: 1n, limit: 3n });
      const limited = await allowance(subjectKey, 1, { accountId, executionId: randomUUID() });
      expect(limited.rateLimit).toMatchObject({ allowed: false, remaining: 0 });
      expect(limited.rateLimit!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(limited.freeTier).toBeUndefined();
      // The refused call was not counted: the free-tier RPC sees one call so far.
      expect(await identity.consumeFreeTierCall({ accountId, executionId: randomUUID() })).toMatchObject({
        allowed: true,
        callsThisMonth: 2n,
      });
      // Without a free-tier part only the rate limit is consumed.
      const plain = await allowance(randomUUID(), 5);
      expect(plain.rateLimit).toMatchObject({ allowed: true, remaining: 4 });
      expect(plain.freeTier).toBeUndefined();
    });

    it("never counts past the monthly limit under concurrency, and counts each execution once", async () => {
      await awayFromWindowEdge(60_000);
      const accountId = randomUUID();
      const repeated = randomUUID();
      const ids = [repeated, repeated, repeated, ...Array.from({ length: 9 }, () => randomUUID())];
      const burst = await Promise.all(ids.map((executionId) => allowance(randomUUID(), 100, { accountId, executionId })));
      const allowedNew = burst.filter((b, i) => b.freeTier!.allowed && ids[i] !== repeated);
      const allowedRepeated = burst.filter((b, i) => b.freeTier!.allowed && ids[i] === repeated);
      // The month holds 3 calls: the repeated execution counts once, however many of its copies ran.
      expect(allowedNew.length + (allowedRepeated.length > 0 ? 1 : 0)).toBe(3);
      for (const b of burst.filter((x) => !x.freeTier!.allowed)) {
        expect(b.freeTier).toMatchObject({ allowed: false, callsThisMonth: 3n, limit: 3n });
      }
      expect(await identity.consumeFreeTierCall({ accountId, executionId: randomUUID() })).toMatchObject({
        allowed: false,
        callsThisMonth: 3n,
      });
      // A call already counted stays allowed on a retry, and is not counted again.
      const counted = ids[burst.findIndex((b) => b.freeTier!.allowed)]!;
      expect((await allowance(randomUUID(), 100, { accountId, executionId: counted })).freeTier).toMatchObject({
        allowed: true,
        callsThisMonth: 3n,
      });
    });

    it("refuses a missing rate limit part and a bad account id, naming the field", async () => {
      const err = await identity.consumeCallAllowance({}).then(
        () => undefined,
        (e: unknown) => e as ConnectError,
      );
      expect(err?.code).toBe(Code.InvalidArgument);
      expect(err?.rawMessage).toMatch(/^rate_limit:/);
      const bad = await allowance(randomUUID(), 5, { accountId: "nope", executionId: randomUUID() }).then(
        () => undefined,
        (e: unknown) => e as ConnectError,
      );
      expect(bad?.rawMessage).toMatch(/^account_id:/);
    });
  });
});
