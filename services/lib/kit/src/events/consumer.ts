/**
 * Durable consumers: the inbox, batches, redeliveries and poison messages.
 * Part of `@toolport/kit/events`, whose header says how events work.
 */
import { type DescMessage, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg, type NatsConnection } from "nats";
import { acceptRequestId, REQUEST_ID_HEADER, runInScope } from "../context.js";
import type { Logger } from "../logger.js";
import { consumerPending, consumerRedeliveries, deadLetters } from "../metrics.js";
import { deleteInChunks, type Pool, type PoolClient } from "../pg.js";
import { beginSpan, contextFromHeaders, inSpan, SpanKind } from "../tracing.js";
import { currentNatsNames } from "./subjects.js";

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
   * its effect is an SQL fragment). Redeliveries come in batches of their own (the events already applied
   * left out); a lone redelivery, and the one-by-one replay of a batch that failed, call it with one event.
   * The transaction may hold other consumers' work of the same batch: no transaction-wide state here.
   */
  applyBatch?: (client: PoolClient, fresh: FreshEvent<Desc>[]) => Promise<void>;
  /**
   * For a consumer whose effect is rows it inserts: the effect as ONE statement that also writes the
   * inbox rows, so a batch, or a lone event, costs one round trip and no explicit transaction (a single
   * statement is atomic). `sql` follows `WITH fresh AS (<the inbox insert> RETURNING event_id)`; `$1` is
   * the JSON array of `row()` results (null ones left out), each carrying its `event_id`; the statement
   * must write only rows whose event_id is in `fresh`, so a redelivered event changes nothing.
   * Redeliveries come in batches of their own; a lone redelivery and the one-by-one replay of a batch that
   * failed (a poison event fails its batch, and the replay terminates just that one) run the same statement
   * for the one event, unless `handle` is given too, in which case they run `handle`, which must then have
   * exactly the same effect.
   * A consumer whose effect reads better as a typed store function gives `applyBatch` instead.
   */
  applyStatement?: {
    sql: string;
    row: (event: MessageShape<Desc>, eventId: string) => Record<string, unknown> | null;
    /**
     * false for a statement that itself skips an event it has already applied: every row it writes is
     * keyed by something the event fixes (one row per execution, `ON CONFLICT (execution_id) DO NOTHING`),
     * so a redelivered or republished event finds its row there and writes nothing. No inbox row is
     * written then: `fresh` is every event of the batch (`SELECT unnest($2::text[]) AS event_id`), and the
     * consumer's inbox stays empty instead of growing by a row per event for good (nothing prunes it: an
     * inbox row must outlive every way its event can come again). Not with `handle` or `applyBatch`. Default true.
     */
    inbox?: boolean;
  };
  /** Deliveries before a failing message is declared poison. */
  maxDeliver?: number;
  /** Messages applied together in one transaction, at most (default: the process's, setConsumerBatching). */
  batchMax?: number;
  /** How long a batch that is not full waits for more messages (default: the process's, setConsumerBatching). */
  batchWaitMs?: number;
  /**
   * For a consumer with an inbox whose rows are pruned (pruneInbox): how long, in days, they are kept.
   * A message the stream stored longer ago than that is acknowledged and not applied, with a warning that
   * counts them: its inbox row may be gone, so only this keeps a replayed stream (a durable consumer
   * deleted and made again, which starts from the stream's first message) from applying it a second
   * time. Without it, inbox rows must be kept for as long as the stream keeps their events.
   */
  inboxDays?: number;
}

const DAY_MS = 86_400_000;

/**
 * Deletes the inbox rows of `consumers` applied more than `days` and one more day ago (the day: the
 * stream's clock and Postgres's may differ), in chunks (deleteInChunks); returns how many. Their consumers
 * must have `inboxDays` no larger than `days`, so that they no longer apply the events of the rows
 * deleted.
 */
export function pruneInbox(pool: Pool, consumers: string[], days: number): Promise<number> {
  return deleteInChunks(
    pool,
    "inbox",
    "applied_at < now() - ($2::float8 + 1) * interval '1 day' AND consumer = ANY($1::text[])",
    [consumers, days],
  );
}

/** How a process's consumers gather messages into batches (the service settings CONSUMER_BATCH_*). */
export interface ConsumerBatching {
  /** Messages applied together in one transaction, at most. */
  max: number;
  /**
   * How long the applier waits for a batch that is not full to fill. Under load what arrives while one
   * batch commits makes the next anyway; the wait gathers the chunks a relay's burst reaches the reader
   * in (2 ms: about 40% fewer consumer transactions under a steady stream, test/bench/consumer-throughput.mjs).
   * 0: what has arrived is applied at once.
   */
  waitMs: number;
}

let batching: ConsumerBatching = { max: 100, waitMs: 2 };

/** The batching of the consumers this process starts (unless their options say otherwise). */
export function currentConsumerBatching(): ConsumerBatching {
  return { ...batching };
}

