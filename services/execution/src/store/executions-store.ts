/** SQL of the execution service: executions, used confirm tokens, idempotency keys. */
import { outboxInsert } from "@toolport/kit/events";
import { GroupCommit } from "@toolport/kit/group-commit";
import type { Json } from "@toolport/kit/json-values";
import type { Pool } from "@toolport/kit/pg";
import type { StoredMeta } from "../domain/cap.js";
import type { ErrorClassName } from "../domain/failure.js";
import type { ServiceType } from "../domain/model.js";
import type { ExecutionRecord, ExecutionStore, IdempotencyClaim, Settlement, StoredExecution } from "../domain/ports.js";
import type { RedactionReport } from "../domain/redaction/redact.js";
import { executionEventRow } from "../events/execution-events.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

interface PendingRecord {
  r: ExecutionRecord;
  idempotency?: { accountId: string; key: string };
  /** Built when the record is submitted, in its caller's scope (the event carries its request id). */
  event: ReturnType<typeof executionEventRow>;
}

interface PendingClaim {
  accountId: string;
  key: string;
  inputHash: string;
  executionId: string;
  leaseMs: number;
}

export class PgExecutionStore implements ExecutionStore {
  /** Concurrent calls' records go to Postgres together (kit/group-commit.ts). */
  private readonly recorder = new GroupCommit<PendingRecord>(async (items) => {
    await (items.length === 1 ? this.recordOne(items[0] as PendingRecord) : this.recordMany(items));
    this.committed();
  });

  private readonly claimer = new GroupCommit<PendingClaim, boolean>((items) => this.claimMany(items));

  /**
   * `committed`: called after each write that put events in the outbox (the relay's nudge).
   * `claims`: a pool whose commits do not wait for the WAL flush, for idempotency claims. Forgetting a
   * claim in a Postgres crash promises no less than the claim's own lease does: the execution's record,
   * a flushed commit, flushes every claim written before it, so only a claim whose call was never
   * recorded can be lost, and such a claim is taken over once its lease runs out anyway.
   */
  constructor(
    private readonly pool: Pool,
    private readonly committed: () => void = () => {},
    private readonly claims: Pool = pool,
  ) {}

  async useConsent(jti: string, expiresAt: Date): Promise<boolean> {
    const res = await this.pool.query("INSERT INTO consent_uses (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING", [
      jti,
      expiresAt,
    ]);
    return res.rowCount === 1;
  }

  /**
   * Inserts claims, or takes over keys older than 24 hours or in-flight claims whose lease ran out; claims
   * made while one is being written go together in one statement. True for the claims taken.
   */
  private async claimMany(items: PendingClaim[]): Promise<boolean[]> {
    const { rows } = await this.claims.query<{ account_id: string; idempotency_key: string }>({
      name: "execution_claim_keys",
      text: `INSERT INTO idempotency_keys (account_id, idempotency_key, input_hash, execution_id, state)
       SELECT c.account_id, c.idempotency_key, c.input_hash, c.execution_id, 'running'
         FROM jsonb_to_recordset($1::jsonb) AS c(account_id text, idempotency_key text, input_hash text, execution_id uuid)
       ON CONFLICT (account_id, idempotency_key) DO UPDATE
         SET input_hash = EXCLUDED.input_hash, execution_id = EXCLUDED.execution_id, state = 'running',
             created_at = now(), updated_at = now()
         WHERE idempotency_keys.created_at < now() - interval '24 hours'
            OR (idempotency_keys.state = 'running' AND idempotency_keys.input_hash = EXCLUDED.input_hash
                AND idempotency_keys.updated_at < now() - make_interval(secs => $2::double precision / 1000))
       RETURNING account_id, idempotency_key`,
      values: [
        JSON.stringify(
          items.map((c) => ({
            account_id: c.accountId,
            idempotency_key: c.key,
            input_hash: c.inputHash,
            execution_id: c.executionId,
          })),
        ),
        Math.min(...items.map((c) => c.leaseMs)),
      ],
    });
    const taken = new Set(rows.map((r) => `${r.account_id}\u0000${r.idempotency_key}`));
    return items.map((c) => taken.has(`${c.accountId}\u0000${c.key}`));
  }

