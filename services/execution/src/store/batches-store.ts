/**
 * SQL of async batches (migrations/0002_batches.sql): the batch, its elements' states and outcomes, the
 * lease of the process running it. Outcomes are opaque bytes here (the runner encodes them).
 */
import type { Json, JsonObject } from "@toolport/kit/json-values";
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { CallRequest } from "../domain/executor.js";

export type BatchState = "working" | "completed" | "cancelled" | "failed";

/** The whole-batch refusal of a failed batch, as the sync route would have answered it. */
export interface BatchError {
  code: number;
  reason: string;
  message: string;
  details: JsonObject;
  detail?: Json;
}

export interface BatchOwner {
  accountId: string;
  organizationId: string;
  keyId?: string;
}

export interface BatchRow {
  id: string;
  accountId: string;
  organizationId: string;
  keyId: string | null;
  status: BatchState;
  callsTotal: number;
  callsDone: number;
  error: BatchError | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** Every element's outcome in input order, once each is done (undefined entries while not). */
  outcomes: (Uint8Array | undefined)[];
}

/** A batch this process takes over (its lease ran out): what it needs to run on. */
export interface BatchToResume {
  id: string;
  principal: Uint8Array;
  requestId: string;
  elements: { position: number; state: "pending" | "started"; call: CallRequest }[];
}

export class PgBatchStore {
  constructor(private readonly pool: Pool) {}

