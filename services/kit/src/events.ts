/**
 * Events on NATS JetStream. Postgres is the source of truth: a producer writes each event to its
 * outbox table in the same transaction as its state change (`enqueueEvent`), and the relay
 * publishes it with `Nats-Msg-Id` = event id, so NATS being down delays events but loses none.
 * Consumers are durable, ack explicitly and record each applied event in an inbox table in the same
 * transaction as its effect, so a redelivery changes nothing. Under load a consumer applies the
 * messages that piled up meanwhile together in one transaction (group commit), so a handler's
 * transaction may hold other events' effects too. Poison messages are terminated and kept in
 * `dead_letters`, never retried forever or dropped silently. With tracing on, an event stays in the trace
 * of the work that wrote it: the row keeps that context, the relay's publish is a producer span in it, and
 * each consumer's handling a consumer span under the publish (W3C headers on the message).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import {
  AckPolicy,
  type Authenticator,
  type ConnectionOptions,
  type ConsumerMessages,
  connect,
  credsAuthenticator,
  DeliverPolicy,
  type JetStreamClient,
  type JsMsg,
  type NatsConnection,
  headers as natsHeaders,
  nkeyAuthenticator,
  StorageType,
  type StreamConfig,
} from "nats";
import { acceptRequestId, currentRequestId, REQUEST_ID_HEADER, runInScope } from "./context.js";
import type { Logger } from "./logger.js";
import { consumerPending, consumerRedeliveries, deadLetters, outboxLagSeconds } from "./metrics.js";
import type { Pool, PoolClient } from "./pg.js";
import {
  beginSpan,
  contextFromHeaders,
  contextFromStored,
  inSpan,
  outboxTraceContext,
  SpanKind,
  traceHeaders,
} from "./tracing.js";

/**
 * Where one deployment's events live on a NATS server: its stream, and the subjects on the wire. Code
 * names subjects without the namespace (Subjects); the relay adds it when publishing, a consumer adds it to
 * its filter and takes it off what it receives. Deployments or test stacks sharing one server each give
 * a namespace (NATS_NAMESPACE), so each has a stream and subjects of its own: none receives another's
 * events, and a new one does not replay another's history. Without one: stream TOOLPORT, `toolport.>`.
 */
export interface NatsNames {
  stream: string;
  /** The subject on the wire for a subject of Subjects (or a filter with wildcards). */
  wire(subject: string): string;
  /** The subject as code names it, for a subject received on the wire. */
  logical(wireSubject: string): string;
}

/** Letters, digits, _ and - (a NATS subject token and a stream name's part); not `toolport`, whose subjects would overlap the default stream's. */
export const NATS_NAMESPACE_PATTERN = /^(?!toolport$)[A-Za-z0-9_-]{0,32}$/;

export function natsNames(namespace = ""): NatsNames {
  if (!NATS_NAMESPACE_PATTERN.test(namespace))
    throw new Error(`NATS namespace ${JSON.stringify(namespace)}: up to 32 letters, digits, _ and -, and not "toolport"`);
  if (!namespace) return { stream: "TOOLPORT", wire: (s) => s, logical: (s) => s };
  const prefix = `${namespace}.`;
  return {
    stream: `TOOLPORT_${namespace}`,
    wire: (s) => prefix + s,
    logical: (s) => (s.startsWith(prefix) ? s.slice(prefix.length) : s),
  };
}

let names = natsNames();

/** This process's namespace (NATS_NAMESPACE). Set once by startService, before the stream, relay and consumers. */
export function setNatsNamespace(namespace: string): void {
  names = natsNames(namespace);
}

/** The stream and wire subjects of this process's namespace. */
export function currentNatsNames(): NatsNames {
  return names;
}

/** Every subject the system publishes, named once. */
export const Subjects = {
  executionCompleted: "toolport.execution.completed",
  executionFailed: "toolport.execution.failed",
  workflowCompleted: "toolport.workflow.completed",
  workflowFailed: "toolport.workflow.failed",
  spendLimitApproaching: "toolport.spend.limit_approaching",
  catalogToolChanged: "toolport.catalog.tool.changed",
} as const;

/**
 * How a process proves itself to NATS beyond what its URL carries (user and password, or a token), and
 * which CA it trusts: file paths, so a Kubernetes Secret mounted as a volume provides them.
 */
export interface NatsAuth {
  /** A `.creds` file (a user JWT and its NKey seed), as `nsc` writes it. */
  credsFile?: string;
  /** A file holding an NKey seed (`SU...`), for a server whose users are NKeys. */
  nkeySeedFile?: string;
  /** PEM file of the CA the server's certificate is checked against; TLS is then required. */
  caFile?: string;
}

