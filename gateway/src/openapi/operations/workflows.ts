/** The workflow routes' operations (gateway/src/routes/workflows.ts) and the schemas only they use. */
import type { OperationDoc } from "../describe.js";
import {
  anyValue,
  arrayOf,
  boolean,
  closed,
  consent,
  integer,
  oneOf,
  ref,
  responseMeta,
  type Schema,
  string,
  stringArray,
  stringOrNull,
  timestamp,
  timestampOrNull,
  workflowSummary,
} from "../schemas.js";

const runStatus = oneOf("running", "awaiting_confirmation", "completed", "failed");

export const workflowsSchemas: Record<string, Schema> = {
  WorkflowStepInput: {
    description: "A step as sent: the tool, and its input with `{{inputs.x}}` and `{{steps.N.result.path}}` templates.",
    ...closed({ tool_id: string }, { description: string, input_mapping: { type: "object" }, step_number: integer }),
  },
  WorkflowRun: {
    description:
      "A run: its status, every step's outcome, and the last step's result (capped like a call) once completed. " +
      "A run awaiting confirmation carries the step's consent object.",
    ...closed({
      run_id: string,
      workflow_id: string,
      workflow_name: string,
      status: runStatus,
      inputs: { type: "object" },
      steps: arrayOf(
        closed({
          step_number: { type: "integer", minimum: 1 },
          tool_id: string,
          tool_name: string,
          status: oneOf("pending", "running", "completed", "failed", "skipped", "awaiting_confirmation"),
          execution_id: stringOrNull,
          error: stringOrNull,
          error_code: stringOrNull,
          duration_ms: integer,
          tool_input: anyValue,
        }),
      ),
      steps_completed: integer,
      steps_total: integer,
      result: anyValue,
      truncated: boolean,
      response_meta: { ...responseMeta, type: ["object", "null"] },
      consent: { ...consent, type: ["object", "null"] },
      error: stringOrNull,
      execution_time_ms: integer,
      started_at: timestamp,
      finished_at: timestampOrNull,
    }),
  },
};

const WORKFLOW_ID = "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58";
const TOOL_ID = "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41";
const workflowExample = {
  id: WORKFLOW_ID,
  name: "Profile digest",
  description: "Reads a profile and writes a one-line digest.",
  steps: [
    {
      step_number: 1,
      tool_id: TOOL_ID,
      tool_name: "get_profile",
      description: "",
      input_mapping: { user_id: "{{inputs.user_id}}" },
    },
  ],
  owner_id: "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
  visibility: "private",
  tags: ["demo"],
  created_at: "2026-11-20T09:30:00Z",
  updated_at: "2026-11-20T09:30:00Z",
  input_schema: null,
  total_executions: 12,
  success_rate: 91.7,
};
const summaryExample = {
  id: WORKFLOW_ID,
  name: "Profile digest",
  description: "Reads a profile and writes a one-line digest.",
  step_count: 1,
  owner_id: "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
  visibility: "public",
  tags: ["demo"],
  total_executions: 12,
  success_rate: 91.7,
  created_at: "2026-11-20T09:30:00Z",
};
const runExample = {
  run_id: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
  workflow_id: WORKFLOW_ID,
  workflow_name: "Profile digest",
  status: "completed",
  inputs: { user_id: "7" },
  steps: [
    {
      step_number: 1,
      tool_id: TOOL_ID,
      tool_name: "get_profile",
      status: "completed",
      execution_id: "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
      error: null,
      error_code: null,
      duration_ms: 184,
      tool_input: { user_id: "7" },
    },
  ],
  steps_completed: 1,
  steps_total: 1,
  result: { id: "7", name: "Ada" },
  truncated: false,
  response_meta: null,
  consent: null,
  error: null,
  execution_time_ms: 191,
  started_at: "2026-11-20T09:31:00Z",
  finished_at: "2026-11-20T09:31:00.191Z",
};
const pendingRunExample = {
  ...runExample,
  status: "running",
  steps: [{ ...runExample.steps[0], status: "running", execution_id: null, duration_ms: 0, tool_input: null }],
  steps_completed: 0,
  result: null,
  execution_time_ms: 0,
  finished_at: null,
};

const workflowId = { workflow_id: { description: "The workflow's id.", schema: { type: "string", format: "uuid" } } };
const runId = { run_id: { description: "The run's id.", schema: { type: "string", format: "uuid" } } };
const paging = {
  limit: { description: "At most this many (1-100, default 20).", schema: { type: "integer", minimum: 1, maximum: 100 } },
  offset: { description: "Skip this many (default 0).", schema: { type: "integer", minimum: 0 } },
};
const workflowBody = (required: string[]): Schema => ({
  type: "object",
  required,
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    description: string,
    steps: { type: "array", items: ref("WorkflowStepInput"), minItems: 1, maxItems: 20 },
    visibility: oneOf("private", "public"),
    tags: { ...stringArray, maxItems: 20 },
    input_schema: { type: ["object", "null"], description: "A JSON Schema the run's inputs must match." },
  },
});
const runAnswers = {
  200: {
    description: "The run ended, or paused for consent (`awaiting_confirmation`).",
    schema: ref("WorkflowRun"),
    example: runExample,
  },
  202: {
    description: "The run goes on (asked `async`, or longer than the wait); read it by `run_id`.",
    schema: ref("WorkflowRun"),
    example: pendingRunExample,
  },
};
const runBody = {
  schema: {
    type: "object",
    properties: {
      inputs: { type: "object", description: "Values for `{{inputs.x}}`; checked against the input_schema." },
      async: { type: "boolean", description: "Answer 202 at once; the run goes on." },
      max_response_chars: { type: "integer", minimum: 1, description: "Cap of the last step's result (as a call's)." },
    },
  },
  required: false,
  example: { inputs: { user_id: "7" } },
};

