/**
 * What content's domain works on: skills and their submissions, site records, workflows and their runs,
 * as the store reads and writes them, and the caller a use case acts for. Plain data: no pg, nats or proto.
 */
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { SkillFile } from "../skills/bundle.js";

/** Who a use case acts for (the gateway's principal, as the domain reads it). */
export interface Caller {
  accountId: string;
  organizationId: string;
  personalOrganizationId: string;
  /** The API key the call came with; absent (or empty) for a signed-in user. */
  keyId?: string;
  isPlatformAdmin: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs: anything else names nothing (answered like an unknown id, never as a database error). */
export const isId = (value: string): boolean => UUID.test(value);

export interface SkillRow {
  id: string;
  owner_id: string;
  name: string;
  description: string;
  license: string | null;
  compatibility: string | null;
  metadata: Record<string, unknown> | null;
  skill_md: string;
  scripts: SkillFile[];
  reference_files: SkillFile[];
  assets: SkillFile[];
  visibility: "private" | "public";
  service_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SubmissionRow {
  id: string;
  submitter_id: string;
  source_skill_id: string | null;
  skill_name: string;
  skill_description: string;
  license: string | null;
  compatibility: string | null;
  metadata: Record<string, unknown> | null;
  skill_md_content: string;
  scripts: SkillFile[];
  reference_files: SkillFile[];
  assets: SkillFile[];
  service_id: string | null;
  status: "pending" | "approved" | "rejected";
  submitted_at: Date;
  reviewed_at: Date | null;
  reviewer_notes: string | null;
  skill_id: string | null;
}

export type ReviewOutcome =
  | { kind: "decided"; submission: SubmissionRow }
  | { kind: "reviewed"; submission: SubmissionRow }
  | null;

export interface SiteRow {
  id: string;
  owner_id: string;
  domain: string;
  url: string;
  status: "pending" | "crawling" | "live" | "failed";
  visibility: "public" | "private";
  page_title: string;
  page_description: string;
  components: Record<string, unknown>;
  discovered_tools: unknown[];
  category: string;
  tags: string[];
  error: string | null;
  crawled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type Visibility = "private" | "public";

/** One step as stored (the spec's Step shape). */
export interface StepDef {
  step_number: number;
  tool_id: string;
  tool_name: string;
  description: string;
  input_mapping: JsonObject;
}

export interface WorkflowRow {
  id: string;
  owner_id: string;
  organization_id: string | null;
  name: string;
  description: string;
  steps: StepDef[];
  input_schema: JsonObject | null;
  visibility: Visibility;
  tags: string[];
  total_executions: string;
  successful_executions: string;
  created_at: Date;
  updated_at: Date;
}

export type RunStatus = "running" | "completed" | "failed" | "awaiting_confirmation";
export type StepStatus = "completed" | "failed" | "awaiting_confirmation";

export interface RunRow {
  id: string;
  workflow_id: string;
  workflow_name: string;
  runner_id: string;
  organization_id: string;
  principal: Buffer;
  request_id: string | null;
  /** The trace the run was started in (kit tracing traceCarrier), null when tracing is off. */
  trace_context: Record<string, string> | null;
  status: RunStatus;
  steps: StepDef[];
  inputs: JsonObject;
  max_response_chars: number;
  next_step: number;
  confirm_token: string | null;
  consent: JsonObject | null;
  result: Json | null;
  truncated: boolean;
  response_meta: JsonObject | null;
  error: string | null;
  attempts: number;
  started_at: Date;
  active_ms: string;
  resumed_at: Date;
  finished_at: Date | null;
  execution_time_ms: string | null;
}

export interface StepRow {
  step_number: number;
  status: StepStatus;
  tool_id: string;
  tool_name: string;
  tool_input: JsonObject | null;
  execution_id: string | null;
  error: string | null;
  error_code: string | null;
  duration_ms: string;
  result: Json | null;
  result_truncated: boolean;
}

export interface NewWorkflow {
  ownerId: string;
  organizationId: string | null;
  name: string;
  description: string;
  steps: StepDef[];
  inputSchema: JsonObject | null;
  visibility: Visibility;
  tags: string[];
}

export interface WorkflowPatch {
  name?: string;
  description?: string;
  steps?: StepDef[];
  /** null removes the schema. */
  inputSchema?: JsonObject | null;
  visibility?: Visibility;
  tags?: string[];
}

/** How public workflows can be listed. */
export const WORKFLOW_SORTS = ["newest", "popular", "name"] as const;
export type WorkflowSort = (typeof WORKFLOW_SORTS)[number];
export const isWorkflowSort = (s: string): s is WorkflowSort => (WORKFLOW_SORTS as readonly string[]).includes(s);

/**
 * A run as this process knows it: its row and its recorded steps. `written` is the write still on its way
 * to Postgres (a synchronous run's first row, or the outcome of a step the run went on from), which the
 * next write waits for; the next step does not.
 */
export interface LiveRun {
  row: RunRow;
  steps: Map<number, StepRow>;
  written?: Promise<void>;
}
