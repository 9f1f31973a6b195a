/**
 * SiteStore.claim against a real Postgres: a claim leases queued jobs and marks their records crawling
 * (a live record stays live), a leased job is not claimed again until its lease runs out, a job claimed
 * more than MAX_CRAWL_ATTEMPTS times is failed (its record too) instead of handed out, and a claim that
 * finds nothing changes nothing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { MAX_CRAWL_ATTEMPTS, SiteStore } from "../src/store/sites.js";

describe("SiteStore.claim", () => {
  let db: TestDatabase;
  let sites: SiteStore;

  beforeAll(async () => {
    db = await migratedDatabase("content_crawl_claim", "content");
    sites = new SiteStore(db.pool);
  });
  afterAll(async () => {
    await db.pool.end();
  });

  const job = async (siteId: string) =>
    (
      await db.pool.query<{ status: string; attempts: number; leased: boolean }>(
        "SELECT status, attempts, locked_until > now() AS leased FROM crawl_jobs WHERE site_id = $1",
        [siteId],
      )
    ).rows[0]!;

  it("leases queued jobs, marks pending records crawling and leaves live ones live", async () => {
    // Nothing queued: nothing falls due (the crawler's idle poll waits its longest).
    expect(await sites.nextDueInMs()).toBeNull();
    const pending = await sites.create(randomUUID(), "https://pending.example/", "pending.example", "private");
    const live = await sites.create(randomUUID(), "https://live.example/", "live.example", "private");
    await db.pool.query("UPDATE sites SET status = 'live' WHERE id = $1", [live.id]);

    const claimed = await sites.claim(10, 60_000);
    expect(claimed.map((j) => [j.site_id, j.url, j.attempts]).sort()).toEqual(
      [
        [pending.id, "https://pending.example/", 1],
        [live.id, "https://live.example/", 1],
      ].sort(),
    );
    expect((await sites.get(pending.id))?.status).toBe("crawling");
    expect((await sites.get(live.id))?.status).toBe("live");
    expect(await job(pending.id)).toEqual({ status: "queued", attempts: 1, leased: true });

    // Leased: the next claim finds nothing, and changes nothing.
    const before = (await sites.get(pending.id))?.updated_at;
    expect(await sites.claim(10, 60_000)).toEqual([]);
    expect(await job(pending.id)).toEqual({ status: "queued", attempts: 1, leased: true });
    expect((await sites.get(pending.id))?.updated_at).toEqual(before);
    // The next job may be claimed when the leases run out, about a minute from now.
    const dueInMs = (await sites.nextDueInMs()) ?? Number.NaN;
    expect(dueInMs).toBeGreaterThan(50_000);
    expect(dueInMs).toBeLessThanOrEqual(60_000);
  });

  it("fails a job claimed more than MAX_CRAWL_ATTEMPTS times, and its record, instead of handing it out", async () => {
    const site = await sites.create(randomUUID(), "https://flaky.example/", "flaky.example", "private");
    for (let attempt = 1; attempt <= MAX_CRAWL_ATTEMPTS; attempt++) {
      const claimed = await sites.claim(10, 60_000);
      expect(claimed.map((j) => [j.site_id, j.attempts])).toEqual([[site.id, attempt]]);
      await db.pool.query("UPDATE crawl_jobs SET locked_until = now() - interval '1 second' WHERE site_id = $1", [site.id]);
    }
    expect(await sites.claim(10, 60_000)).toEqual([]);
    expect(await job(site.id)).toMatchObject({ status: "done", attempts: MAX_CRAWL_ATTEMPTS + 1 });
    const failed = await sites.get(site.id);
    expect(failed?.status).toBe("failed");
    expect(failed?.error).toBe(`the crawl did not finish after ${MAX_CRAWL_ATTEMPTS} attempts`);
  });
});
