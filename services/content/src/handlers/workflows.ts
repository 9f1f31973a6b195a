/**
 * Workflows (spec items 31 to 34) and their runs. A workflow is its owner's to change and delete; a
 * public one is readable and runnable by anyone, a private one only by its owner (anyone else gets
 * NOT_FOUND, the same answer as for an id that does not exist). A run and its history are the
 * runner's alone. Saving checks every step: its tool exists and the caller can see it, and every
 * template parses and refers only to the run's inputs or an earlier step (400 naming step and template).
 */
import { fromJson, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { currentRequestId } from "@toolport/kit/context";
import { conflict, invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import type { InputValidator } from "@toolport/kit/input-validator";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import { selectPath } from "@toolport/kit/json-path";
import { isObject, type JsonObject } from "@toolport/kit/json-values";
import { clampResponseChars } from "@toolport/kit/response-limits";
import { principalKey } from "@toolport/kit/rpc";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import type {
  WorkflowRunSchema,
  WorkflowSchema,
  WorkflowStepInput,
  WorkflowSummarySchema,
} from "@toolport/proto/toolport/content/v1/workflows_pb";
import { ResponseMetaSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { catalogRefusal } from "../catalog-lookups.js";
import {
  isWorkflowSort,
  type StepDef,
  type Visibility as VisibilityName,
  type WorkflowPatch,
  type WorkflowRow,
  type WorkflowStore,
} from "../store/workflows.js";
import { type LiveRun, runStatusEnum, type WorkflowRunner } from "../workflows/runner.js";
import { checkMapping } from "../workflows/templates.js";
import { caller, isId, ts } from "./common.js";

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
  runner: WorkflowRunner;
  validator: InputValidator;
  /** The tool as the caller sees it (catalog's GetTool with the caller's principal); null when it cannot. */
  visibleTool(toolId: string): Promise<{ id: string; name: string } | null>;
  /** How long a run answered synchronously may take before it is answered as pending (202). */
  syncWaitMs: number;
}

export const MAX_NAME_CHARS = 128;
export const MAX_DESCRIPTION_CHARS = 4000;
export const MAX_STEPS = 20;
export const MAX_TAGS = 20;
export const MAX_TAG_CHARS = 50;
/** A step's input_mapping, serialized, at most. */
export const MAX_MAPPING_CHARS = 64 * 1024;

const bad = (field: string, message: string, reason = "invalid_request", details: JsonObject = {}) =>
  invalidArgument(reason, `${field}: ${message}`, { details: { field, ...details } });
const workflowNotFound = (id: string) =>
  notFound("workflow_not_found", `workflow ${id} not found`, { details: { workflow_id: id } });
const runNotFound = (id: string) =>
  notFound("workflow_run_not_found", `workflow run ${id} not found`, { details: { run_id: id } });
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

/** The principal when there is one (public reads need none). */
function maybeCaller(context: HandlerContext): Principal | undefined {
  const p = context.values.get(principalKey);
  return p?.accountId ? p : undefined;
}

function visibleTo(row: WorkflowRow | null, who: Principal | undefined): row is WorkflowRow {
  return row !== null && (row.visibility === "public" || row.owner_id === who?.accountId);
}

function checkId(id: string, what: "workflow" | "run"): void {
  if (!isId(id)) throw what === "workflow" ? workflowNotFound(id) : runNotFound(id);
}

function page(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  const l = limit ?? 20;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 1 || l > 100) throw bad("limit", "must be an integer from 1 to 100");
  if (!Number.isInteger(o) || o < 0 || o > 100_000) throw bad("offset", "must be an integer from 0 to 100000");
  return { limit: l, offset: o };
}

function name(value: string): string {
  const trimmed = value.trim();
  if (trimmed === "") throw bad("name", "is required");
  if ([...trimmed].length > MAX_NAME_CHARS) throw bad("name", `must be at most ${MAX_NAME_CHARS} characters`);
  return trimmed;
}

function description(value: string): string {
  if ([...value].length > MAX_DESCRIPTION_CHARS) throw bad("description", `must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  return value;
}

function visibility(value: string | undefined, fallback: VisibilityName): VisibilityName {
  if (value === undefined) return fallback;
  if (value !== "private" && value !== "public") throw bad("visibility", 'must be "private" or "public"');
  return value;
}

function tags(values: string[]): string[] {
  if (values.length > MAX_TAGS) throw bad("tags", `at most ${MAX_TAGS} tags`);
  const out: string[] = [];
  values.forEach((t, i) => {
    const tag = t.trim();
    if (tag === "" || [...tag].length > MAX_TAG_CHARS) throw bad(`tags[${i}]`, `must be 1 to ${MAX_TAG_CHARS} characters`);
    if (!out.includes(tag)) out.push(tag);
  });
  return out;
}

export function workflowHandlers(deps: WorkflowDeps): Impl {
  const { workflows, runner, validator } = deps;

  function inputSchema(bytes: Uint8Array | undefined): JsonObject | null {
    let schema: unknown;
    try {
      schema = fromJsonBytes(bytes);
    } catch {
      throw bad("input_schema", "must be a JSON Schema object");
    }
    if (schema === undefined || schema === null) return null;
    if (!isObject(schema)) throw bad("input_schema", "must be a JSON Schema object");
    const problem = validator.schemaProblem(schema);
    if (problem) throw bad("input_schema", `is not a usable JSON Schema: ${problem}`);
    return schema;
  }

  /** Checks the steps in order and resolves each tool as the caller sees it. */
  async function stepDefs(inputs: WorkflowStepInput[]): Promise<StepDef[]> {
    if (inputs.length === 0) throw bad("steps", "a workflow needs at least one step");
    if (inputs.length > MAX_STEPS) throw bad("steps", `a workflow has at most ${MAX_STEPS} steps`);
    const drafts = inputs.map((s, i) => {
      const n = i + 1;
      const field = `steps[${i}]`;
      if (s.stepNumber !== undefined && s.stepNumber !== n)
        throw bad(`${field}.step_number`, `must be ${n}: steps are numbered from 1 in order`, "invalid_step", { step_number: n });
      const toolId = s.toolId.trim();
      if (toolId === "") throw bad(`${field}.tool_id`, "is required", "invalid_step", { step_number: n });
      if (s.inputMappingJson.length > MAX_MAPPING_CHARS)
        throw bad(`${field}.input_mapping`, `must be at most ${MAX_MAPPING_CHARS} characters of JSON`, "invalid_step", {
          step_number: n,
        });
      let mapping: unknown;
      try {
        mapping = fromJsonBytes(s.inputMappingJson) ?? {};
      } catch {
        mapping = undefined;
      }
      if (!isObject(mapping))
        throw bad(`${field}.input_mapping`, "must be an object of tool parameters", "invalid_step", { step_number: n });
      checkMapping(mapping, n);
      return { n, toolId, description: description(s.description), mapping };
    });
    const tools = await Promise.all(drafts.map((d) => deps.visibleTool(d.toolId)));
    return drafts.map((d, i) => {
      const tool = tools[i];
      if (!tool)
        throw invalidArgument("unknown_tool", `step ${d.n}: tool ${d.toolId} does not exist or is not visible to you`, {
          details: { field: `steps[${i}].tool_id`, step_number: d.n, tool_id: d.toolId },
        });
      return { step_number: d.n, tool_id: tool.id, tool_name: tool.name, description: d.description, input_mapping: d.mapping };
    });
  }

  async function ownWorkflow(id: string, who: Principal): Promise<WorkflowRow> {
    checkId(id, "workflow");
    const row = await workflows.get(id);
    if (!row || row.owner_id !== who.accountId) throw workflowNotFound(id);
    return row;
  }

  async function runOf(id: string, who: Principal): Promise<LiveRun> {
    checkId(id, "run");
    const row = await workflows.getRun(id);
    if (!row || row.runner_id !== who.accountId) throw runNotFound(id);
    const steps = (await workflows.stepsOf([id])).get(id) ?? [];
    return { row, steps: new Map(steps.map((s) => [s.step_number, s])) };
  }

  return {
    async createWorkflow(req, context) {
      const who = caller(context);
      const row = await workflows.create({
        ownerId: who.accountId,
        organizationId: who.organizationId || who.personalOrganizationId || null,
        name: name(req.name),
        description: description(req.description),
        visibility: visibility(req.visibility, "private"),
        tags: tags(req.tags),
        inputSchema: inputSchema(req.inputSchemaJson),
        steps: await stepDefs(req.steps),
      });
      return { workflow: workflowMessage(row) };
    },

    async updateWorkflow(req, context) {
      const who = caller(context);
      await ownWorkflow(req.workflowId, who);
      const patch: WorkflowPatch = {};
      if (req.name !== undefined) patch.name = name(req.name);
      if (req.description !== undefined) patch.description = description(req.description);
      if (req.visibility !== undefined) patch.visibility = visibility(req.visibility, "private");
      if (req.tags) patch.tags = tags(req.tags.values);
      if (req.inputSchemaJson !== undefined) patch.inputSchema = inputSchema(req.inputSchemaJson);
      if (req.steps) patch.steps = await stepDefs(req.steps.steps);
      const row = await workflows.update(req.workflowId, who.accountId, patch);
      if (!row) throw workflowNotFound(req.workflowId);
      return { workflow: workflowMessage(row) };
    },

    async getWorkflow(req, context) {
      checkId(req.workflowId, "workflow");
      const row = await workflows.get(req.workflowId);
      if (!visibleTo(row, maybeCaller(context))) throw workflowNotFound(req.workflowId);
      return { workflow: workflowMessage(row) };
    },

    async listPublicWorkflows(req) {
      const sort = req.sort ?? "newest";
      if (!isWorkflowSort(sort)) throw bad("sort", 'must be "newest", "popular" or "name"');
      const { limit, offset } = page(req.limit, req.offset);
      const search = req.search?.trim() || undefined;
      return { workflows: (await workflows.listPublic(search, sort, limit, offset)).map(summaryMessage) };
    },

    async listMyWorkflows(req, context) {
      const who = caller(context);
      const v = req.visibility === undefined ? undefined : visibility(req.visibility, "private");
      const { limit, offset } = page(req.limit, req.offset);
      return { workflows: (await workflows.listMine(who.accountId, v, limit, offset)).map(summaryMessage) };
    },

    async deleteWorkflow(req, context) {
      const who = caller(context);
      checkId(req.workflowId, "workflow");
      if (!(await workflows.delete(req.workflowId, who.accountId))) throw workflowNotFound(req.workflowId);
      return { deleted: true };
    },

    async executeWorkflow(req, context) {
      const who = caller(context);
      if (!who.keyId)
        throw permissionDenied(
          "api_key_required",
          "a workflow runs its steps with an API key's permissions: send the svc-api-key header",
        );
      checkId(req.workflowId, "workflow");
      const workflow = await workflows.get(req.workflowId);
      if (!visibleTo(workflow, who)) throw workflowNotFound(req.workflowId);
      let inputs: unknown;
      try {
        inputs = fromJsonBytes(req.inputsJson) ?? {};
      } catch {
        inputs = undefined;
      }
      if (!isObject(inputs)) throw bad("inputs", "must be an object");
      if (workflow.input_schema) {
        const problems = validator.problems(
          `workflow:${workflow.id}:${workflow.updated_at.getTime()}`,
          workflow.input_schema,
          inputs,
        );
        if (problems.length > 0)
          throw invalidArgument(
            "invalid_inputs",
            `invalid inputs: ${problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`,
            {
              details: { fields: problems.map((p) => ({ field: `inputs.${p.field}`, message: p.message })) },
            },
          );
      }
      // An input used inside a longer string must be given (an input that is a whole value may be left out).
      for (const step of workflow.steps) {
        for (const t of checkMapping(step.input_mapping, step.step_number)) {
          if (t.ref.kind === "inputs" && !t.exact && !selectPath(inputs, t.ref.path).matched)
            throw invalidArgument("missing_input", `inputs: step ${step.step_number} uses ${t.ref.text}, which was not given`, {
              details: { field: `inputs.${t.ref.pathText}`, step_number: step.step_number, template: t.ref.text },
            });
        }
      }
      const { run, pending } = await runner.begin(workflow, who, inputs, {
        maxResponseChars: clampResponseChars(req.maxResponseChars),
        async: req.async,
        waitMs: deps.syncWaitMs,
        requestId: currentRequestId() ?? null,
      });
      return { run: runMessage(run), pending };
    },

    async confirmWorkflowRun(req, context) {
      const who = caller(context);
      const current = await runOf(req.runId, who);
      const token = req.confirmToken.trim();
      if (token === "") throw bad("confirm_token", "is required");
      if (current.row.status !== "awaiting_confirmation")
        throw conflict(
          "run_not_awaiting_confirmation",
          `workflow run ${req.runId} is ${current.row.status}, not awaiting confirmation`,
          {
            details: { run_id: req.runId, status: current.row.status },
          },
        );
      if (current.row.consent?.confirm_token !== token)
        throw bad("confirm_token", "is not the confirm_token of the step this run waits on", "invalid_confirm_token");
      const continued = await runner.confirm(req.runId, who.accountId, token, { async: req.async, waitMs: deps.syncWaitMs });
      // Confirmed by a concurrent request meanwhile.
      if (!continued)
        throw conflict("run_not_awaiting_confirmation", `workflow run ${req.runId} was confirmed already`, {
          details: { run_id: req.runId },
        });
      return { run: runMessage(continued.run), pending: continued.pending };
    },

    async getWorkflowRun(req, context) {
      return { run: runMessage(await runOf(req.runId, caller(context))) };
    },

    async listWorkflowRuns(req, context) {
      const who = caller(context);
      checkId(req.workflowId, "workflow");
      const workflow = await workflows.get(req.workflowId);
      if (!visibleTo(workflow, who)) throw workflowNotFound(req.workflowId);
      const { limit, offset } = page(req.limit, req.offset);
      const rows = await workflows.listRuns(who.accountId, req.workflowId, limit, offset);
      const steps = await workflows.stepsOf(rows.map((r) => r.id));
      return {
        runs: rows.map((row) => runMessage({ row, steps: new Map((steps.get(row.id) ?? []).map((s) => [s.step_number, s])) })),
      };
    },
  };
}

/**
 * Catalog's refusal for a tool (one the caller cannot see, or none): no tool. The catalog failing to
 * answer is 503 catalog_unavailable (catalog-lookups.ts).
 */
export function toolLookupFailed(err: unknown): null {
  catalogRefusal(err, "the workflow's tools");
  return null;
}
