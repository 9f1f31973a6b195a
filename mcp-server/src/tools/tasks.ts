/**
 * Long work as tasks: the Tasks extension (`io.modelcontextprotocol/tasks`) of protocol revision
 * 2026-07-28. A client that declares the extension in a request's capabilities and calls `run_workflow`
 * or `batch_execute_tools` gets a task handle at once (`resultType: "task"`) while the work goes on in
 * the services: a workflow run in the content service, an async batch (`Prefer: respond-async`) in the
 * execution service. `tasks/get` answers its state and, once it ended, the same tool result the
 * synchronous call gives. Nothing about a task is kept in this server: the handle names the run or the
 * batch, which lives in its service's database, so a task survives a restart or a different replica
 * answering (with the same MCP_REQUEST_STATE_KEY).
 *
 * A handle is `wf1.<run id>.<tag>` or `bt1.<batch id>.<tag>`, the tag an HMAC of the kind, the id and a
 * hash of the caller's key and organization, so only the caller who started the work can follow it
 * through this server (the services check the owner as well). It stays short because clients send it
 * as the `Mcp-Name` header of every `tasks/*` request.
 *
 * The SDK serves the extension's methods (`tasks/get`, `tasks/update`, `tasks/cancel`) as custom
 * methods but has no task result for `tools/call`: the tool answers its usual result with the task in
 * `_meta[TASK_MARKER]`, and http.ts answers that tools/call as the task (`asTaskResponse`).
 *
 * A batch task that ended answers the elements as batch_execute_tools does (batch-elements.ts); an
 * element that needs consent keeps its consent object (the person is not asked through a task: the
 * model asks them and calls again with the confirm_token, as a client without elicitation does).
 * tasks/cancel cancels the batch (calls not started do not run); a workflow run is not cancelled midway.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ProtocolError } from "@modelcontextprotocol/server";
import type { BatchElement } from "@toolport/client";
import { z } from "zod";
import type { CallerHeaders, GatewayReply } from "../gateway-client.js";
import { mcpElement } from "./batch-elements.js";
import { callerElement } from "./consent.js";
import {
  asObject,
  callerIdentity,
  callerOf,
  describeError,
  fromReply,
  type HandlerExtra,
  success,
  type ToolContext,
} from "./results.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** Where a tool result carries the task it is to be answered as (http.ts). */
export const TASK_MARKER = "io.toolport/task";
/** How often a client should poll `tasks/get`. */
const POLL_INTERVAL_MS = 1_000;
const HANDLE = /^(wf1|bt1)\.([0-9A-Za-z_-]{1,80})\.([0-9A-Za-z_-]{22})$/;
/** What a handle names: a workflow run, or an async batch. */
export type TaskKind = "wf1" | "bt1";

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

  private tag(kind: TaskKind, id: string, caller: CallerHeaders): string {
    return createHmac("sha256", this.key)
      .update(`${kind}\0${id}\0${callerHash(caller)}`)
      .digest("base64url")
      .slice(0, 22);
  }

  seal(id: string, caller: CallerHeaders, kind: TaskKind = "wf1"): string {
    return `${kind}.${id}.${this.tag(kind, id, caller)}`;
  }

  /** What a handle this caller was given names, or undefined. */
  open(handle: string, caller: CallerHeaders): { kind: TaskKind; id: string } | undefined {
    const m = HANDLE.exec(handle);
    if (!m) return undefined;
    const [, kind, id, tag] = m as unknown as [string, TaskKind, string, string];
    const want = Buffer.from(this.tag(kind, id, caller));
    const got = Buffer.from(tag);
    return want.length === got.length && timingSafeEqual(want, got) ? { kind, id } : undefined;
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

/** The fields of an async batch record (the gateway's BatchRecord) a task reads. */
export interface BatchJson {
  batch_id?: string;
  status?: string;
  created_at?: string;
  finished_at?: string | null;
  calls_total?: number;
  calls_done?: number;
  results?: BatchElement[] | null;
  error_status?: number;
  error?: unknown;
}

/**
 * The Task an async batch is: working while calls run; completed with exactly batch_execute_tools'
 * result once it ended (a batch refused as a whole, `failed`, with the error result the synchronous
 * call gives for the same refusal); cancelled after tasks/cancel (or the REST cancel).
 */
export function taskOfBatch(handle: string, batch: BatchJson): Record<string, unknown> {
  const now = new Date().toISOString();
  const base = {
    taskId: handle,
    createdAt: batch.created_at ?? now,
    lastUpdatedAt: batch.finished_at ?? now,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  const calls = `${batch.calls_done ?? 0} of ${batch.calls_total ?? "?"} calls done`;
  switch (batch.status) {
    case "working":
      return { ...base, status: "working", statusMessage: calls };
    case "cancelled":
      return { ...base, status: "cancelled", statusMessage: `cancelled: ${calls}; calls not started did not run` };
    case "failed": {
      const reply: GatewayReply = { status: batch.error_status ?? 500, body: batch.error };
      return { ...base, status: "completed", statusMessage: "refused as a whole", result: fromReply(reply, asObject) };
    }
    default:
      return {
        ...base,
        status: "completed",
        statusMessage: `completed: ${calls}`,
        // As the synchronous answer: an upstream's continuation never reaches the model.
        result: success({ results: (batch.results ?? []).map((e) => callerElement(mcpElement(e))) }),
      };
  }
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
    const named = handles.open(params.taskId, caller);
    if (!named) throw notFound();
    return { caller, ...named };
  };
  const taskId = z.object({ taskId: z.string() });
  /** One gateway request of a tasks/* method; a 404 is the task not being found. */
  const ask = async (caller: CallerHeaders, request: Parameters<typeof ctx.gateway.send>[1]) => {
    let reply: Awaited<ReturnType<typeof ctx.gateway.send>>;
    try {
      reply = await ctx.gateway.send(caller, request);
    } catch (err) {
      throw new ProtocolError(-32603, `Toolport's gateway did not answer (${(err as Error).message}); poll again`);
    }
    if (reply.status === 404 || reply.status === 400) throw notFound();
    if (reply.status !== 200) throw new ProtocolError(-32603, describeError(reply).split("\n")[0] ?? "the gateway refused");
    return asObject(reply.body);
  };

  ctx.server.server.setRequestHandler("tasks/get", { params: taskId }, async (params, extra) => {
    const { caller, kind, id } = known(params, extra as HandlerExtra);
    if (kind === "bt1") {
      const batch = await ask(caller, (api, headers) =>
        api.GET("/v1/tools/call/batch/{batch_id}", { params: { path: { batch_id: id } }, headers }),
      );
      return taskOfBatch(params.taskId, batch as BatchJson);
    }
    const run = await ask(caller, (api, headers) =>
      api.GET("/v1/workflows/runs/{run_id}", { params: { path: { run_id: id } }, headers }),
    );
    return taskOfRun(params.taskId, run as RunJson);
  });

  // Nothing waits for input through a task (a call or step that needs consent ends the task with its
  // consent object): tasks/update acknowledges.
  ctx.server.server.setRequestHandler(
    "tasks/update",
    { params: z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() }) },
    async (params, extra) => {
      known(params, extra as HandlerExtra);
      return {};
    },
  );
  // A batch is cancelled (calls not started do not run); a workflow run is not cancelled midway.
  ctx.server.server.setRequestHandler("tasks/cancel", { params: taskId }, async (params, extra) => {
    const { caller, kind, id } = known(params, extra as HandlerExtra);
    if (kind === "bt1") {
      await ask(caller, (api, headers) =>
        api.POST("/v1/tools/call/batch/{batch_id}/cancel", { params: { path: { batch_id: id } }, headers }),
      );
    }
    return {};
  });
}
