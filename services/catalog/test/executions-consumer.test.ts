/**
 * The executions consumer (reliability facts) on a real Postgres and NATS: execution events written to
 * the outbox, published by the relay and applied as ONE batch that holds duplicates (executions published
 * again under other event ids) give the reliability sums of each execution once; the stream applied again
 * with a poison event in it (no valid tool id) changes nothing, and the poison event alone is dead-lettered.
 * The service's figures (service_calls) count each execution once too. Facts past the retention are not
 * recorded, and pruning the old ones leaves the service's figures as they were.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { currentConsumerBatching, currentNatsNames, type RunningConsumer, setConsumerBatching } from "@toolport/kit/events";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { type ExecutionEvent, ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../test/harness/db.js";
import {
  consumerSettled,
  publishExecutionEvents,
  type TestServiceContext,
  testServiceContext,
} from "../../../test/harness/service-context.js";
import { catalogEnv } from "../src/config.js";
import { startExecutionsConsumer } from "../src/events/executions-consumer.js";
import { serviceStats } from "../src/store/catalog-store.js";
import { FACT_RETENTION_DAYS, popularTools, pruneExecutions, reliabilityAggregates } from "../src/store/executions-store.js";

const DURABLE = "catalog-executions";

describe("executions consumer", () => {
  let db: TestDatabase;
  let ctx: TestServiceContext<unknown>;
  const defaults = currentConsumerBatching();
  beforeAll(async () => {
    db = await testDatabase("catalog_executions");
    ctx = (await testServiceContext(
      db,
      "catalog",
      catalogEnv,
      new URL("../migrations", import.meta.url),
    )) as TestServiceContext<unknown>;
  });
  afterAll(async () => {
    setConsumerBatching(defaults);
    await ctx?.close();
    await db?.pool.end();
  });

  const acked = (delivered: number) => consumerSettled(ctx, DURABLE, delivered);
  const publish = (events: ExecutionEvent[]) => publishExecutionEvents(db, ctx, events);

  it("sums a batch with duplicates once per execution; a replay with a poison event changes nothing", async () => {
    const [tool, other] = [randomUUID(), randomUUID()];
    const service = randomUUID();
    const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()];
    const x = Array.from({ length: 7 }, () => randomUUID());
    const event = (executionId: string, accountId: string, fields: MessageInitShape<typeof ExecutionEventSchema> = {}) =>
      create(ExecutionEventSchema, {
        eventId: randomUUID(),
        executionId,
        toolId: tool,
        serviceId: service,
        accountId,
        status: ExecutionStatus.SUCCESS,
        seconds: 0.5,
        occurredAt: timestampFromDate(new Date()),
        ...fields,
      });
    const failed = { status: ExecutionStatus.ERROR, errorClass: ErrorClass.UPSTREAM, errorType: "upstream_timeout" };
    const events = [
      event(x[0]!, alice),
      event(x[1]!, alice),
      event(x[2]!, bob),
      event(x[3]!, bob, failed),
      event(x[4]!, carol, failed),
      // Published again under other event ids: each execution is one fact.
      event(x[0]!, alice),
      event(x[3]!, bob, failed),
      event(x[5]!, alice, { toolId: other }),
      event(x[5]!, alice, { toolId: other }),
    ];
    // One batch of exactly these events: the consumer waits until all have arrived.
    setConsumerBatching({ max: events.length, waitMs: 10_000 });
    await publish(events);

    const expectSums = async () => {
      const aggregates = await reliabilityAggregates(db.pool, [tool, other], 30);
      expect(aggregates.get(tool)).toMatchObject({
        calls7d: 5,
        calls30d: 5,
        successes30d: 3,
        distinctCallers30d: 3,
        errorClasses: { upstream: 2 },
        faults: { upstream_timeout: 2 },
      });
      expect(aggregates.get(other)).toMatchObject({ calls30d: 1, successes30d: 1, distinctCallers30d: 1 });
      expect(await popularTools(db.pool, 30, 10)).toEqual([
        { toolId: tool, calls: 5, successes: 3 },
        { toolId: other, calls: 1, successes: 1 },
      ]);
      // Six executions of the service, four of them successful: the duplicates counted once.
      expect((await serviceStats(db.pool, [service])).get(service)).toMatchObject({
        totalExecutions: 6,
        successRate: 4 / 6,
        calls30d: 6,
      });
    };

    let consumer: RunningConsumer = await startExecutionsConsumer(ctx.nc, db.pool, ctx.log);
    try {
      await acked(events.length);
      await expectSums();
      // One batch, one transaction, a fact per execution (x[0]..x[5]); no inbox row: the facts are keyed by execution.
      const written = await db.pool.query(
        "SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM executions",
      );
      expect(written.rows[0]).toEqual({ n: 6, transactions: 1 });
      const inbox = await db.pool.query("SELECT count(*)::int AS n FROM inbox WHERE consumer = $1", [DURABLE]);
      expect(inbox.rows[0].n).toBe(0);
      await consumer.stop();

      // A poison event (no valid tool id) and one more execution, then the stream again from the start:
      // the poison one fails its batch, the replay one by one terminates it alone, the new one is applied.
      const poison = event(randomUUID(), carol, { toolId: "not-a-uuid" });
      const late = event(x[6]!, carol);
      await publish([poison, late]);
      setConsumerBatching({ max: events.length + 2, waitMs: 10_000 });
      await (await ctx.nc.jetstreamManager()).consumers.delete(currentNatsNames().stream, DURABLE);
      consumer = await startExecutionsConsumer(ctx.nc, db.pool, ctx.log);
      await acked(events.length + 2);
      const aggregates = await reliabilityAggregates(db.pool, [tool], 30);
      expect(aggregates.get(tool)).toMatchObject({ calls30d: 6, successes30d: 4, distinctCallers30d: 3 });
      const dead = await db.pool.query("SELECT event_id, deliveries FROM dead_letters WHERE consumer = $1", [DURABLE]);
      expect(dead.rows).toEqual([{ event_id: poison.eventId, deliveries: 1 }]);
      const executions = await db.pool.query("SELECT count(*)::int AS n FROM executions");
      expect(executions.rows[0].n).toBe(7);
      // The replay of the first nine added nothing to the service's figures; the late one did.
      expect((await serviceStats(db.pool, [service])).get(service)).toMatchObject({
        totalExecutions: 7,
        successRate: 5 / 7,
        calls30d: 7,
      });
    } finally {
      await consumer.stop();
    }
  });

  it("records no fact past the retention, and pruning the facts that age past it keeps the service's figures", async () => {
    const service = randomUUID();
    const tool = randomUUID();
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
    const event = (occurredAt: Date, status = ExecutionStatus.SUCCESS) =>
      create(ExecutionEventSchema, {
        eventId: randomUUID(),
        executionId: randomUUID(),
        toolId: tool,
        serviceId: service,
        accountId: randomUUID(),
        status,
        seconds: 0.1,
        occurredAt: timestampFromDate(occurredAt),
      });
    const recent = [event(new Date()), event(daysAgo(3), ExecutionStatus.ERROR), event(daysAgo(FACT_RETENTION_DAYS - 1))];
    // Older than the retention when it arrives (a consumer recreated over an old stream): outside every
    // window, so neither a fact nor a count.
    const stale = event(daysAgo(FACT_RETENTION_DAYS + 1));
    setConsumerBatching({ max: 4, waitMs: 10_000 });
    const before = await db.pool.query("SELECT count(*)::int AS n FROM executions");
    const jsm = await ctx.nc.jetstreamManager();
    const delivered = (await jsm.consumers.info(currentNatsNames().stream, DURABLE).catch(() => undefined))?.delivered
      .consumer_seq;
    await publish([...recent, stale]);
    const consumer = await startExecutionsConsumer(ctx.nc, db.pool, ctx.log);
    try {
      await acked((delivered ?? 0) + 4);
    } finally {
      await consumer.stop();
    }
    const after = await db.pool.query("SELECT count(*)::int AS n FROM executions");
    expect(after.rows[0].n - before.rows[0].n).toBe(3);
    const recorded = await db.pool.query("SELECT count(*)::int AS n FROM executions WHERE execution_id = $1", [
      stale.executionId,
    ]);
    expect(recorded.rows[0].n).toBe(0);
    const figures = { totalExecutions: 3, successRate: 2 / 3 };
    // The fact from FACT_RETENTION_DAYS - 1 days ago is outside the last 30 days.
    expect((await serviceStats(db.pool, [service])).get(service)).toMatchObject({ ...figures, calls30d: 2 });

    // Three days later (the facts and their days aged in place): the oldest fact is past the retention and
    // pruned, and so is its day's count; the service's all-time figures keep it.
    await db.pool.query("UPDATE executions SET occurred_at = occurred_at - interval '3 days' WHERE service_id = $1", [service]);
    // Two steps, so that no day lands on another's key (today's on the one three days ago) on the way.
    await db.pool.query("UPDATE service_calls SET day = day - 1000 WHERE service_id = $1", [service]);
    await db.pool.query("UPDATE service_calls SET day = day + 997 WHERE service_id = $1", [service]);
    expect(await pruneExecutions(db.pool)).toBe(1);
    expect(await pruneExecutions(db.pool)).toBe(0);
    const kept = await db.pool.query("SELECT execution_id FROM executions WHERE service_id = $1", [service]);
    expect(kept.rows.map((r) => r.execution_id).sort()).toEqual([recent[0]!.executionId, recent[1]!.executionId].sort());
    const days = await db.pool.query("SELECT sum(calls)::int AS calls FROM service_calls WHERE service_id = $1", [service]);
    expect(days.rows[0].calls).toBe(2);
    expect((await serviceStats(db.pool, [service])).get(service)).toMatchObject({ ...figures, calls30d: 2 });
  });
});