  async create(b: {
    id: string;
    owner: BatchOwner;
    principal: Uint8Array;
    requestId: string;
    calls: CallRequest[];
    holder: string;
    leaseMs: number;
  }): Promise<BatchRow> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ created_at: Date }>(
        `INSERT INTO batches (id, account_id, organization_id, key_id, principal, request_id, status, calls_total,
                              lease_holder, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, 'working', $7, $8, now() + make_interval(secs => $9::double precision / 1000))
         RETURNING created_at`,
        [
          b.id,
          b.owner.accountId,
          b.owner.organizationId,
          b.owner.keyId || null,
          Buffer.from(b.principal),
          b.requestId,
          b.calls.length,
          b.holder,
          b.leaseMs,
        ],
      );
      await client.query(
        `INSERT INTO batch_elements (batch_id, position, call, state)
         SELECT $1, p - 1, c, 'pending' FROM unnest($2::text[]) WITH ORDINALITY AS t(c, p)`,
        [b.id, b.calls.map((c) => JSON.stringify(c))],
      );
      return {
        id: b.id,
        accountId: b.owner.accountId,
        organizationId: b.owner.organizationId,
        keyId: b.owner.keyId || null,
        status: "working",
        callsTotal: b.calls.length,
        callsDone: 0,
        error: null,
        createdAt: (rows[0] as { created_at: Date }).created_at,
        finishedAt: null,
        outcomes: b.calls.map(() => undefined),
      };
    });
  }

  async find(id: string): Promise<BatchRow | undefined> {
    const { rows } = await this.pool.query<{
      id: string;
      account_id: string;
      organization_id: string;
      key_id: string | null;
      status: BatchState;
      calls_total: number;
      error: BatchError | null;
      created_at: Date;
      finished_at: Date | null;
    }>(
      `SELECT id, account_id, organization_id, key_id, status, calls_total, error, created_at, finished_at
       FROM batches WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const elements = await this.pool.query<{ position: number; outcome: Buffer | null }>(
      "SELECT position, outcome FROM batch_elements WHERE batch_id = $1 AND state = 'done' ORDER BY position",
      [id],
    );
    const outcomes: (Uint8Array | undefined)[] = Array.from({ length: row.calls_total }, () => undefined);
    for (const e of elements.rows) if (e.outcome) outcomes[e.position] = new Uint8Array(e.outcome);
    return {
      id: row.id,
      accountId: row.account_id,
      organizationId: row.organization_id,
      keyId: row.key_id,
      status: row.status,
      callsTotal: row.calls_total,
      callsDone: elements.rows.length,
      error: row.error,
      createdAt: row.created_at,
      finishedAt: row.finished_at,
      outcomes,
    };
  }

  /**
   * pending -> started, unless a cancel or a takeover decided the element first: only a call this
   * returns true for may run, so no element runs twice.
   */
  async startElement(id: string, position: number): Promise<boolean> {
    const res = await this.pool.query(
      "UPDATE batch_elements SET state = 'started' WHERE batch_id = $1 AND position = $2 AND state = 'pending'",
      [id, position],
    );
    return res.rowCount === 1;
  }

  /** started -> done with its outcome (a late finish after a takeover decided it is dropped). */
  async finishElement(id: string, position: number, outcome: Uint8Array): Promise<void> {
    await this.pool.query(
      "UPDATE batch_elements SET state = 'done', outcome = $3 WHERE batch_id = $1 AND position = $2 AND state = 'started'",
      [id, position, Buffer.from(outcome)],
    );
  }

  /**
   * Ends a working batch whose every element is done: `cancelled` when a cancel came while it worked,
   * else `completed`. A batch with an element not done stays working.
   */
  async complete(id: string): Promise<void> {
    await this.pool.query(
      `UPDATE batches SET status = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'completed' END, finished_at = now()
       WHERE id = $1 AND status = 'working'
         AND NOT EXISTS (SELECT 1 FROM batch_elements WHERE batch_id = $1 AND state <> 'done')`,
      [id],
    );
  }

  /** Ends a working batch as refused as a whole. */
  async fail(id: string, error: BatchError): Promise<void> {
    await this.pool.query(
      "UPDATE batches SET status = 'failed', error = $2, finished_at = now() WHERE id = $1 AND status = 'working'",
      [id, JSON.stringify(error)],
    );
  }

  /**
   * Cancel: pending elements become done with the outcome `cancelled(call)` gives; the batch ends at once
   * when nothing of it is running, else when its running calls end (complete()).
   */
  async cancel(id: string, cancelled: (call: CallRequest) => Uint8Array): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      const res = await client.query("UPDATE batches SET cancel_requested = true WHERE id = $1 AND status = 'working'", [id]);
      if (res.rowCount !== 1) return;
      const pending = await client.query<{ position: number; call: string }>(
        "SELECT position, call FROM batch_elements WHERE batch_id = $1 AND state = 'pending' FOR UPDATE",
        [id],
      );
      for (const e of pending.rows) {
        await client.query("UPDATE batch_elements SET state = 'done', outcome = $3 WHERE batch_id = $1 AND position = $2", [
          id,
          e.position,
          Buffer.from(cancelled(JSON.parse(e.call) as CallRequest)),
        ]);
      }
    });
    await this.complete(id);
  }

  /** Keeps the leases of the batches this process runs. */
  async renew(ids: string[], holder: string, leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE batches SET lease_until = now() + make_interval(secs => $3::double precision / 1000)
       WHERE id = ANY($1::uuid[]) AND lease_holder = $2 AND status = 'working'`,
      [ids, holder, leaseMs],
    );
  }

  /**
   * Milliseconds until the first lease of a working batch runs out (0 or less: one has run out), null
   * when no batch is working: what the upkeep sleeps on when it has nothing to renew.
   */
  async nextLeaseEndMs(): Promise<number | null> {
    const { rows } = await this.pool.query<{ ms: number | null }>(
      "SELECT (EXTRACT(EPOCH FROM min(lease_until) - now()) * 1000)::float8 AS ms FROM batches WHERE status = 'working'",
    );
    return rows[0]?.ms ?? null;
  }

  /**
   * Takes over working batches whose lease ran out (their process died or stalled): each started element's
   * fate is unknown, so it is ended with `interrupted(call)` and never run again; pending ones are left
   * for the new holder to run.
   */
  async takeOver(
    holder: string,
    leaseMs: number,
    interrupted: (call: CallRequest) => Uint8Array,
    limit = 10,
  ): Promise<BatchToResume[]> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string; principal: Buffer; request_id: string }>(
        `UPDATE batches SET lease_holder = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000)
         WHERE id IN (SELECT id FROM batches WHERE status = 'working' AND lease_until < now()
                      ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING id, principal, request_id`,
        [holder, leaseMs, limit],
      );
      const out: BatchToResume[] = [];
      for (const row of rows) {
        const elements = await client.query<{ position: number; state: "pending" | "started"; call: string }>(
          "SELECT position, state, call FROM batch_elements WHERE batch_id = $1 AND state <> 'done' ORDER BY position FOR UPDATE",
          [row.id],
        );
        const resume: BatchToResume = {
          id: row.id,
          principal: new Uint8Array(row.principal),
          requestId: row.request_id,
          elements: [],
        };
        for (const e of elements.rows) {
          const call = JSON.parse(e.call) as CallRequest;
          if (e.state === "started") {
            await client.query("UPDATE batch_elements SET state = 'done', outcome = $3 WHERE batch_id = $1 AND position = $2", [
              row.id,
              e.position,
              Buffer.from(interrupted(call)),
            ]);
          } else resume.elements.push({ position: e.position, state: e.state, call });
        }
        out.push(resume);
      }
      return out;
    });
  }

  /** Deletes batches that ended more than `retentionMs` ago (their elements go with them). */
  async prune(retentionMs: number): Promise<number> {
    const res = await this.pool.query(
      "DELETE FROM batches WHERE finished_at < now() - make_interval(secs => $1::double precision / 1000)",
      [retentionMs],
    );
    return res.rowCount ?? 0;
  }
}
