/**
 * Pool sizes per role (`<SERVICE>_PG_POOL_MAX`, `<SERVICE>_PG_RELAXED_POOL_MAX`): a service started by
 * startService, against the run's Postgres and NATS, opens its pools with the sizes its settings give,
 * and with the code's defaults (10; the size the service asks relaxedPool for) when they are unset.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../../test/harness/db.js";
import type { Pool } from "../src/pg.js";
import { type RunningService, startService } from "../src/service.js";

interface Seen {
  main: Pool;
  relaxed: Pool;
}

/** A service with no RPCs of its own whose background work asks for a relaxed pool of 7 and reports both pools. */
function poolService(seen: Partial<Seen>) {
  return {
    name: "pooltest",
    defaultPort: 0,
    migrationsDir: "/nonexistent",
    services: [],
    routes() {},
    async background(ctx: { pool: Pool; relaxedPool(max: number): Pool }) {
      seen.main = ctx.pool;
      seen.relaxed = ctx.relaxedPool(7);
      return [];
    },
  };
}

describe("Postgres pool sizes from the role's settings", () => {
  const running: RunningService[] = [];
  let db: TestDatabase;

  afterAll(async () => {
    for (const r of running) await r.stop();
    await db?.pool.end();
  });

  async function start(settings: Record<string, string>): Promise<Seen> {
    db ??= await testDatabase("pools");
    const seen: Partial<Seen> = {};
    const service = await startService(poolService(seen), {
      DATABASE_URL: db.url,
      POOLTEST_DATABASE_URL: db.url,
      NATS_URL: inject("natsUrl"),
      NATS_NAMESPACE: `p${randomBytes(3).toString("hex")}`,
      LOG_LEVEL: "silent",
      ...settings,
    });
    running.push(service);
    return seen as Seen;
  }

  it("keeps the code's sizes when the settings are unset", async () => {
    const seen = await start({});
    expect(seen.main.options.max).toBe(10);
    expect(seen.relaxed.options.max).toBe(7);
  });

  it("takes <SERVICE>_PG_POOL_MAX and <SERVICE>_PG_RELAXED_POOL_MAX, and opens no more than that", async () => {
    const seen = await start({ POOLTEST_PG_POOL_MAX: "3", POOLTEST_PG_RELAXED_POOL_MAX: "2" });
    expect(seen.main.options.max).toBe(3);
    expect(seen.relaxed.options.max).toBe(2);
    // Five queries at once on a pool of 3: three connections, the others wait their turn.
    await Promise.all(Array.from({ length: 5 }, () => seen.main.query("SELECT pg_sleep(0.05)")));
    expect(seen.main.totalCount).toBeLessThanOrEqual(3);
  });

  it("refuses a size that is not a positive integer, naming the setting", async () => {
    await expect(start({ POOLTEST_PG_POOL_MAX: "0" })).rejects.toThrow(/POOLTEST_PG_POOL_MAX/);
    await expect(start({ POOLTEST_PG_RELAXED_POOL_MAX: "many" })).rejects.toThrow(/POOLTEST_PG_RELAXED_POOL_MAX/);
  });
});
