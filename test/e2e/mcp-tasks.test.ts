/**
 * Long work as tasks through the MCP server (issue 31): a 2026-07-28 client that declares the Tasks
 * extension calls run_workflow (or batch_execute_tools) and gets a task handle at once; tasks/get follows
 * the workflow run in the content service (the async batch in the execution service) and, once it ended,
 * answers the same tool result the synchronous call gives. The MCP server is stopped and started again
 * while the work goes on, and the handle still resolves (nothing about a task is kept in the server). Handles are the caller's own; a client that
 * did not declare the extension is refused; server/discover lists the extension. Per-role layout, so
 * the MCP server alone can be restarted.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, type ExecStack, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";
import { modernRpc } from "./mcp-support.js";
import { type ShopApi, shopDocument, startShopApi } from "./workflow-support.js";

const TASKS = "io.modelcontextprotocol/tasks";

let s: ExecStack;
let api: ShopApi;
let alice: AgentKey;
let bob: AgentKey;
let tools: Record<string, string>;

beforeAll(async () => {
  api = await startShopApi();
  s = await startExecStack(
    [`127.0.0.1:${api.port}`],
    // One key for both lives of the MCP server: handles made before the restart open after it.
    { MCP_REQUEST_STATE_KEY: randomBytes(32).toString("hex") },
    ["catalog", "execution", "billing", "identity", "content", "gateway", "mcp-server"],
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

/** A raw 2026-07-28 request; `tasks` declares the extension in the request's capabilities. */
const rpc = (method: string, params: Record<string, unknown>, key: string, tasks = true) =>
  modernRpc(s.stack.mcpUrl, method, params, { key, capabilities: tasks ? { extensions: { [TASKS]: {} } } : {} });

async function slowWorkflow(tag: string): Promise<string> {
  const wf = await s.call("POST", "/workflows", {
    key: alice.key,
    body: {
      name: `Slow ${tag}`,
      steps: [
        { tool_id: tools.slow, input_mapping: { tag, step: 1 } },
        { tool_id: tools.slow, input_mapping: { tag, step: 2 } },
      ],
    },
  });
  expect(wf.status, JSON.stringify(wf.body)).toBe(200);
  return wf.body.id;
}

