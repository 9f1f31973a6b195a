/**
 * Async batches through the gateway (issue 31): POST /v1/tools/call/batch with `Prefer: respond-async`
 * answers 202 with the record, `Location` and `Preference-Applied`; GET follows it from working to the
 * sync route's results; only the key that sent it sees it; cancel; and a crash of the execution process
 * mid-batch never runs a call twice (its calls in flight end as batch_interrupted once the lease runs
 * out). Calls are held in a real HTTP upstream (ShopApi's gate), so "working" is observed without timing.
 * Per-role layout, so the execution process alone can be killed.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, createKey, type ExecStack, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";
import { type ShopApi, shopDocument, startShopApi } from "./workflow-support.js";

let s: ExecStack;
let api: ShopApi;
let alice: AgentKey;
let bob: AgentKey;
let tools: Record<string, string>;

beforeAll(async () => {
  api = await startShopApi();
  s = await startExecStack(
    [`127.0.0.1:${api.port}`],
    // A short lease, so a batch of a killed execution process is taken over quickly.
    { EXECUTION_BATCH_LEASE_MS: "900" },
    ["catalog", "execution", "billing", "identity", "gateway"],
    { layout: "per-role" },
  );
  alice = await registerAgent(s);
  bob = await registerAgent(s);
  tools = (await publishOpenApi(s, alice, shopDocument(`Shop ${randomUUID().slice(0, 6)}`), api.url)).tools;
}, 300_000);

afterAll(async () => {
  await s?.stop();
  await api?.close();
});

const ASYNC = { prefer: "respond-async" };

/** Holds every /slow call in the upstream until the returned function is called. */
function hold(): () => void {
  let release!: () => void;
  api.gate = new Promise<void>((r) => {
    release = r;
  });
  return () => {
    api.gate = undefined;
    release();
  };
}

/** Two held calls and one refused at once (unknown tool). */
const callsOf = (tag: string) => [
  { tool_id: tools.slow!, tool_input: { tag, step: 1 } },
  { tool_id: "no-such-tool", tool_input: {} },
  { tool_id: tools.slow!, tool_input: { tag, step: 2 }, fields: ["done"] },
];

const received = (tag: string) => (api.calls.get(`${tag}:1`) ?? 0) + (api.calls.get(`${tag}:2`) ?? 0);

async function batchOf(id: string, key = alice.key) {
  return s.call("GET", `/tools/call/batch/${id}`, { key });
}

async function ended(id: string) {
  let last = await batchOf(id);
  await expect
    .poll(
      async () => {
        last = await batchOf(id);
        return last.body.status;
      },
      { timeout: 30_000, interval: 200 },
    )
    .not.toBe("working");
  return last;
}

/** Elements without what differs between two runs of the same calls (their execution ids). */
const withoutIds = (results: Record<string, unknown>[]) =>
  results.map((r) => {
    const { execution_id, _meta, ...rest } = r;
    const meta = _meta ? { ...(_meta as Record<string, unknown>) } : undefined;
    if (meta) delete meta.execution_id;
    return { ...rest, ran: execution_id !== null, ...(meta ? { _meta: meta } : {}) };
  });

