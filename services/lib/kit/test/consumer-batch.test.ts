/**
 * Batched consumers and the pipelined relay, against a real Postgres and a NATS the test can stop:
 * a burst is applied exactly once in far fewer transactions than messages, a failing message in a
 * batch neither loses nor doubles the others and still takes the retry / poison path, a redelivered
 * batch changes nothing, and the relay publishes in seq order with the event ids as Nats-Msg-Id,
 * losing nothing when NATS stops halfway through.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { CatalogToolChangedSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { AckPolicy, DeliverPolicy, type NatsConnection, headers as natsHeaders } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startNats } from "../../../../deploy/local/infra.mjs";
import { migratedDatabase, type TestDatabase } from "../../../../test/harness/db.js";
import { until } from "../../../../test/harness/wait.js";
import { currentRequestId, REQUEST_ID_HEADER, runInScope } from "../src/context.js";
import {
  connectNats,
  enqueueEvent,
  ensureStream,
  type FreshEvent,
  natsNames,
  OutboxRelay,
  PoisonMessageError,
  pruneInbox,
  type RunningConsumer,
  startConsumer,
} from "../src/events.js";
import { createLogger } from "../src/logger.js";
import { consumerRedeliveries } from "../src/metrics.js";
import { type PoolClient, withTransaction } from "../src/pg.js";

const log = createLogger("consumer-batch-test", process.env.TEST_LOG ?? "silent");
const quiet = { info() {}, warn() {}, error() {} };

const payload = (toolId: string) => toBinary(CatalogToolChangedSchema, create(CatalogToolChangedSchema, { toolId }));

describe("batched consumers and pipelined relay", () => {
  let db: TestDatabase;
  let nats: { url: string; stop(): Promise<void> };
  let natsPort: number;
  let storeDir: string;
  let nc: NatsConnection;

  beforeAll(async () => {
    db = await migratedDatabase("consumer_batch");
    // One row per applied effect, with the transaction it was written in.
    await db.pool.query(
      "CREATE TABLE effects (consumer text NOT NULL, event_id text NOT NULL, tool_id text NOT NULL, request_id text, txid bigint NOT NULL)",
    );
    natsPort = await freePort();
    storeDir = await mkdtemp(path.join(os.tmpdir(), "toolport-nats-batch-"));
    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    nc = await connectNats(nats.url, "consumer-batch-test", log);
    await ensureStream(nc);
  });

  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
    await db?.pool.end();
  });

  /**
   * A consumer whose effect is one `effects` row; `fail` decides per tool id whether it throws after
   * writing. Every handler call, committed or not, is noted in `calls` with its transaction id.
   */
  /** The options of consumer `durable` of CatalogToolChanged events on `subject` (maxDeliver: the kit's default when not given). */
  const consumerOf = (durable: string, subject: string, maxDeliver?: number) => ({
    nc,
    pool: db.pool,
    log,
    durable,
    subject,
    schema: CatalogToolChangedSchema,
    maxDeliver,
  });
  const startRecording = (
    durable: string,
    subject: string,
    fail?: (toolId: string) => Error | undefined,
    maxDeliver?: number,
    calls: { toolId: string; txid: string }[] = [],
  ) =>
    startConsumer({
      ...consumerOf(durable, subject, maxDeliver),
      async handle(event, { client, eventId }) {
        const { rows } = await client.query(
          "INSERT INTO effects (consumer, event_id, tool_id, request_id, txid) VALUES ($1, $2, $3, $4, txid_current()) RETURNING txid::text",
          [durable, eventId, event.toolId, currentRequestId()],
        );
        calls.push({ toolId: event.toolId, txid: rows[0].txid });
        const err = fail?.(event.toolId);
        if (err) throw err;
      },
    });

  const settled = (durable: string, delivered: number) =>
    until(
      "the consumer to ack everything delivered",
      async () => {
        const info = await (await nc.jetstreamManager()).consumers.info(natsNames().stream, durable);
        return info.num_ack_pending === 0 && info.num_pending === 0 && info.delivered.consumer_seq >= delivered;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );

  const effects = async (durable: string) =>
    (
      await db.pool.query<{ event_id: string; n: number; txid: string; request_id: string }>(
        "SELECT event_id, count(*)::int AS n, min(txid)::text AS txid, min(request_id) AS request_id FROM effects WHERE consumer = $1 GROUP BY event_id",
        [durable],
      )
    ).rows;
  /** `count` events on `subject`, the i-th naming tool toolOf(i), each under an event id of its own: their ids. */
  const publishTools = async (subject: string, count: number, toolOf: (i: number) => string) => {
    const ids = Array.from({ length: count }, () => randomUUID());
    const js = nc.jetstream();
    await Promise.all(ids.map((id, i) => js.publish(subject, payload(toolOf(i)), { msgID: id })));
    return ids;
  };
  /** An applyStatement row: the event's tool, or a PoisonMessageError for the tool "poison". */
  const toolRow = (event: { toolId: string }) => {
    if (event.toolId === "poison") throw new PoisonMessageError("cannot be applied");
    return { tool_id: event.toolId };
  };
  const inboxCount = async (durable: string) =>
    (await db.pool.query("SELECT count(*)::int AS n FROM inbox WHERE consumer = $1", [durable])).rows[0].n as number;

  it("applies a burst exactly once in far fewer transactions than messages, and a redelivery changes nothing", async () => {
    const subject = "toolport.test.batch.burst";
    const durable = "batch-burst";
    const js = nc.jetstream();
    const ids = Array.from({ length: 500 }, () => randomUUID());
    const h = natsHeaders();
    h.set(REQUEST_ID_HEADER, "req-burst");
    await Promise.all(ids.map((id, i) => js.publish(subject, payload(`tool-${i}`), { msgID: id, headers: h })));

    let consumer: RunningConsumer = await startRecording(durable, subject);
    try {
      await settled(durable, 500);
      let rows = await effects(durable);
      expect(rows).toHaveLength(500);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids));
      expect(rows.every((r) => r.request_id === "req-burst")).toBe(true);
      expect(await inboxCount(durable)).toBe(500);
      // One transaction per message would give 500 transaction ids; batches of up to 100 give a handful.
      const transactions = new Set(rows.map((r) => r.txid)).size;
      expect(transactions).toBeLessThanOrEqual(50);

      // Idle again: a lone message is applied at once, not held back waiting for a batch to fill.
      const lone = randomUUID();
      const sent = Date.now();
      await js.publish(subject, payload("lone"), { msgID: lone });
      await until("the lone message", async () => (await effects(durable)).some((r) => r.event_id === lone), {
        timeoutMs: 3000,
        intervalMs: 50,
      });
      expect(Date.now() - sent).toBeLessThan(3000);
      await settled(durable, 501);
      await consumer.stop();

      // Replay the whole stream from the start: every message is already in the inbox.
      await (await nc.jetstreamManager()).consumers.delete(natsNames().stream, durable);
      consumer = await startRecording(durable, subject);
      await settled(durable, 501);
      rows = await effects(durable);
      expect(rows).toHaveLength(501);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(await inboxCount(durable)).toBe(501);
    } finally {
      await consumer.stop();
    }
  });

  it("keeps the rest of a batch exactly once when one message fails, and sends the failing ones down the retry and poison paths", async () => {
    const subject = "toolport.test.batch.failing";
    const durable = "batch-failing";
    const toolOf = (i: number) => (i === 30 ? "flaky" : i === 40 ? "broken" : i === 50 ? "poison" : `tool-${i}`);
    const ids = await publishTools(subject, 80, toolOf);

    let flakyFailures = 0;
    const calls: { toolId: string; txid: string }[] = [];
    const consumer = await startRecording(
      durable,
      subject,
      (toolId) => {
        // Fails its first delivery only, then applies (a transient error).
        if (toolId === "flaky" && flakyFailures++ === 0) return new Error("transient");
        if (toolId === "broken") return new Error("cannot apply broken");
        if (toolId === "poison") return new PoisonMessageError("never applicable");
        return undefined;
      },
      3,
      calls,
    );
    try {
      await until(
        "two dead letters",
        async () =>
          (await db.pool.query("SELECT count(*)::int AS n FROM dead_letters WHERE consumer = $1", [durable])).rows[0].n === 2,
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      await settled(durable, 80);
      const rows = await effects(durable);
      const applied = new Set(rows.map((r) => r.event_id));
      // Every message but the two that can never be applied, each exactly once (the effect the
      // failing ones wrote before throwing was rolled back with their transaction).
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(applied).toEqual(new Set(ids.filter((_, i) => i !== 40 && i !== 50)));
      expect(applied.has(ids[30]!)).toBe(true);
      // The first failure happened inside a batch: its transaction also held other messages' effects.
      const firstFailing = calls.find((c) => c.toolId === "flaky" || c.toolId === "broken" || c.toolId === "poison");
      expect(calls.filter((c) => c.txid === firstFailing?.txid).length).toBeGreaterThan(1);
      expect(await inboxCount(durable)).toBe(78);

      const dead = await db.pool.query(
        "SELECT event_id, error, deliveries FROM dead_letters WHERE consumer = $1 ORDER BY deliveries",
        [durable],
      );
      expect(dead.rows).toEqual([
        { event_id: ids[50], error: "never applicable", deliveries: 1 },
        { event_id: ids[40], error: "cannot apply broken", deliveries: 3 },
      ]);
      const inboxDead = await db.pool.query("SELECT count(*)::int AS n FROM inbox WHERE consumer = $1 AND event_id = ANY($2)", [
        durable,
        [ids[40], ids[50]],
      ]);
      expect(inboxDead.rows[0].n).toBe(0);
      // Each delivery after the first is counted for the alerts (toolport_consumer_redeliveries_total):
      // broken's second and third. Flaky succeeded on its in-process retry (one by one, after its batch
      // failed), within its first delivery; poison was terminated at once; the rest applied first time.
      const redeliveries = (await consumerRedeliveries.get()).values.find((v) => v.labels.consumer === durable);
      expect(redeliveries?.value).toBe(2);
    } finally {
      await consumer.stop();
    }
  });

  it("applies batches, and lone events, in one statement each (applyStatement), with handle's effect; a poison event fails only itself", async () => {
    const subject = "toolport.test.batch.statement";
    const durable = "batch-statement";
    const js = nc.jetstream();
    const toolOf = (i: number) => (i === 120 ? "poison" : i === 130 ? "skip" : `tool-${i}`);
    const ids = await publishTools(subject, 300, toolOf);
    let singles = 0;
    let statementRows = 0;
    const consumer = await startConsumer({
      ...consumerOf(durable, subject, 2),
      async handle(event, { client, eventId }) {
        singles++;
        if (event.toolId === "poison") throw new PoisonMessageError("cannot be applied");
        if (event.toolId === "skip") return;
        await client.query("INSERT INTO effects (consumer, event_id, tool_id, txid) VALUES ($1, $2, $3, txid_current())", [
          durable,
          eventId,
          event.toolId,
        ]);
      },
      applyStatement: {
        sql: `INSERT INTO effects (consumer, event_id, tool_id, txid)
              SELECT '${durable}', r.event_id, r.tool_id, txid_current()
                FROM jsonb_to_recordset($1::jsonb) AS r(event_id text, tool_id text) JOIN fresh USING (event_id)`,
        row(event) {
          if (event.toolId === "poison") throw new PoisonMessageError("a poison event in the batch");
          statementRows++;
          return event.toolId === "skip" ? null : { tool_id: event.toolId };
        },
      },
    });
    try {
      await settled(durable, 300);
      let rows = await effects(durable);
      // Everything but the poison event and the one whose row is null, exactly once.
      expect(rows).toHaveLength(298);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids.filter((_, i) => i !== 120 && i !== 130)));
      expect(await inboxCount(durable)).toBeGreaterThanOrEqual(299);
      // Only the batch holding the poison event (at most 100) is replayed one by one through handle.
      expect(singles).toBeGreaterThan(0);
      expect(singles).toBeLessThanOrEqual(100);
      expect(statementRows).toBeGreaterThan(150);
      const transactions = new Set(rows.map((r) => r.txid)).size;
      expect(transactions).toBeLessThan(298 - singles + 20);

      // A lone event takes the statement too, and a redelivered one changes nothing.
      const lone = randomUUID();
      const before = singles;
      await js.publish(subject, payload("lone"), { msgID: lone });
      await settled(durable, 301);
      rows = await effects(durable);
      expect(rows.filter((r) => r.event_id === lone)).toHaveLength(1);
      expect(singles).toBe(before);
    } finally {
      await consumer.stop();
    }
  });

  it("with applyStatement alone, replays a failed batch one by one through the same statement", async () => {
    const subject = "toolport.test.batch.statement-only";
    const durable = "batch-statement-only";
    const toolOf = (i: number) => (i === 25 ? "poison" : `tool-${i}`);
    const ids = await publishTools(subject, 60, toolOf);
    const consumer = await startConsumer({
      ...consumerOf(durable, subject, 2),
      applyStatement: {
        sql: `INSERT INTO effects (consumer, event_id, tool_id, txid)
              SELECT '${durable}', r.event_id, r.tool_id, txid_current()
                FROM jsonb_to_recordset($1::jsonb) AS r(event_id text, tool_id text) JOIN fresh USING (event_id)`,
        row: toolRow,
      },
    });
    try {
      await settled(durable, 60);
      const rows = await effects(durable);
      expect(rows).toHaveLength(59);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids.filter((_, i) => i !== 25)));
      const dead = await db.pool.query("SELECT event_id FROM dead_letters WHERE consumer = $1", [durable]);
      expect(dead.rows.map((r) => r.event_id)).toEqual([ids[25]]);
    } finally {
      await consumer.stop();
    }
  });

  it("with applyStatement without inbox, writes no inbox row: the statement's own key absorbs the whole stream again, and a poison event fails only itself", async () => {
    const subject = "toolport.test.batch.no-inbox";
    const durable = "batch-no-inbox";
    await db.pool.query("CREATE TABLE keyed_effects (tool_id text PRIMARY KEY, event_id text NOT NULL, txid bigint NOT NULL)");
    // Events 30..39 name the tools of 0..9 again, under event ids of their own: one row per tool.
    const toolOf = (i: number) => (i === 17 ? "poison" : `tool-${i % 30}`);
    const ids = await publishTools(subject, 40, toolOf);
    const options = {
      ...consumerOf(durable, subject, 2),
      applyStatement: {
        sql: `INSERT INTO keyed_effects (tool_id, event_id, txid)
              SELECT r.tool_id, r.event_id, txid_current()
                FROM jsonb_to_recordset($1::jsonb) AS r(event_id text, tool_id text) JOIN fresh USING (event_id)
              ON CONFLICT (tool_id) DO NOTHING`,
        row: toolRow,
        inbox: false,
      },
    };
    const written = async () =>
      (
        await db.pool.query<{ tool_id: string; event_id: string; txid: string }>(
          "SELECT tool_id, event_id, txid::text FROM keyed_effects ORDER BY tool_id",
        )
      ).rows;
    let consumer = await startConsumer(options);
    try {
      await settled(durable, 40);
      const first = await written();
      expect(first.map((r) => r.tool_id)).toEqual(
        Array.from({ length: 30 }, (_, i) => `tool-${i}`)
          .filter((t) => t !== "tool-17")
          .sort(),
      );
      expect(await inboxCount(durable)).toBe(0);
      const dead = await db.pool.query("SELECT event_id FROM dead_letters WHERE consumer = $1", [durable]);
      expect(dead.rows.map((r) => r.event_id)).toEqual([ids[17]]);
      await consumer.stop();

      // The stream again from the start, as after a lost consumer state: every row is already there.
      await (await nc.jetstreamManager()).consumers.delete(natsNames().stream, durable);
      consumer = await startConsumer(options);
      await settled(durable, 40);
      expect(await written()).toEqual(first);
      expect(await inboxCount(durable)).toBe(0);
    } finally {
      await consumer.stop();
    }
    await expect(startConsumer({ ...options, durable: "batch-no-inbox-handle", handle: async () => {} })).rejects.toThrow(
      /without inbox takes no handle or applyBatch/,
    );
  });

  it("gives applyBatch a batch's fresh events in one call, in the transaction of their inbox rows; a poison event fails only itself", async () => {
    const subject = "toolport.test.batch.apply-batch";
    const durable = "batch-apply-batch";
    const js = nc.jetstream();
    const toolOf = (i: number) => (i === 140 ? "poison" : `tool-${i}`);
    const ids = await publishTools(subject, 300, toolOf);
    const calls: { size: number; subjects: Set<string>; tools: string[] }[] = [];
    const record = async (client: PoolClient, fresh: FreshEvent<typeof CatalogToolChangedSchema>[]) => {
      calls.push({ size: fresh.length, subjects: new Set(fresh.map((f) => f.subject)), tools: fresh.map((f) => f.event.toolId) });
      if (fresh.some((f) => f.event.toolId === "poison")) throw new PoisonMessageError("a poison event in the batch");
      // The inbox rows of these events are already in this transaction.
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM inbox WHERE consumer = $1 AND event_id = ANY($2::text[]) AND xmin::text = (txid_current() % 4294967296)::text",
        [durable, fresh.map((f) => f.eventId)],
      );
      expect(rows[0]?.n).toBe(fresh.length);
      await client.query(
        `INSERT INTO effects (consumer, event_id, tool_id, txid)
         SELECT $1, e.event_id, e.tool_id, txid_current() FROM unnest($2::text[], $3::text[]) AS e(event_id, tool_id)`,
        [durable, fresh.map((f) => f.eventId), fresh.map((f) => f.event.toolId)],
      );
    };
    const options = consumerOf(durable, subject, 2);
    let consumer = await startConsumer({ ...options, applyBatch: record });
    try {
      await settled(durable, 300);
      let rows = await effects(durable);
      expect(rows).toHaveLength(299);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids.filter((_, i) => i !== 140)));
      expect(calls.every((c) => c.subjects.size === 1 && c.subjects.has(subject))).toBe(true);
      // Together, not one by one: far fewer calls (and transactions) than events, but for the replay of
      // the batch that held the poison event.
      const together = calls.filter((c) => c.size > 1);
      expect(together.length).toBeGreaterThan(0);
      expect(calls.length).toBeLessThan(300 - 150);
      expect(new Set(rows.map((r) => r.txid)).size).toBeLessThan(150);
      const dead = await db.pool.query("SELECT event_id FROM dead_letters WHERE consumer = $1", [durable]);
      expect(dead.rows.map((r) => r.event_id)).toEqual([ids[140]]);

      // A lone event is one call with one event.
      const lone = randomUUID();
      await js.publish(subject, payload("lone"), { msgID: lone });
      await settled(durable, 301);
      expect(calls.at(-1)?.size).toBe(1);
      await consumer.stop();

      // Replay the whole stream from the start: every event but the poison one is in the inbox already, so
      // no call is given any of them again.
      const before = calls.length;
      await (await nc.jetstreamManager()).consumers.delete(natsNames().stream, durable);
      consumer = await startConsumer({ ...options, applyBatch: record });
      await settled(durable, 301);
      rows = await effects(durable);
      expect(rows).toHaveLength(300);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(calls.slice(before).every((c) => c.tools.length === 1 && c.tools[0] === "poison")).toBe(true);
    } finally {
      await consumer.stop();
    }
  });

  it("with inboxDays, acknowledges unapplied what the stream stored longer ago, so a replay after pruneInbox applies nothing twice", async () => {
    const subject = "toolport.test.batch.inbox-days";
    const durable = "batch-inbox-days";
    const keptMs = 5_000;
    const inboxDays = keptMs / 86_400_000;
    const warnings: { events?: number; msg?: string }[] = [];
    const watched = createLogger("inbox-days-test", "warn", { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const calls: string[][] = [];
    const options = { ...consumerOf(durable, subject), log: watched, inboxDays, applyBatch: recordBatch(durable, calls) };
    const old = await publishTools(subject, 20, (i) => `old-${i}`);
    let consumer = await startConsumer(options);
    try {
      await settled(durable, 20);
      expect(await effects(durable)).toHaveLength(20);
      expect(await inboxCount(durable)).toBe(20);
      await consumer.stop();

      // Past the consumer's inbox days, pruned: another consumer's rows as old stay, and so do rows too new.
      await new Promise((resolve) => setTimeout(resolve, keptMs + 500));
      await db.pool.query("UPDATE inbox SET applied_at = now() - interval '2 days' WHERE consumer = $1", [durable]);
      await db.pool.query(
        "INSERT INTO inbox (consumer, event_id, subject, applied_at) VALUES ('batch-other', $1, $2, now() - interval '2 days'), ($3, $4, $2, now())",
        [randomUUID(), subject, durable, randomUUID()],
      );
      expect(await pruneInbox(db.pool, [durable], inboxDays)).toBe(20);
      expect(await inboxCount(durable)).toBe(1);
      expect(await inboxCount("batch-other")).toBe(1);

      // The stream again from its start: its events are older than the inbox keeps, so none is applied
      // again though their inbox rows are gone; each is acknowledged, and the warning counts them.
      await (await nc.jetstreamManager()).consumers.delete(natsNames().stream, durable);
      const before = calls.length;
      consumer = await startConsumer(options);
      await settled(durable, 20);
      expect(calls.length).toBe(before);
      const skipped = warnings.filter(
        (w) => w.msg === "events older than the consumer's inbox keeps were acknowledged and not applied",
      );
      expect(skipped.reduce((n, w) => n + (w.events ?? 0), 0)).toBe(20);
      // New events are applied as ever.
      const fresh = await publishTools(subject, 5, (i) => `new-${i}`);
      await settled(durable, 25);
      const rows = await effects(durable);
      expect(rows).toHaveLength(25);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set([...old, ...fresh]));
    } finally {
      await consumer.stop();
    }
  });

  it("refuses an inboxDays that is not a positive number", async () => {
    for (const inboxDays of [0, -1, Number.NaN]) {
      await expect(
        startConsumer({
          ...consumerOf("batch-inbox-days-bad", "toolport.test.batch.bad"),
          inboxDays,
          applyBatch: async () => {},
        }),
      ).rejects.toThrow(/inboxDays must be a positive number of days/);
    }
  });

  /** An applyBatch that writes one `effects` row per fresh event and notes each call's event ids. */
  const recordBatch =
    (durable: string, calls: string[][], before?: () => Promise<void>) =>
    async (client: PoolClient, fresh: FreshEvent<typeof CatalogToolChangedSchema>[]) => {
      calls.push(fresh.map((f) => f.eventId));
      await client.query(
        `INSERT INTO effects (consumer, event_id, tool_id, txid)
         SELECT $1, e.event_id, e.tool_id, txid_current() FROM unnest($2::text[], $3::text[]) AS e(event_id, tool_id)`,
        [durable, fresh.map((f) => f.eventId), fresh.map((f) => f.event.toolId)],
      );
      await before?.();
    };

  it("after a process died between commit and ack, the redelivered batches change nothing and the rest is applied once", async () => {
    const subject = "toolport.test.batch.died";
    const durable = "batch-died";
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    // The durable as the kit makes it, but with a short ack_wait so the redelivery comes soon (the kit keeps it).
    await jsm.consumers.add(natsNames().stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
      ack_wait: 2_000_000_000,
    });
    const ids = Array.from({ length: 60 }, () => randomUUID());
    await Promise.all(ids.slice(0, 40).map((id, i) => js.publish(subject, payload(`tool-${i}`), { msgID: id })));

    // The process that dies: its NATS connection is gone by the time its first batch commits, so that
    // batch, and whatever else it had received, is committed and never acked.
    const dying = await connectNats(nats.url, "consumer-batch-dying", log);
    const diedCalls: string[][] = [];
    const first = await startConsumer({
      nc: dying,
      pool: db.pool,
      log,
      durable,
      subject,
      schema: CatalogToolChangedSchema,
      applyBatch: recordBatch(durable, diedCalls, async () => {
        if (!dying.isClosed()) await dying.close();
      }),
    });
    await until("the dying process to have committed a batch", async () => (await effects(durable)).length > 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    await first.stop();
    const committedBeforeDeath = new Set(diedCalls.flat());
    expect(committedBeforeDeath.size).toBeGreaterThan(0);
    const info = await jsm.consumers.info(natsNames().stream, durable);
    expect(info.ack_floor.stream_seq).toBe(0);

    // More events meanwhile: the next process's batches hold redeliveries and first deliveries.
    await Promise.all(ids.slice(40).map((id, i) => js.publish(subject, payload(`tool-${40 + i}`), { msgID: id })));
    const calls: string[][] = [];
    const next = await startConsumer({
      ...consumerOf(durable, subject),
      applyBatch: recordBatch(durable, calls),
    });
    try {
      await settled(durable, 60);
      const rows = await effects(durable);
      expect(rows).toHaveLength(60);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids));
      // The events the dead process committed were never given to the next one's applyBatch.
      const givenAgain = calls.flat().filter((id) => committedBeforeDeath.has(id));
      expect(givenAgain).toEqual([]);
      expect(await inboxCount(durable)).toBe(60);
      const dead = await db.pool.query("SELECT count(*)::int AS n FROM dead_letters WHERE consumer = $1", [durable]);
      expect(dead.rows[0].n).toBe(0);
    } finally {
      await next.stop();
    }
  });

  it("applies redeliveries together in one transaction, each once, and a poison one among them goes its own way", async () => {
    const subject = "toolport.test.batch.redelivered";
    const durable = "batch-redelivered";
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(natsNames().stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
    });
    const toolOf = (i: number) => (i === 7 ? "poison" : `tool-${i}`);
    const ids = await publishTools(subject, 30, toolOf);
    // Another process received them all and handed them back undone (a nak: delivered again at once).
    const other = await nc.jetstream().consumers.get(natsNames().stream, durable);
    let handedBack = 0;
    while (handedBack < ids.length) {
      for await (const m of await other.fetch({ max_messages: ids.length, expires: 2000 })) {
        expect(m.info.deliveryCount).toBe(1);
        m.nak();
        handedBack++;
      }
    }
    const calls: string[][] = [];
    const consumer = await startConsumer({
      ...consumerOf(durable, subject),
      applyBatch: async (client, fresh) => {
        if (fresh.some((f) => f.event.toolId === "poison")) throw new PoisonMessageError("cannot be applied");
        await recordBatch(durable, calls)(client, fresh);
      },
      // One batch of all thirty: it waits until they have arrived.
      batchMax: ids.length,
      batchWaitMs: 10_000,
    });
    try {
      await settled(durable, ids.length * 2);
      const rows = await effects(durable);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids.filter((_, i) => i !== 7)));
      expect(rows.every((r) => r.n === 1)).toBe(true);
      // The batch of redeliveries failed on the poison one and was replayed one by one: 29 calls of one.
      expect(calls.every((c) => c.length === 1)).toBe(true);
      const dead = await db.pool.query("SELECT event_id, deliveries FROM dead_letters WHERE consumer = $1", [durable]);
      expect(dead.rows).toEqual([{ event_id: ids[7], deliveries: 2 }]);
    } finally {
      await consumer.stop();
    }

    // The same again without a poison event: the redeliveries are applied together, in one call and one transaction.
    const again: string[] = Array.from({ length: 30 }, () => randomUUID());
    await Promise.all(again.map((id, i) => js.publish(subject, payload(`again-${i}`), { msgID: id })));
    handedBack = 0;
    while (handedBack < again.length) {
      for await (const m of await other.fetch({ max_messages: again.length, expires: 2000 })) {
        m.nak();
        handedBack++;
      }
    }
    const together: string[][] = [];
    const second = await startConsumer({
      ...consumerOf(durable, subject),
      applyBatch: recordBatch(durable, together),
      batchMax: again.length,
      batchWaitMs: 10_000,
    });
    try {
      await settled(durable, ids.length * 2 + again.length * 2);
      expect(together).toHaveLength(1);
      expect(new Set(together[0])).toEqual(new Set(again));
      const rows = (await effects(durable)).filter((r) => again.includes(r.event_id));
      expect(rows).toHaveLength(30);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.txid)).size).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it("applies only the new events of a batch that overlaps one already applied, in one call, once", async () => {
    const subject = "toolport.test.batch.overlap";
    const durable = "batch-overlap";
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    const ids = Array.from({ length: 80 }, () => randomUUID());
    await Promise.all(ids.slice(0, 40).map((id, i) => js.publish(subject, payload(`tool-${i}`), { msgID: id })));
    const calls: string[][] = [];
    const options = consumerOf(durable, subject);
    let consumer = await startConsumer({ ...options, applyBatch: recordBatch(durable, calls) });
    await settled(durable, 40);
    await consumer.stop();
    expect(new Set(calls.flat())).toEqual(new Set(ids.slice(0, 40)));

    // Forty more, then the whole stream replayed as ONE batch of 80 (batchMax 80, waiting for it to fill):
    // the forty already applied are in it, and only the new ones reach applyBatch, in a single call.
    await Promise.all(ids.slice(40).map((id, i) => js.publish(subject, payload(`tool-${40 + i}`), { msgID: id })));
    await jsm.consumers.delete(natsNames().stream, durable);
    const replayed: string[][] = [];
    consumer = await startConsumer({ ...options, applyBatch: recordBatch(durable, replayed), batchMax: 80, batchWaitMs: 10_000 });
    try {
      await settled(durable, 80);
      expect(replayed).toHaveLength(1);
      expect(new Set(replayed[0])).toEqual(new Set(ids.slice(40)));
      expect(replayed[0]).toHaveLength(40);
      const rows = await effects(durable);
      expect(rows).toHaveLength(80);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      // The 40 new effects in one transaction.
      expect(new Set(rows.filter((r) => replayed[0]!.includes(r.event_id)).map((r) => r.txid)).size).toBe(1);
      expect(await inboxCount(durable)).toBe(80);
    } finally {
      await consumer.stop();
    }
  });

  it("publishes outbox rows in seq order with their event ids and request ids", async () => {
    const subject = "toolport.test.relay.order";
    const ids: string[] = [];
    await runInScope({ requestId: "req-relay-order" }, () =>
      withTransaction(db.pool, async (client) => {
        for (let i = 0; i < 200; i++) {
          ids.push(
            await enqueueEvent(client, subject, CatalogToolChangedSchema, create(CatalogToolChangedSchema, { toolId: `t${i}` })),
          );
        }
      }),
    );
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 50 });
    await relay.start();
    try {
      await until("every row published", async () => (await unpublished(subject)) === 0, { timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      await relay.stop();
    }
    const stream = await readSubject(subject, 200);
    expect(stream.map((m) => m.id)).toEqual(ids);
    expect(stream.every((m) => m.requestId === "req-relay-order")).toBe(true);
  });

  it("leaves rows another relay has claimed until its claim runs out, then publishes them", async () => {
    const subject = "toolport.test.relay.claimed";
    // Five rows, three of them claimed by a relay that then died (a lease that runs out in 1.5 s).
    await db.pool.query(
      `INSERT INTO outbox (id, subject, payload, claimed_until)
       SELECT gen_random_uuid(), $1, $2, CASE WHEN i <= 3 THEN now() + interval '1.5 seconds' END FROM generate_series(1, 5) AS i`,
      [subject, Buffer.from(payload("claimed"))],
    );
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 50 });
    await relay.start();
    try {
      await until("the two free rows published", async () => (await unpublished(subject)) === 3, {
        timeoutMs: 5000,
        intervalMs: 50,
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(await unpublished(subject)).toBe(3);
      await until("the claimed rows published after their lease", async () => (await unpublished(subject)) === 0, {
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      const late = await db.pool.query(
        "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND claimed_until IS NULL AND published_at IS NOT NULL",
        [subject],
      );
      expect(late.rows[0].n).toBe(5);
    } finally {
      await relay.stop();
    }
    expect((await readSubject(subject, 5)).length).toBe(5);
  });

  it("loses nothing and keeps seq order when NATS stops in the middle of publishing", async () => {
    const subject = "toolport.test.relay.outage";
    const total = 10_000;
    // Written straight into the outbox (what enqueueEvent writes), so the backlog is large enough
    // for the relay to be caught mid-way.
    await db.pool.query(
      `INSERT INTO outbox (id, subject, payload)
       SELECT gen_random_uuid(), $1, $2 FROM generate_series(1, $3)`,
      [subject, Buffer.from(payload("bulk")), total],
    );
    const ids = (await db.pool.query("SELECT id FROM outbox WHERE subject = $1 ORDER BY seq", [subject])).rows.map((r) => r.id);
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 50 });
    await relay.start();
    try {
      await until("300 rows published", async () => (await unpublished(subject)) < total - 300, {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      await nats.stop();
      // Some of the batch in flight failed; the rest waits, attempts and last error recorded.
      await until(
        "a failed attempt recorded",
        async () =>
          (
            await db.pool.query(
              "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NULL AND attempts > 0 AND last_error IS NOT NULL",
              [subject],
            )
          ).rows[0].n > 0,
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      const stuck = await unpublished(subject);
      expect(stuck).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 500));
      expect(await unpublished(subject)).toBe(stuck);

      nats = await startNats({ storeDir, port: natsPort, log: quiet });
      await until("every row published", async () => (await unpublished(subject)) === 0, { timeoutMs: 60_000, intervalMs: 50 });
    } finally {
      await relay.stop();
    }
    // Each event exactly once in the stream (republished ones deduplicated), first publications in seq order.
    const stream = await readSubject(subject, total);
    expect(stream).toHaveLength(total);
    expect(stream.map((m) => m.id)).toEqual(ids);
  }, 120_000);

  const unpublished = async (subject: string) =>
    (await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NULL", [subject])).rows[0]
      .n as number;

  /** Every message stored on a subject, in stream order, with its Nats-Msg-Id and request id header. */
  async function readSubject(subject: string, expected: number) {
    const jsm = await nc.jetstreamManager();
    const stored = (await jsm.streams.info(natsNames().stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
    expect(stored).toBe(expected);
    const name = `read-${randomUUID()}`;
    await jsm.consumers.add(natsNames().stream, {
      name,
      filter_subject: subject,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      inactive_threshold: 60 * 1_000_000_000,
    });
    const out: { id: string | undefined; requestId: string | undefined; seq: number }[] = [];
    const reader = await nc.jetstream().consumers.get(natsNames().stream, name);
    while (out.length < expected) {
      const batch = await reader.fetch({ max_messages: 1000, expires: 2000 });
      const before = out.length;
      for await (const m of batch) {
        out.push({ id: m.headers?.get("Nats-Msg-Id"), requestId: m.headers?.get(REQUEST_ID_HEADER), seq: m.seq });
      }
      if (out.length === before) break;
    }
    await jsm.consumers.delete(natsNames().stream, name).catch(() => {});
    return out;
  }
});
