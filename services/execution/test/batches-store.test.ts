/**
 * The async batch store on a real Postgres: the transitions that keep a call from running twice (an
 * element runs only after pending -> started; a cancel or a takeover decides pending elements first),
 * what a takeover does with started and pending elements, completion, ownership data and pruning.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import type { CallRequest } from "../src/domain/executor.js";
import { PgBatchStore } from "../src/store/batches-store.js";

let db: TestDatabase;
let store: PgBatchStore;

beforeAll(async () => {
  db = await migratedDatabase("exec_batches", "execution");
  store = new PgBatchStore(db.pool);
});

afterAll(async () => {
  await db?.pool.end();
});

const calls = (n: number): CallRequest[] =>
  Array.from({ length: n }, (_, i) => ({ toolId: `tool-${i}`, input: { i, "z-first": true, a: [1, { b: null }] }, fields: [] }));

const marker = (label: string) => (call: CallRequest) => new TextEncoder().encode(`${label}:${call.toolId}`);
const text = (bytes: Uint8Array | undefined) => (bytes ? new TextDecoder().decode(bytes) : undefined);

async function newBatch(n: number, leaseMs = 60_000) {
  return store.create({
    id: randomUUID(),
    owner: { accountId: "acc-1", organizationId: "org-1", keyId: "key-1" },
    principal: new Uint8Array([1, 2, 3]),
    requestId: "req-1",
    calls: calls(n),
    holder: "holder-a",
    leaseMs,
  });
}

describe("PgBatchStore", () => {
  it("records the batch working, with its owner, and completes it once every element is done", async () => {
    const b = await newBatch(2);
    expect(await store.find(b.id)).toMatchObject({
      status: "working",
      callsTotal: 2,
      callsDone: 0,
      keyId: "key-1",
      finishedAt: null,
    });
    expect(await store.startElement(b.id, 0)).toBe(true);
    // An element starts once only.
    expect(await store.startElement(b.id, 0)).toBe(false);
    await store.finishElement(b.id, 0, new TextEncoder().encode("one"));
    await store.complete(b.id);
    expect((await store.find(b.id))!.status).toBe("working");
    expect(await store.startElement(b.id, 1)).toBe(true);
    await store.finishElement(b.id, 1, new TextEncoder().encode("two"));
    await store.complete(b.id);
    const done = (await store.find(b.id))!;
    expect(done).toMatchObject({ status: "completed", callsDone: 2 });
    expect(done.finishedAt).toBeInstanceOf(Date);
    expect(done.outcomes.map(text)).toEqual(["one", "two"]);
  });

  it("cancel: pending elements end cancelled and can no longer start; running ones finish; the batch reads cancelled", async () => {
    const b = await newBatch(3);
    expect(await store.startElement(b.id, 0)).toBe(true);
    await store.cancel(b.id, marker("cancelled"));
    expect(await store.startElement(b.id, 1)).toBe(false);
    expect(await store.startElement(b.id, 2)).toBe(false);
    expect((await store.find(b.id))!).toMatchObject({ status: "working", callsDone: 2 });
    await store.finishElement(b.id, 0, new TextEncoder().encode("ran"));
    await store.complete(b.id);
    const done = (await store.find(b.id))!;
    expect(done.status).toBe("cancelled");
    expect(done.outcomes.map(text)).toEqual(["ran", "cancelled:tool-1", "cancelled:tool-2"]);
  });

  it("a cancel with nothing running ends the batch at once", async () => {
    const b = await newBatch(2);
    await store.cancel(b.id, marker("cancelled"));
    expect((await store.find(b.id))!.status).toBe("cancelled");
  });

  it("takes over only batches whose lease ran out: started elements end interrupted, pending ones are handed back to run", async () => {
    const live = await newBatch(1, 60_000);
    const stale = await newBatch(3, 1);
    expect(await store.startElement(stale.id, 0)).toBe(true);
    expect(await store.startElement(stale.id, 1)).toBe(true);
    await store.finishElement(stale.id, 1, new TextEncoder().encode("done before the crash"));
    await new Promise((r) => setTimeout(r, 20));
    const taken = await store.takeOver("holder-b", 60_000, marker("interrupted"));
    const mine = taken.find((t) => t.id === stale.id);
    expect(taken.some((t) => t.id === live.id)).toBe(false);
    expect(mine).toBeDefined();
    expect(mine!.requestId).toBe("req-1");
    expect([...mine!.principal]).toEqual([1, 2, 3]);
    expect(mine!.elements.map((e) => [e.position, e.state, e.call.toolId])).toEqual([[2, "pending", "tool-2"]]);
    // The call comes back as it was sent (key order included).
    expect(JSON.stringify(mine!.elements[0]!.call.input)).toBe(JSON.stringify(calls(3)[2]!.input));
    // A late finish of the interrupted call from the old holder is dropped.
    await store.finishElement(stale.id, 0, new TextEncoder().encode("late"));
    // Taken over once: the new lease holds.
    expect((await store.takeOver("holder-c", 60_000, marker("interrupted"))).some((t) => t.id === stale.id)).toBe(false);
    expect(await store.startElement(stale.id, 2)).toBe(true);
    await store.finishElement(stale.id, 2, new TextEncoder().encode("resumed"));
    await store.complete(stale.id);
    const done = (await store.find(stale.id))!;
    expect(done.status).toBe("completed");
    expect(done.outcomes.map(text)).toEqual(["interrupted:tool-0", "done before the crash", "resumed"]);
  });

  it("fail records the whole-batch refusal; prune deletes ended batches past retention only", async () => {
    const b = await newBatch(1);
    await store.fail(b.id, { code: 16, reason: "api_key_revoked", message: "this API key was revoked", details: {} });
    expect((await store.find(b.id))!).toMatchObject({ status: "failed", error: { code: 16, reason: "api_key_revoked" } });
    const working = await newBatch(1);
    expect(await store.prune(60_000)).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.prune(1)).toBeGreaterThanOrEqual(1);
    expect(await store.find(b.id)).toBeUndefined();
    expect(await store.find(working.id)).toBeDefined();
  });
});
