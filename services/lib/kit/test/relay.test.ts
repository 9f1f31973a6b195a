/**
 * The outbox relay's statements and wake-ups, against a real Postgres and NATS: a backlog goes out with one
 * statement per batch while more is due (the mark of one batch and the claim of the next together), each
 * event once and in seq order; a commit wakes a relay that does not poll (the NOTIFY travels in the
 * insert's own statement), a nudge wakes it after its delay, and a nudge while a batch is out waits for
 * that delay too; a batch claimed together with the last mark while NATS is down is let go and published
 * once NATS is back, each event once; a relay that dies between its publishes and its mark has its rows published again once
 * its lease runs out, with the same message ids, which JetStream keeps once.
 *
 * To stop a relay between its publishes and its mark, a test holds an advisory lock that a trigger makes
 * the mark wait for (the claim does not touch published_at, so it passes).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { CatalogToolChangedSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { AckPolicy, DeliverPolicy, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startNats } from "../../../../deploy/local/infra.mjs";
import { migratedDatabase, type TestDatabase } from "../../../../test/harness/db.js";
import { until } from "../../../../test/harness/wait.js";
import {
  connectNats,
  enqueueEvent,
  enqueueEvents,
  ensureStream,
  natsNames,
  OutboxRelay,
  outboxInsert,
  outboxRow,
} from "../src/events.js";
import { createLogger } from "../src/logger.js";
import { type Pool, type PoolClient, withTransaction } from "../src/pg.js";

const log = createLogger("relay-test", process.env.TEST_LOG ?? "silent");
const quiet = { info() {}, warn() {}, error() {} };
/** Long enough that no test sees a relay's poll or a nudge's delay run out unless it means to. */
const HOUR_MS = 3_600_000;
/** The advisory lock a held mark waits for. */
const MARK_LOCK = 736_001;

const event = (toolId: string) => create(CatalogToolChangedSchema, { toolId });