export const workflowsOps = {
  listPublic: {
    operationId: "listPublicWorkflows",
    summary: "Public workflows",
    tags: ["Workflows"],
    query: {
      search: { description: "Words in the name or description (taken literally).", schema: string },
      sort: { description: "Default newest.", schema: oneOf("newest", "popular", "name") },
      ...paging,
    },
    responses: {
      200: { description: "Summaries.", schema: arrayOf(workflowSummary({ const: "public" })), example: [summaryExample] },
    },
  },
  listMine: {
    operationId: "listMyWorkflows",
    summary: "The caller's workflows",
    tags: ["Workflows"],
    query: { visibility: { description: "Only these (default both).", schema: oneOf("private", "public") }, ...paging },
    responses: { 200: { description: "Summaries.", schema: arrayOf(ref("WorkflowSummary")), example: [summaryExample] } },
  },
  create: {
    operationId: "createWorkflow",
    summary: "Save a workflow",
    description:
      "Each step's tool must exist and be visible to the caller (400 `unknown_tool`); templates may refer only to " +
      "the inputs or an earlier step (400 `invalid_template`). A refusal stores nothing.",
    tags: ["Workflows"],
    body: {
      schema: workflowBody(["name", "steps"]),
      example: { name: "Profile digest", steps: [{ tool_id: "<tool id>", input_mapping: { user_id: "{{inputs.user_id}}" } }] },
    },
    responses: { 200: { description: "The saved workflow.", schema: ref("Workflow"), example: workflowExample } },
  },
  getRun: {
    operationId: "getWorkflowRun",
    summary: "A run of the caller's",
    tags: ["Workflows"],
    path: runId,
    responses: { 200: { description: "The run.", schema: ref("WorkflowRun"), example: runExample } },
  },
  confirmRun: {
    operationId: "confirmWorkflowRun",
    summary: "Confirm the step a run waits on",
    description: "Continues from that step. 400 for a token that is not the run's; 409 when the run is not waiting.",
    tags: ["Workflows"],
    path: runId,
    body: {
      schema: { type: "object", required: ["confirm_token"], properties: { confirm_token: string, async: boolean } },
      example: { confirm_token: "ct_6f1c2b9e8d4a4f3e9c1b2a7d5e8f0b13" },
    },
    responses: { ...runAnswers, 409: { description: "The run does not wait for confirmation.", schema: ref("Error") } },
  },
  get: {
    operationId: "getWorkflow",
    summary: "A workflow",
    description: "Public workflows to anyone; a private one to its owner (anyone else gets 404).",
    tags: ["Workflows"],
    path: workflowId,
    responses: { 200: { description: "The workflow.", schema: ref("Workflow"), example: workflowExample } },
  },
  update: {
    operationId: "updateWorkflow",
    summary: "Change a workflow (owner)",
    tags: ["Workflows"],
    path: workflowId,
    body: { schema: workflowBody([]), example: { visibility: "public", tags: ["demo", "profiles"] } },
    responses: {
      200: {
        description: "The workflow as changed.",
        schema: ref("Workflow"),
        example: { ...workflowExample, visibility: "public" },
      },
    },
  },
  delete: {
    operationId: "deleteWorkflow",
    summary: "Delete a workflow (owner)",
    tags: ["Workflows"],
    path: workflowId,
    responses: {
      200: { description: "Deleted, for good.", schema: closed({ deleted: { const: true } }), example: { deleted: true } },
    },
  },
  run: {
    operationId: "runWorkflow",
    summary: "Run a workflow",
    description:
      "Each step is a call as the runner (its permissions, caps, rate limit and consent apply). 200 once the run " +
      "ended or paused for consent; 202 while it goes on.",
    tags: ["Workflows"],
    path: workflowId,
    body: runBody,
    responses: runAnswers,
  },
  execute: {
    operationId: "executeWorkflow",
    summary: "Run a workflow (same as /run)",
    tags: ["Workflows"],
    path: workflowId,
    body: runBody,
    responses: runAnswers,
  },
  listRuns: {
    operationId: "listWorkflowRuns",
    summary: "The caller's runs of a workflow",
    tags: ["Workflows"],
    path: workflowId,
    query: paging,
    responses: { 200: { description: "Runs, newest first.", schema: arrayOf(ref("WorkflowRun")), example: [runExample] } },
  },
} satisfies Record<string, OperationDoc>;
