/**
 * The start-up sequence of a Toolport service, so each service's role.ts only says what is its own:
 * config -> logger -> its database (created, migrated) -> NATS (stream, outbox relay) -> its parts
 * (`deps`) -> gRPC server with health -> its background work; and the reverse on SIGTERM, letting
 * in-flight calls finish.
 */
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { NatsConnection } from "nats";
import { z } from "zod";
import { loadConfig, logLevel, port, url } from "./config.js";
import {
  connectNats,
  ensureStream,
  IDLE_POLL_MAX_QUIET_MS,
  NATS_NAMESPACE_PATTERN,
  OutboxRelay,
  setConsumerBatching,
  setNatsNamespace,
} from "./events.js";
import { DATABASE_CHECK, NATS_CHECK, READINESS, ServingStatus } from "./health.js";
import { watchHeap } from "./heap-watch.js";
import { onShutdown } from "./lifecycle.js";
import { createLogger, type Logger } from "./logger.js";
import { createPool, ensureDatabase, kitMigrationsDir, migrate, type Pool, serviceDatabaseUrl } from "./pg.js";
import type { Role } from "./roles.js";
import { type RpcServer, startRpcServer } from "./rpc.js";

/** The variables every service reads, on top of its own. */
export function serviceEnv(name: string, defaultPort: number) {
  const upper = name.toUpperCase();
  return {
    PORT: port(defaultPort).describe(`port the ${name} gRPC server listens on`),
    HOST: z.string().default("127.0.0.1").describe("interface to listen on (0.0.0.0 in containers)"),
    DATABASE_URL: url(["postgres", "postgresql"], "postgres://toolport@127.0.0.1:55432/postgres").describe(
      `Postgres server; the service uses its own database toolport_${name} there, created if missing`,
    ),
    [`${upper}_DATABASE_URL`]: url(["postgres", "postgresql"])
      .optional()
      .describe(`full URL of the ${name} database, overriding DATABASE_URL`),
    [`${upper}_PG_POOL_MAX`]: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(10)
      .describe(`most Postgres connections the ${name} service's main pool opens (per process)`),
    [`${upper}_PG_RELAXED_POOL_MAX`]: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        `most connections of the ${name} service's second pool, for writes that do not wait for the WAL flush (per process; unset: the service's own default, where it has such a pool)`,
      ),
    NATS_URL: url(["nats"], "nats://127.0.0.1:4222").describe("NATS server with JetStream enabled"),
    NATS_CREDS_FILE: z
      .string()
      .optional()
      .describe("path of a NATS .creds file (user JWT and NKey seed), e.g. from a mounted Secret"),
    NATS_NKEY_SEED_FILE: z.string().optional().describe("path of a file holding the NKey seed of a NATS NKey user"),
    NATS_CA_FILE: z
      .string()
      .optional()
      .describe("path of the PEM CA bundle the NATS server's certificate is checked against (TLS is then required)"),
    NATS_STREAM_REPLICAS: z.coerce
      .number()
      .int()
      .min(1)
      .max(5)
      .default(1)
      .describe("copies of the event stream on a NATS cluster (3 for a three-server cluster)"),
    NATS_STREAM_MAX_AGE_S: z.coerce
      .number()
      .int()
      .min(0)
      .max(315_360_000)
      .default(0)
      .describe("oldest event the stream keeps, in seconds (0: no limit; at most 10 years)"),
    NATS_STREAM_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(-1)
      .default(-1)
      .describe("largest the event stream may grow, in bytes (-1: no limit); the oldest events go first"),
    NATS_NAMESPACE: z
      .string()
      .regex(NATS_NAMESPACE_PATTERN, 'up to 32 letters, digits, _ and -, and not "toolport"')
      .default("")
      .describe(
        "this deployment's own stream (TOOLPORT_<namespace>) and subjects (<namespace>.toolport.*), when several deployments or test stacks share one NATS server",
      ),
    // Replaced by NATS_NAMESPACE: ignoring it would give deployments that set it the same durable consumers
    // on one stream, each taking events meant for the other; so a value stops the start and says so.
    NATS_CONSUMER_PREFIX: z
      .string()
      .max(0, "was replaced by NATS_NAMESPACE (a stream and subjects of the deployment's own); set that instead")
      .optional()
      .describe("removed; see NATS_NAMESPACE"),
    LOG_LEVEL: logLevel,
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000).describe("how long in-flight calls may run after SIGTERM"),
    OUTBOX_BATCH_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(5_000)
      .default(50)
      .describe("how long the outbox relay waits after a producer's nudge for more events to publish as one batch"),
    CONSUMER_BATCH_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(100)
      .describe("most events a durable consumer applies together in one transaction (one inbox insert, one commit)"),
    CONSUMER_BATCH_WAIT_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000)
      .default(2)
      .describe(
        "how long a durable consumer waits for a batch that is not full to fill, in ms (0: it applies what has arrived at once)",
      ),
  } as const;
}