/** The connection options a NatsAuth gives: an authenticator and TLS, each read from its file at connect time. */
export function natsAuthOptions(auth: NatsAuth = {}): Pick<ConnectionOptions, "authenticator" | "tls"> {
  if (auth.credsFile && auth.nkeySeedFile) throw new Error("NATS: give a creds file or an NKey seed file, not both");
  const options: Pick<ConnectionOptions, "authenticator" | "tls"> = {};
  // Read on every (re)connect, so a rotated file mounted from a Secret is taken without a restart.
  const file = (path: string) => () => new Uint8Array(readFileSync(path));
  let authenticator: Authenticator | undefined;
  if (auth.credsFile) authenticator = credsAuthenticator(file(auth.credsFile));
  if (auth.nkeySeedFile) {
    const read = file(auth.nkeySeedFile);
    // A seed file may end with a newline; the seed itself is the first line.
    authenticator = nkeyAuthenticator(() => new TextEncoder().encode(new TextDecoder().decode(read()).trim()));
  }
  if (authenticator) options.authenticator = authenticator;
  if (auth.caFile) options.tls = { caFile: auth.caFile };
  return options;
}

export async function connectNats(url: string, name: string, log: Logger, auth: NatsAuth = {}): Promise<NatsConnection> {
  // A start waits for NATS as long as it takes: say so, and keep saying so, rather than hang in silence.
  const servers = url.replace(/\/\/[^@/]*@/g, "//"); // no credentials in the log
  const started = Date.now();
  const waiting = setInterval(() => {
    log.warn({ nats: servers, waited_s: Math.round((Date.now() - started) / 1000) }, "still waiting for NATS");
  }, 10_000);
  waiting.unref();
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: url,
      name,
      ...natsAuthOptions(auth),
      // Keep trying for as long as the process lives: the outbox holds events meanwhile.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    });
  } finally {
    clearInterval(waiting);
  }
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect" || status.type === "error") {
        log.warn({ nats: status.type, data: String(status.data) }, "nats connection status");
      }
    }
  })().catch(() => {});
  return nc;
}

/**
 * The stream's size and safety, from configuration (NATS_STREAM_*): how many servers keep a copy, and
 * how old or how large it may grow before the oldest events go. The defaults (one copy, no limit) suit one
 * server; a cluster wants 3 copies, and any long-lived server a limit.
 */
export interface StreamLimits {
  /** Copies on a NATS cluster (1 to 5; more than the cluster's servers is refused by NATS). */
  replicas?: number;
  /** Oldest event kept, in seconds (0: no limit). */
  maxAgeSeconds?: number;
  /** Largest the stream may grow, in bytes (-1: no limit). */
  maxBytes?: number;
}

function streamSettings(limits: StreamLimits): Pick<StreamConfig, "num_replicas" | "max_age" | "max_bytes"> {
  return {
    num_replicas: limits.replicas ?? 1,
    max_age: (limits.maxAgeSeconds ?? 0) * 1_000_000_000, // nanoseconds
    max_bytes: limits.maxBytes ?? -1,
  };
}

/**
 * Creates the stream when absent, with `limits`; an existing stream whose replicas or limits differ is
 * updated to them (its subjects and everything else left as they are), so changing a setting and
 * restarting applies it.
 */
export async function ensureStream(nc: NatsConnection, limits: StreamLimits = {}): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const wanted = streamSettings(limits);
  let existing: StreamConfig | undefined;
  try {
    existing = (await jsm.streams.info(names.stream)).config;
  } catch {
    try {
      await jsm.streams.add({
        name: names.stream,
        subjects: [names.wire("toolport.>")],
        storage: StorageType.File,
        duplicate_window: 2 * 60 * 1_000_000_000, // 2 minutes, in nanoseconds
        ...wanted,
      });
    } catch (err) {
      // Another process created it meanwhile.
      if (!String((err as Error).message).includes("already in use")) throw err;
    }
    return;
  }
  if (
    existing.num_replicas !== wanted.num_replicas ||
    existing.max_age !== wanted.max_age ||
    (existing.max_bytes ?? -1) !== wanted.max_bytes
  ) {
    await jsm.streams.update(names.stream, { ...existing, ...wanted });
  }
}

/**
 * One outbox row as every service writes it. The kit owns the outbox table: `outboxRow` builds a row and
 * `outboxInsert` writes rows, and nothing else names the table's columns.
 */
export interface OutboxRow {
  id: string;
  subject: string;
  /** The event message, protobuf-encoded. */
  payload: Buffer;
  requestId: string | null;
  /** The trace the event was written in (tracing.ts outboxTraceContext), null when tracing is off. */
  traceContext: string | null;
}

/** An event's outbox row, in the caller's scope (its request id and trace context travel with it). */
export function outboxRow<Desc extends DescMessage>(
  subject: string,
  schema: Desc,
  message: MessageShape<Desc>,
  id: string = randomUUID(),
): OutboxRow {
  return {
    id,
    subject,
    payload: Buffer.from(toBinary(schema, message)),
    requestId: currentRequestId() ?? null,
    traceContext: outboxTraceContext(),
  };
}

/**
 * The statement that writes `rows` to the outbox, its parameters numbered from `$first`: on its own, or as
 * one part (a CTE) of a caller's single statement that writes its own row and its event together, so both
 * commit at once in one round trip. The relay publishes rows in the order given. The caller wakes the
 * relay after its commit (a NOTIFY toolport_outbox, or the relay's `nudge` in process).
 */
