/**
 * Workflows and their runs in content's database. A run row is changed only by the process holding its
 * lease (`lease_owner`), and each step's outcome is one statement: the run's next step, the step row,
 * and, when the run ends, the workflow's counters and the run's event in the outbox, all or nothing.
 */
import { randomUUID } from "node:crypto";
import { outboxInsert } from "@toolport/kit/events";
import { GroupCommit } from "@toolport/kit/group-commit";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { Pool } from "@toolport/kit/pg";
import type {
  NewWorkflow,
  RunRow,
  RunStatus,
  StepRow,
  Visibility,
  WorkflowPatch,
  WorkflowRow,
  WorkflowSort,
} from "../domain/model.js";

const WORKFLOW_COLUMNS = `id, owner_id, organization_id, name, description, steps, input_schema, visibility, tags,
  total_executions, successful_executions, created_at, updated_at`;
const RUN_COLUMNS = `id, workflow_id, workflow_name, runner_id, organization_id, principal, request_id, trace_context, status, steps, inputs,
  max_response_chars, next_step, confirm_token, consent, result, truncated, response_meta, error, attempts, started_at,
  active_ms, resumed_at, finished_at, execution_time_ms`;
const STEP_COLUMNS =
  "step_number, status, tool_id, tool_name, tool_input, execution_id, error, error_code, duration_ms, result, result_truncated";

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
const SORTS: Record<WorkflowSort, string> = {
  newest: "created_at DESC, id DESC",
  popular: "total_executions DESC, created_at DESC, id DESC",
  name: "lower(name) ASC, created_at DESC, id DESC",
};

interface PendingRun {
  r: RunRow;
  leaseOwner: string | null;
  leaseMs: number;
}

/** The outcome of one step, written by commitStep. */
export interface StepCommit {
  runId: string;
  leaseOwner: string;
  /** The step row to write; `result` undefined when no later step's template refers to it. */
  step: Omit<StepRow, "duration_ms" | "result"> & { duration_ms: number; result: Json | undefined };
  /** The run's status after this step. */
  runStatus: RunStatus;
  consent?: JsonObject | null;
  result?: { value: Json; truncated: boolean; responseMeta: JsonObject | null };
  error?: string | null;
  /** Time spent running so far (written when the run pauses or ends). */
  activeMs: number;
  /** When the run ended (the process's clock, as the run's answer shows it). */
  finishedAt?: Date;
  /** The run's event, when it ended. */
  event?: {
    id: string;
    subject: string;
    payload: Uint8Array;
    requestId: string | null;
    traceContext: Record<string, string> | null;
  };
}

export class WorkflowStore {
  /**
   * `relaxed`: a pool whose commits do not wait for the WAL flush, for the writes of a run that a
   * Postgres crash may forget because the run redoes them: a step's outcome while the run goes on (the
   * resumed step gets execution's stored outcome for its idempotency key again), lease renewals and
   * claims (commits are fenced by lease_owner), and a synchronous run's first row (flushed by its end's
   * commit; its caller is still waiting). What a caller is told about is flushed: an async run's row, a
   * run's end with its event, a pause for consent, a confirmation.
   */
  /** Step outcomes written together with those of other runs (kit group-commit), one group per pool. */
  private readonly relaxedSteps: GroupCommit<StepCommit, boolean>;
  private readonly flushedSteps: GroupCommit<StepCommit, boolean>;
  private readonly relaxedInserts: GroupCommit<PendingRun>;
  private readonly reader: GroupCommit<string, WorkflowRow | null>;

  constructor(
    private readonly pool: Pool,
    private readonly relaxed: Pool = pool,
  ) {
    this.relaxedSteps = new GroupCommit((items) => this.commitSteps(relaxed, items));
    this.flushedSteps = new GroupCommit((items) => this.commitSteps(pool, items));
    this.relaxedInserts = new GroupCommit((items) => this.insertRuns(relaxed, items));
    this.reader = new GroupCommit((ids) => this.getMany(ids));
  }

  async create(w: NewWorkflow): Promise<WorkflowRow> {
    const { rows } = await this.pool.query<WorkflowRow>(
      `INSERT INTO workflows (id, owner_id, organization_id, name, description, steps, input_schema, visibility, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${WORKFLOW_COLUMNS}`,
      [
        randomUUID(),
        w.ownerId,
        w.organizationId,
        w.name,
        w.description,
        json(w.steps),
        json(w.inputSchema),
        w.visibility,
        w.tags,
      ],
    );
    return rows[0]!;
  }

  /** One workflow; reads made while one is under way go together in one statement. */
  get(id: string): Promise<WorkflowRow | null> {
    return this.reader.submit(id);
  }

