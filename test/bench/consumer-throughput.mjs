// Event pipeline throughput of the kit's outbox relay and one durable consumer (services/lib/kit/dist),
// against their own Postgres (durable settings: fsync on) and NATS, started here on free ports in a
// temporary folder. Enqueues N execution events through the outbox, then times
//   1. the relay publishing all of them to JetStream,
//   2. one consumer applying all of them (inbox row + the effect: with `handle`, one INSERT per event; with
//      `batch`, one multi-row INSERT per batch through applyBatch, as the services' consumers do), and
//   3. recovery after a consumer process died between its commits and its acks: every event delivered
//      again (delivery count 2) to a consumer whose inbox already holds them all, until all are acked, and
//   4. live: 16 writers enqueue the events again, one per transaction with a nudge (as settled calls do),
//      while the relay publishes and a fresh consumer applies them; its transactions (batches) are counted,
// each with the Postgres write transactions, the statements the consumer sent (counted on its own pool)
// and the CPU seconds (this process + Postgres) it took.
// Usage: node test/bench/consumer-throughput.mjs [events=5000] [handle|batch]
//   CONSUMER_BATCH_MAX and CONSUMER_BATCH_WAIT_MS set the consumers' batching (as the services' settings do).
//   (build first: flock /tmp/tsc.lock npx tsc -b services/lib/kit)
//   KIT_DIST=<folder> runs another build of the kit (e.g. a copy of dist/ from before a change, kept inside
//   services/lib/kit so that its imports resolve).
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const kitDist = path.resolve(process.env.KIT_DIST ?? path.join(root, "services/lib/kit/dist"));
const events = Number(process.argv[2] ?? 5000);
const form = process.argv[3] ?? "handle";
if (form !== "handle" && form !== "batch") throw new Error(`form: handle or batch, not ${form}`);