export function outboxInsert(
  rows: OutboxRow[],
  first = 1,
  options: {
    /**
     * A condition on `o.id` (the event's id) that the caller's statement decides: only the events it holds
     * for are written (for example only those of the rows its own UPDATE moved).
     */
    only?: string;
  } = {},
): { sql: string; values: unknown[] } {
  const [ids, subjects, payloads, requestIds, traces] = [first, first + 1, first + 2, first + 3, first + 4];
  return {
    sql: `INSERT INTO outbox (id, subject, payload, request_id, trace_context)
     SELECT o.id, o.subject, o.payload, o.request_id, o.trace_context::jsonb
       FROM unnest($${ids}::uuid[], $${subjects}::text[], $${payloads}::bytea[], $${requestIds}::text[], $${traces}::text[])
            WITH ORDINALITY AS o(id, subject, payload, request_id, trace_context, n)${
              options.only
                ? `
      WHERE ${options.only}`
                : ""
            }
      ORDER BY o.n`,
    values: [
      rows.map((r) => r.id),
      rows.map((r) => r.subject),
      rows.map((r) => r.payload),
      rows.map((r) => r.requestId),
      rows.map((r) => r.traceContext),
    ],
  };
}

/** Writes an event to the outbox inside the caller's transaction. Returns the event id. */
export async function enqueueEvent<Desc extends DescMessage>(
  client: PoolClient,
  subject: string,
  schema: Desc,
  message: MessageShape<Desc>,
  eventId: string = randomUUID(),
): Promise<string> {
  const insert = outboxInsert([outboxRow(subject, schema, message, eventId)]);
  await client.query(insert.sql, insert.values);
  await client.query("SELECT pg_notify('toolport_outbox', '')");
  return eventId;
}

/**
 * Writes many events of one subject to the outbox inside the caller's transaction, in one statement
 * and one notification however many there are (a service of 500 tools changes 500 at once); the
 * relay publishes them in the order given. Returns their ids.
 */
