// A page of services' figures (total_executions, success_rate, is_popular: catalog's serviceStats) and the
// executions consumer's statement, at a year of calls, against their own Postgres (started here on a free
// port in a temporary folder) with the catalog's migrations. Side by side, in one run:
//   1. N execution facts over 365 days inserted as a release before migrations/0008 kept them (every fact
//      for good; 500 services, one with a third of the calls), then 0008 applied (its backfill of
//      service_call_totals and the last days of service_calls timed);
//   2. a page of 20 services' figures read the way it was read before (every fact of those services,
//      whole table) and the way serviceStats reads it now (a total row and at most a month of day rows a
//      service), medians and their ratio, and the figures of both compared (they must agree while no fact
//      is pruned);
//   3. the facts past the retention pruned (pruneExecutions, timed), the rows left;
//   4. the consumer's statement for a batch of 100 new events: its INSERT of the facts alone (as before
//      the counts) and RECORD_EXECUTIONS_SQL whole (the facts, their service's day and total), medians and
//      their ratio.
// Usage: node test/bench/service-stats.mjs [facts=1000000] [reads=30]
//   (build first: pnpm exec tsc -b services/catalog)
import { randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [facts = 1_000_000, reads = 30] = process.argv.slice(2).map(Number);
const load = (file) => import(pathToFileURL(path.join(root, file)).href);
const { createPool, kitMigrationsDir, migrate } = await load("services/lib/kit/dist/pg.js");
const { serviceStats } = await load("services/catalog/dist/store/catalog-store.js");
const { RECORD_EXECUTIONS_SQL, pruneExecutions } = await load("services/catalog/dist/store/executions-store.js");

/** What a page of services read before migrations/0008: every fact of the page's services. */
const STATS_BEFORE = `SELECT service_id, count(*) AS total, count(*) FILTER (WHERE success) AS successes,
        count(*) FILTER (WHERE occurred_at > now() - interval '30 days') AS recent
   FROM executions WHERE service_id = ANY($1::text[]) GROUP BY service_id`;
/**
 * The consumer's statement without its counts: the facts alone, as it was before (with the
 * retention check, which is not in the yardstick's way), cut out of RECORD_EXECUTIONS_SQL itself.
 */
const RECORD_BEFORE = RECORD_EXECUTIONS_SQL.slice(
  RECORD_EXECUTIONS_SQL.indexOf("INSERT INTO executions"),
  RECORD_EXECUTIONS_SQL.indexOf("RETURNING"),
);

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-service-stats-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(dir, "pg"), port: await freePort(), log: quiet });
const pool = createPool(pg.url, 4);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (since) => ((performance.now() - since) / 1000).toFixed(1);
try {
  // The catalog's migrations before 0008, as an older release left them.
  const catalogMigrations = path.join(root, "services/catalog/migrations");
  const before = path.join(dir, "migrations-before");
  mkdirSync(before);
  for (const file of readdirSync(catalogMigrations).filter((f) => f < "0008"))
    cpSync(path.join(catalogMigrations, file), path.join(before, file));
  await migrate(pool, [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir: before, namespace: "catalog" },
  ]);
  const services = Array.from({ length: 500 }, () => randomUUID());
  let started = performance.now();
  await pool.query(
    `INSERT INTO executions (execution_id, tool_id, service_id, account_id, success, seconds, occurred_at)
     SELECT gen_random_uuid()::text, gen_random_uuid(),
            CASE WHEN i % 3 = 0 THEN ($1::text[])[1] ELSE ($1::text[])[1 + i % 500] END,
            'account-' || (i % 1000), i % 13 <> 0, 0.1, now() - (i::double precision / $2) * interval '365 days'
       FROM generate_series(1, $2::int) AS i`,
    [services, facts],
  );
  await pool.query("VACUUM ANALYZE executions");
  console.log(`1. ${facts.toLocaleString("en-US")} facts over 365 days inserted in ${seconds(started)} s`);
  started = performance.now();
  await migrate(pool, [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir: catalogMigrations, namespace: "catalog" },
  ]);
  await pool.query("ANALYZE service_calls; ANALYZE service_call_totals");
  const days = (await pool.query("SELECT count(*)::int AS n FROM service_calls")).rows[0].n;
  console.log(
    `   migrations/0008 (the counts backfilled from them): ${seconds(started)} s, ${days.toLocaleString("en-US")} day rows`,
  );

  const page = services.slice(0, 20); // the busy service among them
  async function timed(read) {
    const times = [];
    for (let i = 0; i < reads; i++) {
      const t = performance.now();
      await read();
      times.push(performance.now() - t);
    }
    return median(times);
  }
  const figuresBefore = async () => {
    const { rows } = await pool.query(STATS_BEFORE, [page]);
    return new Map(rows.map((r) => [r.service_id, [Number(r.total), Number(r.successes)]]));
  };
  const figuresNow = async () =>
    new Map([...(await serviceStats(pool, page))].filter(([, s]) => s.totalExecutions > 0).map(([id, s]) => [id, s]));
  const was = await figuresBefore();
  const now = await figuresNow();
  const agree = [...was].every(([id, [total, successes]]) => {
    const s = now.get(id);
    return s && s.totalExecutions === total && Math.abs(s.successRate - successes / total) < 1e-12;
  });
  if (!agree || was.size !== now.size) throw new Error("the counts and the facts disagree on a service's figures");
  const tBefore = await timed(() => pool.query(STATS_BEFORE, [page]));
  const tNow = await timed(() => serviceStats(pool, page));
  console.log(`2. a page of 20 services' figures (${reads} reads each; the figures agree):`);
  console.log(`   before, from every fact:       p50 ${tBefore.toFixed(2)} ms`);
  console.log(
    `   now, serviceStats:             p50 ${tNow.toFixed(2)} ms  (${(tBefore / tNow).toFixed(1)}x faster; it also counts tools)`,
  );

  started = performance.now();
  const pruned = await pruneExecutions(pool);
  const left = (await pool.query("SELECT count(*)::int AS n FROM executions")).rows[0].n;
  console.log(
    `3. pruned ${pruned.toLocaleString("en-US")} facts past the retention in ${seconds(started)} s; ${left.toLocaleString("en-US")} left`,
  );

  // 4. A batch of 100 new events, a fresh batch per run: ten services, none recorded before.
  const batch = () =>
    Array.from({ length: 100 }, (_, i) => ({
      event_id: randomUUID(),
      execution_id: randomUUID(),
      tool_id: randomUUID(),
      service_id: services[i % 10],
      account_id: `account-${i}`,
      organization_id: "",
      success: i % 7 !== 0,
      seconds: 0.2,
      error_class: null,
      error_type: null,
      error: null,
      is_probe: false,
      occurred_at: new Date().toISOString(),
    }));
  const apply = (sql) => {
    const rows = batch();
    return pool.query(`WITH fresh AS (SELECT unnest($2::text[]) AS event_id) ${sql}`, [
      JSON.stringify(rows),
      rows.map((r) => r.event_id),
    ]);
  };
  const rounds = { before: [], now: [] };
  for (let round = 0; round < 3; round++) {
    rounds.before.push(await timed(() => apply(RECORD_BEFORE)));
    rounds.now.push(await timed(() => apply(RECORD_EXECUTIONS_SQL)));
  }
  const [rb, rn] = [median(rounds.before), median(rounds.now)];
  console.log(`4. the consumer's statement, a batch of 100 events over 10 services (${reads} batches x 3 rounds each):`);
  console.log(`   its INSERT of the facts alone:    p50 ${rb.toFixed(2)} ms`);
  console.log(`   whole, with the services' counts: p50 ${rn.toFixed(2)} ms  (${(rn / rb).toFixed(2)}x)`);
} finally {
  await pool.end();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
