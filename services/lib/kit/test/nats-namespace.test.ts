/**
 * NATS_NAMESPACE against a real NATS server: a namespaced deployment publishes on a stream and subjects
 * of its own, its consumers receive none of another deployment's events (one without a namespace, one
 * with another namespace, the same durable name), and code on both sides sees the subject without the
 * namespace (inbox rows, the handler's context). The namespace is process-wide (startService sets it
 * once), so the deployments here take turns in this process.
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
import { loadConfig } from "../src/config.js";
import {
  connectNats,
  currentNatsNames,
  enqueueEvent,
  ensureStream,
  natsNames,
  OutboxRelay,
  type RunningConsumer,
  Subjects,
  setNatsNamespace,
  startConsumer,
} from "../src/events.js";
import { createLogger } from "../src/logger.js";
import { withTransaction } from "../src/pg.js";
import { serviceEnv } from "../src/service.js";

const log = createLogger("nats-namespace-test", "silent");
const quiet = { info() {}, warn() {}, error() {} };

describe("natsNames", () => {
  it("keeps the default stream and subjects without a namespace, and prefixes both with one", () => {
    const plain = natsNames("");
    expect(plain.stream).toBe("TOOLPORT");
    expect(plain.wire("toolport.execution.*")).toBe("toolport.execution.*");
    const a = natsNames("team-a_1");
    expect(a.stream).toBe("TOOLPORT_team-a_1");
    expect(a.wire("toolport.>")).toBe("team-a_1.toolport.>");
    expect(a.logical("team-a_1.toolport.execution.completed")).toBe("toolport.execution.completed");
  });

  it("refuses a namespace that is not one subject token, is too long, or would overlap the default stream", () => {
    for (const bad of ["a.b", "a b", "a*", ">", "toolport", "x".repeat(33)]) {
      expect(() => natsNames(bad), bad).toThrow(/NATS namespace/);
      const parsed = (serviceEnv("kit", 1).NATS_NAMESPACE as { safeParse(v: unknown): { success: boolean } }).safeParse(bad);
      expect(parsed.success, bad).toBe(false);
    }
  });
});

describe("NATS_CONSUMER_PREFIX", () => {
  it("stops the start with a message naming NATS_NAMESPACE instead of being ignored", () => {
    const shape = serviceEnv("kit", 1);
    expect(() => loadConfig(shape, { NATS_CONSUMER_PREFIX: "team-a-" })).toThrow(
      /NATS_CONSUMER_PREFIX: was replaced by NATS_NAMESPACE/,
    );
    expect(loadConfig(shape, { NATS_CONSUMER_PREFIX: "" }).NATS_NAMESPACE).toBe("");
  });
});

describe("a namespaced deployment on a shared NATS server", () => {
  let db: TestDatabase;
  let nats: { url: string; stop(): Promise<void> };
  let nc: NatsConnection;
  const consumers: RunningConsumer[] = [];

  beforeAll(async () => {
    db = await migratedDatabase("natsns");
    await db.pool.query("CREATE TABLE applied (consumer text NOT NULL, tool_id text NOT NULL, subject text NOT NULL)");
    const storeDir = await mkdtemp(path.join(os.tmpdir(), "toolport-nats-"));
    nats = await startNats({ storeDir, port: await freePort(), log: quiet });
    nc = await connectNats(nats.url, "nats-namespace-test", log);
  });

  afterAll(async () => {
    for (const c of consumers) await c.stop();
    setNatsNamespace("");
    await nc?.close();
    await nats?.stop();
    await db?.pool.end();
  });

  const follow = async (durable: string) => {
    const consumer = await startConsumer({
      nc,
      pool: db.pool,
      log,
      durable,
      subject: "toolport.catalog.>",
      schema: CatalogToolChangedSchema,
      async handle(event, { client, subject }) {
        await client.query("INSERT INTO applied (consumer, tool_id, subject) VALUES ($1, $2, $3)", [
          durable,
          event.toolId,
          subject,
        ]);
      },
    });
    consumers.push(consumer);
    return consumer;
  };
  const applied = async (durable: string) =>
    (await db.pool.query("SELECT tool_id, subject FROM applied WHERE consumer = $1 ORDER BY tool_id", [durable])).rows;
  const stored = async (stream: string) => (await (await nc.jetstreamManager()).streams.info(stream)).state.messages;
  const publishRaw = (subject: string, toolId: string) =>
    nc.jetstream().publish(subject, toBinary(CatalogToolChangedSchema, create(CatalogToolChangedSchema, { toolId })), {
      msgID: `raw-${toolId}`,
    });

  it("publishes on its own stream and takes in none of another deployment's events", async () => {
    // Another deployment, without a namespace, already has history on the server.
    setNatsNamespace("");
    await ensureStream(nc);
    await publishRaw("toolport.catalog.tool.changed", "default-1");

    setNatsNamespace("nsa");
    expect(currentNatsNames().stream).toBe("TOOLPORT_nsa");
    await ensureStream(nc);
    const relay = new OutboxRelay({ pool: db.pool, nc, log, pollMs: 100 });
    await relay.start();
    try {
      await withTransaction(db.pool, (client) =>
        enqueueEvent(
          client,
          Subjects.catalogToolChanged,
          CatalogToolChangedSchema,
          create(CatalogToolChangedSchema, { toolId: "a-1" }),
        ),
      );
      expect(await relay.flush(5_000)).toBe(true);
    } finally {
      await relay.stop();
    }
    // The relay put it on nsa's stream under nsa's subject, and nowhere else.
    const onWire = await (await nc.jetstreamManager()).streams.getMessage("TOOLPORT_nsa", {
      last_by_subj: "nsa.toolport.catalog.tool.changed",
    });
    expect(onWire.subject).toBe("nsa.toolport.catalog.tool.changed");
    expect(await stored("TOOLPORT_nsa")).toBe(1);
    expect(await stored("TOOLPORT")).toBe(1);

    const a = await follow("followers");
    await until("nsa's event applied", async () => (await applied("followers")).length >= 1);
    // The other deployment's later events do not reach it either.
    await publishRaw("toolport.catalog.tool.changed", "default-2");
    await new Promise((r) => setTimeout(r, 500));
    expect(await applied("followers")).toEqual([{ tool_id: "a-1", subject: "toolport.catalog.tool.changed" }]);
    const inbox = await db.pool.query("SELECT subject FROM inbox WHERE consumer = 'followers'");
    expect(inbox.rows).toEqual([{ subject: "toolport.catalog.tool.changed" }]);
    await a.stop();
  });

  it("keeps two namespaces apart though their consumers have the same durable name", async () => {
    setNatsNamespace("nsb");
    await ensureStream(nc);
    await db.pool.query("DELETE FROM inbox");
    await db.pool.query("DELETE FROM applied");
    await follow("followers");
    await publishRaw(natsNames("nsb").wire(Subjects.catalogToolChanged), "b-1");
    await until("nsb's event applied", async () => (await applied("followers")).length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    // Only nsb's own event: neither nsa's history nor the default deployment's.
    expect(await applied("followers")).toEqual([{ tool_id: "b-1", subject: "toolport.catalog.tool.changed" }]);
    expect(await stored("TOOLPORT_nsb")).toBe(1);
  });
});
