// What an execution's id costs Postgres once the tables are at real size: random ids (UUID version 4, as
// Toolport used until kit/ids.ts) against time-ordered ids (version 7, kit/ids.ts timeOrderedUuid), side
// by side in one run on one Postgres server with production durability (started here on a free port in a
// temporary folder).
//
// Two databases with the kit's and the execution service's migrations, `ids_v4` and `ids_v7`. Each is
// filled first with N calls of history (default 1,000,000, over the last 7 days, ids of its own kind):
// executions rows, their outbox rows (published, kept as the relay's retention keeps them) and the inbox rows
// of the two consumers of execution events (Toolport writes those in catalog's and identity's databases; the
// table and its key (consumer, event_id) are the same). Then, in 3 rounds that alternate the two, each
// records M more calls through the execution service's own store (PgExecutionStore.record: the executions
// row and its outbox row in one group-committed statement) at concurrency C, and the two consumers apply
// their events as Toolport's do (their inbox rows in one statement a batch, batches of up to 100). Each
// round starts with a CHECKPOINT, as the server's own checkpoints (every 5 minutes) start each interval:
// the first change to an index page after one writes the whole page to the WAL.
//
// Per kind: the WAL written per call, Postgres's CPU per call (the server with all its backends), and the
// time a call's record took (p50); then the ratios v4 / v7.
// Usage: node test/bench/id-order.mjs [history=1000000] [calls=20000] [concurrency=16]
//   (build first: pnpm exec tsc -b services/execution)
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cpuSnapshot } from "./lib.mjs";
import { benchPostgres, teardown } from "./servers.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [history = 1_000_000, calls = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const ROUNDS = 3;
const CONSUMERS = ["catalog-executions", "identity-key-usage"];
const load = (file) => import(pathToFileURL(path.join(root, file)).href);
const { createPool, ensureDatabase, kitMigrationsDir, migrate, serviceDatabaseUrl } = await load("services/lib/kit/dist/pg.js");
const { timeOrderedUuid } = await load("services/lib/kit/dist/ids.js");
const { PgExecutionStore } = await load("services/execution/dist/store/executions-store.js");

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-ids-"));
const { shutdown } = teardown(dir, async () => {
  for (const kind of kinds) await kind.pool?.end().catch(() => {});
});

const bytes = (n) => Math.round(n).toLocaleString("en-US");

const kinds = [
  { name: "v4", id: () => randomUUID(), sqlId: "gen_random_uuid()" },
  { name: "v7", id: () => timeOrderedUuid(), sqlId: "uuid_v7(at)" },
];

// A version 7 UUID in SQL for a given time, for the history (Postgres 15 has no uuidv7()): the webhooks
// service's uuid_v7(at), created from its own migration.
const UUID_V7_FUNCTION = readFileSync(path.join(root, "services/webhooks/migrations/0003_delivery_ids.sql"), "utf8");

/** N calls of history in one kind's database: executions, published outbox rows, two consumers' inbox rows. */
async function fill(kind) {
  const pool = kind.pool;
  await pool.query(UUID_V7_FUNCTION);
  await pool.query(
    `CREATE TEMP TABLE history AS
       SELECT ${kind.sqlId} AS id, at, i FROM (
         SELECT i, now() - interval '7 days' + (i * (interval '7 days' / $1::int)) AS at FROM generate_series(1, $1::int) AS i) h`,
    [history],
  );
  await pool.query(
    `INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
       status, result_json, duration_ms, executed_at)
     SELECT id, 'account-' || (i % 500), 'org-' || (i % 200), 'key-' || (i % 1000), 'tool-' || (i % 300), 'tool_' || (i % 300),
            'svc-' || (i % 30), 'Service', 'api', 'success', '{"items":[{"id":1,"name":"one"}]}', i % 900, at
       FROM history`,
  );
  await pool.query(
    `INSERT INTO outbox (id, subject, payload, created_at, published_at, attempts)
     SELECT id, 'toolport.execution.completed', decode(repeat('ab', 150), 'hex'), at, at, 1 FROM history ORDER BY at`,
  );
  await pool.query(
    `INSERT INTO inbox (consumer, event_id, subject, applied_at)
     SELECT c, id::text, 'toolport.execution.completed', at FROM history, unnest($1::text[]) AS c`,
    [CONSUMERS],
  );
  await pool.query("DROP TABLE history");
  await pool.query("VACUUM ANALYZE");
}

const tool = {
  id: randomUUID(),
  name: "get_item",
  serviceId: randomUUID(),
  serviceName: "Bench API",
  serviceType: "api",
  isPaid: false,
};
const callers = Array.from({ length: 20 }, (_, i) => ({
  accountId: `account-${i}`,
  organizationId: `org-${i % 5}`,
  keyId: `key-${i}`,
}));

/** An execution as the executor records it, with an id of `kind`'s. */
const record = (kind, n) => ({
  id: kind.id(),
  caller: callers[n % callers.length],
  tool,
  status: "success",
  error: null,
  errorClass: null,
  errorType: null,
  result: { items: [{ id: n, name: `item ${n}` }] },
  storedMeta: null,
  redaction: null,
  passthroughReason: null,
  costCents: 0n,
  settlement: "none",
  durationMs: 3,
  executedAt: new Date(),
  freeTier: false,
});

