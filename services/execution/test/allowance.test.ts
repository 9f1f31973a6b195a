/**
 * Quota leases (src/domain/allowance.ts) against a running identity: concurrent calls of a caller share
 * blocks, limits hold for every waiting call, unused units go back, and a drop discards a caller's
 * leases, including one still on its way.
 */
import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@toolport/kit/pg";
import { createServiceClient } from "@toolport/kit/rpc";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../test/harness/stack.js";
import { GrpcIdentity } from "../src/clients/service-ports.js";
import { AllowanceLeases } from "../src/domain/allowance.js";
import type { Caller } from "../src/domain/model.js";
import type { IdentityPort } from "../src/domain/ports.js";

/** Windows are aligned to the epoch: start early enough in one that a test cannot straddle two. */
async function awayFromWindowEdge(needMs = 10_000) {
  const into = Date.now() % 60_000;
  if (into > 60_000 - needMs) await new Promise((r) => setTimeout(r, 60_000 - into + 250));
}

describe("quota leases", () => {
  let stack: Stack;
  let db: Pool;
  let identity: IdentityPort;
  let requests: { want: number; giveBack: number }[];
  /** The real identity client, with the requests it sends written down. */
  const counted = (port: IdentityPort): IdentityPort => ({
    leaseCallAllowance(req) {
      requests.push({ want: req.want, giveBack: req.giveBack?.hits ?? 0 });
      return port.leaseCallAllowance(req);
    },
  });
  const caller = (tier = "paid"): Caller => ({
    accountId: randomUUID(),
    organizationId: randomUUID(),
    tier,
    requireConfirmation: false,
    callRefusal: null,
  });
  async function hits(subject: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>(
      "SELECT coalesce(sum(hits), 0)::int AS n FROM rate_limit_windows WHERE bucket = 'tool_calls' AND subject_key = $1",
      [subject],
    );
    return rows[0]!.n;
  }

  beforeAll(async () => {
    stack = await startStack(["identity"], { FREE_TIER_CALLS_PER_MONTH: "3" });
    identity = new GrpcIdentity(createServiceClient(IdentityService, `http://127.0.0.1:${stack.ports.identity}`));
    db = createPool(stack.env.IDENTITY_DATABASE_URL!, 1);
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stopAll();
  });

  it("serves concurrent calls of a caller from shared blocks, and gives back what is left at stop", async () => {
    await awayFromWindowEdge();
    requests = [];
    const leases = new AllowanceLeases(counted(identity), { limit: 1000, windowSeconds: 60, maxBlock: 64 });
    const c = caller();
    const first = await Promise.all(Array.from({ length: 40 }, () => leases.take(c, false)));
    expect(first.every((a) => a.ok)).toBe(true);
    // One block of one for the first call, then one for all the calls that found none meanwhile (40,
    // counting the one that took the first block's unit).
    expect(requests.map((r) => r.want)).toEqual([1, 40]);
    // One unit is left; then a block of twice the last one's use (80, capped at 64 asked, and at a
    // sixteenth of 1000 = 62 granted).
    for (let i = 0; i < 10; i++) expect((await leases.take(c, false)).ok).toBe(true);
    expect(requests.map((r) => r.want)).toEqual([1, 40, 64]);
    expect(await hits(c.accountId)).toBe(1 + 40 + 62);
    await leases.stop();
    expect(await hits(c.accountId)).toBe(50);
  });

  it("refuses every waiting call past the limit, with the window that refused it", async () => {
    await awayFromWindowEdge();
    requests = [];
    const leases = new AllowanceLeases(counted(identity), { limit: 5, windowSeconds: 60, maxBlock: 64 });
    const c = caller();
    const results = await Promise.all(Array.from({ length: 8 }, () => leases.take(c, false)));
    expect(results.filter((a) => a.ok).length).toBe(5);
    const refused = results.filter((a) => !a.ok);
    expect(refused.length).toBe(3);
    for (const r of refused) {
      expect(r).toMatchObject({ ok: false, rate: { allowed: false, limit: 5, remaining: 0 } });
    }
    expect(await hits(c.accountId)).toBe(5);
    await leases.stop();
  });

  it("stops free-tier calls at the month's limit while the caller's other calls go on", async () => {
    await awayFromWindowEdge();
    const leases = new AllowanceLeases(identity, { limit: 1000, windowSeconds: 60, maxBlock: 64 });
    const c = caller("free");
    const free = [];
    for (let i = 0; i < 4; i++) free.push(await leases.take(c, true));
    expect(free.map((a) => a.ok)).toEqual([true, true, true, false]);
    expect(free[3]).toMatchObject({ ok: false, freeTier: { allowed: false, callsThisMonth: 3n, limit: 3n } });
    expect((await leases.take(c, false)).ok).toBe(true);
    await leases.stop();
  });

  it("drops a caller's leases, also one still on its way, so the next call asks identity again", async () => {
    requests = [];
    const leases = new AllowanceLeases(counted(identity), { limit: 1000, windowSeconds: 60, maxBlock: 64 });
    const c = caller();
    expect((await leases.take(c, false)).ok).toBe(true);
    expect(leases.drop({ accountId: c.accountId, organizationId: c.organizationId })).toBe(1);
    expect((await leases.take(c, false)).ok).toBe(true);
    expect(requests.length).toBe(2);
    // Dropped while its block is being fetched: the block is discarded and asked for again.
    const pending = leases.take(c, false);
    await Promise.resolve();
    leases.drop({ accountId: c.accountId, organizationId: c.organizationId });
    expect((await pending).ok).toBe(true);
    expect(requests.length).toBe(4);
    // Another caller's leases are untouched by a drop.
    expect(leases.drop({ accountId: randomUUID(), organizationId: c.organizationId })).toBe(0);
    await leases.stop();
  });
});
