// The call log's page read (GET /v1/activity's query, services/execution/src/store/activity-store.ts) at
// hundreds of thousands of rows, against its own Postgres (started here on a free port in a temporary
// folder) with the execution service's migrations. Inserts N executions straight into the table (one
// organization of 3 accounts, 10 keys and 20 tools holding 80% of them, other organizations the rest;
// one in ten refused), then times pages read newest first in each reader scope and with each filter, the
// first page and one deep in the log (after following 100 cursors), and the refused path's one INSERT.
// Usage: node test/bench/activity-page.mjs [rows=300000] [reads=30]
//   (build first: pnpm exec tsc -b services/execution)
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [rows = 300_000, reads = 30] = process.argv.slice(2).map(Number);
const load = (file) => import(pathToFileURL(path.join(root, file)).href);
const { createPool, kitMigrationsDir, migrate } = await load("services/lib/kit/dist/pg.js");
const { PgActivityStore } = await load("services/execution/dist/store/activity-store.js");

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-activity-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(dir, "pg"), port: await freePort(), log: quiet });
const pool = createPool(pg.url, 4);
try {
  await migrate(pool, [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir: path.join(root, "services/execution/migrations"), namespace: "execution" },
  ]);
  const org = randomUUID();
  const accounts = [randomUUID(), randomUUID(), randomUUID()];
  const keys = Array.from({ length: 10 }, () => randomUUID());
  const started = performance.now();
  await pool.query(
    `INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
       status, error_type, duration_ms, cost_cents, executed_at)
     SELECT gen_random_uuid(),
            CASE WHEN i % 5 = 0 THEN 'other-' || (i % 97) ELSE ($2::text[])[1 + i % 3] END,
            CASE WHEN i % 5 = 0 THEN 'org-' || (i % 97) ELSE $1 END,
            ($3::text[])[1 + i % 10], 'tool-' || (i % 20), 'tool_' || (i % 20), 'svc', 'Service', 'api',
            CASE WHEN i % 10 = 3 THEN 'refused' WHEN i % 17 = 0 THEN 'error' ELSE 'success' END,
            CASE WHEN i % 10 = 3 THEN 'rate_limited' END, i % 900, i % 3,
            now() - (i * interval '1 second')
       FROM generate_series(1, $4::int) AS i`,
    [org, accounts, keys, rows],
  );
  // A rarely called tool, its 20 calls the oldest of the organization: the worst case of a tool filter,
  // which walks the organization's index until it has found a page (or reached the end).
  await pool.query(
    `INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
       status, duration_ms, executed_at)
     SELECT gen_random_uuid(), $2, $1, $3, 'rare-tool', 'rare', 'svc', 'Service', 'api', 'success', 5,
            now() - interval '400 days' - (i * interval '1 second')
       FROM generate_series(1, 20) AS i`,
    [org, accounts[0], keys[0]],
  );
  await pool.query("VACUUM ANALYZE executions");
  console.log(`${rows.toLocaleString("en-US")} rows inserted in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // As the service runs it: refusals written through a pool whose commits do not wait for the WAL flush.
  const relaxed = createPool(pg.url, 2, { synchronousCommit: false });
  const store = new PgActivityStore(pool, relaxed);
  const durable = new PgActivityStore(pool);
  const scopes = {
    organization: { kind: "organization", organizationId: org },
    account: { kind: "account", accountId: accounts[0], organizationId: org },
    key: { kind: "key", keyId: keys[0] },
  };
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  async function time(label, scope, query) {
    let after;
    // A deep page: the cursor after following 100 pages.
    if (query.deep) for (let i = 0; i < 100; i++) after = (await store.list(scope, { ...query, after })).next;
    const times = [];
    let count = 0;
    for (let i = 0; i < reads; i++) {
      const t = performance.now();
      const page = await store.list(scope, { ...query, after });
      times.push(performance.now() - t);
      count = page.entries.length;
    }
    console.log(
      `${label.padEnd(44)} ${String(count).padStart(3)} rows  p50 ${median(times).toFixed(2)} ms  max ${Math.max(...times).toFixed(2)} ms`,
    );
  }
  for (const [name, scope] of Object.entries(scopes)) {
    await time(`${name}: first page`, scope, { limit: 50 });
    await time(`${name}: page 101`, scope, { limit: 50, deep: true });
  }
  const orgScope = scopes.organization;
  await time("organization, status=refused", orgScope, { limit: 50, status: "refused" });
  await time("organization, status=error", orgScope, { limit: 50, status: "error" });
  await time("organization, tool_id=tool-7", orgScope, { limit: 50, toolId: "tool-7" });
  await time("organization, a rare tool (worst case)", orgScope, { limit: 50, toolId: "rare-tool" });
  await time("organization, key_id + tool_id", orgScope, { limit: 50, keyId: keys[3], toolId: "tool-3" });
  const day = new Date(Date.now() - 2 * 86_400_000);
  await time("organization, one day (since/until)", orgScope, {
    limit: 50,
    since: day,
    until: new Date(day.getTime() + 86_400_000),
  });
  await time("organization, limit=200", orgScope, { limit: 200 });

  for (const [label, writer] of [
    ["a refused call's record (as run)", store],
    ["the same, waiting for the WAL flush", durable],
  ]) {
    const inserts = [];
    for (let i = 0; i < reads; i++) {
      const t = performance.now();
      await writer.recordRefusal({
        id: randomUUID(),
        at: new Date(),
        accountId: accounts[0],
        organizationId: org,
        keyId: keys[0],
        toolId: "tool-1",
        toolName: "tool_1",
        serviceId: "svc",
        serviceName: "Service",
        serviceType: "api",
        reason: "tool_not_permitted",
        message: "this API key is not permitted to call tool_1",
      });
      inserts.push(performance.now() - t);
    }
    console.log(`${label.padEnd(44)}       p50 ${median(inserts).toFixed(2)} ms`);
  }
  await relaxed.end();
} finally {
  await pool.end();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