/** The consumers' statement: a batch's inbox rows at once, as kit/events/consumer.ts writes them. */
async function applyInbox(pool, consumer, eventIds) {
  await pool.query({
    name: `bench_inbox_${consumer}`,
    text: `INSERT INTO inbox (consumer, event_id, subject)
           SELECT $1, m.event_id, 'toolport.execution.completed' FROM unnest($2::text[]) AS m(event_id)
           ON CONFLICT DO NOTHING`,
    values: [consumer, eventIds],
  });
}

async function walLsn(pool) {
  return (await pool.query("SELECT pg_current_wal_insert_lsn() AS lsn")).rows[0].lsn;
}

/** One round of `calls` calls for `kind`: { wal, cpu, latencies } (WAL bytes, Postgres CPU seconds). */
async function round(kind) {
  const { pool, store } = kind;
  await pool.query("CHECKPOINT");
  const lsn = await walLsn(pool);
  const cpu = cpuSnapshot().postgres;
  const latencies = [];
  const applied = [];
  let next = 0;
  // The consumers: what the calls recorded so far, in batches of up to 100, as events arrive.
  let recording = true;
  const consumers = CONSUMERS.map(async (consumer) => {
    let done = 0;
    while (recording || done < applied.length) {
      if (done === applied.length) {
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      const batch = applied.slice(done, done + 100);
      await applyInbox(pool, consumer, batch);
      done += batch.length;
    }
  });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        const r = record(kind, next++);
        const t = performance.now();
        await store.record(r);
        latencies.push(performance.now() - t);
        applied.push(r.id);
      }
    }),
  );
  recording = false;
  await Promise.all(consumers);
  const wal = Number((await pool.query("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1) AS d", [lsn])).rows[0].d);
  return { wal, cpu: cpuSnapshot().postgres - cpu, latencies };
}

try {
  const pg = await benchPostgres(dir, "postgres");
  console.log(
    `Execution ids at real size: ${history.toLocaleString("en-US")} calls of history, then ${calls.toLocaleString("en-US")} ` +
      `calls per round at concurrency ${concurrency}, ${ROUNDS} rounds alternating; Postgres ${pg.url.replace(/\/\/[^@]*@/, "//")} ` +
      `with production durability; Node ${process.version}, ${os.cpus().length} CPUs`,
  );
  for (const kind of kinds) {
    const url = serviceDatabaseUrl(`ids_${kind.name}`, pg.url);
    await ensureDatabase(url);
    kind.pool = createPool(url, concurrency + CONSUMERS.length + 2);
    await migrate(kind.pool, [
      { dir: kitMigrationsDir, namespace: "kit" },
      { dir: path.join(root, "services/execution/migrations"), namespace: "execution" },
    ]);
    const started = performance.now();
    await fill(kind);
    console.log(`  ${kind.name}: history written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    kind.store = new PgExecutionStore(kind.pool);
    kind.totals = { wal: 0, cpu: 0, latencies: [] };
  }
  for (let r = 1; r <= ROUNDS; r++) {
    for (const kind of r % 2 ? kinds : [...kinds].reverse()) {
      const got = await round(kind);
      kind.totals.wal += got.wal;
      kind.totals.cpu += got.cpu;
      kind.totals.latencies.push(...got.latencies);
      console.log(
        `  round ${r} ${kind.name}: ${bytes(got.wal / calls)} B of WAL, ${((got.cpu * 1e3) / calls).toFixed(3)} ms of Postgres CPU per call`,
      );
    }
  }
  console.log("\nPer call, over all rounds:");
  for (const kind of kinds) {
    const { wal, cpu, latencies } = kind.totals;
    const sorted = latencies.sort((a, b) => a - b);
    kind.perCall = {
      wal: wal / (calls * ROUNDS),
      cpu: (cpu * 1e3) / (calls * ROUNDS),
      p50: sorted[Math.floor(sorted.length / 2)],
    };
    console.log(
      `  ${kind.name} (${kind.name === "v4" ? "random" : "time-ordered"}): ${bytes(kind.perCall.wal)} B of WAL, ` +
        `${kind.perCall.cpu.toFixed(3)} ms of Postgres CPU, record p50 ${kind.perCall.p50.toFixed(2)} ms`,
    );
  }
  const [v4, v7] = kinds.map((k) => k.perCall);
  console.log(
    `  v4 / v7: WAL ${(v4.wal / v7.wal).toFixed(2)}x, Postgres CPU ${(v4.cpu / v7.cpu).toFixed(2)}x, record p50 ${(v4.p50 / v7.p50).toFixed(2)}x`,
  );
  // Every call recorded once, its event once in each consumer's inbox: what the figures are of.
  for (const kind of kinds) {
    const { rows } = await kind.pool.query(
      `SELECT (SELECT count(*) FROM executions)::int AS executions, (SELECT count(*) FROM outbox)::int AS outbox,
              (SELECT count(*) FROM inbox)::int AS inbox`,
    );
    const want = history + calls * ROUNDS;
    const got = rows[0];
    if (got.executions !== want || got.outbox !== want || got.inbox !== want * CONSUMERS.length)
      throw new Error(`${kind.name}: expected ${want} executions and outbox rows, got ${JSON.stringify(got)}`);
  }
} finally {
  await shutdown();
}
