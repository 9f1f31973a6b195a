// Event pipeline throughput of the kit's outbox relay and one durable consumer (services/lib/kit/dist),
// against their own Postgres (durable settings: fsync on) and NATS, started here on free ports in a
// temporary folder. Enqueues N execution events through the outbox, then times
//   1. the relay publishing all of them to JetStream, and
//   2. one consumer applying all of them (inbox row + one INSERT per event, like catalog's
//      reliability consumer), with the Postgres transactions and CPU seconds (this process +
//      Postgres backends) it took.
// Usage: node test/bench/consumer-throughput.mjs [events=5000]
//   (build first: flock /tmp/tsc.lock npx tsc -b services/lib/kit)
//   KIT_DIST=<folder> runs another build of the kit (e.g. a copy of dist/ from before a change).
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const kitDist = path.resolve(process.env.KIT_DIST ?? path.join(root, "services/lib/kit/dist"));
const [events = 5000] = process.argv.slice(2).map(Number);

const kit = (name) => import(pathToFileURL(path.join(kitDist, name)).href);
const { connectNats, enqueueEvent, ensureStream, OutboxRelay, startConsumer } = await kit("events.js");
const { createPool, kitMigrationsDir, migrate, withTransaction } = await kit("pg.js");
const { createLogger } = await kit("logger.js");
const { ExecutionEventSchema } = await import(pathToFileURL(path.join(root, "proto/dist/toolport/events/v1/events_pb.js")).href);
const { create } = createRequire(path.join(root, "services/lib/kit/package.json"))("@bufbuild/protobuf");

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-consumer-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(dir, "pg"), port: await freePort(), log: quiet });
const nats = await startNats({ storeDir: path.join(dir, "nats"), port: await freePort(), log: quiet });
const log = createLogger("bench", "warn");
const pool = createPool(pg.url, 10);
const nc = await connectNats(nats.url, "bench", log);

/** CPU seconds of the Postgres server: the postmaster, its reaped children and its live backends. */
function postgresCpuSeconds() {
  const tick = 100; // USER_HZ on Linux
  const stat = (pid) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  let total = 0;
  const own = stat(pg.pid);
  total += Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const s = stat(entry);
      if (Number(s[1]) === pg.pid) total += Number(s[11]) + Number(s[12]);
    } catch {
      // exited meanwhile
    }
  }
  return total / tick;
}
const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** Each write transaction takes one transaction id (read-only ones, like the polling here, take none). */
const xid = async () => Number((await pool.query("SELECT txid_current()::text AS x")).rows[0].x);
const count = async (sql) => Number((await pool.query(sql)).rows[0].n);
async function until(check) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

try {
  await ensureStream(nc);
  await migrate(pool, [{ dir: kitMigrationsDir, namespace: "kit" }]);
  await pool.query(
    "CREATE TABLE effects (execution_id uuid PRIMARY KEY, tool_id uuid NOT NULL, success boolean NOT NULL, seconds double precision NOT NULL)",
  );
  for (let i = 0; i < events; i += 100) {
    await withTransaction(pool, async (client) => {
      for (let j = i; j < Math.min(events, i + 100); j++) {
        await enqueueEvent(
          client,
          "toolport.execution.completed",
          ExecutionEventSchema,
          create(ExecutionEventSchema, { executionId: randomUUID(), toolId: randomUUID(), status: 1, seconds: 0.05 }),
        );
      }
    });
  }

  let started = performance.now();
  const relay = new OutboxRelay({ pool, nc, log, pollMs: 50 });
  await relay.start();
  await until(async () => (await count("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")) === 0);
  const relaySeconds = (performance.now() - started) / 1000;
  await relay.stop();

  const xidBefore = await xid();
  const cpuBefore = ownCpuSeconds() + postgresCpuSeconds();
  started = performance.now();
  const consumer = await startConsumer({
    nc,
    pool,
    log,
    durable: "bench",
    subject: "toolport.execution.*",
    schema: ExecutionEventSchema,
    async handle(event, { client }) {
      await client.query(
        "INSERT INTO effects (execution_id, tool_id, success, seconds) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        [event.executionId, event.toolId, event.status === 1, event.seconds],
      );
    },
  });
  await until(async () => (await count("SELECT count(*) AS n FROM effects")) === events);
  const consumerSeconds = (performance.now() - started) / 1000;
  const cpu = ownCpuSeconds() + postgresCpuSeconds() - cpuBefore;
  const transactions = (await xid()) - xidBefore - 1;
  await consumer.stop();

  console.log(`kit build: ${path.relative(root, kitDist) || kitDist}, ${events} events, ${os.cpus().length} CPUs`);
  console.log(`relay:    ${relaySeconds.toFixed(2)} s, ${Math.round(events / relaySeconds)} events/s published`);
  console.log(
    `consumer: ${consumerSeconds.toFixed(2)} s, ${Math.round(events / consumerSeconds)} events/s applied, ` +
      `${transactions} write transactions, ` +
      `${((cpu / events) * 1e6).toFixed(0)} µs CPU per event (bench process + Postgres)`,
  );
} finally {
  await nc.close();
  await pool.end();
  await nats.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