export async function enqueueEvents<Desc extends DescMessage>(
  client: PoolClient,
  subject: string,
  schema: Desc,
  events: { eventId: string; message: MessageShape<Desc> }[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const insert = outboxInsert(events.map((e) => outboxRow(subject, schema, e.message, e.eventId)));
  await client.query(insert.sql, insert.values);
  await client.query("SELECT pg_notify('toolport_outbox', '')");
  return events.map((e) => e.eventId);
}

export interface RelayOptions {
  pool: Pool;
  nc: NatsConnection;
  log: Logger;
  /** How often to look for unpublished events when no notification arrives. */
  pollMs?: number;
  batchSize?: number;
  /** How long a nudged relay waits for more rows before it publishes (nudge); default 50 ms. */
  nudgeDelayMs?: number;
  /** The role whose outbox this is, for metrics. */
  role?: string;
}

/**
 * Publishes outbox rows in order. Rows are claimed with SKIP LOCKED so several replicas can run a
 * relay; a failed publish leaves the row for the next round, and JetStream's duplicate window plus
 * the consumers' inboxes absorb a row published twice (a crash between publish and mark).
 */
const PRUNE_EVERY_MS = 60_000;
/** How long a relay's claim on a batch lasts: far longer than a batch's publishes (2 s timeout each, in parallel). */
const CLAIM_LEASE_SECONDS = 30;
/** How often a relay whose LISTEN connection broke tries to listen again (it polls meanwhile). */
const LISTEN_RETRY_MS = 5_000;

export class OutboxRelay {
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly js: JetStreamClient;
  private listener: PoolClient | undefined;
  /** When a relay without a LISTEN connection tries to listen again. */
  private listenAgainAt = 0;
  private prunedAt = 0;
  private nudgeTimer: NodeJS.Timeout | undefined;
  /** A NOTIFY arrived since the current batch started (rows committed after its SELECT may wait). */
  private notified = false;
  /** Batches started so far, and flush() callers waiting for a batch started after their call. */
  private batchesStarted = 0;
  private readonly flushWaiters = new Set<{ after: number; done: (ok: boolean) => void }>();

  constructor(private readonly options: RelayOptions) {
    this.js = options.nc.jetstream();
  }

  async start(): Promise<void> {
    await this.listen();
    this.loop = this.run();
  }

  /** LISTENs for new rows; when the connection breaks (Postgres restarted), the relay polls and listens again. */
  private async listen(): Promise<void> {
    this.listenAgainAt = Date.now() + LISTEN_RETRY_MS;
    let client: PoolClient | undefined;
    let broken = false;
    const drop = () => {
      // After stop() the connection is stop()'s to release.
      if (broken || !client || (this.stopped && this.listener === client)) return;
      broken = true;
      if (this.listener === client) this.listener = undefined;
      client.release(true);
    };
    try {
      client = await this.options.pool.connect();
      client.on("notification", () => {
        this.notified = true;
        this.wake?.();
      });
      client.on("error", (err) => {
        this.options.log.warn({ err: err.message }, "outbox relay: LISTEN connection lost, polling until it is back");
        drop();
      });
      await client.query("LISTEN toolport_outbox");
      if (!broken) this.listener = client;
    } catch (err) {
      // Polling still works without notifications.
      this.options.log.warn({ err: (err as Error).message }, "outbox relay: LISTEN failed, polling only");
      drop();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.nudgeTimer);
    this.wake?.();
    await this.loop;
    for (const waiter of this.flushWaiters) waiter.done(false);
    this.flushWaiters.clear();
    if (this.listener) {
      await this.listener.query("UNLISTEN toolport_outbox").catch(() => {});
      this.listener.release();
    }
  }

  /**
   * Publishes now what this process committed to the outbox before the call, and resolves once a batch
   * that started after the call has drained the outbox (true), or after timeoutMs (false: the rows stay
   * for the next round, nothing is lost). A producer whose events other services act on (catalog: tool
   * changes that empty execution's tool cache) awaits it before answering, so a change is published
   * before its caller can make the next request. Rows another replica's relay holds at that moment are
   * published by that replica, not awaited here.
   */
  flush(timeoutMs = 2_000): Promise<boolean> {
    if (this.stopped || !this.loop) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter = { after: this.batchesStarted, done: (ok: boolean) => resolve(ok) };
      const timer = setTimeout(() => {
        this.flushWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      waiter.done = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.flushWaiters.add(waiter);
      this.notified = true;
      this.wake?.();
    });
  }

  /**
   * Tells the relay that rows were just committed, without waiting: a producer in this process uses it
   * instead of a NOTIFY (which costs Postgres and this process a message per commit). Relays of other
   * processes still find those rows on their next poll if this one is gone.
   */
  nudge(): void {
    this.notified = true;
    // Rows committed within nudgeDelayMs of each other go out in one batch: one claim, one mark and one
    // round of acks for all, instead of per call at moderate load. flush() does not wait for this.
    if (this.nudgeTimer) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.wake?.();
    }, this.options.nudgeDelayMs ?? 50);
    this.nudgeTimer.unref();
  }

  private async run(): Promise<void> {
    const pollMs = this.options.pollMs ?? 1000;
    let backoffMs = 0;
    while (!this.stopped) {
      let published = 0;
      if (!this.listener && Date.now() >= this.listenAgainAt) await this.listen();
      this.notified = false;
      const batch = ++this.batchesStarted;
      try {
        published = await this.publishBatch();
        backoffMs = 0;
        if (published < (this.options.batchSize ?? 100)) {
          // Drained: every row committed before this batch started is out (or held by another relay).
          for (const waiter of this.flushWaiters) {
            if (waiter.after < batch) {
              this.flushWaiters.delete(waiter);
              waiter.done(true);
            }
          }
        }
      } catch (err) {
        backoffMs = Math.min(Math.max(backoffMs * 2, 250), 5000);
        this.options.log.warn({ err: (err as Error).message, retry_in_ms: backoffMs }, "outbox relay: publish failed");
      }
      if (backoffMs === 0) {
        // More may be waiting: a full batch, rows committed during this one (their NOTIFY arrived
        // meanwhile), or, without LISTEN, anything after a non-empty batch. Otherwise an empty re-poll
        // would only cost three round trips: wait for the next NOTIFY.
        const full = published >= (this.options.batchSize ?? 100);
        if (full || this.notified || (published > 0 && !this.listener)) continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs || pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /**
   * Publishes one batch; returns how many rows it published. Throws on the first failure.
   * Two statements, no transaction: a claim (a lease on up to batchSize unpublished rows, in seq order,
   * skipping rows another relay holds), then, after the publishes, one update that marks the batch and
   * lets go of the claim. A relay that dies in between leaves its rows to whichever relay comes after
   * the lease; a row published twice that way is absorbed by JetStream's duplicate window and the
   * consumers' inboxes.
   */
  async publishBatch(): Promise<number> {
    const { pool } = this.options;
    const claimed = await pool.query<{
      seq: string;
      id: string;
      subject: string;
      payload: Buffer;
      request_id: string | null;
      trace_context: Record<string, string> | null;
      created_at: Date;
    }>({
      name: "outbox_claim",
      text: `UPDATE outbox o SET claimed_until = now() + make_interval(secs => $2::int)
               FROM (SELECT seq FROM outbox
                      WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                      ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) c
              WHERE o.seq = c.seq
          RETURNING o.seq::text, o.id, o.subject, o.payload, o.request_id, o.trace_context, o.created_at`,
      values: [this.options.batchSize ?? 100, CLAIM_LEASE_SECONDS],
    });
    // RETURNING keeps no order: publish in seq order.
    const rows = claimed.rows.sort((x, y) => (BigInt(x.seq) < BigInt(y.seq) ? -1 : 1));
    if (rows.length === 0) {
      // Published rows older than a week are no longer needed for anything. Pruning scans the table,
      // so it runs at most once a minute, and only when the relay is idle.
      if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
        await pool.query("DELETE FROM outbox WHERE published_at < now() - interval '7 days'");
        this.prunedAt = Date.now();
      }
      return 0;
    }
    // Every publish of the batch in flight at once, one wait for all their acks (not one round trip
    // per row). Rows are marked published only up to the first failure, so nothing after a failed
    // row counts as published before it; those that did reach the stream are sent again next round
    // and JetStream's duplicate window (same Nats-Msg-Id) absorbs them.
    // A row written inside a trace is published in it: a producer span under the writer's, whose context
    // the message carries to the consumers (traceparent, tracestate headers).
    const acks = await Promise.allSettled(
      rows.map(async (row) => {
        const h = natsHeaders();
        if (row.request_id) h.set(REQUEST_ID_HEADER, row.request_id);
        const span = row.trace_context
          ? beginSpan(`${row.subject} publish`, {
              kind: SpanKind.PRODUCER,
              attributes: {
                "messaging.system": "nats",
                "messaging.destination.name": row.subject,
                "messaging.message.id": row.id,
              },
              parent: contextFromStored(row.trace_context),
            })
          : undefined;
        if (span) for (const [name, value] of Object.entries(traceHeaders(span.context))) h.set(name, value);
        try {
          const ack = await this.js.publish(names.wire(row.subject), row.payload, { msgID: row.id, headers: h, timeout: 2000 });
          span?.end();
          return ack;
        } catch (err) {
          span?.end(err);
          throw err;
        }
      }),
    );
    const firstFailure = acks.findIndex((ack) => ack.status === "rejected");
    const publishedCount = firstFailure < 0 ? rows.length : firstFailure;
    // One statement for the whole batch: published rows marked, failed ones noted, every claim released.
    await pool.query({
      name: "outbox_mark",
      text: `UPDATE outbox o
                SET published_at = CASE WHEN f.published THEN now() END,
                    attempts = o.attempts + CASE WHEN f.published OR f.error IS NOT NULL THEN 1 ELSE 0 END,
                    last_error = coalesce(f.error, o.last_error),
                    claimed_until = NULL
               FROM unnest($1::bigint[], $2::boolean[], $3::text[]) AS f(seq, published, error)
              WHERE o.seq = f.seq`,
      values: [
        rows.map((row) => row.seq),
        rows.map((_, i) => i < publishedCount),
        rows.map((_, i) => {
          const ack = acks[i];
          return ack?.status === "rejected" ? String((ack.reason as Error)?.message).slice(0, 500) : null;
        }),
      ],
    });
    const now = Date.now();
    for (const row of rows.slice(0, publishedCount))
      outboxLagSeconds.observe({ role: this.options.role ?? "unknown" }, Math.max(0, now - row.created_at.getTime()) / 1000);
    if (firstFailure >= 0) throw (acks[firstFailure] as PromiseRejectedResult).reason;
    return publishedCount;
  }
}

/** Thrown by a handler for a message that can never be applied: it is terminated at once. */
export class PoisonMessageError extends Error {
  override name = "PoisonMessageError";
}

export interface EventContext {
  /**
   * The transaction the effect must be written in (the inbox row is already in it). It may also
   * carry other events of the same batch: no transaction-wide state (SET LOCAL, COMMIT, ...) here.
   */
  client: PoolClient;
  eventId: string;
  subject: string;
}

/** An event new to a consumer's inbox, as `applyBatch` receives it. */
export interface FreshEvent<Desc extends DescMessage> {
  event: MessageShape<Desc>;
  eventId: string;
  subject: string;
}

export interface ConsumerOptions<Desc extends DescMessage> {
  nc: NatsConnection;
  pool: Pool;
  log: Logger;
  /** Durable consumer name: one per service and purpose, e.g. `catalog-reliability`. */
  durable: string;
  /**
   * The subject filter, wildcards allowed (`toolport.execution.*`). One filter per consumer: the
   * nats-server Debian ships (2.9) has no multi-subject filters.
   */
  subject: string;
  schema: Desc;
  /** The effect of one event, in the transaction that holds its inbox row. Optional with applyStatement or applyBatch. */
  handle?: (event: MessageShape<Desc>, ctx: EventContext) => Promise<void>;
  /**
   * The effect of several events at once, written with `client` in the transaction that holds their inbox
   * rows: `fresh` are the events new to the inbox (a redelivered event is not among them), in the order
   * received. A batch of first deliveries costs one call: BEGIN, the inbox insert, the consumer's own
   * statements and COMMIT (applyStatement does the same in one statement: less time per lone event, but
   * its effect is an SQL fragment). A redelivery, and the one-by-one replay of a batch that failed, call
   * it with one event.
   * The transaction may hold other consumers' work of the same batch: no transaction-wide state here.
   */
  applyBatch?: (client: PoolClient, fresh: FreshEvent<Desc>[]) => Promise<void>;
  /**
   * For a consumer whose effect is rows it inserts: the effect as ONE statement that also writes the
   * inbox rows, so a batch, or a lone event, costs one round trip and no explicit transaction (a single
   * statement is atomic). `sql` follows `WITH fresh AS (<the inbox insert> RETURNING event_id)`; `$1` is
   * the JSON array of `row()` results (null ones left out), each carrying its `event_id`; the statement
   * must write only rows whose event_id is in `fresh`, so a redelivered event changes nothing.
   * Redeliveries and the one-by-one replay of a batch that failed (a poison event fails its batch, and
   * the replay terminates just that one) run the same statement for the one event, unless `handle` is
   * given too, in which case they run `handle`, which must then have exactly the same effect.
   * A consumer whose effect reads better as a typed store function gives `applyBatch` instead.
   */
  applyStatement?: {
    sql: string;
    row: (event: MessageShape<Desc>, eventId: string) => Record<string, unknown> | null;
  };
  /** Deliveries before a failing message is declared poison. */
  maxDeliver?: number;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export async function startConsumer<Desc extends DescMessage>(options: ConsumerOptions<Desc>): Promise<RunningConsumer> {
  const { nc, subject, log } = options;
  if (!options.handle && !options.applyStatement && !options.applyBatch)
    throw new Error(`consumer ${options.durable}: give handle, applyBatch or applyStatement`);
  const { durable } = options;
  const maxDeliver = options.maxDeliver ?? 8;
  const jsm = await nc.jetstreamManager();
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: names.wire(subject),
    ack_wait: 30 * 1_000_000_000,
    // One more than our own limit, so we get the chance to record the poison message ourselves.
    max_deliver: maxDeliver + 1,
  };
  try {
    await jsm.consumers.info(names.stream, durable);
    await jsm.consumers.update(names.stream, durable, { filter_subject: config.filter_subject, max_deliver: maxDeliver + 1 });
  } catch {
    await jsm.consumers.add(names.stream, config);
  }
  const consumer = await nc.jetstream().consumers.get(names.stream, durable);
  let messages: ConsumerMessages | undefined;
  let stopped = false;

  // The reader moves messages from NATS into a bounded backlog; the applier takes what has piled up
  // (up to BATCH_MAX) and applies it in one transaction (group commit). When idle, a message is
  // applied as soon as it arrives; under load, those that arrive while one batch is being applied go
  // together in the next, so the per-transaction cost is shared.
  const backlog: JsMsg[] = [];
  let readerDone = false;
  let wakeApplier: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  const reader = (async () => {
    while (!stopped) {
      try {
        messages = await consumer.consume({ max_messages: BATCH_MAX * 2 });
        for await (const msg of messages) {
          consumerPending.set({ consumer: durable }, msg.info.pending);
          if (msg.info.deliveryCount > 1) consumerRedeliveries.inc({ consumer: durable });
          while (backlog.length >= BACKLOG_MAX) await new Promise<void>((resolve) => (wakeReader = resolve));
          backlog.push(msg);
          wakeApplier?.();
        }
      } catch (err) {
        if (stopped) break;
        log.warn({ err: (err as Error).message, durable }, "consumer interrupted, resuming");
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })().finally(() => {
    readerDone = true;
    wakeApplier?.();
  });
  const applier = (async () => {
    // On stop, what was already received is still applied (and acked) before the loop ends.
    while (backlog.length > 0 || !readerDone) {
      if (backlog.length === 0) {
        await new Promise<void>((resolve) => (wakeApplier = resolve));
        wakeApplier = undefined;
        continue;
      }
      const batch = backlog.splice(0, BATCH_MAX);
      wakeReader?.();
      await applyBatch(options, batch, maxDeliver);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await messages?.close();
      wakeReader?.();
      await reader;
      await applier;
    },
  };
}

/** Messages applied together in one transaction, at most. */
const BATCH_MAX = 100;
/** Messages received but not yet applied, at most: beyond it the reader waits (memory stays bounded). */
const BACKLOG_MAX = BATCH_MAX * 2;

interface Decoded<Desc extends DescMessage> {
  msg: JsMsg;
  event: MessageShape<Desc>;
  eventId: string;
  requestId: string;
}

/** A received message's subject as code names it (without the namespace). */
const subjectOf = (msg: JsMsg) => names.logical(msg.subject);

const eventIdOf = (msg: JsMsg) => msg.headers?.get("Nats-Msg-Id") || `${msg.info.stream}:${msg.seq}`;

/** The trace context a message's publisher sent (traceparent), or undefined when it sent none (tracing off). */
function publishedIn(msg: JsMsg) {
  return msg.headers?.get("traceparent") ? contextFromHeaders((name) => msg.headers?.get(name)) : undefined;
}

const consumerSpan = (durable: string, msg: JsMsg) => ({
  kind: SpanKind.CONSUMER,
  attributes: {
    "messaging.system": "nats",
    "messaging.destination.name": subjectOf(msg),
    "messaging.consumer.group.name": durable,
  },
});

/** Applies one message's effect in a consumer span under its publish span, when it came with one. */
function consumed<T>(durable: string, msg: JsMsg, fn: () => Promise<T>): Promise<T> {
  const parent = publishedIn(msg);
  return parent ? inSpan(`${subjectOf(msg)} process`, { ...consumerSpan(durable, msg), parent }, fn) : fn();
}

/**
 * Applies messages in one transaction when there are several first deliveries, else one by one.
 * Redeliveries (they may have failed before) and undecodable payloads always take the one-by-one
 * path, so one bad message cannot keep spoiling batches; and a batch that fails for any reason is
 * rolled back whole and its messages applied one by one, where retries, naks and the poison path
 * live. Nothing is acked before its transaction committed.
 */
async function applyBatch<Desc extends DescMessage>(options: ConsumerOptions<Desc>, msgs: JsMsg[], maxDeliver: number) {
  const together: Decoded<Desc>[] = [];
  const alone: JsMsg[] = [];
  for (const msg of msgs) {
    if (msg.info.deliveryCount > 1) {
      alone.push(msg);
      continue;
    }
    try {
      const event = fromBinary(options.schema, msg.data);
      together.push({ msg, event, eventId: eventIdOf(msg), requestId: acceptRequestId(msg.headers?.get(REQUEST_ID_HEADER)) });
    } catch {
      alone.push(msg);
    }
  }
  if (options.applyStatement) {
    if (together.length > 0 && !(await applyInStatement(options, together))) alone.push(...together.map((d) => d.msg));
  } else if (options.applyBatch) {
    if (together.length > 0 && !(await applyTogether(options, together))) alone.push(...together.map((d) => d.msg));
  } else if (together.length === 1) alone.unshift(together[0]!.msg);
  else if (together.length > 1 && !(await applyTogether(options, together))) alone.push(...together.map((d) => d.msg));
  for (const msg of alone) {
    try {
      await handleOne(options, msg, maxDeliver);
    } catch (err) {
      // Not even a connection to Postgres: left unacked, so JetStream redelivers it after ack_wait.
      options.log.error({ err, durable: options.durable, event_id: eventIdOf(msg) }, "event handling failed");
    }
  }
}

/** The whole batch in one statement: its inbox rows and the consumer's effect (ConsumerOptions.applyStatement). */
async function applyInStatement<Desc extends DescMessage>(
  options: ConsumerOptions<Desc>,
  batch: Decoded<Desc>[],
): Promise<boolean> {
  const { pool, durable, log } = options;
  const statement = options.applyStatement as NonNullable<ConsumerOptions<Desc>["applyStatement"]>;
  // One statement applies them all: each message that came in a trace gets its consumer span around it.
  const spans = batch.flatMap((d) => {
    const parent = publishedIn(d.msg);
    return parent ? [beginSpan(`${subjectOf(d.msg)} process`, { ...consumerSpan(durable, d.msg), parent })] : [];
  });
  try {
    const rows = batch.flatMap((d) => {
      const row = statement.row(d.event, d.eventId);
      return row ? [{ ...row, event_id: d.eventId }] : [];
    });
    await pool.query({
      // Named: prepared once per connection, not parsed and planned again for every batch.
      name: `consumer_apply_${durable}`,
      text: `WITH fresh AS (
         INSERT INTO inbox (consumer, event_id, subject)
         SELECT $2, m.event_id, m.subject FROM unnest($3::text[], $4::text[]) AS m(event_id, subject)
         ON CONFLICT DO NOTHING RETURNING event_id
       ) ${statement.sql}`,
      values: [JSON.stringify(rows), durable, batch.map((d) => d.eventId), batch.map((d) => subjectOf(d.msg))],
    });
  } catch (err) {
    for (const span of spans) span.end(err);
    log.warn(
      { err: (err as Error).message, durable, events: batch.length },
      "event batch failed, applying its events one by one",
    );
    return false;
  }
  for (const span of spans) span.end();
  for (const d of batch) d.msg.ack();
  return true;
}

/** One transaction for the whole batch: the inbox rows in one statement, then each new event's effect. */
async function applyTogether<Desc extends DescMessage>(options: ConsumerOptions<Desc>, batch: Decoded<Desc>[]): Promise<boolean> {
  const { pool, durable, log } = options;
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    log.warn({ err: (err as Error).message, durable }, "event batch: no database connection");
    return false;
  }
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ event_id: string }>(
      `INSERT INTO inbox (consumer, event_id, subject)
       SELECT $1, m.event_id, m.subject FROM unnest($2::text[], $3::text[]) AS m(event_id, subject)
       ON CONFLICT DO NOTHING RETURNING event_id`,
      [durable, batch.map((d) => d.eventId), batch.map((d) => subjectOf(d.msg))],
    );
    // Already applied (a redelivery after a crash, a republished row), or twice in this batch:
    // its inbox row was not inserted now, so its effect is not applied again.
    const fresh = new Set(rows.map((r) => r.event_id));
    const freshOnes = batch.filter((d) => fresh.delete(d.eventId));
    if (options.applyBatch) {
      if (freshOnes.length > 0) await applyAllAtOnce(options, client, freshOnes);
    } else {
      for (const d of freshOnes) {
        const ctx: EventContext = { client, eventId: d.eventId, subject: subjectOf(d.msg) };
        await runInScope({ requestId: d.requestId }, () => consumed(durable, d.msg, () => applyOne(options, d.event, ctx)));
      }
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch((rollbackErr: Error) => {
      broken = rollbackErr;
    });
    log.warn(
      { err: (err as Error).message, durable, events: batch.length },
      "event batch failed, applying its events one by one",
    );
    return false;
  } finally {
    client.release(broken);
  }
  for (const d of batch) d.msg.ack();
  return true;
}

/** The batch's fresh events in one applyBatch call; each that came in a trace gets its consumer span around it. */
async function applyAllAtOnce<Desc extends DescMessage>(
  options: ConsumerOptions<Desc>,
  client: PoolClient,
  fresh: Decoded<Desc>[],
) {
  const apply = options.applyBatch as NonNullable<ConsumerOptions<Desc>["applyBatch"]>;
  const spans = fresh.flatMap((d) => {
    const parent = publishedIn(d.msg);
    return parent ? [beginSpan(`${subjectOf(d.msg)} process`, { ...consumerSpan(options.durable, d.msg), parent })] : [];
  });
  try {
    await apply(
      client,
      fresh.map((d) => ({ event: d.event, eventId: d.eventId, subject: subjectOf(d.msg) })),
    );
  } catch (err) {
    for (const span of spans) span.end(err);
    throw err;
  }
  for (const span of spans) span.end();
}

/**
 * One event's effect inside the transaction that holds its (new) inbox row: `handle`, or else the
 * consumer's applyBatch with just this event, or its applyStatement with `fresh` being that one event.
 */
async function applyOne<Desc extends DescMessage>(options: ConsumerOptions<Desc>, event: MessageShape<Desc>, ctx: EventContext) {
  if (options.handle) return options.handle(event, ctx);
  if (options.applyBatch) return options.applyBatch(ctx.client, [{ event, eventId: ctx.eventId, subject: ctx.subject }]);
  const statement = options.applyStatement as NonNullable<ConsumerOptions<Desc>["applyStatement"]>;
  const row = statement.row(event, ctx.eventId);
  if (!row) return;
  await ctx.client.query({
    name: `consumer_apply_one_${options.durable}`,
    text: `WITH fresh AS (SELECT $2::text AS event_id) ${statement.sql}`,
    values: [JSON.stringify([{ ...row, event_id: ctx.eventId }]), ctx.eventId],
  });
}

async function handleOne<Desc extends DescMessage>(options: ConsumerOptions<Desc>, msg: JsMsg, maxDeliver: number) {
  const { pool, durable, schema, log } = options;
  const eventId = eventIdOf(msg);
  const requestId = acceptRequestId(msg.headers?.get(REQUEST_ID_HEADER));
  await runInScope({ requestId }, async () => {
    let event: MessageShape<Desc>;
    try {
      event = fromBinary(schema, msg.data);
    } catch (err) {
      await deadLetter(options, msg, eventId, `undecodable payload: ${(err as Error).message}`);
      msg.term();
      return;
    }
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const inserted = await client.query(
        "INSERT INTO inbox (consumer, event_id, subject) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        [durable, eventId, subjectOf(msg)],
      );
      if (inserted.rowCount === 1) {
        await consumed(durable, msg, () => applyOne(options, event, { client, eventId, subject: subjectOf(msg) }));
      }
      await client.query("COMMIT");
      msg.ack();
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      const deliveries = msg.info.deliveryCount;
      if (err instanceof PoisonMessageError || deliveries >= maxDeliver) {
        log.error({ err, durable, event_id: eventId, deliveries }, "event terminated as poison");
        await deadLetter(options, msg, eventId, (err as Error).message);
        msg.term();
      } else {
        const delayMs = Math.min(1000 * 2 ** (deliveries - 1), 30_000);
        log.warn(
          { err: (err as Error).message, durable, event_id: eventId, deliveries, retry_in_ms: delayMs },
          "event handling failed",
        );
        msg.nak(delayMs);
      }
    } finally {
      client.release();
    }
  });
}

async function deadLetter<Desc extends DescMessage>(options: ConsumerOptions<Desc>, msg: JsMsg, eventId: string, error: string) {
  deadLetters.inc({ consumer: options.durable });
  await options.pool
    .query("INSERT INTO dead_letters (consumer, event_id, subject, payload, error, deliveries) VALUES ($1, $2, $3, $4, $5, $6)", [
      options.durable,
      eventId,
      subjectOf(msg),
      Buffer.from(msg.data),
      error.slice(0, 2000),
      msg.info.deliveryCount,
    ])
    .catch((err) => options.log.error({ err, event_id: eventId }, "could not record dead letter"));
}
