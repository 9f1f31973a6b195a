/**
 * Execution facts from toolport.execution.* events, and the aggregates computed from them: the
 * reliability block, popularity and co-usage for recommendations.
 */

import { deleteInChunks } from "@toolport/kit/pg";
import type { ReliabilityAggregate, ToolUsage } from "../domain/ports.js";
import { WINDOW_DAYS } from "../domain/reliability.js";
import { prepared, type Queryable } from "./rows.js";

export interface ExecutionFact {
  executionId: string;
  toolId: string;
  serviceId: string;
  accountId: string;
  organizationId: string;
  success: boolean;
  seconds: number;
  errorClass: string | null;
  errorType: string | null;
  error: string | null;
  isProbe: boolean;
  occurredAt: Date;
}

/**
 * How long a fact is kept: the reliability window (WINDOW_DAYS, which every read of the facts is limited to)
 * and two days more. Older facts are pruned (pruneExecutions), and a fact older than this when its event
 * arrives is not recorded at all: it would fall outside every window, and with its row pruned a replayed
 * event would otherwise be counted in service_calls a second time.
 */
export const FACT_RETENTION_DAYS = WINDOW_DAYS + 2;

/**
 * Records executions, as the consumer kit's one-statement form (applyStatement, without inbox): the facts
 * of the batch's events (`fresh`), from the JSON array in $1 (executionRow's shape); an execution already
 * recorded (a redelivery) changes nothing. The facts it did insert are added, in the same statement, to
 * their service's all-time figures (service_call_totals) and to its calls of their UTC day
 * (service_calls), once per service (and day) of the batch; in that order, so that two batches applied at
 * once (replicas) lock those rows in the same order.
 * It continues the kit's `WITH fresh AS (...)`, hence the leading comma.
 */
export const RECORD_EXECUTIONS_SQL = `, recorded AS (
     INSERT INTO executions (execution_id, tool_id, service_id, account_id, organization_id, success,
       seconds, error_class, error_type, error, is_probe, occurred_at)
     SELECT f.execution_id, f.tool_id, f.service_id, f.account_id, f.organization_id, f.success, f.seconds, f.error_class,
       f.error_type, f.error, f.is_probe, f.occurred_at
       FROM jsonb_to_recordset($1::jsonb) AS f(event_id text, execution_id text, tool_id uuid, service_id text, account_id text,
         organization_id text, success boolean, seconds double precision, error_class text, error_type text, error text,
         is_probe boolean, occurred_at timestamptz)
       JOIN fresh ON fresh.event_id = f.event_id
      WHERE f.occurred_at > now() - interval '${FACT_RETENTION_DAYS} days'
     ON CONFLICT (execution_id) DO NOTHING
     RETURNING service_id, success, occurred_at
   ), days AS (
     INSERT INTO service_calls (service_id, day, calls, successes)
     SELECT service_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, count(*), count(*) FILTER (WHERE success)
       FROM recorded
      GROUP BY 1, 2
      ORDER BY 1, 2
     ON CONFLICT (service_id, day) DO UPDATE
       SET calls = service_calls.calls + EXCLUDED.calls, successes = service_calls.successes + EXCLUDED.successes
   )
   INSERT INTO service_call_totals (service_id, calls, successes)
   SELECT service_id, count(*), count(*) FILTER (WHERE success)
     FROM recorded
    GROUP BY 1
    ORDER BY 1
   ON CONFLICT (service_id) DO UPDATE
     SET calls = service_call_totals.calls + EXCLUDED.calls, successes = service_call_totals.successes + EXCLUDED.successes`;

/**
 * Deletes the facts older than FACT_RETENTION_DAYS (by the time index), and the day counts as old (the
 * totals keep them); returns how many facts.
 */
export async function pruneExecutions(q: Queryable): Promise<number> {
  const horizon = [`${FACT_RETENTION_DAYS} days`];
  const facts = await deleteInChunks(q, "executions", "occurred_at < now() - $1::interval", horizon);
  await deleteInChunks(q, "service_calls", "day < (now() - $1::interval) AT TIME ZONE 'UTC'", horizon);
  return facts;
}

/** A fact as one element of RECORD_EXECUTIONS_SQL's $1. */
export function executionRow(f: ExecutionFact): Record<string, unknown> {
  return {
    execution_id: f.executionId,
    tool_id: f.toolId,
    service_id: f.serviceId,
    account_id: f.accountId,
    organization_id: f.organizationId,
    success: f.success,
    seconds: f.seconds,
    error_class: f.errorClass,
    error_type: f.errorType,
    error: f.error,
    is_probe: f.isProbe,
    occurred_at: f.occurredAt.toISOString(),
  };
}

/** A row of reliabilityAggregates' statement (counts arrive as text: bigint). */
interface AggregateRow {
  tool_id: string;
  calls_7d: string;
  calls_30d: string;
  successes: string;
  p50: number | null;
  p95: number | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  callers: string;
}

