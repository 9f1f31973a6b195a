/**
 * The async batches' upkeep on a real Postgres, as it paces itself: with nothing to renew it sleeps until
 * the first lease of a working batch runs out (at most a lease: a batch started elsewhere after its look
 * holds a full lease), so an idle process asks Postgres once a lease instead of every third of one, and a
 * batch whose lease ran out is still taken over at the first round after.
 */
import { randomUUID } from "node:crypto";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { BatchRunner } from "../src/batches/batch-runner.js";
import type { Executor } from "../src/domain/executor.js";
import { PgBatchStore } from "../src/store/batches-store.js";

let db: TestDatabase;
let store: PgBatchStore;
const log = createLogger("batch-upkeep-test", "silent");
const LEASE_MS = 30_000;

beforeAll(async () => {
  db = await migratedDatabase("exec_batch_upkeep", "execution");
  store = new PgBatchStore(db.pool);
});

afterAll(async () => {
  await db?.pool.end();
});

/** A working batch of one call, held by `holder` for `leaseMs`. */
const newBatch = (holder: string, leaseMs: number) =>
  store.create({
    id: randomUUID(),
    owner: { accountId: "acc-1", organizationId: "org-1", keyId: "key-1" },
    principal: new Uint8Array(), // an empty Principal message
    requestId: "req-1",
    calls: [{ toolId: "tool-0", input: {}, fields: [] }],
    holder,
    leaseMs,
  });

// These rounds renew nothing and resume no call (a taken-over batch's only call had started), so the
// executor is never reached.
const runner = () => new BatchRunner({ executor: {} as Executor, store, log, leaseMs: LEASE_MS, retentionMs: 60_000 });

describe("batch upkeep", () => {
  it("with no batch working, waits a whole lease", async () => {
    expect(await store.nextLeaseEndMs()).toBeNull();
    expect(await runner().tick()).toBe(LEASE_MS);
  });

  it("with another process's batch working, waits until just past its lease's end, and takes it over then", async () => {
    const other = await newBatch("holder-elsewhere", 1_500);
    expect(await store.startElement(other.id, 0)).toBe(true);
    const endsIn = await store.nextLeaseEndMs();
    expect(endsIn).toBeGreaterThan(0);
    expect(endsIn).toBeLessThanOrEqual(1_500);
    const upkeep = runner();
    const wait = await upkeep.tick();
    // Not a third of a lease (10 s) nor a lease: until that batch's lease ends.
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(1_500 + 20);
    expect((await store.find(other.id))!.status).toBe("working");
    await new Promise((r) => setTimeout(r, wait));
    expect(await store.nextLeaseEndMs()).toBeLessThanOrEqual(0);
    // The round then takes it over: its started call ends interrupted and the batch completes.
    expect(await upkeep.tick()).toBe(LEASE_MS / 3);
    const taken = (await store.find(other.id))!;
    expect(taken.status).toBe("completed");
    expect(taken.outcomes).toHaveLength(1);
    expect(await store.nextLeaseEndMs()).toBeNull();
  });

  it("never waits longer than a lease, however far the first lease's end", async () => {
    await newBatch("holder-far", 10 * LEASE_MS);
    expect(await store.nextLeaseEndMs()).toBeGreaterThan(LEASE_MS);
    expect(await runner().tick()).toBe(LEASE_MS);
  });
});