/** Sets the batching of the consumers this process starts from now on (service.ts, from the settings). */
export function setConsumerBatching(next: ConsumerBatching): void {
  if (!Number.isInteger(next.max) || next.max < 1)
    throw new Error(`consumer batch max must be a positive integer, not ${next.max}`);
  if (!Number.isFinite(next.waitMs) || next.waitMs < 0)
    throw new Error(`consumer batch wait must be >= 0 ms, not ${next.waitMs}`);
  batching = { ...next };
}

/**
 * How a consumer's pull requests wait on an idle stream (nats.js's defaults: 30 s and 15 s). Each pull
 * request that expires costs a message each way and each heartbeat one from the server plus a client
 * timer, for every consumer: idle, that was most of what the stack's consumers woke NATS and the process
 * for. Neither is how a consumer notices a lost NATS: the connection's close does that (nats.js pulls
 * again after its reconnect). The heartbeat (30 s is nats.js's most) is what notices a pull request the
 * server lost without the connection breaking (a consumer deleted and recreated, a cluster's leader moved):
 * two missed, and the consumer pulls again, after a minute at most.
 */
export const PULL_EXPIRES_MS = 120_000;
export const PULL_IDLE_HEARTBEAT_MS = 30_000;

/** The options of a `consume()` that takes up to `maxMessages` at once and waits as PULL_EXPIRES_MS says. */
export function pullOptions(maxMessages: number): { max_messages: number; expires: number; idle_heartbeat: number } {
  return { max_messages: maxMessages, expires: PULL_EXPIRES_MS, idle_heartbeat: PULL_IDLE_HEARTBEAT_MS };
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export async function startConsumer<Desc extends DescMessage>(options: ConsumerOptions<Desc>): Promise<RunningConsumer> {
  const { nc, subject, log } = options;
  if (!options.handle && !options.applyStatement && !options.applyBatch)
    throw new Error(`consumer ${options.durable}: give handle, applyBatch or applyStatement`);
  if (options.applyStatement?.inbox === false && (options.handle || options.applyBatch))
    throw new Error(`consumer ${options.durable}: an applyStatement without inbox takes no handle or applyBatch`);
  if (options.inboxDays !== undefined && !(Number.isFinite(options.inboxDays) && options.inboxDays > 0))
    throw new Error(`consumer ${options.durable}: inboxDays must be a positive number of days, not ${options.inboxDays}`);
  const { durable } = options;
  const maxDeliver = options.maxDeliver ?? 8;
  const batchMax = options.batchMax ?? batching.max;
  const batchWaitMs = options.batchWaitMs ?? batching.waitMs;
  // Messages received but not yet applied, at most: beyond it the reader waits (memory stays bounded).
  const backlogMax = batchMax * 2;
  const jsm = await nc.jetstreamManager();
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: currentNatsNames().wire(subject),
    ack_wait: 30 * 1_000_000_000,
    // One more than our own limit, so we get the chance to record the poison message ourselves.
    max_deliver: maxDeliver + 1,
  };
  try {
    await jsm.consumers.info(currentNatsNames().stream, durable);
    await jsm.consumers.update(currentNatsNames().stream, durable, {
      filter_subject: config.filter_subject,
      max_deliver: maxDeliver + 1,
    });
  } catch {
    await jsm.consumers.add(currentNatsNames().stream, config);
  }
  const consumer = await nc.jetstream().consumers.get(currentNatsNames().stream, durable);
  let messages: ConsumerMessages | undefined;
  let stopped = false;

  // The reader moves messages from NATS into a bounded backlog; the applier takes what has piled up
  // (up to batchMax) and applies it in one transaction (group commit). When idle, a message is
  // applied as soon as it arrives (after batchWaitMs, when set); under load, those that arrive while one
  // batch is being applied go together in the next, so the per-transaction cost is shared.
  const backlog: JsMsg[] = [];
  let readerDone = false;
  let wakeApplier: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  const reader = (async () => {
    while (!stopped) {
      try {
        messages = await consumer.consume(pullOptions(backlogMax));
        for await (const msg of messages) {
          consumerPending.set({ consumer: durable }, msg.info.pending);
          if (msg.info.deliveryCount > 1) consumerRedeliveries.inc({ consumer: durable });
          while (backlog.length >= backlogMax) await new Promise<void>((resolve) => (wakeReader = resolve));
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
  /** Waits until the backlog holds a full batch, the reader ends, or `ms` have passed. */
  const fill = async (ms: number) => {
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        expired = true;
        resolve();
      }, ms);
    });
    while (backlog.length < batchMax && !readerDone && !expired) {
      await Promise.race([new Promise<void>((resolve) => (wakeApplier = resolve)), timedOut]);
      wakeApplier = undefined;
    }
    clearTimeout(timer);
  };
  const applier = (async () => {
    // On stop, what was already received is still applied (and acked) before the loop ends.
    while (backlog.length > 0 || !readerDone) {
      if (backlog.length === 0) {
        await new Promise<void>((resolve) => (wakeApplier = resolve));
        wakeApplier = undefined;
        continue;
      }
      if (batchWaitMs > 0 && backlog.length < batchMax && !readerDone) await fill(batchWaitMs);
      const batch = backlog.splice(0, batchMax);
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

interface Decoded<Desc extends DescMessage> {
  msg: JsMsg;
  event: MessageShape<Desc>;
  eventId: string;
  requestId: string;
}

/** A received message's subject as code names it (without the namespace). */
const subjectOf = (msg: JsMsg) => currentNatsNames().logical(msg.subject);

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
 * Applies messages in one transaction per group: first deliveries together, and redeliveries together
 * in a group of their own (after a process died between commit and ack, or a batch failed), so a message
 * that failed before can spoil only other redeliveries, never a batch of first deliveries. A lone
 * redelivery, and an undecodable payload, take the one-by-one path; and a group that fails for any reason
 * is rolled back whole and its messages applied one by one, where retries, naks and the poison path live.
 * Nothing is acked before its transaction committed.
 */
async function applyBatch<Desc extends DescMessage>(options: ConsumerOptions<Desc>, received: JsMsg[], maxDeliver: number) {
  const msgs = options.inboxDays === undefined ? received : withoutExpired(options, received, options.inboxDays);
  const first: Decoded<Desc>[] = [];
  const again: Decoded<Desc>[] = [];
  const alone: JsMsg[] = [];
  for (const msg of msgs) {
    try {
      const event = fromBinary(options.schema, msg.data);
      const decoded = { msg, event, eventId: eventIdOf(msg), requestId: acceptRequestId(msg.headers?.get(REQUEST_ID_HEADER)) };
      (msg.info.deliveryCount > 1 ? again : first).push(decoded);
    } catch {
      alone.push(msg);
    }
  }
  if (again.length === 1) alone.push(again.pop()!.msg);
  for (const group of [first, again]) {
    if (group.length > 0 && !(await applyGroup(options, group))) alone.push(...group.map((d) => d.msg));
  }
  for (const msg of alone) {
    try {
      await handleOne(options, msg, maxDeliver);
    } catch (err) {
      // Not even a connection to Postgres: left unacked, so JetStream redelivers it after ack_wait.
      options.log.error({ err, durable: options.durable, event_id: eventIdOf(msg) }, "event handling failed");
    }
  }
}

/** The messages the stream stored within the last `days`; the others acknowledged unapplied (ConsumerOptions.inboxDays). */
function withoutExpired<Desc extends DescMessage>(options: ConsumerOptions<Desc>, msgs: JsMsg[], days: number): JsMsg[] {
  const oldest = (Date.now() - days * DAY_MS) * 1e6;
  const kept: JsMsg[] = [];
  const expired: JsMsg[] = [];
  for (const msg of msgs) (msg.info.timestampNanos >= oldest ? kept : expired).push(msg);
  if (expired.length === 0) return msgs;
  for (const msg of expired) msg.ack();
  options.log.warn(
    { durable: options.durable, events: expired.length, first_event_id: eventIdOf(expired[0] as JsMsg), inbox_days: days },
    "events older than the consumer's inbox keeps were acknowledged and not applied",
  );
  return kept;
}

/** One group in one transaction, as the consumer's form allows; false when it did not commit. */
function applyGroup<Desc extends DescMessage>(options: ConsumerOptions<Desc>, group: Decoded<Desc>[]): Promise<boolean> {
  if (options.applyStatement) return applyInStatement(options, group);
  // `handle` alone: one event is as cheap on the one-by-one path, which also holds its retries.
  if (!options.applyBatch && group.length === 1) return Promise.resolve(false);
  return applyTogether(options, group);
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
    const eventIds = batch.map((d) => d.eventId);
    await pool.query(
      statement.inbox === false
        ? {
            // Named: prepared once per connection, not parsed and planned again for every batch.
            name: `consumer_apply_${durable}`,
            text: `WITH fresh AS (SELECT unnest($2::text[]) AS event_id) ${statement.sql}`,
            values: [JSON.stringify(rows), eventIds],
          }
        : {
            name: `consumer_apply_${durable}`,
            text: `WITH fresh AS (
         INSERT INTO inbox (consumer, event_id, subject)
         SELECT $2, m.event_id, m.subject FROM unnest($3::text[], $4::text[]) AS m(event_id, subject)
         ON CONFLICT DO NOTHING RETURNING event_id
       ) ${statement.sql}`,
            values: [JSON.stringify(rows), durable, eventIds, batch.map((d) => subjectOf(d.msg))],
          },
    );
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
      // New to the inbox; without one, the statement's own conflict clause skips an event applied before.
      const fresh =
        options.applyStatement?.inbox === false ||
        (
          await client.query("INSERT INTO inbox (consumer, event_id, subject) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
            durable,
            eventId,
            subjectOf(msg),
          ])
        ).rowCount === 1;
      if (fresh) {
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
