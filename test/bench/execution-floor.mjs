// The floor of the layout DESIGN.md fixes for a tool call, for the execution benchmark's row (d): an HTTP
// request into Koa, ONE connect gRPC hop to a service, that service's HTTP call to the upstream (undici)
// and ONE durable Postgres INSERT of the result, then the answer back. Nothing else: no authentication,
// no tool lookup, no validation, no rate limit, no redaction, no event. Whatever Toolport's gateway
// does costs at least this much, so (d)/(b) bounds what (c)/(b) can reach on the machine it runs on.
// Run by execution-gateway.mjs as two processes:
//   node test/bench/execution-floor.mjs service PORT UPSTREAM_URL DATABASE_URL
//   node test/bench/execution-floor.mjs gateway PORT SERVICE_URL
// and, for row (d1), the floor of the one-process layout: Koa, the upstream call and the INSERT in ONE
// process, no hop:
//   node test/bench/execution-floor.mjs one PORT UPSTREAM_URL DATABASE_URL
// and, for row (d1e), (d1) with durable events kept, as barely as the promise allows ("no event lost, each
// applied once"; see eventsWork):
//   node test/bench/execution-floor.mjs one-events PORT UPSTREAM_URL DATABASE_URL NATS_URL
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import Koa from "koa";
import { AckPolicy, connect, DeliverPolicy, StorageType } from "nats";
import pg from "pg";
import { Agent, request } from "undici";

const [role, port, target, databaseUrl, natsUrl] = process.argv.slice(2);
// An exit on SIGTERM (the bench's stop), so that a --cpu-prof profile (BENCH_PROFILE=floor-one...) is written.
process.once("SIGTERM", () => process.exit(0));

/** The work of a call: the upstream's answer, stored with one INSERT. */
async function floorWork() {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query("CREATE TABLE IF NOT EXISTS floor_results (id uuid PRIMARY KEY, result jsonb NOT NULL)");
  const dispatcher = new Agent({ connections: 64 });
  return async () => {
    const res = await request(`${target}/small`, { dispatcher });
    const value = await res.body.json();
    const id = randomUUID();
    await pool.query({
      name: "floor_insert",
      text: "INSERT INTO floor_results (id, result) VALUES ($1, $2)",
      values: [id, value],
    });
    return { id, value };
  };
}

/** How long the relay waits, once nudged, for more rows to publish together: Toolport's relay's default. */
const RELAY_GATHER_MS = 50;
/** Events applied together at most, and how long a batch that is not full waits: Toolport's consumers' defaults. */
const BATCH_MAX = 100;
const BATCH_WAIT_MS = 2;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const failed = (what) => (err) => process.stderr.write(`floor ${what}: ${err.message}\n`);

/**
 * The consumers of row (d1e), with nothing of Toolport's code: each writes its inbox rows and its effect in
 * one statement, the effect only for events new to its inbox. As many as Toolport has on its execution
 * events, whose two each write a row per event (catalog's facts, identity's key usage): here `facts`
 * writes a row per event and `usage` keeps one count per tool, so the floor writes no more than they do.
 */
const CONSUMERS = {
  facts: `INSERT INTO floor_facts (event_id, tool_id, success)
          SELECT e.event_id, e.tool_id, e.success FROM e JOIN fresh USING (event_id)`,
  usage: `INSERT INTO floor_usage (tool_id, calls)
          SELECT e.tool_id, count(*) FROM e JOIN fresh USING (event_id) GROUP BY e.tool_id
          ON CONFLICT (tool_id) DO UPDATE SET calls = floor_usage.calls + EXCLUDED.calls`,
};