export interface ServiceContext<C> {
  name: string;
  config: C;
  log: Logger;
  pool: Pool;
  nc: NatsConnection;
  /**
   * This role's outbox relay: `flush()` publishes committed events now and waits (OutboxRelay.flush);
   * `nudge()` says rows were committed, without waiting (OutboxRelay.nudge).
   */
  outbox: Pick<OutboxRelay, "flush" | "nudge">;
  /**
   * A pool on this service's database whose commits do not wait for the WAL flush (kit/pg createPool,
   * `synchronousCommit: false`), for writes whose loss in a Postgres crash is safe by design; closed
   * with the service, after its background work. `max` is the service's default size, which
   * `<SERVICE>_PG_RELAXED_POOL_MAX` overrides.
   */
  relaxedPool(max: number): Pool;
}

export interface BackgroundWork {
  stop(): Promise<void>;
}

/**
 * A role's housekeeping (prunes, reconciliations): `task` every `everyMs`, and at once with `atStart`.
 * One run at a time: a turn that comes while the last run is still going is skipped. A run that fails is
 * logged as a warning ("<what> failed") and tried again at the next turn. The timer keeps no process
 * alive; stop() ends it and waits for a run under way. Return it from the role's `background`.
 */
export function every(
  everyMs: number,
  what: string,
  log: Logger,
  task: () => Promise<unknown>,
  options: { atStart?: boolean } = {},
): BackgroundWork {
  let running: Promise<void> | undefined;
  const turn = () => {
    running ??= task()
      .then(
        () => undefined,
        (err) => log.warn({ err }, `${what} failed`),
      )
      .finally(() => {
        running = undefined;
      });
  };
  if (options.atStart) turn();
  const timer = setInterval(turn, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** A service's settings: the kit's own (serviceEnv) and the service's (its `env`). */
export type ServiceConfig<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>> & BaseConfig;

/**
 * A service's definition. Its parts (stores, clients, outbound HTTP, worker pools) are built once per
 * start by `deps`, which every service keeps in its `src/deps.ts`; the routes and the background work
 * receive what it built. A definition without `deps` gets the context itself as its parts.
 */
export interface ServiceDefinition<S extends z.ZodRawShape, D = ServiceContext<ServiceConfig<S>>> {
  /** Short name: catalog, execution, billing, identity, content, webhooks. */
  name: string;
  defaultPort: number;
  /** The service's own variables. */
  env?: S;
  /** Folder of this service's SQL migrations. */
  migrationsDir: string;
  /** The gRPC services this process serves (for health entries). */
  services: DescService[];
  /**
   * Builds the role's parts, once per start: after NATS and the outbox relay, before the gRPC server.
   * When the parts have a `close()`, it runs on shutdown after the background work has stopped, and
   * before the outbox relay, NATS and the pools close: what `deps` opens, its `close()` closes.
   */
  deps?: (ctx: ServiceContext<ServiceConfig<S>>) => D | Promise<D>;
  routes: (router: ConnectRouter, deps: D) => void;
  /**
   * Whether the role consumes events (a durable consumer): then its readiness needs NATS too. A role
   * that only publishes keeps serving while NATS is away (its outbox holds the events).
   */
  consumesEvents?: boolean;
  /**
   * false for a role that writes no events to its outbox (identity, webhooks): its relay still runs (a
   * NOTIFY or a nudge wakes it at once) but its idle safety-net poll slows down to every 5 minutes
   * (IDLE_POLL_MAX_QUIET_MS) instead of 10 s, since there is nothing for it to find.
   */
  writesEvents?: boolean;
  /**
   * Consumers, timers: started after the server listens, stopped (in the order returned) before the
   * parts close and the pool closes.
   */
  background?: (deps: D, ctx: ServiceContext<ServiceConfig<S>>) => Promise<BackgroundWork[]>;
}

/** The parts a role's `deps` built, closed on shutdown when they say how (ServiceDefinition.deps). */
async function closeParts(parts: unknown): Promise<void> {
  const close = (parts as { close?: unknown } | null)?.close;
  if (typeof close === "function") await close.call(parts);
}

export interface BaseConfig {
  PORT: number;
  HOST: string;
  DATABASE_URL: string;
  NATS_URL: string;
  NATS_CREDS_FILE?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_CA_FILE?: string;
  NATS_STREAM_REPLICAS: number;
  NATS_STREAM_MAX_AGE_S: number;
  NATS_STREAM_MAX_BYTES: number;
  NATS_NAMESPACE: string;
  LOG_LEVEL: string;
  SHUTDOWN_GRACE_MS: number;
  OUTBOX_BATCH_DELAY_MS: number;
  CONSUMER_BATCH_MAX: number;
  CONSUMER_BATCH_WAIT_MS: number;
}

export interface RunningService {
  server: RpcServer;
  log: Logger;
  stop(): Promise<void>;
}

/** The service's config, logger and database (created if missing, migrated): what a start does first. */
async function prepare<S extends z.ZodRawShape, D>(def: ServiceDefinition<S, D>, env: NodeJS.ProcessEnv) {
  const base = serviceEnv(def.name, def.defaultPort);
  const config = loadConfig({ ...base, ...(def.env ?? {}) } as typeof base & S, env) as unknown as ServiceConfig<S>;
  const log = createLogger(def.name, config.LOG_LEVEL);
  const override = (config as Record<string, unknown>)[`${def.name.toUpperCase()}_DATABASE_URL`] as string | undefined;
  const databaseUrl = serviceDatabaseUrl(def.name, config.DATABASE_URL, override);

  const poolMax = (config as Record<string, unknown>)[`${def.name.toUpperCase()}_PG_POOL_MAX`] as number;
  await ensureDatabase(databaseUrl, log);
  const pool = createPool(databaseUrl, poolMax);
  try {
    await migrate(
      pool,
      [
        { dir: kitMigrationsDir, namespace: "kit" },
        { dir: def.migrationsDir, namespace: def.name },
      ],
      log,
    );
  } catch (err) {
    await pool.end();
    throw err;
  }
  const relaxedPoolMax = (config as Record<string, unknown>)[`${def.name.toUpperCase()}_PG_RELAXED_POOL_MAX`] as
    | number
    | undefined;
  return { config, log, databaseUrl, pool, relaxedPoolMax };
}

/**
 * Creates the service's database if missing and applies its migrations, then returns: `toolport
 * --roles=<service> --migrate`, a Kubernetes init container's job. A start does the same first (under the
 * same advisory lock), so running both is safe.
 */
export async function migrateService<S extends z.ZodRawShape, D>(
  def: ServiceDefinition<S, D>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { pool, log } = await prepare(def, env);
  await pool.end();
  log.info("migrations applied");
}

export async function startService<S extends z.ZodRawShape, D>(
  def: ServiceDefinition<S, D>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningService> {
  const { config, log, databaseUrl, pool, relaxedPoolMax } = await prepare(def, env);
  const nc = await connectNats(config.NATS_URL, def.name, log, {
    credsFile: config.NATS_CREDS_FILE,
    nkeySeedFile: config.NATS_NKEY_SEED_FILE,
    caFile: config.NATS_CA_FILE,
  });
  setNatsNamespace(config.NATS_NAMESPACE);
  setConsumerBatching({ max: config.CONSUMER_BATCH_MAX, waitMs: config.CONSUMER_BATCH_WAIT_MS });
  await ensureStream(nc, {
    replicas: config.NATS_STREAM_REPLICAS,
    maxAgeSeconds: config.NATS_STREAM_MAX_AGE_S,
    maxBytes: config.NATS_STREAM_MAX_BYTES,
  });
  const relay = new OutboxRelay({
    pool,
    nc,
    log,
    nudgeDelayMs: config.OUTBOX_BATCH_DELAY_MS,
    role: def.name,
    ...(def.writesEvents === false ? { idlePollMaxMs: IDLE_POLL_MAX_QUIET_MS } : {}),
  });
  await relay.start();

  const relaxedPools: Pool[] = [];
  const ctx: ServiceContext<typeof config> = {
    name: def.name,
    config,
    log,
    pool,
    nc,
    outbox: relay,
    relaxedPool(max) {
      const extra = createPool(databaseUrl, relaxedPoolMax ?? max, { synchronousCommit: false });
      relaxedPools.push(extra);
      return extra;
    },
  };
  const parts = def.deps ? await def.deps(ctx) : (ctx as D);
  const server = await startRpcServer({
    name: def.name,
    host: config.HOST,
    port: config.PORT,
    log,
    routes: (router) => def.routes(router, parts),
    serviceNames: def.services.map((s) => s.typeName),
  });
  const work = (await def.background?.(parts, ctx)) ?? [];
  const databaseUp = async () => (await pool.query("SELECT 1")).rowCount === 1;
  // A PING answered by the server: a connection that is reconnecting (or closed) fails it.
  const natsUp = async () => !nc.isClosed() && (await nc.flush().then(() => true));
  server.health.addCheck(DATABASE_CHECK, databaseUp);
  server.health.addCheck(NATS_CHECK, natsUp);
  server.health.addCheck(READINESS, async () => {
    const [db, nats] = await Promise.all([databaseUp(), def.consumesEvents ? natsUp() : true]);
    return db && nats;
  });
  server.health.setAll(ServingStatus.SERVING);
  log.info({ port: server.port }, `${def.name} service listening`);

  return {
    server,
    log,
    async stop() {
      server.health.setAll(ServingStatus.NOT_SERVING);
      await server.close(config.SHUTDOWN_GRACE_MS);
      for (const w of work) await w.stop();
      await closeParts(parts);
      await relay.stop();
      await nc.drain().catch(() => {});
      await Promise.all(relaxedPools.map((p) => p.end()));
      await pool.end();
    },
  };
}

/** main.ts of a service: start, and stop cleanly on SIGTERM. */
export async function runService<S extends z.ZodRawShape, D>(def: ServiceDefinition<S, D>): Promise<void> {
  const running = await startService(def);
  const stopHeapWatch = watchHeap(running.log);
  onShutdown(running.log, () => {
    stopHeapWatch();
    return running.stop();
  });
}

/**
 * A service as a role (roles.ts). Each start builds its own parts (`deps`), so nothing is shared
 * between two starts of one definition.
 */
export function serviceRole<S extends z.ZodRawShape, D>(def: ServiceDefinition<S, D>): Role {
  const { name, defaultPort } = def;
  return {
    name,
    kind: "service",
    defaultPort,
    portVariable: `${name.toUpperCase()}_PORT`,
    async start(env) {
      const running = await startService(def, env);
      return { name, kind: "service", port: running.server.port, log: running.log, stop: () => running.stop() };
    },
    migrate: (env) => migrateService(def, env),
  };
}
