/**
 * /v1/workflows (spec items 31 to 34, and DESIGN.md "Workflows"):
 * - GET /workflows/public (no credentials): summaries, `search`, `sort` (newest | popular | name),
 *   `limit` 1-100, `offset`. GET /workflows/my: the caller's, both visibilities unless `visibility`.
 * - POST /workflows, PATCH /workflows/{id} (owner), GET /workflows/{id} (public ones to anyone),
 *   DELETE /workflows/{id} (owner): the spec's Workflow, plus `input_schema`, `total_executions` and
 *   `success_rate`.
 * - POST /workflows/{id}/run (API key; `/execute` is the same route) {inputs, async, max_response_chars}:
 *   the run, 200 once it ended or paused for consent, 202 while it is still running (async, or longer
 *   than the content service's wait). POST /workflows/runs/{run_id}/confirm {confirm_token} continues a
 *   run awaiting confirmation. GET /workflows/runs/{run_id}, GET /workflows/{id}/runs: the caller's runs.
 */
import type { JsonObject, JsonValue, MessageInitShape } from "@bufbuild/protobuf";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import { VisibilitySchema, WorkflowRunStatusSchema } from "@toolport/proto/toolport/common/v1/types_pb";
import type {
  Workflow,
  WorkflowRun,
  WorkflowStepInputSchema,
  WorkflowSummary,
} from "@toolport/proto/toolport/content/v1/workflows_pb";
import type { Context } from "koa";
import type { AppDeps } from "../deps.js";
import {
  badField,
  intQuery,
  maxResponseChars,
  objectBody,
  objectField,
  queryString,
  stringField,
  stringList,
} from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { workflowsOps as ops } from "../openapi/operations/workflows.js";
import { consentJson, responseMetaJson } from "./execution.js";

const visibility = (v: number) => enumName(VisibilitySchema, v);
const json = (bytes: Uint8Array): JsonValue => fromJsonBytes(bytes) ?? null;

function stepsJson(w: Workflow): JsonObject[] {
  return w.steps.map((s) => ({
    step_number: s.stepNumber,
    tool_id: s.toolId,
    tool_name: s.toolName,
    description: s.description,
    input_mapping: json(s.inputMappingJson) ?? {},
  }));
}

/** The spec's Workflow (full), with our run statistics and the inputs' JSON Schema. */
export function workflowJson(w: Workflow | undefined): JsonObject {
  if (!w) return {};
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    steps: stepsJson(w),
    owner_id: w.ownerId,
    visibility: visibility(w.visibility),
    tags: w.tags,
    input_schema: json(w.inputSchemaJson),
    total_executions: Number(w.totalExecutions),
    success_rate: w.successRate,
    created_at: isoTime(w.createdAt),
    updated_at: isoTime(w.updatedAt),
  };
}

/** The spec's workflow summary. */
export function workflowSummaryJson(w: WorkflowSummary): JsonObject {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    step_count: w.stepCount,
    owner_id: w.ownerId,
    visibility: visibility(w.visibility),
    tags: w.tags,
    total_executions: Number(w.totalExecutions),
    success_rate: w.successRate,
    created_at: isoTime(w.createdAt),
  };
}

/** A workflow run: its status, every step's outcome, and the last step's result once completed. */
export function runJson(r: WorkflowRun | undefined): JsonObject {
  if (!r) return {};
  return {
    run_id: r.id,
    workflow_id: r.workflowId,
    workflow_name: r.workflowName,
    status: enumName(WorkflowRunStatusSchema, r.status),
    inputs: json(r.inputsJson) ?? {},
    steps: r.steps.map((s) => ({
      step_number: s.stepNumber,
      tool_id: s.toolId,
      tool_name: s.toolName,
      status: s.status,
      execution_id: s.executionId ?? null,
      error: s.error ?? null,
      error_code: s.errorCode ?? null,
      duration_ms: Number(s.durationMs),
      tool_input: json(s.toolInputJson),
    })),
    steps_completed: r.stepsCompleted,
    steps_total: r.stepsTotal,
    result: json(r.resultJson),
    truncated: r.truncated,
    response_meta: responseMetaJson(r.responseMeta),
    consent: r.consent ? consentJson(r.consent) : null,
    error: r.error ?? null,
    execution_time_ms: Number(r.executionTimeMs),
    started_at: isoTime(r.startedAt),
    finished_at: isoTime(r.finishedAt),
  };
}

function stepInputs(body: JsonObject): MessageInitShape<typeof WorkflowStepInputSchema>[] | undefined {
  const value = body.steps;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw badField("steps", "must be an array of steps {tool_id, description, input_mapping}");
  return value.map((raw, i) => {
    const field = `steps[${i}]`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badField(field, "must be an object");
    const step = raw as JsonObject;
    const n = step.step_number;
    if (n !== undefined && n !== null && (typeof n !== "number" || !Number.isInteger(n)))
      throw badField(`${field}.step_number`, "must be an integer");
    return {
      toolId: stringField(step, "tool_id", `${field}.`) ?? "",
      description: stringField(step, "description", `${field}.`) ?? "",
      inputMappingJson: jsonBytes(objectField(step, "input_mapping") ?? {}),
      stepNumber: typeof n === "number" ? Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, n)) : undefined,
    } satisfies MessageInitShape<typeof WorkflowStepInputSchema>;
  });
}

