/**
 * The outbox against a real NATS that the test stops and restarts: events written while NATS is
 * down are published once it is back, none lost, and a consumer that dedupes by id applies each once.
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { CatalogToolChangedSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startNats } from "../../../../deploy/local/infra.mjs";
import { migratedDatabase, type TestDatabase } from "../../../../test/harness/db.js";
import { until } from "../../../../test/harness/wait.js";
import { currentRequestId, runInScope } from "../src/context.js";
import { connectNats, enqueueEvent, ensureStream, OutboxRelay, Subjects, startConsumer } from "../src/events.js";
import { createLogger } from "../src/logger.js";
import { withTransaction } from "../src/pg.js";

const log = createLogger("outbox-test", "silent");
const quiet = { info() {}, warn() {}, error() {} };

describe("outbox relay and idempotent consumer", () => {
  let db: TestDatabase;
  let nats: { url: string; stop(): Promise<void> };
  let natsPort: number;
  let storeDir: string;
  let nc: NatsConnection;
  let relay: OutboxRelay;

  beforeAll(async () => {
    db = await migratedDatabase("outbox");
    await db.pool.query("CREATE TABLE applied (event_id text NOT NULL, tool_id text NOT NULL, request_id text)");
    natsPort = await freePort();
    storeDir = await mkdtemp(path.join(os.tmpdir(), "toolport-nats-"));
    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    nc = await connectNats(nats.url, "outbox-test", log);
    await ensureStream(nc);
    relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 100 });
    await relay.start();
  });

  afterAll(async () => {
    await relay?.stop();
    await nc?.close();
    await nats?.stop();
    await db?.pool.end();
  });

  const write = (toolId: string) =>
    withTransaction(db.pool, (client) =>
      enqueueEvent(client, Subjects.catalogToolChanged, CatalogToolChangedSchema, create(CatalogToolChangedSchema, { toolId })),
    );

  it("publishes events written while NATS is down once it is back, and a deduping consumer applies each once", async () => {
    await nats.stop();
    const ids: string[] = [];
    await runInScope({ requestId: "req-outbox-1" }, async () => {
      for (let i = 0; i < 20; i++) ids.push(await write(`tool-${i}`));
    });
    // Nothing can have gone out: NATS is down.
    await new Promise((r) => setTimeout(r, 500));
    const pending = await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL");
    expect(pending.rows[0].n).toBe(20);

    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    await until(
      "every row published",
      async () => (await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL")).rows[0].n === 0,
    );

    // A relay that crashed after publishing but before marking sends the same rows again.
    await db.pool.query("UPDATE outbox SET published_at = NULL WHERE id = ANY($1::uuid[])", [ids.slice(0, 5)]);
    await until(
      "every row published",
      async () => (await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL")).rows[0].n === 0,
    );

    const startCounting = () =>
      startConsumer({
        nc,
        pool: db.pool,
        log,
        durable: "outbox-test",
        subject: Subjects.catalogToolChanged,
        schema: CatalogToolChangedSchema,
        async handle(event, { client, eventId }) {
          await client.query("INSERT INTO applied (event_id, tool_id, request_id) VALUES ($1, $2, $3)", [
            eventId,
            event.toolId,
            currentRequestId(),
          ]);
        },
      });
    const countApplied = async () => (await db.pool.query("SELECT count(*)::int AS n FROM applied")).rows[0].n;

    let consumer = await startCounting();
    await until("20 events applied", async () => (await countApplied()) >= 20);
    await consumer.stop();
    // Redeliver everything: drop the durable consumer so the stream replays all 20 messages from the
    // start. Every one is a duplicate for the inbox and must change nothing.
    await (await nc.jetstreamManager()).consumers.delete("TOOLPORT", "outbox-test");
    consumer = await startCounting();
    try {
      await until("the replay to be acked", async () => {
        const info = await (await nc.jetstreamManager()).consumers.info("TOOLPORT", "outbox-test");
        return info.num_ack_pending === 0 && info.num_pending === 0 && info.delivered.consumer_seq >= 20;
      });
      const { rows } = await db.pool.query(
        "SELECT event_id, count(*)::int AS n, min(request_id) AS rid FROM applied GROUP BY event_id",
      );
      expect(rows).toHaveLength(20);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids));
      // The request id travelled from the writer's scope through NATS to the consumer.
      expect(rows.every((r) => r.rid === "req-outbox-1")).toBe(true);
    } finally {
      await consumer.stop();
    }
  });

  it("terminates a poison message and records it instead of retrying forever", async () => {
    const consumer = await startConsumer({
      nc,
      pool: db.pool,
      log,
      durable: "outbox-poison-test",
      subject: "toolport.test.poison",
      schema: CatalogToolChangedSchema,
      maxDeliver: 2,
      async handle() {
        throw new Error("cannot apply");
      },
    });
    try {
      // One payload that cannot be decoded, one that decodes but whose handler always fails.
      await nc.jetstream().publish("toolport.test.poison", new Uint8Array([0, 0, 0]), { msgID: "poison-1" });
      await nc
        .jetstream()
        .publish("toolport.test.poison", toBinary(CatalogToolChangedSchema, create(CatalogToolChangedSchema, { toolId: "x" })), {
          msgID: "poison-2",
        });
      await until(
        "two dead letters",
        async () =>
          (await db.pool.query("SELECT count(*)::int AS n FROM dead_letters WHERE consumer = 'outbox-poison-test'")).rows[0].n ===
          2,
      );
      const { rows } = await db.pool.query(
        "SELECT event_id, error, deliveries FROM dead_letters WHERE consumer = 'outbox-poison-test' ORDER BY event_id",
      );
      expect(rows.map((r) => r.event_id)).toEqual(["poison-1", "poison-2"]);
      expect(rows[0].error).toMatch(/undecodable/);
      expect(rows[1]).toMatchObject({ error: "cannot apply", deliveries: 2 });
      const inbox = await db.pool.query("SELECT count(*)::int AS n FROM inbox WHERE consumer = 'outbox-poison-test'");
      expect(inbox.rows[0].n).toBe(0);
    } finally {
      await consumer.stop();
    }
  });

  it("flush() resolves once what was committed before it is in the stream, and false after its timeout when NATS is down", async () => {
    const jsm = await nc.jetstreamManager();
    for (let i = 0; i < 5; i++) {
      const id = await write(`flushed-${i}`);
      expect(await relay.flush()).toBe(true);
      // No polling: the row is marked and the message is in the stream the moment flush resolves.
      const row = await db.pool.query("SELECT published_at FROM outbox WHERE id = $1", [id]);
      expect(row.rows[0].published_at).not.toBeNull();
      const stored = await jsm.streams.getMessage("TOOLPORT", { last_by_subj: Subjects.catalogToolChanged });
      expect(stored.header.get("Nats-Msg-Id")).toBe(id);
    }

    await nats.stop();
    try {
      const id = await write("while-down");
      const started = Date.now();
      expect(await relay.flush(600)).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
      const row = await db.pool.query("SELECT published_at FROM outbox WHERE id = $1", [id]);
      expect(row.rows[0].published_at).toBeNull();
    } finally {
      nats = await startNats({ storeDir, port: natsPort, log: quiet });
    }
    expect(await relay.flush(20_000)).toBe(true);
  });
});