  async claimIdempotency(
    accountId: string,
    key: string,
    inputHash: string,
    executionId: string,
    leaseMs: number,
  ): Promise<IdempotencyClaim> {
    if (await this.claimer.submit({ accountId, key, inputHash, executionId, leaseMs })) return { kind: "claimed" };
    const existing = await this.claims.query<{ input_hash: string; execution_id: string; state: string }>(
      "SELECT input_hash, execution_id, state FROM idempotency_keys WHERE account_id = $1 AND idempotency_key = $2",
      [accountId, key],
    );
    const row = existing.rows[0];
    // Released meanwhile (the other attempt was refused): try again.
    if (!row) return this.claimIdempotency(accountId, key, inputHash, executionId, leaseMs);
    if (row.input_hash !== inputHash) return { kind: "reused" };
    return row.state === "done"
      ? { kind: "replay", executionId: row.execution_id }
      : { kind: "running", executionId: row.execution_id };
  }

  async releaseIdempotency(accountId: string, key: string, executionId: string): Promise<void> {
    await this.claims.query(
      "DELETE FROM idempotency_keys WHERE account_id = $1 AND idempotency_key = $2 AND execution_id = $3 AND state = 'running'",
      [accountId, key, executionId],
    );
  }

  /**
   * The execution row, its event in the outbox (kit's relay publishes it, woken in process by
   * `committed` rather than a NOTIFY) and the idempotency key's completion, in ONE statement: a single statement is one
   * transaction, so all three are written or none, in one round trip instead of six. Calls recorded
   * while another record is being written are written together (recordMany), one statement for all.
   */
  record(r: ExecutionRecord, idempotency?: { accountId: string; key: string }): Promise<void> {
    return this.recorder.submit({ r, idempotency, event: executionEventRow(r) });
  }

  private async recordOne({ r, idempotency, event }: PendingRecord): Promise<void> {
    const outbox = outboxInsert([event], 24);
    await this.pool.query({
      // Named: prepared once per connection, so Postgres does not re-plan this statement on every call.
      name: "execution_record",
      text: `WITH execution AS (
         INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
           status, error, error_class, error_type, result_json, stored_meta, redaction, passthrough_reason, cost_cents, settlement,
           duration_ms, executed_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21)
       ), idempotency AS (
         UPDATE idempotency_keys SET state = 'done', updated_at = now()
          WHERE $22::text IS NOT NULL AND account_id = $23 AND idempotency_key = $22::text AND execution_id = $1
       ), event AS (
         ${outbox.sql}
       )
       SELECT 1`,
      values: [
        r.id,
        r.caller.accountId,
        r.caller.organizationId,
        r.caller.keyId ?? null,
        r.tool.id,
        r.tool.name,
        r.tool.serviceId,
        r.tool.serviceName,
        r.tool.serviceType,
        r.status,
        r.error,
        r.errorClass,
        r.errorType,
        r.result === undefined ? null : JSON.stringify(r.result),
        r.storedMeta,
        r.redaction,
        r.passthroughReason,
        r.costCents,
        r.settlement,
        r.durationMs,
        r.executedAt,
        idempotency?.key ?? null,
        idempotency?.accountId ?? null,
        ...outbox.values,
      ],
    });
  }