  private async getMany(ids: string[]): Promise<(WorkflowRow | null)[]> {
    const { rows } = await this.pool.query<WorkflowRow>({
      name: "workflow_get_many",
      text: `SELECT ${WORKFLOW_COLUMNS} FROM workflows WHERE id = ANY($1::uuid[])`,
      values: [[...new Set(ids)]],
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Applies the fields given; null when the workflow is not the owner's. */
  async update(id: string, ownerId: string, p: WorkflowPatch): Promise<WorkflowRow | null> {
    const { rows } = await this.pool.query<WorkflowRow>(
      `UPDATE workflows SET
         name = COALESCE($3, name),
         description = COALESCE($4, description),
         steps = COALESCE($5::jsonb, steps),
         input_schema = CASE WHEN $6::boolean THEN $7::jsonb ELSE input_schema END,
         visibility = COALESCE($8, visibility),
         tags = COALESCE($9::text[], tags),
         updated_at = now()
       WHERE id = $1 AND owner_id = $2 RETURNING ${WORKFLOW_COLUMNS}`,
      [
        id,
        ownerId,
        p.name ?? null,
        p.description ?? null,
        p.steps ? json(p.steps) : null,
        p.inputSchema !== undefined,
        json(p.inputSchema),
        p.visibility ?? null,
        p.tags ?? null,
      ],
    );
    return rows[0] ?? null;
  }

  async delete(id: string, ownerId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM workflows WHERE id = $1 AND owner_id = $2", [id, ownerId]);
    return rowCount === 1;
  }

  async listPublic(search: string | undefined, sort: WorkflowSort, limit: number, offset: number): Promise<WorkflowRow[]> {
    const pattern = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    const { rows } = await this.pool.query<WorkflowRow>(
      `SELECT ${WORKFLOW_COLUMNS} FROM workflows
        WHERE visibility = 'public' AND ($1::text IS NULL OR name ILIKE $1 OR description ILIKE $1)
        ORDER BY ${SORTS[sort]} LIMIT $2 OFFSET $3`,
      [pattern, limit, offset],
    );
    return rows;
  }

  async listMine(ownerId: string, visibility: Visibility | undefined, limit: number, offset: number): Promise<WorkflowRow[]> {
    const { rows } = await this.pool.query<WorkflowRow>(
      `SELECT ${WORKFLOW_COLUMNS} FROM workflows WHERE owner_id = $1 AND ($2::text IS NULL OR visibility = $2)
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [ownerId, visibility ?? null, limit, offset],
    );
    return rows;
  }

  // ---- runs ----

  /**
   * A new run, leased to `leaseOwner` (null: left for a sweeper, due at once). `flushed` for an async start;
   * the others are written together with those of concurrent runs.
   */
  insertRun(r: RunRow, leaseOwner: string | null, leaseMs: number, flushed: boolean): Promise<void> {
    const item = { r, leaseOwner, leaseMs };
    return flushed ? this.insertRuns(this.pool, [item]) : this.relaxedInserts.submit(item);
  }

  private async insertRuns(pool: Pool, items: PendingRun[]): Promise<void> {
    const input = items.map(({ r, leaseOwner, leaseMs }) => ({
      id: r.id,
      workflow_id: r.workflow_id,
      workflow_name: r.workflow_name,
      runner_id: r.runner_id,
      organization_id: r.organization_id,
      principal: r.principal.toString("base64"),
      request_id: r.request_id,
      trace_context: r.trace_context,
      steps: r.steps,
      inputs: r.inputs,
      max_response_chars: r.max_response_chars,
      lease_owner: leaseOwner,
      lease_ms: leaseMs,
      started_at: r.started_at.toISOString(),
    }));
    // A queued run (no lease owner: its process had no room) wakes every replica's sweeper, whose idle
    // poll otherwise waits for the next lease it knows of (WorkflowRunner.sweep).
    await pool.query({
      name: "workflow_insert_runs",
      text: `WITH inserted AS (
       INSERT INTO workflow_runs (id, workflow_id, workflow_name, runner_id, organization_id, principal, request_id, trace_context,
                                  status, steps, inputs, max_response_chars, lease_owner, lease_until, started_at, resumed_at)
       SELECT x.id, x.workflow_id, x.workflow_name, x.runner_id, x.organization_id, decode(x.principal, 'base64'), x.request_id,
              x.trace_context, 'running', x.steps, x.inputs, x.max_response_chars, x.lease_owner,
              now() + make_interval(secs => x.lease_ms::double precision / 1000), x.started_at, x.started_at
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, workflow_id uuid, workflow_name text, runner_id uuid, organization_id uuid,
              principal text, request_id text, trace_context jsonb, steps jsonb, inputs jsonb, max_response_chars int, lease_owner text,
              lease_ms int, started_at timestamptz)
       RETURNING lease_owner
       )
       SELECT pg_notify('toolport_workflow_runs', '') WHERE EXISTS (SELECT 1 FROM inserted WHERE lease_owner IS NULL)`,
      values: [JSON.stringify(input)],
    });
  }

  async getRun(id: string): Promise<RunRow | null> {
    const { rows } = await this.pool.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async stepsOf(runIds: string[]): Promise<Map<string, StepRow[]>> {
    const out = new Map<string, StepRow[]>(runIds.map((id) => [id, []]));
    if (runIds.length === 0) return out;
    const { rows } = await this.pool.query<StepRow & { run_id: string }>(
      `SELECT run_id, ${STEP_COLUMNS} FROM workflow_run_steps WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, step_number`,
      [runIds],
    );
    for (const row of rows) out.get(row.run_id)?.push(row);
    return out;
  }

  /** A runner's runs of a workflow, newest first. */
  async listRuns(runnerId: string, workflowId: string, limit: number, offset: number): Promise<RunRow[]> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE runner_id = $1 AND workflow_id = $2
        ORDER BY started_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [runnerId, workflowId, limit, offset],
    );
    return rows;
  }

  /**
   * Records one step's outcome and moves the run on, in one statement. False when this process no longer
   * holds the run's lease, or the step was already recorded (another process took the run over).
   */
  commitStep(c: StepCommit): Promise<boolean> {
    return (c.runStatus === "running" ? this.relaxedSteps : this.flushedSteps).submit(c);
  }

  /**
   * Step outcomes of several runs in one statement (what concurrent runs wrote while the last write was
   * under way): each item's run moves on only where its lease and next step still hold; true for those.
   */
  private async commitSteps(pool: Pool, items: StepCommit[]): Promise<boolean[]> {
    const input = items.map((c) => ({
      run_id: c.runId,
      lease_owner: c.leaseOwner,
      step_number: c.step.step_number,
      step_status: c.step.status,
      run_status: c.runStatus,
      consent: c.consent ?? null,
      result: c.result ? c.result.value : null,
      truncated: c.result?.truncated ?? false,
      response_meta: c.result?.responseMeta ?? null,
      error: c.error ?? null,
      active_ms: c.activeMs,
      ended: c.runStatus === "completed" || c.runStatus === "failed",
      finished_at: c.finishedAt?.toISOString() ?? null,
      tool_id: c.step.tool_id,
      tool_name: c.step.tool_name,
      tool_input: c.step.tool_input,
      execution_id: c.step.execution_id,
      step_error: c.step.error,
      error_code: c.step.error_code,
      duration_ms: c.step.duration_ms,
      step_result: c.step.result === undefined ? null : c.step.result,
      result_truncated: c.step.result_truncated,
      event_id: c.event?.id ?? null,
    }));
    // The runs' events, written only for the runs this statement moved (a run whose lease another process
    // took meanwhile is that process's to end).
    const outbox = outboxInsert(
      items.flatMap(({ event }) =>
        event
          ? [
              {
                id: event.id,
                subject: event.subject,
                payload: Buffer.from(event.payload),
                requestId: event.requestId,
                traceContext: event.traceContext ? JSON.stringify(event.traceContext) : null,
              },
            ]
          : [],
      ),
      2,
      { only: "o.id IN (SELECT i.event_id FROM input i JOIN run ON run.id = i.run_id)" },
    );
    const { rows } = await pool.query<{ id: string }>({
      name: "workflow_commit_steps",
      text: `WITH input AS (
           SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
             run_id uuid, lease_owner text, step_number int, step_status text, run_status text, consent jsonb, result jsonb,
             truncated boolean, response_meta jsonb, error text, active_ms bigint, ended boolean, finished_at timestamptz,
             tool_id text, tool_name text, tool_input jsonb, execution_id uuid, step_error text, error_code text,
             duration_ms bigint, step_result jsonb, result_truncated boolean, event_id uuid)
         ), run AS (
           UPDATE workflow_runs r SET
             next_step = CASE WHEN i.step_status = 'completed' THEN i.step_number + 1 ELSE r.next_step END,
             status = i.run_status, attempts = 0, confirm_token = NULL, consent = i.consent,
             result = i.result, truncated = i.truncated, response_meta = i.response_meta, error = i.error,
             lease_owner = CASE WHEN i.run_status = 'running' THEN r.lease_owner END,
             lease_until = CASE WHEN i.run_status = 'running' THEN r.lease_until END,
             active_ms = CASE WHEN i.run_status = 'running' THEN r.active_ms ELSE i.active_ms END,
             finished_at = CASE WHEN i.ended THEN i.finished_at END,
             execution_time_ms = CASE WHEN i.ended THEN i.active_ms END
           FROM input i
           WHERE r.id = i.run_id AND r.lease_owner = i.lease_owner AND r.next_step = i.step_number AND r.status = 'running'
           RETURNING r.id, r.workflow_id
         ), step AS (
           INSERT INTO workflow_run_steps (run_id, step_number, status, tool_id, tool_name, tool_input, execution_id, error,
                                           error_code, duration_ms, result, result_truncated)
           SELECT i.run_id, i.step_number, i.step_status, i.tool_id, i.tool_name, i.tool_input, i.execution_id, i.step_error,
                  i.error_code, i.duration_ms, i.step_result, i.result_truncated
             FROM input i JOIN run ON run.id = i.run_id
           ON CONFLICT (run_id, step_number) DO UPDATE SET
             status = EXCLUDED.status, tool_input = EXCLUDED.tool_input, execution_id = EXCLUDED.execution_id,
             error = EXCLUDED.error, error_code = EXCLUDED.error_code, duration_ms = EXCLUDED.duration_ms,
             result = EXCLUDED.result, result_truncated = EXCLUDED.result_truncated
         ), stats AS (
           UPDATE workflows w SET total_executions = w.total_executions + e.runs, successful_executions = w.successful_executions + e.completed
             FROM (SELECT run.workflow_id, count(*) AS runs, count(*) FILTER (WHERE i.run_status = 'completed') AS completed
                     FROM input i JOIN run ON run.id = i.run_id WHERE i.ended GROUP BY run.workflow_id) e
            WHERE w.id = e.workflow_id
         ), event AS (
           ${outbox.sql}
         )
         SELECT id FROM run`,
      values: [JSON.stringify(input), ...outbox.values],
    });
    const moved = new Set(rows.map((r) => r.id));
    return items.map((c) => moved.has(c.runId));
  }

  /** Keeps the run's lease while a step runs; false when another process has taken it. */
  async renewLease(runId: string, owner: string, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.relaxed.query(
      `UPDATE workflow_runs SET lease_until = now() + make_interval(secs => $3::double precision / 1000)
        WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
      [runId, owner, leaseMs],
    );
    return rowCount === 1;
  }

  /** Gives the run back to the sweepers, to be taken again after `delayMs` (they are told: NOTIFY). */
  async releaseLease(runId: string, owner: string, delayMs: number): Promise<void> {
    await this.relaxed.query(
      `WITH released AS (
         UPDATE workflow_runs SET lease_owner = NULL, lease_until = now() + make_interval(secs => $3::double precision / 1000)
          WHERE id = $1 AND lease_owner = $2 AND status = 'running'
         RETURNING 1
       )
       SELECT pg_notify('toolport_workflow_runs', '') FROM released`,
      [runId, owner, delayMs],
    );
  }

  /**
   * How long until a running run's lease runs out (its process died, or it waits out a retry's delay), by
   * Postgres's clock: 0 or less when one already has, null when no run is running. The sweeper's idle
   * poll waits that long (kit's Wakeup).
   */
  async nextDueInMs(): Promise<number | null> {
    const { rows } = await this.relaxed.query<{ due_in_ms: number | null }>({
      name: "workflow_next_due",
      text: `SELECT (EXTRACT(EPOCH FROM min(lease_until) - now()) * 1000)::float8 AS due_in_ms
               FROM workflow_runs WHERE status = 'running'`,
    });
    return rows[0]?.due_in_ms ?? null;
  }

  /** Runs whose lease ran out (their process died, or gave them back), leased to `owner`. */
  async claimDue(owner: string, leaseMs: number, limit: number): Promise<RunRow[]> {
    const { rows } = await this.relaxed.query<RunRow>(
      `UPDATE workflow_runs r SET lease_owner = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000),
              attempts = r.attempts + 1
         FROM (SELECT id FROM workflow_runs WHERE status = 'running' AND lease_until < now()
                ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED) due
        WHERE r.id = due.id
        RETURNING ${RUN_COLUMNS.split(",")
          .map((c) => `r.${c.trim()}`)
          .join(", ")}`,
      [owner, leaseMs, limit],
    );
    return rows;
  }

  /** Continues a run awaiting confirmation with the token for its waiting step; null when not the runner's or not waiting. */
  async confirm(
    runId: string,
    runnerId: string,
    token: string,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<RunRow | null> {
    const { rows } = await this.pool.query<RunRow>(
      `UPDATE workflow_runs SET status = 'running', confirm_token = $3, consent = NULL, attempts = 0, lease_owner = $4,
              lease_until = now() + make_interval(secs => $5::double precision / 1000), resumed_at = $6
        WHERE id = $1 AND runner_id = $2 AND status = 'awaiting_confirmation'
        RETURNING ${RUN_COLUMNS}`,
      [runId, runnerId, token, owner, leaseMs, now],
    );
    return rows[0] ?? null;
  }
}
