/**
 * The parts hook of a service definition (ServiceDefinition.deps), started as a role against the run's
 * Postgres and NATS: each start builds its parts once; its routes and its background work receive those
 * very parts; on stop the background work stops first, then the parts' close(), while the pool still
 * answers (the pools close after it).
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../../test/harness/db.js";
import type { Pool } from "../src/pg.js";
import type { RunningRole } from "../src/roles.js";
import { type ServiceDefinition, serviceRole } from "../src/service.js";

interface Parts {
  start: number;
  pool: Pool;
  close(): Promise<void>;
}

/** What the definition saw, in order. */
const seen: string[] = [];
const routed: Parts[] = [];
const backgrounded: Parts[] = [];
let builds = 0;

const definition: ServiceDefinition<Record<string, never>, Parts> = {
  name: "partstest",
  defaultPort: 0,
  migrationsDir: "/nonexistent",
  services: [],
  deps(ctx) {
    const start = ++builds;
    seen.push(`deps ${start}`);
    return {
      start,
      pool: ctx.pool,
      async close() {
        // The pool is still open here: the kit ends it after the parts.
        const { rows } = await ctx.pool.query<{ one: number }>("SELECT 1 AS one");
        seen.push(`close ${start} (pool answered ${rows[0]?.one})`);
      },
    };
  },
  routes(_router, parts) {
    seen.push(`routes ${parts.start}`);
    routed.push(parts);
  },
  async background(parts, ctx) {
    seen.push(`background ${parts.start} (${ctx.name})`);
    backgrounded.push(parts);
    return [{ stop: async () => void seen.push(`work stopped ${parts.start}`) }];
  },
};

describe("a service's parts", () => {
  const running: RunningRole[] = [];
  let db: TestDatabase;

  afterAll(async () => {
    for (const r of running) await r.stop();
    await db?.pool.end();
  });

  it("are built once per start, given to the routes and the background work, and closed after that work", async () => {
    db = await testDatabase("parts");
    const role = serviceRole(definition);
    const env = {
      DATABASE_URL: db.url,
      PARTSTEST_DATABASE_URL: db.url,
      NATS_URL: inject("natsUrl"),
      NATS_NAMESPACE: `q${randomBytes(3).toString("hex")}`,
      LOG_LEVEL: "silent",
    };
    const first = await role.start(env);
    running.push(first);
    const second = await role.start(env);
    running.push(second);

    expect(builds).toBe(2);
    expect(routed[0]).toBe(backgrounded[0]);
    expect(routed[1]).toBe(backgrounded[1]);
    expect(routed[0]).not.toBe(routed[1]);

    await first.stop();
    running.splice(running.indexOf(first), 1);
    const ended = routed[0]!.pool;
    expect(ended.ended).toBe(true);
    expect(routed[1]!.pool.ended).toBe(false);
    expect(seen).toEqual([
      "deps 1",
      "routes 1",
      "background 1 (partstest)",
      "deps 2",
      "routes 2",
      "background 2 (partstest)",
      "work stopped 1",
      "close 1 (pool answered 1)",
    ]);
  });
});