describe("run_workflow as a task", () => {
  it("server/discover lists the Tasks extension", async () => {
    const found = await rpc("server/discover", {}, alice.key);
    expect(found.result.capabilities.extensions).toEqual({ [TASKS]: {} });
  });

  it("answers a handle at once; tasks/get follows the run across a restart of the MCP server to the synchronous call's result", async () => {
    const tag = `task-${randomUUID().slice(0, 8)}`;
    const workflowId = await slowWorkflow(tag);
    api.slowMs = 1_500;
    try {
      const started = Date.now();
      const created = await rpc("tools/call", { name: "run_workflow", arguments: { workflow_id: workflowId } }, alice.key);
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(created.result).toMatchObject({ resultType: "task", status: "working", ttlMs: null, pollIntervalMs: 1000 });
      const taskId = created.result.taskId as string;
      expect(taskId).toMatch(/^wf1\./);
      expect("content" in created.result).toBe(false);

      const working = await rpc("tasks/get", { taskId }, alice.key);
      expect(working.result).toMatchObject({ resultType: "complete", taskId, status: "working" });

      // The MCP server goes away and comes back while the run goes on in the content service.
      await s.stack.stop("mcp-server");
      await s.stack.start("mcp-server");

      let task: { status: string; result?: { structuredContent: Record<string, unknown> } } = working.result;
      await expect
        .poll(
          async () => {
            task = (await rpc("tasks/get", { taskId }, alice.key)).result;
            return task.status;
          },
          { timeout: 20_000, interval: 250 },
        )
        .toBe("completed");
      const run = task.result!.structuredContent;
      expect(run).toMatchObject({ status: "completed", steps_completed: 2, result: { tag, step: 2, done: true } });
      expect(api.calls.get(`${tag}:1`)).toBe(1);
      expect(api.calls.get(`${tag}:2`)).toBe(1);

      // The same as a synchronous call of the tool gives (a client without the extension).
      api.slowMs = 0;
      const sync = await rpc("tools/call", { name: "run_workflow", arguments: { workflow_id: workflowId } }, alice.key, false);
      expect(sync.result.resultType).toBe("complete");
      const keys = (o: object) => Object.keys(o).sort();
      // Less what the SDK stamps on every answer it sends (resultType, _meta's server identity).
      expect(keys(task.result!)).toEqual(keys(sync.result).filter((k) => k !== "resultType" && k !== "_meta"));
      expect(keys(run)).toEqual(keys(sync.result.structuredContent));
      expect(sync.result.structuredContent).toMatchObject({ status: "completed", steps_completed: 2 });
    } finally {
      api.slowMs = 0;
    }
  });

  it("opens a handle only for the caller it was made for, and only for a client that declared the extension", async () => {
    const workflowId = await slowWorkflow(`own-${randomUUID().slice(0, 8)}`);
    const created = await rpc("tools/call", { name: "run_workflow", arguments: { workflow_id: workflowId } }, alice.key);
    const taskId = created.result.taskId as string;
    const theirs = await rpc("tasks/get", { taskId }, bob.key);
    expect(theirs.error).toMatchObject({ code: -32602 });
    const forged = await rpc("tasks/get", { taskId: `${taskId.slice(0, -1)}${taskId.endsWith("A") ? "B" : "A"}` }, alice.key);
    expect(forged.error).toMatchObject({ code: -32602 });
    const undeclared = await rpc("tasks/get", { taskId }, alice.key, false);
    expect(undeclared.error?.code).toBe(-32021);
    for (const method of ["tasks/update", "tasks/cancel"]) {
      const ack = await rpc(method, { taskId, ...(method === "tasks/update" ? { inputResponses: {} } : {}) }, alice.key);
      expect(ack.result, method).toEqual(expect.objectContaining({ resultType: "complete" }));
      expect((await rpc(method, { taskId: "wf1.nope.AAAAAAAAAAAAAAAAAAAAAA" }, alice.key)).error?.code, method).toBe(-32602);
    }
  });
});

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

/** A tool result's elements without what differs between two runs of the same calls (execution ids). */
const withoutIds = (results: Record<string, unknown>[]) =>
  results.map(({ _meta, ...rest }) => {
    const { execution_id, ...meta } = _meta as Record<string, unknown>;
    return { ...rest, ran: execution_id !== null, _meta: meta };
  });