/** The window's aggregates for each tool called in it (tools not called are absent). */
export async function reliabilityAggregates(
  q: Queryable,
  toolIds: string[],
  windowDays: number,
): Promise<Map<string, ReliabilityAggregate>> {
  const out = new Map<string, ReliabilityAggregate>();
  if (toolIds.length === 0) return out;
  const window = `${windowDays} days`;
  const { rows } = await prepared<AggregateRow>(
    q,
    `SELECT tool_id::text AS tool_id,
            count(*) FILTER (WHERE occurred_at > now() - interval '7 days') AS calls_7d,
            count(*) AS calls_30d,
            count(*) FILTER (WHERE success) AS successes,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95,
            max(occurred_at) FILTER (WHERE success) AS last_success_at,
            max(occurred_at) FILTER (WHERE NOT success) AS last_failure_at,
            count(DISTINCT account_id) AS callers
       FROM executions
      WHERE tool_id = ANY($1::uuid[]) AND occurred_at > now() - $2::interval
      GROUP BY tool_id`,
    [toolIds, window],
  );
  for (const r of rows) {
    out.set(r.tool_id, {
      toolId: r.tool_id,
      calls7d: Number(r.calls_7d),
      calls30d: Number(r.calls_30d),
      successes30d: Number(r.successes),
      p50Seconds: r.p50 === null ? null : Number(r.p50),
      p95Seconds: r.p95 === null ? null : Number(r.p95),
      lastSuccessAt: r.last_success_at,
      lastFailureAt: r.last_failure_at,
      lastErrorClass: null,
      lastErrorType: null,
      errorClasses: {},
      faults: {},
      distinctCallers30d: Number(r.callers),
    });
  }
  if (out.size === 0) return out;
  const called = [...out.keys()];
  const last = await q.query(
    `SELECT DISTINCT ON (tool_id) tool_id::text AS tool_id, error_class, error_type FROM executions
      WHERE tool_id = ANY($1::uuid[]) AND NOT success AND occurred_at > now() - $2::interval
      ORDER BY tool_id, occurred_at DESC`,
    [called, window],
  );
  for (const r of last.rows) {
    const a = out.get(r.tool_id) as ReliabilityAggregate;
    a.lastErrorClass = r.error_class;
    a.lastErrorType = r.error_type;
  }
  const counts = await q.query(
    `SELECT tool_id::text AS tool_id, error_class, error_type, count(*) AS n FROM executions
      WHERE tool_id = ANY($1::uuid[]) AND NOT success AND occurred_at > now() - $2::interval
      GROUP BY tool_id, error_class, error_type`,
    [called, window],
  );
  for (const r of counts.rows) {
    const a = out.get(r.tool_id) as ReliabilityAggregate;
    const n = Number(r.n);
    const cls = r.error_class ?? "unknown";
    a.errorClasses[cls] = (a.errorClasses[cls] ?? 0) + n;
    const type = r.error_type ?? "unknown";
    a.faults[type] = (a.faults[type] ?? 0) + n;
  }
  return out;
}

/** Tools by calls in the window (probes excluded), most used first. */
export async function popularTools(q: Queryable, windowDays: number, limit: number): Promise<ToolUsage[]> {
  const { rows } = await q.query(
    `SELECT tool_id::text AS tool_id, count(*) AS calls, count(*) FILTER (WHERE success) AS successes FROM executions
      WHERE NOT is_probe AND occurred_at > now() - $1::interval
      GROUP BY tool_id ORDER BY count(*) FILTER (WHERE success) DESC, count(*) DESC LIMIT $2`,
    [`${windowDays} days`, limit],
  );
  return rows.map((r) => ({ toolId: r.tool_id, calls: Number(r.calls), successes: Number(r.successes) }));
}

/** The tools an account used in the window, most used first. */
export async function toolsUsedBy(q: Queryable, accountId: string, windowDays: number): Promise<ToolUsage[]> {
  const { rows } = await q.query(
    `SELECT tool_id::text AS tool_id, count(*) AS calls, count(*) FILTER (WHERE success) AS successes FROM executions
      WHERE account_id = $1 AND occurred_at > now() - $2::interval
      GROUP BY tool_id ORDER BY count(*) DESC LIMIT 50`,
    [accountId, `${windowDays} days`],
  );
  return rows.map((r) => ({ toolId: r.tool_id, calls: Number(r.calls), successes: Number(r.successes) }));
}

/**
 * Tools used by the same callers as the given tools, with how many of those callers used each
 * (the given tools themselves excluded), strongest first.
 */
export async function usedTogether(
  q: Queryable,
  toolIds: string[],
  windowDays: number,
  limit: number,
): Promise<{ toolId: string; sharedCallers: number }[]> {
  if (toolIds.length === 0) return [];
  const { rows } = await q.query(
    `WITH callers AS (
        SELECT DISTINCT account_id FROM executions
         WHERE tool_id = ANY($1::uuid[]) AND occurred_at > now() - $2::interval AND NOT is_probe)
     SELECT e.tool_id::text AS tool_id, count(DISTINCT e.account_id) AS shared FROM executions e JOIN callers c USING (account_id)
      WHERE NOT (e.tool_id = ANY($1::uuid[])) AND e.occurred_at > now() - $2::interval AND NOT e.is_probe
      GROUP BY e.tool_id ORDER BY count(DISTINCT e.account_id) DESC, count(*) DESC LIMIT $3`,
    [toolIds, `${windowDays} days`, limit],
  );
  return rows.map((r) => ({ toolId: r.tool_id, sharedCallers: Number(r.shared) }));
}