/** `pool`, with the name (or text) of every statement sent through its `query` noted in `sent`. */
function counting(pool: Pool): { pool: Pool; sent: string[] } {
  const sent: string[] = [];
  const query = (config: string | { name?: string; text: string }, values?: unknown[]) => {
    sent.push(typeof config === "string" ? config : (config.name ?? config.text));
    return pool.query(config as never, values as never);
  };
  return {
    sent,
    pool: new Proxy(pool, {
      get(target, property) {
        if (property === "query") return query;
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
  };
}

describe("outbox relay statements and wake-ups", () => {
  let db: TestDatabase;
  let nats: { url: string; stop(): Promise<void> };
  let natsPort: number;
  let storeDir: string;
  let nc: NatsConnection;

  beforeAll(async () => {
    db = await migratedDatabase("relay");
    natsPort = await freePort();
    storeDir = await mkdtemp(path.join(os.tmpdir(), "toolport-nats-relay-"));
    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    nc = await connectNats(nats.url, "relay-test", log);
    await ensureStream(nc);
    // The mark (the only update that sets published_at) waits while a test holds MARK_LOCK.
    await db.pool.query(`
      CREATE FUNCTION hold_mark() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.published_at IS NOT NULL AND OLD.published_at IS NULL THEN PERFORM pg_advisory_xact_lock(${MARK_LOCK}); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER hold_mark BEFORE UPDATE ON outbox FOR EACH ROW EXECUTE FUNCTION hold_mark();`);
  });

  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
    await db?.pool.end();
  });

  /** Holds MARK_LOCK until the returned function is called: every mark meanwhile waits. */
  async function holdMarks(): Promise<() => Promise<void>> {
    const holder = await db.pool.connect();
    await holder.query("SELECT pg_advisory_lock($1)", [MARK_LOCK]);
    return async () => {
      await holder.query("SELECT pg_advisory_unlock($1)", [MARK_LOCK]);
      holder.release();
    };
  }

  /** The backend of a mark waiting for MARK_LOCK, once there is one. */
  async function heldMark(): Promise<number> {
    let pid: number | undefined;
    await until(
      "a mark waiting for the lock",
      async () => {
        const { rows } = await db.pool.query<{ pid: number }>(
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted",
          [MARK_LOCK],
        );
        pid = rows[0]?.pid;
        return pid !== undefined;
      },
      { intervalMs: 20 },
    );
    return pid as number;
  }

  /** Rows written without a NOTIFY (as execution and content write theirs, nudging their relay instead). */
  async function writeQuietly(subject: string, count: number): Promise<string[]> {
    const rows = Array.from({ length: count }, (_, i) => outboxRow(subject, CatalogToolChangedSchema, event(`t${i}`)));
    const insert = outboxInsert(rows);
    await db.pool.query(insert.sql, insert.values);
    return rows.map((r) => r.id);
  }

  const unpublished = async (subject: string) =>
    (await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NULL", [subject])).rows[0]
      .n as number;

  /** The Nats-Msg-Id of every message stored on `subject`, in stream order. */
  async function streamIds(subject: string): Promise<string[]> {
    const jsm = await nc.jetstreamManager();
    const stored = (await jsm.streams.info(natsNames().stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
    if (stored === 0) return [];
    const name = `read-${randomUUID()}`;
    await jsm.consumers.add(natsNames().stream, {
      name,
      filter_subject: subject,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      inactive_threshold: 60 * 1_000_000_000,
    });
    const ids: string[] = [];
    const reader = await nc.jetstream().consumers.get(natsNames().stream, name);
    while (ids.length < stored) {
      const before = ids.length;
      // Asking for no more than are stored: the fetch ends when they have come, not at its expiry.
      const batch = await reader.fetch({ max_messages: Math.min(1000, stored - ids.length), expires: 2000 });
      for await (const m of batch) ids.push(m.headers?.get("Nats-Msg-Id") ?? "");
      if (ids.length === before) break;
    }
    await jsm.consumers.delete(natsNames().stream, name).catch(() => {});
    return ids;
  }

  it("publishes a backlog with one statement per batch while more is due: 250 events, 4 statements, each once in seq order", async () => {
    const subject = "toolport.test.relay.backlog";
    const ids = await withTransaction(db.pool, (client) =>
      enqueueEvents(
        client,
        subject,
        CatalogToolChangedSchema,
        Array.from({ length: 250 }, (_, i) => ({ eventId: randomUUID(), message: event(`t${i}`) })),
      ),
    );
    const { pool, sent } = counting(db.pool);
    const relay = new OutboxRelay({ pool, nc, log, pollMs: HOUR_MS, batchSize: 100 });
    await relay.start();
    try {
      await until("the backlog published", async () => (await unpublished(subject)) === 0, { intervalMs: 20 });
    } finally {
      await relay.stop();
    }
    // Claim 100; mark them and claim the next 100; the same; mark the last 50 (not a full batch: nothing
    // more is due). Separate marks and claims would take 6.
    expect(sent).toEqual(["outbox_claim", "outbox_mark_claim", "outbox_mark_claim", "outbox_mark"]);
    expect(await streamIds(subject)).toEqual(ids);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND attempts = 1 AND claimed_until IS NULL",
      [subject],
    );
    expect(rows[0].n).toBe(250);
  });

  it("wakes on a commit (the NOTIFY is in the insert's statement) and on a nudge after its delay, without polling", async () => {
    const subject = "toolport.test.relay.wake";
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: HOUR_MS, nudgeDelayMs: 20 });
    await relay.start();
    try {
      // enqueueEvent is one statement: the row and its NOTIFY together.
      const client = await db.pool.connect();
      const statements: string[] = [];
      const counted = new Proxy(client, {
        get(target, property) {
          if (property === "query")
            return (text: string, values?: unknown[]) => {
              statements.push(text);
              return target.query(text, values);
            };
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }) as PoolClient;
      let committed: string;
      try {
        committed = await enqueueEvent(counted, subject, CatalogToolChangedSchema, event("committed"));
      } finally {
        client.release();
      }
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/^WITH event AS \(INSERT INTO outbox .*pg_notify\('toolport_outbox', ''\)$/s);
      await until("the committed event published", async () => (await streamIds(subject)).includes(committed), {
        timeoutMs: 15_000,
        intervalMs: 50,
      });

      // Rolled back: no row, and the notification went nowhere.
      await expect(
        withTransaction(db.pool, async (tx) => {
          await enqueueEvent(tx, subject, CatalogToolChangedSchema, event("rolled-back"));
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      expect((await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE subject = $1", [subject])).rows[0].n).toBe(1);

      // A row written without NOTIFY, then a nudge in process.
      const [nudged] = await writeQuietly(subject, 1);
      relay.nudge();
      await until("the nudged event published", async () => (await streamIds(subject)).includes(nudged as string), {
        timeoutMs: 15_000,
        intervalMs: 50,
      });
      expect(await streamIds(subject)).toEqual([committed, nudged]);
    } finally {
      await relay.stop();
    }
  });

  it("slows an idle listening relay's polls down to its idlePollMaxMs and no further, and still polls", async () => {
    const counted = counting(db.pool);
    const relay = new OutboxRelay({ pool: counted.pool, nc, log, pollMs: 50, idlePollMaxMs: 400 });
    await relay.start();
    try {
      const waits = new Set<number>();
      const claims = () => counted.sent.filter((name) => name === "outbox_claim").length;
      let claimsAtMax = 0;
      // Waits of 50, 100, 200, then 400 for good: two more claims at 400 show it stays there.
      await until(
        "two polls at idlePollMaxMs",
        async () => {
          waits.add(relay.nextPollMs);
          if (relay.nextPollMs === 400 && claimsAtMax === 0) claimsAtMax = claims();
          return claimsAtMax > 0 && claims() >= claimsAtMax + 2;
        },
        { timeoutMs: 20_000, intervalMs: 5 },
      );
      expect([...waits].every((ms) => [50, 100, 200, 400].includes(ms))).toBe(true);
      expect(relay.nextPollMs).toBe(400);
    } finally {
      await relay.stop();
    }
  });

  it("keeps a nudge made while a batch is out for its delay instead of claiming again at once", async () => {
    const subject = "toolport.test.relay.nudge-in-batch";
    const { pool, sent } = counting(db.pool);
    const relay = new OutboxRelay({ pool, nc, log, pollMs: HOUR_MS, nudgeDelayMs: HOUR_MS });
    await relay.start();
    // Idle from here: its first look is over.
    expect(await relay.flush(30_000)).toBe(true);
    const claims = () => sent.filter((s) => s === "outbox_claim" || s === "outbox_mark_claim").length;
    const claimsBefore = claims();
    const release = await holdMarks();
    let released = false;
    try {
      const [first] = await writeQuietly(subject, 1);
      const flushed = relay.flush(30_000);
      await heldMark();
      // Committed and nudged while the first batch waits for its mark.
      const [second] = await writeQuietly(subject, 1);
      relay.nudge();
      await release();
      released = true;
      expect(await flushed).toBe(true);
      expect(await streamIds(subject)).toEqual([first]);
      // The nudge's delay (an hour here) has not run out: no claim was made for it. (Before, a nudge during a
      // batch sent the relay straight round: one claim and one mark per call at moderate load.)
      await new Promise((r) => setTimeout(r, 300));
      expect(await unpublished(subject)).toBe(1);
      expect(claims()).toBe(claimsBefore + 1); // the flush's
      // A flush does not wait for the delay.
      expect(await relay.flush(30_000)).toBe(true);
      expect(await streamIds(subject)).toEqual([first, second]);
    } finally {
      if (!released) await release();
      await relay.stop();
    }
  });

  it("releases the claim of a batch claimed with the last mark while NATS is down, and publishes it once NATS is back", async () => {
    const subject = "toolport.test.relay.nats-down";
    const ids = await writeQuietly(subject, 250);
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 100, batchSize: 100 });
    const release = await holdMarks();
    let released = false;
    let natsUp = true;
    try {
      await relay.start();
      // The first 100 are in the stream; their mark, with the claim of the next 100, waits.
      await heldMark();
      expect(await streamIds(subject)).toEqual(ids.slice(0, 100));
      await nats.stop();
      natsUp = false;
      await release();
      released = true;
      // The next batch's publishes fail: its rows are let go, with the attempt and its error noted.
      await until(
        "a failed attempt recorded",
        async () =>
          (
            await db.pool.query(
              "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NULL AND attempts > 0 AND last_error IS NOT NULL",
              [subject],
            )
          ).rows[0].n > 0,
        { intervalMs: 50 },
      );
      expect(await unpublished(subject)).toBe(150);
      nats = await startNats({ storeDir, port: natsPort, log: quiet });
      natsUp = true;
      await until("every row published", async () => (await unpublished(subject)) === 0, { timeoutMs: 60_000, intervalMs: 50 });
    } finally {
      if (!released) await release();
      if (!natsUp) nats = await startNats({ storeDir, port: natsPort, log: quiet });
      await relay.stop();
    }
    // Each event once, in seq order.
    expect(await streamIds(subject)).toEqual(ids);
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND claimed_until IS NULL AND published_at IS NOT NULL",
      [subject],
    );
    expect(rows[0].n).toBe(250);
  }, 120_000);

  it("publishes again, with the same message ids, the rows of a relay that died between its publishes and its mark", async () => {
    const subject = "toolport.test.relay.died";
    const ids = await writeQuietly(subject, 30);
    const dying = new OutboxRelay({ pool: db.pool, nc, log, pollMs: HOUR_MS });
    const release = await holdMarks();
    try {
      await dying.start();
      const pid = await heldMark();
      expect(await streamIds(subject)).toEqual(ids);
      // The relay's process dies: its connection goes, and the mark it was waiting to write never commits.
      await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
      await dying.stop();
    } finally {
      await release();
    }
    const held = await db.pool.query(
      "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NULL AND attempts = 0 AND claimed_until > now()",
      [subject],
    );
    expect(held.rows[0].n).toBe(30);

    // Its lease runs out (30 s, brought forward here; that a held lease is respected until then is
    // consumer-batch.test.ts's "leaves rows another relay has claimed").
    await db.pool.query("UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE subject = $1", [subject]);
    const next = new OutboxRelay({ pool: db.pool, nc, log, pollMs: HOUR_MS });
    await next.start();
    try {
      await until("the dead relay's rows published", async () => (await unpublished(subject)) === 0, { intervalMs: 20 });
    } finally {
      await next.stop();
    }
    // Published by the second relay (one attempt, the first relay's mark never committed), and JetStream's
    // duplicate window kept each event once: 30 messages, not 60.
    const marked = await db.pool.query(
      "SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND published_at IS NOT NULL AND attempts = 1",
      [subject],
    );
    expect(marked.rows[0].n).toBe(30);
    expect(await streamIds(subject)).toEqual(ids);
  });
});
