/**
 * The key usage consumer on a real Postgres and NATS: execution events written to the outbox, published
 * by the relay and applied as ONE batch that holds duplicates (an execution published again under another
 * event id, a probe, free-tier calls with and without a key) give the sums a key's usage shows, each
 * execution counted once; the whole stream applied again (a new durable on the same inbox) changes nothing.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { currentConsumerBatching, currentNatsNames, type RunningConsumer, setConsumerBatching } from "@toolport/kit/events";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../test/harness/db.js";
import {
  consumerSettled,
  publishExecutionEvents,
  type TestServiceContext,
  testServiceContext,
} from "../../../test/harness/service-context.js";
import { identityEnv } from "../src/config.js";
import { KEY_USAGE_DURABLE, startKeyUsageConsumer } from "../src/events/key-usage.js";
import { keyStore } from "../src/store/keys.js";

describe("key usage consumer", () => {
  let db: TestDatabase;
  let ctx: TestServiceContext<unknown>;
  const defaults = currentConsumerBatching();
  beforeAll(async () => {
    db = await testDatabase("key_usage");
    ctx = (await testServiceContext(
      db,
      "identity",
      identityEnv,
      new URL("../migrations", import.meta.url),
    )) as TestServiceContext<unknown>;
  });
  afterAll(async () => {
    setConsumerBatching(defaults);
    await ctx?.close();
    await db?.pool.end();
  });

  const settled = (delivered: number) => consumerSettled(ctx, KEY_USAGE_DURABLE, delivered);

  it("sums a batch with duplicates once per execution, and a replay changes nothing", async () => {
    const accountId = randomUUID();
    const [k1, k2] = [randomUUID(), randomUUID()];
    const x = Array.from({ length: 10 }, () => randomUUID());
    const event = (executionId: string, fields: MessageInitShape<typeof ExecutionEventSchema>) =>
      create(ExecutionEventSchema, {
        eventId: randomUUID(),
        executionId,
        accountId,
        toolId: "tool-1",
        toolName: "echo",
        serviceId: "svc-1",
        serviceName: "demo",
        status: ExecutionStatus.SUCCESS,
        seconds: 0.25,
        occurredAt: timestampFromDate(new Date()),
        ...fields,
      });
    const events = [
      event(x[0]!, { keyId: k1, isPaid: true, costCents: 7n, freeTier: true }),
      event(x[1]!, { keyId: k1, isPaid: true, costCents: 7n }),
      event(x[2]!, { keyId: k1 }),
      event(x[3]!, { keyId: k1 }),
      event(x[4]!, { keyId: k1, status: ExecutionStatus.ERROR }),
      event(x[5]!, { keyId: k1, status: ExecutionStatus.ERROR }),
      // The same execution published again under another event id: counted once.
      event(x[1]!, { keyId: k1, isPaid: true, costCents: 7n }),
      // A synthetic probe: not a key's usage.
      event(x[6]!, { keyId: k1, isProbe: true }),
      event(x[7]!, { keyId: k2, isPaid: true, costCents: 3n }),
      // Free-tier calls without a key, one of them twice.
      event(x[8]!, { freeTier: true }),
      event(x[9]!, { freeTier: true }),
      event(x[8]!, { freeTier: true }),
    ];
    // One batch of exactly these events: the consumer waits until all have arrived.
    setConsumerBatching({ max: events.length, waitMs: 10_000 });
    await publishExecutionEvents(db, ctx, events);

    const expectSums = async () => {
      const store = keyStore(db.pool);
      const one = await store.usageOfKey(k1, 30);
      expect(one).toMatchObject({ calls: 6n, successes: 4n, paidCalls: 2n, spentCents: 14n });
      expect(one.topTools).toEqual([{ toolId: "tool-1", toolName: "echo", serviceName: "demo", calls: 6n, successes: 4n }]);
      expect(await store.usageOfKey(k2, 30)).toMatchObject({ calls: 1n, successes: 1n, paidCalls: 1n, spentCents: 3n });
      const free = await db.pool.query("SELECT execution_id FROM free_tier_calls WHERE account_id = $1", [accountId]);
      expect(new Set(free.rows.map((r) => r.execution_id))).toEqual(new Set([x[0], x[8], x[9]]));
    };

    let consumer: RunningConsumer = await startKeyUsageConsumer(ctx);
    try {
      await settled(events.length);
      await expectSums();
      // Applied as one batch: every row written by the same transaction (8 executions with a key, the probe
      // and the second x[1] left out; 3 free-tier executions), and no inbox row: the rows are keyed by execution.
      const written = await db.pool.query(
        `SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions
           FROM (SELECT xmin FROM key_usage UNION ALL SELECT xmin FROM free_tier_calls) w`,
      );
      expect(written.rows[0]).toEqual({ n: 7 + 3, transactions: 1 });
      const inbox = await db.pool.query("SELECT count(*)::int AS n FROM inbox WHERE consumer = $1", [KEY_USAGE_DURABLE]);
      expect(inbox.rows[0].n).toBe(0);
      await consumer.stop();

      // The stream again from the start, as after a lost consumer state: every execution's rows are there.
      setConsumerBatching(defaults);
      await (await ctx.nc.jetstreamManager()).consumers.delete(currentNatsNames().stream, KEY_USAGE_DURABLE);
      consumer = await startKeyUsageConsumer(ctx);
      await settled(events.length);
      await expectSums();
    } finally {
      await consumer.stop();
    }
  });
});
