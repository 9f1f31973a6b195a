/** Task handles and the Task an async batch record is (tasks.ts), without a server. */
import { describe, expect, it } from "vitest";
import { TaskHandles, taskOfBatch } from "./tasks.js";

const alice = { apiKey: "tp_alice", orgId: "org-1" };
const bob = { apiKey: "tp_bob", orgId: "org-1" };
const BATCH = "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20";

describe("TaskHandles", () => {
  const handles = new TaskHandles("k".repeat(32));

  it("opens a batch handle for its caller only, and says what it names", () => {
    const handle = handles.seal(BATCH, alice, "bt1");
    expect(handle).toMatch(/^bt1\.5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20\.[0-9A-Za-z_-]{22}$/);
    expect(handles.open(handle, alice)).toEqual({ kind: "bt1", id: BATCH });
    expect(handles.open(handle, bob)).toBeUndefined();
    expect(new TaskHandles("x".repeat(32)).open(handle, alice)).toBeUndefined();
  });

  it("binds the kind: a batch's tag does not open the same id as a run, nor the reverse", () => {
    const batch = handles.seal(BATCH, alice, "bt1");
    const run = handles.seal(BATCH, alice);
    expect(run.startsWith("wf1.")).toBe(true);
    expect(handles.open(`wf1${batch.slice(3)}`, alice)).toBeUndefined();
    expect(handles.open(`bt1${run.slice(3)}`, alice)).toBeUndefined();
    expect(handles.open(run, alice)).toEqual({ kind: "wf1", id: BATCH });
  });
});

describe("taskOfBatch", () => {
  const record = { batch_id: BATCH, created_at: "2026-11-20T09:30:00.000Z", calls_total: 3 };

  it("is working with how many calls are done", () => {
    const task = taskOfBatch("h", { ...record, status: "working", calls_done: 1, finished_at: null, results: null });
    expect(task).toMatchObject({
      taskId: "h",
      status: "working",
      statusMessage: "1 of 3 calls done",
      createdAt: record.created_at,
    });
    expect("result" in task).toBe(false);
  });

  it("is completed with the elements in the MCP surface's fields", () => {
    const element = { tool_id: "t", success: true, result: { a: 1 }, error: null, execution_id: "e-1", truncated: false };
    const task = taskOfBatch("h", {
      ...record,
      status: "completed",
      calls_done: 3,
      finished_at: "2026-11-20T09:30:02.000Z",
      results: [element],
    });
    expect(task).toMatchObject({ status: "completed", lastUpdatedAt: "2026-11-20T09:30:02.000Z" });
    const result = task.result as { structuredContent: { results: Record<string, unknown>[] }; isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.results).toEqual([
      {
        tool_id: "t",
        success: true,
        result: { a: 1 },
        truncated: false,
        cursor: null,
        error: null,
        _meta: { execution_id: "e-1" },
      },
    ]);
  });

  it("a batch refused as a whole is completed with the error result the synchronous call gives", () => {
    const error = {
      detail: "this API key was revoked",
      error: { code: "api_key_revoked", message: "this API key was revoked", details: {} },
    };
    const task = taskOfBatch("h", { ...record, status: "failed", error_status: 401, error });
    const result = task.result as { isError?: boolean; content: { text: string }[] };
    expect(task.status).toBe("completed");
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/^api_key_revoked: this API key was revoked/);
  });

  it("is cancelled after a cancel", () => {
    expect(taskOfBatch("h", { ...record, status: "cancelled", calls_done: 3 })).toMatchObject({ status: "cancelled" });
  });
});
