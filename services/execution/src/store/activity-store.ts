/**
 * SQL of the call log (issue 33): refused calls recorded beside executions, a page of calls read newest
 * first from the scope's index (migrations/0003_activity.sql), and a key's refusals counted by reason.
 */
import type { Pool } from "@toolport/kit/pg";
import type { ActivityPage, ActivityQuery, ActivityScope, ActivityStore, RefusalRecord } from "../domain/activity.js";

/** Each scope's condition, matching one of the activity indexes. */
function scopeCondition(scope: ActivityScope, values: unknown[]): string {
  const at = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  switch (scope.kind) {
    case "organization":
      return `organization_id = ${at(scope.organizationId)}`;
    case "account":
      return `account_id = ${at(scope.accountId)} AND organization_id = ${at(scope.organizationId)}`;
    case "key":
      return `key_id = ${at(scope.keyId)}`;
  }
}

interface ActivityRow {
  id: string;
  at_key: string;
  executed_at: Date;
  account_id: string;
  key_id: string | null;
  tool_id: string;
  tool_name: string;
  service_id: string;
  service_name: string;
  status: "success" | "error" | "refused";
  error: string | null;
  error_class: string | null;
  error_type: string | null;
  duration_ms: number;
  cost_cents: string;
}

export class PgActivityStore implements ActivityStore {
  /**
   * `writes`: where refusals are recorded; the service gives it its pool whose commits do not wait for the
   * WAL flush (a refusal is answered about 3-6 ms sooner on a loaded machine, test/bench/activity-page.mjs).
   * A Postgres crash can then forget the last moment's refusals: nothing ran and nothing was charged for
   * them, so the log loses a line and no state is wrong.
   */
  constructor(
    private readonly pool: Pool,
    private readonly writes: Pool = pool,
  ) {}

  /** One plain INSERT, on the refused path only (a successful call's statement is unchanged). */
  async recordRefusal(r: RefusalRecord): Promise<void> {
    await this.writes.query({
      name: "execution_record_refusal",
      text: `INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name,
               service_type, status, error, error_type, duration_ms, executed_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'refused', $10, $11, 0, $12)`,
      values: [
        r.id,
        r.accountId,
        r.organizationId,
        r.keyId ?? null,
        r.toolId,
        r.toolName,
        r.serviceId,
        r.serviceName,
        r.serviceType,
        r.message,
        r.reason,
        r.at,
      ],
    });
  }

  async list(scope: ActivityScope, q: ActivityQuery): Promise<ActivityPage> {
    const values: unknown[] = [];
    const param = (v: unknown) => {
      values.push(v);
      return `$${values.length}`;
    };
    const where = [scopeCondition(scope, values)];
    if (q.toolId) where.push(`tool_id = ${param(q.toolId)}`);
    if (q.keyId) where.push(`key_id = ${param(q.keyId)}`);
    if (q.status) where.push(`status = ${param(q.status)}`);
    if (q.since) where.push(`executed_at >= ${param(q.since)}`);
    if (q.until) where.push(`executed_at < ${param(q.until)}`);
    // Keyset paging: strictly after the previous page's last row in (executed_at, id) order, so a page
    // never repeats or skips a call when new ones arrive meanwhile.
    if (q.after) where.push(`(executed_at, id) < (${param(q.after.at)}::timestamptz, ${param(q.after.id)}::uuid)`);
    const { rows } = await this.pool.query<ActivityRow>(
      `SELECT id, to_char(executed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key, executed_at,
              account_id, key_id, tool_id, tool_name, service_id, service_name, status, error, error_class, error_type,
              duration_ms, cost_cents
         FROM executions
        WHERE ${where.join(" AND ")}
        ORDER BY executed_at DESC, id DESC
        LIMIT ${param(q.limit + 1)}`,
      values,
    );
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      entries: page.map((r) => ({
        id: r.id,
        at: r.executed_at,
        accountId: r.account_id,
        keyId: r.key_id ?? undefined,
        toolId: r.tool_id,
        toolName: r.tool_name,
        serviceId: r.service_id,
        serviceName: r.service_name,
        status: r.status,
        reason: r.error_type ?? undefined,
        errorClass: r.error_class ?? undefined,
        message: r.error ?? undefined,
        durationMs: r.duration_ms,
        costCents: BigInt(r.cost_cents),
      })),
      next: rows.length > q.limit && last ? { at: last.at_key, id: last.id } : undefined,
    };
  }

  async countRefusals(scope: ActivityScope, keyId: string, since: Date): Promise<Array<{ reason: string; calls: bigint }>> {
    const values: unknown[] = [];
    const scoped = scopeCondition(scope, values);
    values.push(keyId, since);
    const { rows } = await this.pool.query<{ reason: string; calls: string }>(
      `SELECT error_type AS reason, count(*) AS calls FROM executions
        WHERE ${scoped} AND key_id = $${values.length - 1} AND executed_at >= $${values.length} AND status = 'refused'
        GROUP BY error_type ORDER BY count(*) DESC, error_type`,
      values,
    );
    return rows.map((r) => ({ reason: r.reason, calls: BigInt(r.calls) }));
  }
}
