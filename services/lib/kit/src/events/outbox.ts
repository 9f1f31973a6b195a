/**
 * The outbox: the one way an event is written, in the producer's own transaction (or statement).
 * Part of `@toolport/kit/events`, whose header says how events work.
 */
import { type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { currentRequestId } from "../context.js";
import { timeOrderedUuid } from "../ids.js";
import type { PoolClient } from "../pg.js";
import { outboxTraceContext } from "../tracing.js";

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
  id: string = timeOrderedUuid(),
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

/**
 * Writes an event to the outbox inside the caller's transaction, and the NOTIFY that wakes the relays on
 * commit, in one statement. Returns the event id.
 */
export async function enqueueEvent<Desc extends DescMessage>(
  client: PoolClient,
  subject: string,
  schema: Desc,
  message: MessageShape<Desc>,
  eventId: string = timeOrderedUuid(),
): Promise<string> {
  await insertAndNotify(client, [outboxRow(subject, schema, message, eventId)]);
  return eventId;
}

/**
 * Writes many events of one subject to the outbox inside the caller's transaction, in one statement
 * with one notification however many there are (a service of 500 tools changes 500 at once); the
 * relay publishes them in the order given. Returns their ids.
 */
export async function enqueueEvents<Desc extends DescMessage>(
  client: PoolClient,
  subject: string,
  schema: Desc,
  events: { eventId: string; message: MessageShape<Desc> }[],
): Promise<string[]> {
  if (events.length === 0) return [];
  await insertAndNotify(
    client,
    events.map((e) => outboxRow(subject, schema, e.message, e.eventId)),
  );
  return events.map((e) => e.eventId);
}

/**
 * The rows and a NOTIFY toolport_outbox in one round trip: the insert as a CTE, which runs whether or not
 * the query reads it. Postgres sends the notification when the caller's transaction commits (and drops it
 * if it rolls back), so every relay that LISTENs wakes on the commit. Not a trigger on the table: a
 * producer that nudges its own relay in process (execution, content) sends no NOTIFY, which would cost
 * Postgres and every listener a message per commit and wake the relay before its batching delay.
 */
async function insertAndNotify(client: PoolClient, rows: OutboxRow[]): Promise<void> {
  const insert = outboxInsert(rows);
  await client.query(`WITH event AS (${insert.sql}) SELECT pg_notify('toolport_outbox', '')`, insert.values);
}