describe("batch_execute_tools as a task", () => {
  const batchCalls = (tag: string) => [
    { tool_id: tools.slow, tool_input: { tag, step: 1 } },
    { tool_id: "no-such-tool" },
    { tool_id: tools.slow, tool_input: { tag, step: 2 }, max_response_chars: 200 },
  ];
  const received = (tag: string) => (api.calls.get(`${tag}:1`) ?? 0) + (api.calls.get(`${tag}:2`) ?? 0);

  it("answers a handle at once; tasks/get follows the batch across a restart of the MCP server to the synchronous call's result", async () => {
    const tag = `bt-${randomUUID().slice(0, 8)}`;
    const calls = batchCalls(tag);
    const release = hold();
    let taskId: string;
    try {
      const created = await rpc("tools/call", { name: "batch_execute_tools", arguments: { calls } }, alice.key);
      expect(created.result).toMatchObject({ resultType: "task", status: "working", ttlMs: null, pollIntervalMs: 1000 });
      taskId = created.result.taskId as string;
      expect(taskId).toMatch(/^bt1\./);
      expect("content" in created.result).toBe(false);

      // Both upstream calls are held in the upstream; the refused call ended.
      await expect.poll(() => received(tag), { timeout: 20_000 }).toBe(2);
      await expect
        .poll(async () => (await rpc("tasks/get", { taskId }, alice.key)).result?.statusMessage, { timeout: 20_000 })
        .toBe("1 of 3 calls done");

      // The MCP server goes away and comes back while the calls run in the execution service.
      await s.stack.stop("mcp-server");
      await s.stack.start("mcp-server");
      const after = await rpc("tasks/get", { taskId }, alice.key);
      expect(after.result).toMatchObject({
        resultType: "complete",
        taskId,
        status: "working",
        statusMessage: "1 of 3 calls done",
      });
    } finally {
      release();
    }

    let task: { status: string; result?: { structuredContent: { results: Record<string, unknown>[] }; isError?: boolean } } = {
      status: "working",
    };
    await expect
      .poll(
        async () => {
          task = (await rpc("tasks/get", { taskId }, alice.key)).result;
          return task.status;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe("completed");
    expect(api.calls.get(`${tag}:1`)).toBe(1);
    expect(api.calls.get(`${tag}:2`)).toBe(1);
    const results = task.result!.structuredContent.results;
    expect(results.map((r) => r.success)).toEqual([true, false, true]);
    expect(results[1]!.error_code).toBe("tool_not_found");

    // The same as the synchronous call gives (a client without the extension).
    const sync = await rpc("tools/call", { name: "batch_execute_tools", arguments: { calls } }, alice.key, false);
    expect(sync.result.resultType).toBe("complete");
    expect(sync.result.structuredContent.results).toHaveLength(3);
    expect(withoutIds(results)).toEqual(withoutIds(sync.result.structuredContent.results));
    const keys = (o: object) => Object.keys(o).sort();
    // Less what the SDK stamps on every answer it sends (resultType, _meta's server identity).
    expect(keys(task.result!)).toEqual(keys(sync.result).filter((k) => k !== "resultType" && k !== "_meta"));
    expect(api.calls.get(`${tag}:1`)).toBe(2);
  });

  it("stays synchronous for a client that can also ask its person (consent questions are not carried by a task)", async () => {
    const calls = [{ tool_id: "no-such-tool" }];
    const both = await modernRpc(
      s.stack.mcpUrl,
      "tools/call",
      { name: "batch_execute_tools", arguments: { calls } },
      { key: alice.key, capabilities: { extensions: { [TASKS]: {} }, elicitation: { form: {} } } },
    );
    expect(both.result.resultType).toBe("complete");
    expect(both.result.structuredContent.results).toMatchObject([{ success: false, error_code: "tool_not_found" }]);
  });

  it("opens a batch handle only for its caller; tasks/cancel cancels the batch", async () => {
    const tag = `btc-${randomUUID().slice(0, 8)}`;
    const release = hold();
    let taskId: string;
    try {
      const created = await rpc("tools/call", { name: "batch_execute_tools", arguments: { calls: batchCalls(tag) } }, alice.key);
      taskId = created.result.taskId as string;
      expect(taskId).toMatch(/^bt1\./);
      expect((await rpc("tasks/get", { taskId }, bob.key)).error).toMatchObject({ code: -32602 });
      expect((await rpc("tasks/cancel", { taskId }, bob.key)).error).toMatchObject({ code: -32602 });
      // A run's handle with the batch's id is not the batch's.
      const swapped = `wf1.${taskId.split(".")[1]}.${taskId.split(".")[2]}`;
      expect((await rpc("tasks/get", { taskId: swapped }, alice.key)).error).toMatchObject({ code: -32602 });
      await expect.poll(() => received(tag), { timeout: 20_000 }).toBe(2);
      const cancelled = await rpc("tasks/cancel", { taskId }, alice.key);
      expect(cancelled.result).toEqual(expect.objectContaining({ resultType: "complete" }));
    } finally {
      release();
    }
    await expect
      .poll(async () => (await rpc("tasks/get", { taskId }, alice.key)).result?.status, { timeout: 20_000, interval: 250 })
      .toBe("cancelled");
  });
});
