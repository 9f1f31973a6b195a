/**
 * Long work as tasks: the Tasks extension (`io.modelcontextprotocol/tasks`) of protocol revision
 * 2026-07-28. A client that declares the extension in a request's capabilities and calls `run_workflow`
 * gets a task handle at once (`resultType: "task"`) while the workflow runs in the content service;
 * `tasks/get` answers the run's state and, once it ended, the same tool result the synchronous call
 * gives. Nothing about a task is kept in this server: the handle names the run, and the run lives in
 * the content service's database, so a task survives a restart or a different replica answering
 * (with the same MCP_REQUEST_STATE_KEY).
 *
 * A handle is `wf1.<run id>.<tag>`, the tag an HMAC of the run id and a hash of the caller's key and
 * organization, so only the caller who started the run can follow it through this server (the
 * content service checks the run's owner as well). It stays short because clients send it as the
 * `Mcp-Name` header of every `tasks/*` request.
 *
 * The SDK serves the extension's methods (`tasks/get`, `tasks/update`, `tasks/cancel`) as custom
 * methods but has no task result for `tools/call`: the tool answers its usual result with the task in
 * `_meta[TASK_MARKER]`, and http.ts answers that tools/call as the task (`asTaskResponse`).
 *
 * Why not batch_execute_tools: a batch runs in the execution service as one synchronous request and
 * leaves no record to follow by a short handle until it ends; a handle would have to carry its calls.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ProtocolError } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { CallerHeaders } from "../gateway-client.js";
import { asObject, callerIdentity, callerOf, describeError, type HandlerExtra, success, type ToolContext } from "./results.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** Where a tool result carries the task it is to be answered as (http.ts). */
export const TASK_MARKER = "io.toolport/task";
/** How often a client should poll `tasks/get`. */
const POLL_INTERVAL_MS = 1_000;
const HANDLE = /^wf1\.([0-9A-Za-z_-]{1,80})\.([0-9A-Za-z_-]{22})$/;

/** Whether this (2026-07-28) request's client declared the Tasks extension. */
export function canUseTasks(extra: HandlerExtra): boolean {
  const capabilities = extra.mcpReq?.envelope?.["io.modelcontextprotocol/clientCapabilities"];
  return declaresTasks(capabilities);
}

export function declaresTasks(capabilities: unknown): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return typeof extensions?.[TASKS_EXTENSION] === "object" && extensions[TASKS_EXTENSION] !== null;
}

const callerHash = (caller: CallerHeaders) => createHash("sha256").update(callerIdentity(caller)).digest("hex");

/** Makes and opens task handles (see the module comment). */
export class TaskHandles {
  constructor(private readonly key: string | Uint8Array) {}

  private tag(runId: string, caller: CallerHeaders): string {
    return createHmac("sha256", this.key)
      .update(`wf1\0${runId}\0${callerHash(caller)}`)
      .digest("base64url")
      .slice(0, 22);
  }

  seal(runId: string, caller: CallerHeaders): string {
    return `wf1.${runId}.${this.tag(runId, caller)}`;
  }

  /** The run id of a handle this caller was given, or undefined. */
  open(handle: string, caller: CallerHeaders): string | undefined {
    const m = HANDLE.exec(handle);
    if (!m) return undefined;
    const [, runId, tag] = m as unknown as [string, string, string];
    const want = Buffer.from(this.tag(runId, caller));
    const got = Buffer.from(tag);
    return want.length === got.length && timingSafeEqual(want, got) ? runId : undefined;
  }
}

/** The fields of a workflow run (the gateway's WorkflowRun) a task reads. */
export interface RunJson {
  run_id?: string;
  status?: string;
  steps_completed?: number;
  steps_total?: number;
  started_at?: string | null;
  finished_at?: string | null;
  error?: string | null;
}

/** The Task a workflow run is: working while it runs, completed (with the tool's result) once it ended. */
export function taskOfRun(handle: string, run: RunJson): Record<string, unknown> {
  const now = new Date().toISOString();
  const base = {
    taskId: handle,
    createdAt: run.started_at ?? now,
    lastUpdatedAt: run.finished_at ?? now,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  const steps = `${run.steps_completed ?? 0} of ${run.steps_total ?? "?"} steps done`;
  if (run.status === "running") return { ...base, status: "working", statusMessage: `running: ${steps}` };
  const why =
    run.status === "awaiting_confirmation"
      ? "paused: a step needs consent (the result's consent object)"
      : run.status === "failed"
        ? `failed: ${run.error ?? "a step failed"}`
        : `completed: ${steps}`;
  return { ...base, status: "completed", statusMessage: why, result: success(run as Record<string, unknown>) };
}

/**
 * The tools/call answer of a call that became a task: the SDK's JSON-RPC response body, its result
 * replaced by the CreateTaskResult in `_meta[TASK_MARKER]` (the SDK's own `_meta` entries, its
 * server identity, kept). Any other body comes back unchanged.
 */
export function asTaskResponse(body: unknown): unknown {
  const result = (body as { result?: { _meta?: Record<string, unknown> } } | undefined)?.result;
  const task = result?._meta?.[TASK_MARKER];
  if (!task || typeof task !== "object") return body;
  const { [TASK_MARKER]: _, ...meta } = result._meta as Record<string, unknown>;
  const out: Record<string, unknown> = { ...(task as Record<string, unknown>), resultType: "task" };
  if (Object.keys(meta).length > 0) out._meta = meta;
  return { ...(body as Record<string, unknown>), result: out };
}

function missingCapability(): ProtocolError {
  return new ProtocolError(-32021, "Missing required client capability", {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

const notFound = () => new ProtocolError(-32602, "Failed to retrieve task: Task not found");

/** tasks/get, tasks/update and tasks/cancel on the server of `ctx`. */
export function registerTaskMethods(ctx: ToolContext, handles: TaskHandles): void {
  const known = (params: { taskId: string }, extra: HandlerExtra) => {
    if (!canUseTasks(extra)) throw missingCapability();
    const caller = callerOf(extra);
    const runId = handles.open(params.taskId, caller);
    if (!runId) throw notFound();
    return { caller, runId };
  };
  const taskId = z.object({ taskId: z.string() });

  ctx.server.server.setRequestHandler("tasks/get", { params: taskId }, async (params, extra) => {
    const { caller, runId } = known(params, extra as HandlerExtra);
    let reply: Awaited<ReturnType<typeof ctx.gateway.send>>;
    try {
      reply = await ctx.gateway.send(caller, (api, headers) =>
        api.GET("/v1/workflows/runs/{run_id}", { params: { path: { run_id: runId } }, headers }),
      );
    } catch (err) {
      throw new ProtocolError(-32603, `Toolport's gateway did not answer (${(err as Error).message}); poll again`);
    }
    if (reply.status === 404) throw notFound();
    if (reply.status !== 200) throw new ProtocolError(-32603, describeError(reply).split("\n")[0] ?? "the gateway refused");
    return taskOfRun(params.taskId, asObject(reply.body) as RunJson);
  });

  // Nothing of a workflow run waits for input through a task (a step that needs consent ends the
  // task with the run's consent object), and runs are not cancelled midway: both acknowledge.
  ctx.server.server.setRequestHandler(
    "tasks/update",
    { params: z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() }) },
    async (params, extra) => {
      known(params, extra as HandlerExtra);
      return {};
    },
  );
  ctx.server.server.setRequestHandler("tasks/cancel", { params: taskId }, async (params, extra) => {
    known(params, extra as HandlerExtra);
    return {};
  });
}