  /** recordOne for several executions: the same three writes for all of them in one statement. */
  private async recordMany(items: PendingRecord[]): Promise<void> {
    const events = items.map((i) => i.event);
    const done = items.filter((i) => i.idempotency !== undefined);
    const col = <V>(f: (r: ExecutionRecord) => V) => items.map(({ r }) => f(r));
    const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
    const outbox = outboxInsert(events, 25);
    await this.pool.query({
      name: "execution_record_many",
      text: `WITH execution AS (
         INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
           status, error, error_class, error_type, result_json, stored_meta, redaction, passthrough_reason, cost_cents, settlement,
           duration_ms, executed_at)
         SELECT id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
           status, error, error_class, error_type, result_json, stored_meta::jsonb, redaction::jsonb, passthrough_reason,
           cost_cents, settlement, duration_ms, executed_at
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
             $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::bigint[],
             $19::text[], $20::integer[], $21::timestamptz[])
             AS e(id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
               status, error, error_class, error_type, result_json, stored_meta, redaction, passthrough_reason, cost_cents,
               settlement, duration_ms, executed_at)
       ), idempotency AS (
         UPDATE idempotency_keys k SET state = 'done', updated_at = now()
           FROM unnest($22::text[], $23::text[], $24::uuid[]) AS d(account_id, idempotency_key, execution_id)
          WHERE k.account_id = d.account_id AND k.idempotency_key = d.idempotency_key AND k.execution_id = d.execution_id
       ), event AS (
         ${outbox.sql}
       )
       SELECT 1`,
      values: [
        col((r) => r.id),
        col((r) => r.caller.accountId),
        col((r) => r.caller.organizationId),
        col((r) => r.caller.keyId ?? null),
        col((r) => r.tool.id),
        col((r) => r.tool.name),
        col((r) => r.tool.serviceId),
        col((r) => r.tool.serviceName),
        col((r) => r.tool.serviceType),
        col((r) => r.status),
        col((r) => r.error),
        col((r) => r.errorClass),
        col((r) => r.errorType),
        col((r) => (r.result === undefined ? null : JSON.stringify(r.result))),
        col((r) => json(r.storedMeta)),
        col((r) => json(r.redaction)),
        col((r) => r.passthroughReason),
        col((r) => r.costCents),
        col((r) => r.settlement),
        col((r) => r.durationMs),
        col((r) => r.executedAt),
        done.map((i) => i.idempotency?.accountId),
        done.map((i) => i.idempotency?.key),
        done.map((i) => i.r.id),
        ...outbox.values,
      ],
    });
  }

  /** Records the settlement; a released hold charged nothing, so the execution's cost becomes 0. */
  async setSettlement(executionId: string, settlement: Settlement): Promise<void> {
    await this.pool.query(
      "UPDATE executions SET settlement = $2, cost_cents = CASE WHEN $2 = 'released' THEN 0 ELSE cost_cents END WHERE id = $1",
      [executionId, settlement],
    );
  }

  /** Executions whose hold could not be settled yet, oldest first. */
  async pendingSettlements(limit: number): Promise<Array<{ id: string; settlement: Settlement }>> {
    const res = await this.pool.query<{ id: string; settlement: Settlement }>(
      "SELECT id, settlement FROM executions WHERE settlement IN ('capture_pending', 'release_pending') ORDER BY executed_at LIMIT $1",
      [limit],
    );
    return res.rows;
  }

  async find(executionId: string): Promise<StoredExecution | undefined> {
    if (!isUuid(executionId)) return undefined;
    const res = await this.pool.query<{
      id: string;
      account_id: string;
      tool_id: string;
      service_id: string;
      service_type: ServiceType;
      status: "success" | "error";
      error: string | null;
      error_class: ErrorClassName | null;
      result_json: string | null;
      stored_meta: StoredMeta | null;
      redaction: RedactionReport | null;
      passthrough_reason: string | null;
      cost_cents: bigint;
      executed_at: Date;
    }>(
      `SELECT id, account_id, tool_id, service_id, service_type, status, error, error_class, result_json, stored_meta, redaction,
              passthrough_reason, cost_cents, executed_at
         FROM executions WHERE id = $1 AND status <> 'refused'`,
      [executionId],
    );
    const row = res.rows[0];
    if (!row) return undefined;
    return {
      id: row.id,
      accountId: row.account_id,
      toolId: row.tool_id,
      serviceId: row.service_id,
      serviceType: row.service_type,
      status: row.status,
      error: row.error,
      errorClass: row.error_class,
      result: row.result_json === null ? undefined : (JSON.parse(row.result_json) as Json),
      storedMeta: row.stored_meta,
      redaction: row.redaction,
      passthroughReason: row.passthrough_reason,
      costCents: row.cost_cents,
      executedAt: row.executed_at,
    };
  }

  /** Forgets used confirm tokens that have expired anyway, and idempotency keys past 24 hours. */
  async prune(): Promise<void> {
    await this.pool.query("DELETE FROM consent_uses WHERE expires_at < now() - interval '1 hour'");
    await this.pool.query("DELETE FROM idempotency_keys WHERE created_at < now() - interval '25 hours'");
  }
}
