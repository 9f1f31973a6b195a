/**
 * What content's domain needs from the outside world: its own tables (implemented in store/), the catalog
 * (clients/catalog.ts, over catalog's RPCs with the caller's principal) and the workflow runner, which
 * calls the execution service (workflows/runner.ts over clients/execution.ts).
 */
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { SkillBundle } from "../skills/bundle.js";
import type {
  Caller,
  LiveRun,
  NewWorkflow,
  ReviewOutcome,
  RunRow,
  SiteRow,
  SkillRow,
  StepRow,
  SubmissionRow,
  Visibility,
  WorkflowPatch,
  WorkflowRow,
  WorkflowSort,
} from "./model.js";

export interface SkillStore {
  /** null when the owner already has a skill of that name. */
  create(ownerId: string, b: SkillBundle, serviceId: string | null): Promise<SkillRow | null>;
  get(id: string): Promise<SkillRow | null>;
  listMine(ownerId: string, visibility?: string): Promise<SkillRow[]>;
  listPublic(search: string | undefined, limit: number, offset: number): Promise<SkillRow[]>;
  /** false when the owner has no such skill. */
  delete(ownerId: string, id: string): Promise<boolean>;
  createSubmission(
    submitterId: string,
    sourceSkillId: string | null,
    b: SkillBundle,
    serviceId: string | null,
  ): Promise<SubmissionRow>;
  getSubmission(id: string): Promise<SubmissionRow | null>;
  listMySubmissions(submitterId: string): Promise<SubmissionRow[]>;
  listSubmissions(status: string): Promise<SubmissionRow[]>;
  /** Decides a pending submission (an approval publishes its skill); `decided` when it was decided before. */
  review(id: string, reviewerId: string, approve: boolean, notes: string | null): Promise<ReviewOutcome>;
}

export interface SiteStore {
  /** The record and its crawl job, queued. */
  create(ownerId: string, url: string, domain: string, visibility: string): Promise<SiteRow>;
  get(id: string): Promise<SiteRow | null>;
  listMine(ownerId: string): Promise<SiteRow[]>;
  liveByDomain(domain: string): Promise<SiteRow | null>;
  /** The owner's record queued for a new crawl; null when the owner has no such record. */
  recrawl(ownerId: string, id: string): Promise<SiteRow | null>;
  delete(ownerId: string, id: string): Promise<boolean>;
}

export interface WorkflowStore {
  create(w: NewWorkflow): Promise<WorkflowRow>;
  /** null when the owner has no such workflow. */
  update(id: string, ownerId: string, p: WorkflowPatch): Promise<WorkflowRow | null>;
  get(id: string): Promise<WorkflowRow | null>;
  delete(id: string, ownerId: string): Promise<boolean>;
  listPublic(search: string | undefined, sort: WorkflowSort, limit: number, offset: number): Promise<WorkflowRow[]>;
  listMine(ownerId: string, visibility: Visibility | undefined, limit: number, offset: number): Promise<WorkflowRow[]>;
  getRun(id: string): Promise<RunRow | null>;
  /** The recorded steps of each run, by run id. */
  stepsOf(runIds: string[]): Promise<Map<string, StepRow[]>>;
  listRuns(runnerId: string, workflowId: string, limit: number, offset: number): Promise<RunRow[]>;
}

/**
 * The catalog as the caller sees it (asked with the caller's principal). A refusal is an answer (not one
 * the caller can see); the catalog failing to answer throws 503 catalog_unavailable.
 */
export interface CatalogPort {
  /** Whether the caller can see the catalog service. */
  serviceVisible(serviceId: string): Promise<boolean>;
  /** The tool as the caller sees it; null when the caller cannot see it or there is none. */
  visibleTool(toolId: string): Promise<{ id: string; name: string } | null>;
}

/** The answer to a run's start or confirmation: the run, and whether it is still under way (202). */
export interface RunAnswer {
  run: LiveRun;
  pending: boolean;
}

/**
 * Drives workflow runs: each step a tool call through the execution service as the runner. `C` is the
 * caller as the runner keeps it with the run (the full principal, so steps are called with its rights).
 */
export interface WorkflowRuns<C extends Caller> {
  begin(
    workflow: WorkflowRow,
    caller: C,
    inputs: JsonObject,
    options: { maxResponseChars: number; async: boolean; waitMs: number; requestId: string | null },
  ): Promise<RunAnswer>;
  /** Continues a run awaiting confirmation; null when it is not the caller's run or not waiting. */
  confirm(
    runId: string,
    runnerId: string,
    confirmToken: string,
    options: { async: boolean; waitMs: number },
  ): Promise<RunAnswer | null>;
}

/** JSON Schema checks (kit's InputValidator). */
export interface SchemaChecks {
  /** Why a schema cannot be used, or undefined. */
  schemaProblem(schema: JsonObject): string | undefined;
  /** What is wrong with `value` under `schema` (compiled once per `key`). */
  problems(key: string, schema: JsonObject, value: unknown): { field: string; message: string }[];
}

/** A workflow step's tool call as execution answered it (clients/execution.ts). */
export type StepCall =
  /** Execution could not be reached or failed to answer: a later attempt may not meet it. */
  | { kind: "unreachable"; why: string }
  /** Execution refused the call itself: `keyRefused` when the run's API key was refused. */
  | { kind: "refused"; keyRefused: boolean; reason: string; message: string }
  /** The tool needs the caller's consent first: `consent` as the run shows it. */
  | { kind: "consent"; toolId: string; consent: JsonObject }
  /** Refused before it ran (nothing was called or charged). */
  | { kind: "not_run"; toolId: string; reason: string | undefined; error: string | undefined }
  /** It ran and failed. */
  | { kind: "failed"; toolId: string; executionId: string | null; reason: string | undefined; error: string | undefined }
  | {
      kind: "completed";
      toolId: string;
      executionId: string | null;
      value: Json;
      truncated: boolean;
      responseMeta: JsonObject | null;
    };

/** A path of a stored result, read back: none there, more than asked for, or its value. */
export type StoredRead = { kind: "unmatched" } | { kind: "too_large" } | { kind: "value"; value: Json };

/** The execution service as the workflow runner calls it: as the run's principal (the current scope's). */
export interface ExecutionPort {
  callStep(call: {
    toolId: string;
    input: JsonObject;
    maxResponseChars: number;
    confirmToken: string | undefined;
    idempotencyKey: string;
  }): Promise<StepCall>;
  /** `path` of the stored result of `executionId` (the whole result when undefined), up to `maxChars`. */
  readStored(executionId: string, path: string | undefined, maxChars: number): Promise<StoredRead>;
}
