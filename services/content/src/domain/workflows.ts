/**
 * Workflows (spec items 31 to 34) and their runs. A workflow is its owner's to change and delete; a
 * public one is readable and runnable by anyone, a private one only by its owner (anyone else gets
 * NOT_FOUND, the same answer as for an id that does not exist). A run and its history are the
 * runner's alone. Saving checks every step: its tool exists and the caller can see it, and every
 * template parses and refers only to the run's inputs or an earlier step (400 naming step and template).
 */
import { conflict, invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { fromJsonBytes } from "@toolport/kit/json-bytes";
import { selectPath } from "@toolport/kit/json-path";
import { isObject, type JsonObject } from "@toolport/kit/json-values";
import { clampResponseChars } from "@toolport/kit/response-limits";
import { checkMapping } from "../workflows/templates.js";
import {
  type Caller,
  isId,
  isWorkflowSort,
  type LiveRun,
  type StepDef,
  type Visibility,
  type WorkflowPatch,
  type WorkflowRow,
} from "./model.js";
import type { CatalogPort, RunAnswer, SchemaChecks, WorkflowRuns, WorkflowStore } from "./ports.js";

export const MAX_NAME_CHARS = 128;
export const MAX_DESCRIPTION_CHARS = 4000;
export const MAX_STEPS = 20;
export const MAX_TAGS = 20;
export const MAX_TAG_CHARS = 50;
/** A step's input_mapping, serialized, at most. */
export const MAX_MAPPING_CHARS = 64 * 1024;

/** A step as the caller gives it: input_mapping as JSON text. */
export interface StepInput {
  stepNumber?: number;
  toolId: string;
  description: string;
  inputMappingJson: Uint8Array;
}

export interface WorkflowInput {
  name: string;
  description: string;
  visibility?: string;
  tags: string[];
  inputSchemaJson?: Uint8Array;
  steps: StepInput[];
}

/** What an update changes: each field given replaces the stored one. */
export type WorkflowChange = Partial<WorkflowInput>;

const bad = (field: string, message: string, reason = "invalid_request", details: JsonObject = {}) =>
  invalidArgument(reason, `${field}: ${message}`, { details: { field, ...details } });
const workflowNotFound = (id: string) =>
  notFound("workflow_not_found", `workflow ${id} not found`, { details: { workflow_id: id } });
const runNotFound = (id: string) =>
  notFound("workflow_run_not_found", `workflow run ${id} not found`, { details: { run_id: id } });

function visibleTo(row: WorkflowRow | null, who: Caller | undefined): row is WorkflowRow {
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

function visibility(value: string | undefined, fallback: Visibility): Visibility {
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

/** A step's own checks, before its tool is looked up: numbering, tool id, the mapping and its templates. */
function stepDraft(s: StepInput, i: number) {
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
}

/**
 * The workflow use cases. `C` is the caller as the runner keeps it with a run (the gateway's principal);
 * the rules read only what Caller names.
 */
export class Workflows<C extends Caller> {
  constructor(
    private readonly o: {
      workflows: WorkflowStore;
      runs: WorkflowRuns<C>;
      catalog: Pick<CatalogPort, "visibleTool">;
      schemas: SchemaChecks;
      /** How long a run answered synchronously may take before it is answered as pending (202). */
      syncWaitMs: number;
    },
  ) {}

  private inputSchema(bytes: Uint8Array | undefined): JsonObject | null {
    let schema: unknown;
    try {
      schema = fromJsonBytes(bytes);
    } catch {
      throw bad("input_schema", "must be a JSON Schema object");
    }
    if (schema === undefined || schema === null) return null;
    if (!isObject(schema)) throw bad("input_schema", "must be a JSON Schema object");
    const problem = this.o.schemas.schemaProblem(schema);
    if (problem) throw bad("input_schema", `is not a usable JSON Schema: ${problem}`);
    return schema;
  }

  /** Checks the steps in order and resolves each tool as the caller sees it. */
  private async stepDefs(inputs: StepInput[]): Promise<StepDef[]> {
    if (inputs.length === 0) throw bad("steps", "a workflow needs at least one step");
    if (inputs.length > MAX_STEPS) throw bad("steps", `a workflow has at most ${MAX_STEPS} steps`);
    const drafts = inputs.map(stepDraft);
    const tools = await Promise.all(drafts.map((d) => this.o.catalog.visibleTool(d.toolId)));
    return drafts.map((d, i) => {
      const tool = tools[i];
      if (!tool)
        throw invalidArgument("unknown_tool", `step ${d.n}: tool ${d.toolId} does not exist or is not visible to you`, {
          details: { field: `steps[${i}].tool_id`, step_number: d.n, tool_id: d.toolId },
        });
      return { step_number: d.n, tool_id: tool.id, tool_name: tool.name, description: d.description, input_mapping: d.mapping };
    });
  }

  private async ownWorkflow(id: string, who: Caller): Promise<WorkflowRow> {
    checkId(id, "workflow");
    const row = await this.o.workflows.get(id);
    if (!row || row.owner_id !== who.accountId) throw workflowNotFound(id);
    return row;
  }

  /** A workflow `who` may read (anyone a public one; a private one its owner). */
  async readable(id: string, who: Caller | undefined): Promise<WorkflowRow> {
    checkId(id, "workflow");
    const row = await this.o.workflows.get(id);
    if (!visibleTo(row, who)) throw workflowNotFound(id);
    return row;
  }

  async create(who: Caller, input: WorkflowInput): Promise<WorkflowRow> {
    return this.o.workflows.create({
      ownerId: who.accountId,
      organizationId: who.organizationId || who.personalOrganizationId || null,
      name: name(input.name),
      description: description(input.description),
      visibility: visibility(input.visibility, "private"),
      tags: tags(input.tags),
      inputSchema: this.inputSchema(input.inputSchemaJson),
      steps: await this.stepDefs(input.steps),
    });
  }

  async update(who: Caller, id: string, change: WorkflowChange): Promise<WorkflowRow> {
    await this.ownWorkflow(id, who);
    const patch: WorkflowPatch = {};
    if (change.name !== undefined) patch.name = name(change.name);
    if (change.description !== undefined) patch.description = description(change.description);
    if (change.visibility !== undefined) patch.visibility = visibility(change.visibility, "private");
    if (change.tags) patch.tags = tags(change.tags);
    if (change.inputSchemaJson !== undefined) patch.inputSchema = this.inputSchema(change.inputSchemaJson);
    if (change.steps) patch.steps = await this.stepDefs(change.steps);
    const row = await this.o.workflows.update(id, who.accountId, patch);
    if (!row) throw workflowNotFound(id);
    return row;
  }

  async listPublic(q: { sort?: string; limit?: number; offset?: number; search?: string }): Promise<WorkflowRow[]> {
    const sort = q.sort ?? "newest";
    if (!isWorkflowSort(sort)) throw bad("sort", 'must be "newest", "popular" or "name"');
    const { limit, offset } = page(q.limit, q.offset);
    const search = q.search?.trim() || undefined;
    return this.o.workflows.listPublic(search, sort, limit, offset);
  }

  async listMine(who: Caller, q: { visibility?: string; limit?: number; offset?: number }): Promise<WorkflowRow[]> {
    const v = q.visibility === undefined ? undefined : visibility(q.visibility, "private");
    const { limit, offset } = page(q.limit, q.offset);
    return this.o.workflows.listMine(who.accountId, v, limit, offset);
  }

  async delete(who: Caller, id: string): Promise<void> {
    checkId(id, "workflow");
    if (!(await this.o.workflows.delete(id, who.accountId))) throw workflowNotFound(id);
  }

  /**
   * Starts a run as `who` (an API key's caller: the steps run with its permissions) once the inputs pass
   * the workflow's input schema and give every input a template uses inside a longer string.
   */
  async execute(
    who: C,
    req: { workflowId: string; inputsJson: Uint8Array; maxResponseChars?: number; async: boolean },
    requestId: string | null,
  ): Promise<RunAnswer> {
    if (!who.keyId)
      throw permissionDenied(
        "api_key_required",
        "a workflow runs its steps with an API key's permissions: send the svc-api-key header",
      );
    const workflow = await this.readable(req.workflowId, who);
    let inputs: unknown;
    try {
      inputs = fromJsonBytes(req.inputsJson) ?? {};
    } catch {
      inputs = undefined;
    }
    if (!isObject(inputs)) throw bad("inputs", "must be an object");
    if (workflow.input_schema) {
      const problems = this.o.schemas.problems(
        `workflow:${workflow.id}:${workflow.updated_at.getTime()}`,
        workflow.input_schema,
        inputs,
      );
      if (problems.length > 0)
        throw invalidArgument("invalid_inputs", `invalid inputs: ${problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`, {
          details: { fields: problems.map((p) => ({ field: `inputs.${p.field}`, message: p.message })) },
        });
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
    return this.o.runs.begin(workflow, who, inputs, {
      maxResponseChars: clampResponseChars(req.maxResponseChars),
      async: req.async,
      waitMs: this.o.syncWaitMs,
      requestId,
    });
  }

  /** Continues the caller's run that waits on a step's consent, with that step's confirm token. */
  async confirm(who: Caller, req: { runId: string; confirmToken: string; async: boolean }): Promise<RunAnswer> {
    const current = await this.run(who, req.runId);
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
    const continued = await this.o.runs.confirm(req.runId, who.accountId, token, { async: req.async, waitMs: this.o.syncWaitMs });
    // Confirmed by a concurrent request meanwhile.
    if (!continued)
      throw conflict("run_not_awaiting_confirmation", `workflow run ${req.runId} was confirmed already`, {
        details: { run_id: req.runId },
      });
    return continued;
  }

  /** The caller's own run with its recorded steps. */
  async run(who: Caller, id: string): Promise<LiveRun> {
    checkId(id, "run");
    const row = await this.o.workflows.getRun(id);
    if (!row || row.runner_id !== who.accountId) throw runNotFound(id);
    const steps = (await this.o.workflows.stepsOf([id])).get(id) ?? [];
    return { row, steps: new Map(steps.map((s) => [s.step_number, s])) };
  }

  /** The caller's runs of a workflow it may read, newest first. */
  async runs(who: Caller, q: { workflowId: string; limit?: number; offset?: number }): Promise<LiveRun[]> {
    await this.readable(q.workflowId, who);
    const { limit, offset } = page(q.limit, q.offset);
    const rows = await this.o.workflows.listRuns(who.accountId, q.workflowId, limit, offset);
    const steps = await this.o.workflows.stepsOf(rows.map((r) => r.id));
    return rows.map((row) => ({ row, steps: new Map((steps.get(row.id) ?? []).map((s) => [s.step_number, s])) }));
  }
}