/**
 * (d1)'s work with durable events kept, done as barely as "no event lost, each applied once" allows:
 * - the call: the result and its event written by ONE statement (an INSERT and an outbox row), then the
 *   relay nudged. Calls that arrive while a write is in flight go together in the next one (group commit,
 *   as Toolport's execution records): the floor of the call's own write is no higher than Toolport's;
 * - the relay: once nudged, waits RELAY_GATHER_MS, reads up to BATCH_MAX unpublished rows, publishes them
 *   all at once to JetStream (file storage) with the event id as Nats-Msg-Id, waits for every ack, then marks
 *   them and reads the next rows in one statement. One relay (this process is the only one), so it needs no
 *   lease; a crash between publish and mark publishes again under the same id, which JetStream's duplicate
 *   window and the inboxes absorb;
 * - two durable pull consumers (explicit acks), each applying what has arrived (up to BATCH_MAX, after
 *   BATCH_WAIT_MS) in one statement with its inbox rows, then acking each message. A failed batch is
 *   not acked and comes back after the ack wait.
 * No tracing, metrics, logs, poison-message path, redelivery bookkeeping or lag figures: Toolport has them.
 */
async function eventsWork() {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS floor_results_e (id uuid PRIMARY KEY, result jsonb NOT NULL);
    CREATE TABLE IF NOT EXISTS floor_outbox (seq bigserial PRIMARY KEY, event_id uuid NOT NULL, subject text NOT NULL,
                                             payload bytea NOT NULL, published_at timestamptz);
    CREATE INDEX IF NOT EXISTS floor_outbox_due ON floor_outbox (seq) WHERE published_at IS NULL;
    CREATE TABLE IF NOT EXISTS floor_inbox (consumer text NOT NULL, event_id uuid NOT NULL, PRIMARY KEY (consumer, event_id));
    CREATE TABLE IF NOT EXISTS floor_facts (event_id uuid PRIMARY KEY, tool_id text NOT NULL, success boolean NOT NULL);
    CREATE TABLE IF NOT EXISTS floor_usage (tool_id text PRIMARY KEY, calls bigint NOT NULL)`);
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({
    name: "FLOOR",
    subjects: ["floor.>"],
    storage: StorageType.File,
    duplicate_window: 2 * 60 * 1e9,
  });
  const js = nc.jetstream();

  let nudged = false;
  let relaying = false;
  const publish = (rows) => Promise.all(rows.map((r) => js.publish(r.subject, r.payload, { msgID: r.event_id })));
  const relay = async () => {
    relaying = true;
    try {
      while (nudged) {
        nudged = false;
        await sleep(RELAY_GATHER_MS);
        let { rows } = await pool.query({
          name: "floor_due",
          text: "SELECT seq, event_id, subject, payload FROM floor_outbox WHERE published_at IS NULL ORDER BY seq LIMIT $1",
          values: [BATCH_MAX],
        });
        while (rows.length) {
          await publish(rows);
          ({ rows } = await pool.query({
            name: "floor_mark_next",
            text: `WITH marked AS (UPDATE floor_outbox SET published_at = now() WHERE seq = ANY($1::bigint[]))
                   SELECT seq, event_id, subject, payload FROM floor_outbox
                    WHERE published_at IS NULL AND seq > $2 ORDER BY seq LIMIT $3`,
            values: [rows.map((r) => r.seq), rows.at(-1).seq, BATCH_MAX],
          }));
        }
      }
    } catch (err) {
      failed("relay")(err);
    } finally {
      relaying = false;
    }
  };
  const nudge = () => {
    nudged = true;
    if (!relaying) relay();
  };

  for (const [name, effect] of Object.entries(CONSUMERS)) {
    await jsm.consumers.add("FLOOR", {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: "floor.execution.*",
      ack_wait: 30 * 1e9,
    });
    const messages = await (await js.consumers.get("FLOOR", name)).consume({ max_messages: 2 * BATCH_MAX });
    const arrived = [];
    let applying = false;
    const apply = async () => {
      applying = true;
      await sleep(BATCH_WAIT_MS);
      while (arrived.length) {
        const batch = arrived.splice(0, BATCH_MAX);
        const events = batch.map((m) => m.json());
        try {
          await pool.query({
            name: `floor_apply_${name}`,
            text: `WITH e AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS e(event_id uuid, tool_id text, success boolean)),
                   fresh AS (INSERT INTO floor_inbox (consumer, event_id) SELECT '${name}', event_id FROM e
                             ON CONFLICT DO NOTHING RETURNING event_id)
                   ${effect}`,
            values: [JSON.stringify(events)],
          });
          for (const m of batch) m.ack();
        } catch (err) {
          failed(`consumer ${name}`)(err);
        }
      }
      applying = false;
    };
    (async () => {
      for await (const m of messages) {
        arrived.push(m);
        if (!applying) apply();
      }
    })().catch(failed(`consumer ${name}`));
  }

  // Group commit: one write in flight; what arrives meanwhile waits for the next, up to BATCH_MAX at once.
  const queued = [];
  let writing = false;
  const writeQueued = async () => {
    writing = true;
    while (queued.length) {
      const batch = queued.splice(0, BATCH_MAX);
      try {
        await pool.query({
          name: "floor_insert_events",
          text: `WITH c AS (SELECT * FROM unnest($1::uuid[], $2::jsonb[], $3::bytea[]) AS c(id, result, payload)),
                 results AS (INSERT INTO floor_results_e (id, result) SELECT id, result FROM c)
                 INSERT INTO floor_outbox (event_id, subject, payload)
                 SELECT id, 'floor.execution.completed', payload FROM c`,
          values: [batch.map((c) => c.id), batch.map((c) => JSON.stringify(c.value)), batch.map((c) => c.payload)],
        });
        for (const c of batch) c.resolve();
      } catch (err) {
        for (const c of batch) c.reject(err);
      }
      nudge();
    }
    writing = false;
  };
  const dispatcher = new Agent({ connections: 64 });
  return async (toolId) => {
    const res = await request(`${target}/small`, { dispatcher });
    const value = await res.body.json();
    const id = randomUUID();
    const payload = Buffer.from(JSON.stringify({ event_id: id, tool_id: toolId, success: true }));
    await new Promise((resolve, reject) => {
      queued.push({ id, value, payload, resolve, reject });
      if (!writing) writeQueued();
    });
    return { id, value };
  };
}

async function readJson(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
}

if (role === "one") {
  const work = await floorWork();
  const app = new Koa();
  app.use(async (ctx) => {
    await readJson(ctx);
    const { id, value } = await work();
    ctx.body = { tool_id: ctx.path.split("/").pop(), success: true, result: value, execution_id: id };
  });
  app.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (role === "one-events") {
  const work = await eventsWork();
  const app = new Koa();
  app.use(async (ctx) => {
    await readJson(ctx);
    const toolId = ctx.path.split("/").pop();
    const { id, value } = await work(toolId);
    ctx.body = { tool_id: toolId, success: true, result: value, execution_id: id };
  });
  app.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (role === "service") {
  const work = await floorWork();
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(ExecutionService, {
        async callTool(req) {
          const { id, value } = await work();
          return { result: { toolId: req.toolId, success: true, executionId: id, result: fromJson(ValueSchema, value) } };
        },
      });
    },
  });
  http2.createServer(handler).listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (role === "gateway") {
  const client = createClient(ExecutionService, createGrpcTransport({ baseUrl: target, defaultTimeoutMs: 10_000 }));
  const app = new Koa();
  app.use(async (ctx) => {
    const body = await readJson(ctx);
    const { result } = await client.callTool({ toolId: ctx.path.split("/").pop(), toolInput: body });
    ctx.body = { tool_id: result.toolId, success: result.success, result: result.result, execution_id: result.executionId };
  });
  app.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else {
  process.stderr.write("usage: execution-floor.mjs one|one-events|service|gateway ...\n");
  process.exit(2);
}