const kit = (name) => import(pathToFileURL(path.join(kitDist, name)).href);
const { connectNats, enqueueEvent, ensureStream, OutboxRelay, setConsumerBatching, startConsumer } = await kit("events.js");
if (process.env.CONSUMER_BATCH_MAX || process.env.CONSUMER_BATCH_WAIT_MS) {
  setConsumerBatching({
    max: Number(process.env.CONSUMER_BATCH_MAX ?? 100),
    waitMs: Number(process.env.CONSUMER_BATCH_WAIT_MS ?? 0),
  });
}
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
// The consumers' own pool, whose statements are counted (the bench's polling goes through `pool`).
const consumerPool = createPool(pg.url, 10);
let statements = 0;
consumerPool.on("connect", (client) => {
  const query = client.query.bind(client);
  client.query = (...args) => {
    statements++;
    return query(...args);
  };
});

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

  const started = performance.now();
  const relay = new OutboxRelay({ pool, nc, log, pollMs: 50 });
  await relay.start();
  await until(async () => (await count("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")) === 0);
  const relaySeconds = (performance.now() - started) / 1000;
  await relay.stop();

  const effect = {
    async handle(event, { client }) {
      await client.query(
        "INSERT INTO effects (execution_id, tool_id, success, seconds) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        [event.executionId, event.toolId, event.status === 1, event.seconds],
      );
    },
    async applyBatch(client, fresh) {
      await client.query(
        `INSERT INTO effects (execution_id, tool_id, success, seconds)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::boolean[], $4::double precision[]) ON CONFLICT DO NOTHING`,
        [
          fresh.map((f) => f.event.executionId),
          fresh.map((f) => f.event.toolId),
          fresh.map((f) => f.event.status === 1),
          fresh.map((f) => f.event.seconds),
        ],
      );
    },
  }[form === "handle" ? "handle" : "applyBatch"];
  const consumerOptions = (durable) => ({
    nc,
    pool: consumerPool,
    log,
    durable,
    subject: "toolport.execution.*",
    schema: ExecutionEventSchema,
    [form === "handle" ? "handle" : "applyBatch"]: effect,
  });

  /** Runs `work` until `done`, and what it cost. */
  async function measured(work, done) {
    const xidBefore = await xid();
    const cpuBefore = ownCpuSeconds() + postgresCpuSeconds();
    const statementsBefore = statements;
    const began = performance.now();
    const after = await work();
    await until(done);
    const seconds = (performance.now() - began) / 1000;
    const cpu = ownCpuSeconds() + postgresCpuSeconds() - cpuBefore;
    const result = {
      seconds,
      cpu,
      statements: statements - statementsBefore,
      transactions: (await xid()) - xidBefore - 1,
    };
    await after?.();
    return result;
  }
  const line = (name, r) =>
    `${name} ${r.seconds.toFixed(2)} s, ${Math.round(events / r.seconds)} events/s, ${r.transactions} write transactions, ` +
    `${(r.statements / events).toFixed(3)} statements per event, ${((r.cpu / events) * 1e6).toFixed(0)} µs CPU per event (bench process + Postgres)`;

  const applied = await measured(
    async () => {
      const consumer = await startConsumer(consumerOptions("bench"));
      return () => consumer.stop();
    },
    async () => (await count("SELECT count(*) AS n FROM effects")) === events,
  );

  // A consumer process that received every event, committed them (its inbox rows: those of `bench`) and
  // died before acking any: JetStream delivers them all again after ack_wait.
  const jsm = await nc.jetstreamManager();
  const { stream } = (await kit("events.js")).natsNames();
  await jsm.consumers.add(stream, {
    durable_name: "bench-again",
    ack_policy: "explicit",
    deliver_policy: "all",
    filter_subject: "toolport.execution.*",
    ack_wait: 2_000_000_000,
    max_deliver: 9,
    // All of them out unacked at once (the default stops at 1000).
    max_ack_pending: -1,
  });
  await pool.query(
    "INSERT INTO inbox (consumer, event_id, subject) SELECT 'bench-again', event_id, subject FROM inbox WHERE consumer = 'bench'",
  );
  const dead = await nc.jetstream().consumers.get(stream, "bench-again");
  const received = new Set();
  while (received.size < events) {
    const batch = await dead.fetch({ max_messages: 1000, expires: 1000 });
    for await (const m of batch) {
      if (m.info.deliveryCount > 1) throw new Error("ack_wait ran out while the bench was still fetching");
      received.add(m.seq);
    }
  }
  await new Promise((r) => setTimeout(r, 2500));
  const lastSeq = (await jsm.streams.info(stream)).state.last_seq;
  const allAcked = async () => (await jsm.consumers.info(stream, "bench-again")).ack_floor.stream_seq >= lastSeq;
  const redelivered = await measured(async () => {
    const consumer = await startConsumer(consumerOptions("bench-again"));
    return () => consumer.stop();
  }, allAcked);
  if ((await count("SELECT count(*) AS n FROM effects")) !== events) throw new Error("a redelivery changed the effects");

  // Live: the relay and a fresh consumer running while 16 writers enqueue one event per transaction.
  const liveRelay = new OutboxRelay({ pool, nc, log });
  await liveRelay.start();
  let batches = 0;
  const live = await measured(
    async () => {
      const consumer = await startConsumer({
        ...consumerOptions("bench-live"),
        [form === "handle" ? "handle" : "applyBatch"]: async (...args) => {
          if (form === "batch") batches++;
          return effect(...args);
        },
      });
      await pool.query("TRUNCATE effects");
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < events) {
            next++;
            await withTransaction(pool, (client) =>
              enqueueEvent(
                client,
                "toolport.execution.completed",
                ExecutionEventSchema,
                create(ExecutionEventSchema, { executionId: randomUUID(), toolId: randomUUID(), status: 1, seconds: 0.05 }),
              ),
            );
            liveRelay.nudge();
          }
        }),
      );
      return () => consumer.stop();
    },
    async () => (await count("SELECT count(*) AS n FROM effects")) >= events,
  );
  await liveRelay.stop();

  console.log(`kit build: ${path.relative(root, kitDist) || kitDist}, ${events} events, form ${form}, ${os.cpus().length} CPUs`);
  console.log(`relay:       ${relaySeconds.toFixed(2)} s, ${Math.round(events / relaySeconds)} events/s published`);
  console.log(line("consumer:   ", applied));
  console.log(line("redelivered:", redelivered));
  console.log(
    `live:        ${live.seconds.toFixed(2)} s, ${events} events enqueued one per transaction by 16 writers, ` +
      `${form === "batch" ? `${batches} consumer batches, ` : ""}` +
      `${(live.statements / events).toFixed(3)} consumer statements per event, ` +
      `${((live.cpu / events) * 1e6).toFixed(0)} µs CPU per event (bench process, relay + consumer, + Postgres)`,
  );
} finally {
  await nc.close();
  await consumerPool.end();
  await pool.end();
  await nats.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