function checkAsync(body: JsonObject): void {
  if (body.async !== undefined && body.async !== null && typeof body.async !== "boolean")
    throw badField("async", "must be true or false");
}

function pagingQuery(ctx: Context) {
  return { limit: intQuery(ctx.query.limit, "limit"), offset: intQuery(ctx.query.offset, "offset") };
}

/** 202 while the run goes on, 200 once it ended or waits for consent. */
function answerRun(ctx: Context, res: { run?: WorkflowRun; pending: boolean }): void {
  ctx.status = res.pending ? 202 : 200;
  ctx.body = runJson(res.run);
}

export function workflowRoutes(api: DescribedRouter, deps: AppDeps): void {
  const content = deps.clients.content;
  const identity = deps.clients.identity;
  const none = auth(identity, "none");
  const optional = auth(identity, "optional");
  const either = auth(identity, "api_key_or_jwt");
  const apiKey = auth(identity, "api_key");
  // A synchronous run answers when it ended (or after the content service's wait): longer than a call.
  const runOptions = { timeoutMs: deps.config.RPC_TIMEOUT_MS + 10 * 60_000 };

  api.get("/workflows/public", ops.listPublic, none, async (ctx) => {
    const res = await content.listPublicWorkflows({
      search: queryString(ctx, "search"),
      sort: queryString(ctx, "sort"),
      ...pagingQuery(ctx),
    });
    ctx.body = res.workflows.map(workflowSummaryJson);
  });

  api.get("/workflows/my", ops.listMine, either, async (ctx) => {
    const res = await content.listMyWorkflows({ visibility: queryString(ctx, "visibility"), ...pagingQuery(ctx) });
    ctx.body = res.workflows.map(workflowSummaryJson);
  });

  api.post("/workflows", ops.create, either, async (ctx) => {
    const body = objectBody(ctx);
    const name = stringField(body, "name");
    if (name === undefined) throw badField("name", "is required");
    const steps = stepInputs(body);
    if (!steps) throw badField("steps", "is required: an array of steps {tool_id, description, input_mapping}");
    const res = await content.createWorkflow({
      name,
      description: stringField(body, "description") ?? "",
      steps,
      visibility: stringField(body, "visibility"),
      tags: stringList(body, "tags") ?? [],
      inputSchemaJson: jsonBytes(objectField(body, "input_schema")),
    });
    ctx.body = workflowJson(res.workflow);
  });

  api.get("/workflows/runs/:run_id", ops.getRun, either, async (ctx) => {
    ctx.body = runJson((await content.getWorkflowRun({ runId: ctx.params.run_id! })).run);
  });

  api.post("/workflows/runs/:run_id/confirm", ops.confirmRun, either, async (ctx) => {
    const body = objectBody(ctx);
    const confirmToken = stringField(body, "confirm_token");
    if (confirmToken === undefined) throw badField("confirm_token", "is required");
    checkAsync(body);
    const res = await content.confirmWorkflowRun(
      { runId: ctx.params.run_id!, confirmToken, async: body.async === true },
      runOptions,
    );
    answerRun(ctx, res);
  });

  api.get("/workflows/:workflow_id", ops.get, optional, async (ctx) => {
    ctx.body = workflowJson((await content.getWorkflow({ workflowId: ctx.params.workflow_id! })).workflow);
  });

  api.patch("/workflows/:workflow_id", ops.update, either, async (ctx) => {
    const body = objectBody(ctx);
    const steps = stepInputs(body);
    const tags = stringList(body, "tags");
    let inputSchemaJson: Uint8Array | undefined;
    if (body.input_schema === null) inputSchemaJson = jsonBytes(null);
    else if (body.input_schema !== undefined) inputSchemaJson = jsonBytes(objectField(body, "input_schema"));
    const res = await content.updateWorkflow({
      workflowId: ctx.params.workflow_id!,
      name: stringField(body, "name"),
      description: stringField(body, "description"),
      visibility: stringField(body, "visibility"),
      steps: steps ? { steps } : undefined,
      tags: tags ? { values: tags } : undefined,
      inputSchemaJson,
    });
    ctx.body = workflowJson(res.workflow);
  });

  api.delete("/workflows/:workflow_id", ops.delete, either, async (ctx) => {
    ctx.body = { deleted: (await content.deleteWorkflow({ workflowId: ctx.params.workflow_id! })).deleted };
  });

  const run = async (ctx: Context & { params: Record<string, string> }) => {
    const body = objectBody(ctx);
    const inputs = objectField(body, "inputs") ?? {};
    checkAsync(body);
    const res = await content.executeWorkflow(
      {
        workflowId: ctx.params.workflow_id!,
        inputsJson: jsonBytes(inputs),
        async: body.async === true,
        maxResponseChars: maxResponseChars(body),
      },
      runOptions,
    );
    answerRun(ctx, res);
  };
  api.post("/workflows/:workflow_id/run", ops.run, apiKey, run);
  api.post("/workflows/:workflow_id/execute", ops.execute, apiKey, run);

  api.get("/workflows/:workflow_id/runs", ops.listRuns, either, async (ctx) => {
    const res = await content.listWorkflowRuns({ workflowId: ctx.params.workflow_id!, ...pagingQuery(ctx) });
    ctx.body = res.runs.map(runJson);
  });
}
