/**
 * The execution store's group commit against a real Postgres: records submitted together are written
 * by the multi-row statement (not by its one-by-one fallback), each with its row, its outbox event
 * (with its own caller's request id) and its idempotency key's completion, exactly as a lone record is.
 */
import { randomUUID } from "node:crypto";
import { runInScope } from "@toolport/kit/context";
import type { Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import type { ExecutionRecord } from "../src/domain/ports.js";
import { PgExecutionStore } from "../src/store/executions-store.js";

let db: TestDatabase;
/** Statement names the store ran, and those that failed. */
const ran: string[] = [];
const failed: string[] = [];

/** The pool, with every named statement noted (a failed multi-row write would hide behind the fallback). */
function watched(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver);
      return async (config: unknown, values?: unknown) => {
        const name = typeof config === "object" && config !== null ? (config as { name?: string }).name : undefined;
        if (name) ran.push(name);
        try {
          return await (target.query as (c: unknown, v?: unknown) => Promise<unknown>)(config, values);
        } catch (err) {
          if (name) failed.push(name);
          throw err;
        }
      };
    },
  });
}

function record(i: number): ExecutionRecord {
  return {
    id: randomUUID(),
    caller: {
      accountId: `acct-${i}`,
      organizationId: "org-1",
      keyId: i % 2 ? `key-${i}` : undefined,
      tier: "free",
      requireConfirmation: false,
      callRefusal: null,
    },
    tool: {
      id: randomUUID(),
      name: "echo",
      serviceId: "svc-1",
      serviceName: "Echo",
      serviceType: "api",
    } as ExecutionRecord["tool"],
    status: i % 3 === 0 ? "error" : "success",
    error: i % 3 === 0 ? "upstream said no" : null,
    errorClass: i % 3 === 0 ? "upstream" : null,
    errorType: i % 3 === 0 ? "http_500" : null,
    result: i % 3 === 0 ? undefined : { n: i, text: 'nul \u0000 and quote " kept', nested: [{ a: 1 }] },
    storedMeta: null,
    redaction: i === 4 ? { count: 1, fields: [], mode: "mask" } : null,
    passthroughReason: null,
    costCents: BigInt(i),
    settlement: "none",
    durationMs: 10 + i,
    executedAt: new Date(Date.UTC(2026, 10, 24, 12, 0, i)),
    freeTier: i % 2 === 0,
  };
}

beforeAll(async () => {
  db = await migratedDatabase("exec_store", "execution");
});

afterAll(async () => {
  await db?.pool.end();
});

describe("PgExecutionStore.record", () => {
  it("writes concurrent records with one multi-row statement, each exactly as a lone record", async () => {
    const store = new PgExecutionStore(watched(db.pool));
    const records = Array.from({ length: 12 }, (_, i) => record(i));
    // Idempotency keys claimed for two of them, completed by the record.
    for (const i of [1, 7]) {
      const r = records[i] as ExecutionRecord;
      expect(await store.claimIdempotency(r.caller.accountId, `idem-${i}`, "hash", r.id, 60_000)).toEqual({ kind: "claimed" });
    }
    ran.length = 0;
    await Promise.all(
      records.map((r, i) =>
        runInScope({ requestId: `req-${i}` }, () =>
          store.record(r, i === 1 || i === 7 ? { accountId: r.caller.accountId, key: `idem-${i}` } : undefined),
        ),
      ),
    );
    expect(failed).toEqual([]);
    expect(ran[0]).toBe("execution_record");
    expect(ran.slice(1)).toContain("execution_record_many");
    expect(ran.length).toBeLessThan(records.length);

    for (const [i, r] of records.entries()) {
      const stored = await store.find(r.id);
      expect(stored?.status, `record ${i}`).toBe(r.status);
      expect(stored?.result, `record ${i}`).toEqual(r.result);
      expect(stored?.redaction ?? null, `record ${i}`).toEqual(r.redaction);
    }
    const outbox = await db.pool.query<{ id: string; request_id: string }>("SELECT id, request_id FROM outbox");
    expect(new Map(outbox.rows.map((row) => [row.id, row.request_id]))).toEqual(
      new Map(records.map((r, i) => [r.id, `req-${i}`])),
    );
    const keys = await db.pool.query<{ idempotency_key: string; state: string }>(
      "SELECT idempotency_key, state FROM idempotency_keys ORDER BY idempotency_key",
    );
    expect(keys.rows).toEqual([
      { idempotency_key: "idem-1", state: "done" },
      { idempotency_key: "idem-7", state: "done" },
    ]);
    const row = await db.pool.query("SELECT key_id, cost_cents, duration_ms, executed_at FROM executions WHERE id = $1", [
      records[5]?.id,
    ]);
    expect(row.rows[0]).toEqual({
      key_id: "key-5",
      cost_cents: 5n,
      duration_ms: 15,
      executed_at: new Date(Date.UTC(2026, 10, 24, 12, 0, 5)),
    });
  });

  it("fails only the caller whose record cannot be written", async () => {
    const store = new PgExecutionStore(db.pool);
    const good = [record(20), record(21), record(22)];
    const duplicate = { ...record(23), id: (good[0] as ExecutionRecord).id };
    await store.record(record(19));
    const results = await Promise.allSettled([...good, duplicate].map((r) => store.record(r)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected"]);
  });
});
