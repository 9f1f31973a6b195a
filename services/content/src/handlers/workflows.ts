/** Workflows and their runs over RPC: proto in, the use case (domain/workflows.ts), proto out. */
import { fromJson, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { currentRequestId } from "@toolport/kit/context";
import { jsonBytes } from "@toolport/kit/json-bytes";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import type { WorkflowRunSchema, WorkflowSchema, WorkflowSummarySchema } from "@toolport/proto/toolport/content/v1/workflows_pb";
import { ResponseMetaSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import type { LiveRun, Visibility as VisibilityName, WorkflowRow } from "../domain/model.js";
import type { CatalogPort, SchemaChecks, WorkflowRuns, WorkflowStore } from "../domain/ports.js";
import { Workflows } from "../domain/workflows.js";
import { runStatusEnum } from "../workflows/runner.js";
import { caller, maybeCaller, ts } from "./common.js";

type Impl = Pick<
  ServiceImpl<typeof ContentService>,
  | "createWorkflow"
  | "updateWorkflow"
  | "getWorkflow"
  | "listPublicWorkflows"
  | "listMyWorkflows"
  | "deleteWorkflow"
  | "executeWorkflow"
  | "confirmWorkflowRun"
  | "getWorkflowRun"
  | "listWorkflowRuns"
>;

export interface WorkflowDeps {
  workflows: WorkflowStore;
  runner: WorkflowRuns<Principal>;
  validator: SchemaChecks;
  /** A step's tool as the caller sees it (catalog's GetTool with the caller's principal). */
  catalog: Pick<CatalogPort, "visibleTool">;
  /** How long a run answered synchronously may take before it is answered as pending (202). */
  syncWaitMs: number;
}

const visibilityEnum = (v: VisibilityName) => (v === "public" ? Visibility.PUBLIC : Visibility.PRIVATE);

function successRate(row: WorkflowRow): number {
  const total = Number(row.total_executions);
  return total === 0 ? 0 : Math.round((Number(row.successful_executions) / total) * 10_000) / 100;
}

function workflowMessage(row: WorkflowRow): MessageInitShape<typeof WorkflowSchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    steps: row.steps.map((s) => ({
      stepNumber: s.step_number,
      toolId: s.tool_id,
      toolName: s.tool_name,
      description: s.description,
      inputMappingJson: jsonBytes(s.input_mapping),
    })),
    ownerId: row.owner_id,
    visibility: visibilityEnum(row.visibility),
    tags: row.tags,
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
    totalExecutions: BigInt(row.total_executions),
    successRate: successRate(row),
    inputSchemaJson: row.input_schema ? jsonBytes(row.input_schema) : undefined,
  };
}

function summaryMessage(row: WorkflowRow): MessageInitShape<typeof WorkflowSummarySchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    stepCount: row.steps.length,
    ownerId: row.owner_id,
    visibility: visibilityEnum(row.visibility),
    tags: row.tags,
    totalExecutions: BigInt(row.total_executions),
    successRate: successRate(row),
    createdAt: ts(row.created_at),
  };
}

/** A run as answered: every step of the workflow, those not reached as pending (or skipped once it ended). */
export function runMessage({ row, steps }: LiveRun): MessageInitShape<typeof WorkflowRunSchema> {
  const ended = row.status === "completed" || row.status === "failed";
  let completed = 0;
  const stepMessages = row.steps.map((def) => {
    const s = steps.get(def.step_number);
    if (s?.status === "completed") completed++;
    let status: string = s?.status ?? (ended ? "skipped" : "pending");
    if (row.status === "running" && def.step_number === row.next_step) status = "running";
    return {
      stepNumber: def.step_number,
      toolId: s?.tool_id ?? def.tool_id,
      toolName: def.tool_name,
      status,
      toolInputJson: s?.tool_input && status !== "running" ? jsonBytes(s.tool_input) : undefined,
      error: status === "running" ? undefined : (s?.error ?? undefined),
      errorCode: status === "running" ? undefined : (s?.error_code ?? undefined),
      executionId: s?.execution_id ?? undefined,
      durationMs: BigInt(status === "running" ? 0 : (s?.duration_ms ?? 0)),
    };
  });
  const running = row.status === "running" ? Math.max(0, Date.now() - row.resumed_at.getTime()) : 0;
  const c = row.consent;
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workflowName: row.workflow_name,
    ownerId: row.runner_id,
    status: runStatusEnum(row.status),
    inputsJson: jsonBytes(row.inputs),
    steps: stepMessages,
    stepsCompleted: completed,
    stepsTotal: row.steps.length,
    executionTimeMs: BigInt(ended ? (row.execution_time_ms ?? 0) : Number(row.active_ms) + running),
    error: row.error ?? undefined,
    startedAt: ts(row.started_at),
    finishedAt: ts(row.finished_at),
    resultJson: row.status === "completed" ? jsonBytes(row.result ?? null) : undefined,
    truncated: row.truncated,
    responseMeta: row.response_meta ? fromJson(ResponseMetaSchema, row.response_meta) : undefined,
    consent: c
      ? {
          toolId: String(c.tool_id ?? ""),
          toolName: String(c.tool_name ?? ""),
          parametersJson: jsonBytes(c.parameters ?? {}),
          confirmToken: String(c.confirm_token ?? ""),
          expiresAt: typeof c.expires_at === "string" ? timestampFromDate(new Date(c.expires_at)) : undefined,
        }
      : undefined,
  };
}

export function workflowHandlers(deps: WorkflowDeps): Impl {
  const workflows = new Workflows<Principal>({
    workflows: deps.workflows,
    runs: deps.runner,
    catalog: deps.catalog,
    schemas: deps.validator,
    syncWaitMs: deps.syncWaitMs,
  });
  return {
    async createWorkflow(req, context) {
      return { workflow: workflowMessage(await workflows.create(caller(context), req)) };
    },

    async updateWorkflow(req, context) {
      const change = {
        name: req.name,
        description: req.description,
        visibility: req.visibility,
        tags: req.tags?.values,
        inputSchemaJson: req.inputSchemaJson,
        steps: req.steps?.steps,
      };
      return { workflow: workflowMessage(await workflows.update(caller(context), req.workflowId, change)) };
    },

    async getWorkflow(req, context) {
      return { workflow: workflowMessage(await workflows.readable(req.workflowId, maybeCaller(context))) };
    },

    async listPublicWorkflows(req) {
      return { workflows: (await workflows.listPublic(req)).map(summaryMessage) };
    },

    async listMyWorkflows(req, context) {
      return { workflows: (await workflows.listMine(caller(context), req)).map(summaryMessage) };
    },

    async deleteWorkflow(req, context) {
      await workflows.delete(caller(context), req.workflowId);
      return { deleted: true };
    },

    async executeWorkflow(req, context) {
      const { run, pending } = await workflows.execute(caller(context), req, currentRequestId() ?? null);
      return { run: runMessage(run), pending };
    },

    async confirmWorkflowRun(req, context) {
      const { run, pending } = await workflows.confirm(caller(context), req);
      return { run: runMessage(run), pending };
    },

    async getWorkflowRun(req, context) {
      return { run: runMessage(await workflows.run(caller(context), req.runId)) };
    },

    async listWorkflowRuns(req, context) {
      return { runs: (await workflows.runs(caller(context), req)).map(runMessage) };
    },
  };
}