describe("POST /v1/tools/call/batch with Prefer: respond-async", () => {
  it("answers 202 with the record at once, is working while calls run, then has the sync route's results", async () => {
    const tag = `async-${randomUUID().slice(0, 8)}`;
    const calls = callsOf(tag);
    const release = hold();
    let id: string;
    try {
      const started = await s.call("POST", "/tools/call/batch", { key: alice.key, headers: ASYNC, body: { calls } });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      id = started.body.batch_id;
      expect(started.headers.get("location")).toBe(`/v1/tools/call/batch/${id}`);
      expect(started.headers.get("preference-applied")).toBe("respond-async");
      expect(started.body).toMatchObject({ status: "working", calls_total: 3, results: null, finished_at: null });

      // Both upstream calls are held; the refused one ended.
      await expect.poll(() => received(tag), { timeout: 20_000 }).toBe(2);
      await expect.poll(async () => (await batchOf(id)).body.calls_done, { timeout: 20_000 }).toBe(1);
      const working = await batchOf(id);
      expect(working.status).toBe(200);
      expect(working.body).toMatchObject({ batch_id: id, status: "working", calls_total: 3, calls_done: 1, results: null });
      // Held for several leases (900 ms): the running process keeps renewing its lease, so nothing takes
      // the batch over while it lives (a takeover would end the held calls batch_interrupted).
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await batchOf(id)).body).toMatchObject({ status: "working", calls_done: 1 });
    } finally {
      release();
    }

    const done = await ended(id);
    expect(done.body).toMatchObject({ status: "completed", calls_total: 3, calls_done: 3 });
    expect(typeof done.body.finished_at).toBe("string");
    expect(api.calls.get(`${tag}:1`)).toBe(1);
    expect(api.calls.get(`${tag}:2`)).toBe(1);

    // Without the header the route is the synchronous one, and gives the same elements.
    const sync = await s.call("POST", "/tools/call/batch", { key: alice.key, body: { calls } });
    expect(sync.status).toBe(200);
    expect(sync.headers.get("preference-applied")).toBeNull();
    expect(Object.keys(sync.body)).toEqual(["results"]);
    expect(withoutIds(done.body.results)).toEqual(withoutIds(sync.body.results));
    expect(done.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, true]);
    expect(done.body.results[1].error_code).toBe("tool_not_found");
    expect(done.body.results[2].result).toEqual({ done: true });
  });

  it("validates the body as the sync route does", async () => {
    const none = await s.call("POST", "/tools/call/batch", { key: alice.key, headers: ASYNC, body: { calls: [] } });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe("invalid_batch");
    const eleven = Array.from({ length: 11 }, () => ({ tool_id: tools.slow! }));
    const many = await s.call("POST", "/tools/call/batch", { key: alice.key, headers: ASYNC, body: { calls: eleven } });
    expect(many.status).toBe(400);
    const noTool = await s.call("POST", "/tools/call/batch", { key: alice.key, headers: ASYNC, body: { calls: [{}] } });
    expect(noTool.status).toBe(400);
    expect(noTool.body.error.details.field).toBe("calls[0].tool_id");
    const anonymous = await s.call("POST", "/tools/call/batch", { headers: ASYNC, body: { calls: [{ tool_id: tools.slow! }] } });
    expect(anonymous.status).toBe(401);
  });

  it("shows a batch only to the key that sent it: 404 for another caller or an unknown id, 400 for a malformed id", async () => {
    const started = await s.call("POST", "/tools/call/batch", {
      key: alice.key,
      headers: ASYNC,
      body: { calls: [{ tool_id: "no-such-tool" }] },
    });
    expect(started.status).toBe(202);
    const id = started.body.batch_id as string;
    expect((await ended(id)).body.status).toBe("completed");

    const theirs = await batchOf(id, bob.key);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe("batch_not_found");
    expect(JSON.stringify(theirs.body)).not.toContain("tool_not_found");
    // Another key of the same agent is not the caller either.
    const sibling = await createKey(s, alice, null);
    const fromSibling = await batchOf(id, sibling);
    expect(fromSibling.status).toBe(404);
    expect(fromSibling.body.error.code).toBe("batch_not_found");
    const cancelTheirs = await s.call("POST", `/tools/call/batch/${id}/cancel`, { key: bob.key });
    expect(cancelTheirs.status).toBe(404);
    const unknown = await batchOf(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("batch_not_found");
    const malformed = await batchOf("not-a-batch-id");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("invalid_batch_id");
    const anonymous = await s.call("GET", `/tools/call/batch/${id}`);
    expect(anonymous.status).toBe(401);
  });

  it("cancel: the batch reads cancelled; calls already running finish with their results; an ended batch is unchanged", async () => {
    const tag = `cancel-${randomUUID().slice(0, 8)}`;
    const release = hold();
    let id: string;
    try {
      const started = await s.call("POST", "/tools/call/batch", {
        key: alice.key,
        headers: ASYNC,
        body: { calls: callsOf(tag) },
      });
      expect(started.status).toBe(202);
      id = started.body.batch_id;
      await expect.poll(() => received(tag), { timeout: 20_000 }).toBe(2);
      const cancelling = await s.call("POST", `/tools/call/batch/${id}/cancel`, { key: alice.key });
      expect(cancelling.status).toBe(200);
      expect(cancelling.body.batch_id).toBe(id);
    } finally {
      release();
    }
    const done = await ended(id);
    expect(done.body.status).toBe("cancelled");
    expect(done.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, true]);
    const again = await s.call("POST", `/tools/call/batch/${id}/cancel`, { key: alice.key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(done.body);
  });

  it("a crash of the execution process mid-batch runs no call twice: calls in flight end as batch_interrupted", async () => {
    const tag = `crash-${randomUUID().slice(0, 8)}`;
    const release = hold();
    let id: string;
    try {
      const started = await s.call("POST", "/tools/call/batch", {
        key: alice.key,
        headers: ASYNC,
        body: { calls: callsOf(tag) },
      });
      expect(started.status).toBe(202);
      id = started.body.batch_id;
      await expect.poll(() => received(tag), { timeout: 20_000 }).toBe(2);
      await expect.poll(async () => (await batchOf(id)).body.calls_done, { timeout: 20_000 }).toBe(1);
      await s.stack.stop("execution", "SIGKILL");
      await s.stack.start("execution");
    } finally {
      release();
    }
    const done = await ended(id);
    expect(done.body.status).toBe("completed");
    const codes = done.body.results.map((r: { error_code?: string }) => r.error_code);
    expect(codes).toEqual(["batch_interrupted", "tool_not_found", "batch_interrupted"]);
    expect(done.body.results[0]).toMatchObject({ success: false, result: null, execution_id: null });
    expect(api.calls.get(`${tag}:1`)).toBe(1);
    expect(api.calls.get(`${tag}:2`)).toBe(1);
  });
});
