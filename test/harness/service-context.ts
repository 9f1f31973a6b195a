/**
 * A service's start-up context (@toolport/kit/service ServiceContext) on a test database, for handler
 * tests that build the service's parts with its own `deps.ts` without starting a stack: its kit and own
 * migrations applied, its settings parsed from `env` as the role parses them, a real NATS connection and
 * outbox relay (in a namespace of the file's own, so no other test sees its events), and relaxed pools
 * on the same database.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@toolport/kit/config";
import {
  connectNats,
  currentNatsNames,
  enqueueEvents,
  ensureStream,
  OutboxRelay,
  Subjects,
  setNatsNamespace,
} from "@toolport/kit/events";
import { createLogger } from "@toolport/kit/logger";
import { createPool, kitMigrationsDir, migrate, type Pool, withTransaction } from "@toolport/kit/pg";
import { type ServiceConfig, type ServiceContext, serviceEnv } from "@toolport/kit/service";
import { type ExecutionEvent, ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { inject } from "vitest";
import type { z } from "zod";
import type { TestDatabase } from "./db.js";
import { until } from "./wait.js";

export interface TestServiceContext<C> extends ServiceContext<C> {
  /** Stops the relay, closes NATS and the relaxed pools (the database's own pool is the caller's). */
  close(): Promise<void>;
}

/**
 * The context of the service `name` (its settings `shape`, its migrations in the folder `migrations`)
 * on `db`, with `env` as the service's environment.
 */
export async function testServiceContext<S extends z.ZodRawShape>(
  db: TestDatabase,
  name: string,
  shape: S,
  migrations: URL,
  env: Record<string, string> = {},
): Promise<TestServiceContext<ServiceConfig<S>>> {
  await migrate(db.pool, [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir: fileURLToPath(migrations), namespace: name },
  ]);
  // The port is not used: the handlers are reached in process.
  const base = serviceEnv(name, 0);
  const config = loadConfig({ ...base, ...shape } as typeof base & S, {
    DATABASE_URL: db.url,
    NATS_URL: inject("natsUrl"),
    ...env,
  }) as unknown as ServiceConfig<S>;
  const log = createLogger(`${name}-test`, process.env.TEST_LOG ?? "silent");
  const nc = await connectNats(inject("natsUrl"), `${name}-test`, log);
  setNatsNamespace(`t${randomBytes(4).toString("hex")}`);
  await ensureStream(nc);
  const relay = new OutboxRelay({ pool: db.pool, nc, log, role: name });
  await relay.start();
  const relaxed: Pool[] = [];
  return {
    name: name,
    config,
    log,
    pool: db.pool,
    nc,
    outbox: relay,
    relaxedPool(max) {
      const pool = createPool(db.url, max, { synchronousCommit: false });
      relaxed.push(pool);
      return pool;
    },
    async close() {
      await relay.stop();
      await nc.drain();
      await Promise.all(relaxed.map((p) => p.end()));
    },
  };
}

/**
 * Execution events through `ctx`'s outbox (one transaction on `db`) and relay, nudged at once: what
 * execution writes for a call, for tests of the services that consume them.
 */
export async function publishExecutionEvents(db: TestDatabase, ctx: ServiceContext<unknown>, events: ExecutionEvent[]) {
  await withTransaction(db.pool, (client) =>
    enqueueEvents(
      client,
      Subjects.executionCompleted,
      ExecutionEventSchema,
      events.map((message) => ({ eventId: message.eventId, message })),
    ),
  );
  ctx.outbox.nudge();
}

/**
 * Waits until the durable consumer `durable` of `ctx`'s stream has nothing pending or unacknowledged and
 * has delivered at least `delivered` messages (acked or terminated, poison ones included).
 */
export function consumerSettled(ctx: ServiceContext<unknown>, durable: string, delivered: number) {
  return until(
    `the consumer ${durable} to ack or terminate everything delivered`,
    async () => {
      const info = await (await ctx.nc.jetstreamManager()).consumers.info(currentNatsNames().stream, durable);
      return info.num_ack_pending === 0 && info.num_pending === 0 && info.delivered.consumer_seq >= delivered;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
}
