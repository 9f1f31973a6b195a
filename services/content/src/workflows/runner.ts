/**
 * Runs workflows durably. A run is a row leased to one process at a time; that process advances it one
 * step per transaction (WorkflowStore.commitStep). Each step is a tool call through the execution
 * service, as the runner (its principal is stored with the run) and with the idempotency key
 * `<run_id>:<step_number>`: a process that dies mid-step leaves its lease to run out, the sweeper of any
 * process takes the run over, and calling the step again gets the stored outcome (or waits for the call
 * still under way) instead of a second upstream call or charge.
 *
 * A step ends the run when its tool fails or is refused (not permitted, over a limit, invalid input, a
 * template that matches nothing), pauses it when it needs consent (awaiting_confirmation, continued by
 * confirm()), and is tried again later when execution cannot be reached, until `maxAttempts`.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { runInScope } from "@toolport/kit/context";
import { Subjects } from "@toolport/kit/events";
import { timeOrderedUuid } from "@toolport/kit/ids";
import { mcpTextJson, selectPath } from "@toolport/kit/json-path";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import { MAX_RESPONSE_CHARS } from "@toolport/kit/response-limits";
import { contextFromStored, traceCarrier, withTraceContext } from "@toolport/kit/tracing";
import { type LookResult, Wakeup } from "@toolport/kit/wakeup";
import { type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { WorkflowEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { LiveRun, RunRow, RunStatus, StepDef, WorkflowRow } from "../domain/model.js";
import type { ExecutionPort } from "../domain/ports.js";
import type { StepCommit, WorkflowStore } from "../store/workflows.js";
import { checkMapping, type Lookup, resolveMapping, TemplateError } from "./templates.js";

/** What a template reads back from execution's stored result at most. */
const STORED_READ_MAX_CHARS = 2_000_000;
/** How long stop() waits for steps under way before leaving their runs to the lease. */
const STOP_WAIT_MS = 10_000;

export interface RunnerOptions {
  pool: Pool;
  store: WorkflowStore;
  /** Each step's call (clients/execution.ts). */
  execution: ExecutionPort;
  log: Logger;
  /** The outbox relay: told when a run's event was committed. */
  nudge: () => void;
  leaseMs: number;
  pollMs: number;
  /** The sweeper and async starts take on runs only while this process drives fewer (synchronous runs count, and are never refused). */
  concurrency: number;
  /** Attempts at one step when execution cannot be reached, before the run fails. */
  maxAttempts: number;
}

/** A write found the run leased to another process (or already past the step). */
class LostLease extends Error {}

type StepOutcome =
  | { kind: "retry"; why: string }
  | {
      kind: "done";
      step: StepCommit["step"];
      consent?: JsonObject;
      final?: { value: Json; truncated: boolean; responseMeta: JsonObject | null };
    };

export class WorkflowRunner {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly active = new Map<string, Promise<void>>();
  private readonly wakeup: Wakeup;
  private stopping = false;

  constructor(private readonly o: RunnerOptions) {
    this.wakeup = new Wakeup({
      pool: o.pool,
      channel: "toolport_workflow_runs",
      pollMs: o.pollMs,
      log: o.log,
      look: () => this.sweep(),
    });
  }

  async start(): Promise<void> {
    await this.wakeup.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.wakeup.stop();
    await Promise.race([Promise.allSettled([...this.active.values()]), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
  }

  /**
   * Starts a run of `workflow` as `principal` and drives it here. Resolves with the run once it ended or
   * paused, at once with `async`, or after `waitMs` (pending: the run goes on and can be read by id).
   */
  async begin(
    workflow: WorkflowRow,
    principal: Principal,
    inputs: JsonObject,
    options: { maxResponseChars: number; async: boolean; waitMs: number; requestId: string | null },
  ): Promise<{ run: LiveRun; pending: boolean }> {
    // Async starts beyond this process's share wait in the table for a sweeper with room.
    const queue = options.async && this.active.size >= this.o.concurrency;
    const now = new Date();
    const row: RunRow = {
      id: randomUUID(),
      workflow_id: workflow.id,
      workflow_name: workflow.name,
      runner_id: principal.accountId,
      organization_id: principal.organizationId || principal.personalOrganizationId,
      principal: Buffer.from(toBinary(PrincipalSchema, principal)),
      request_id: options.requestId,
      trace_context: traceCarrier(),
      status: "running",
      steps: workflow.steps,
      inputs,
      max_response_chars: options.maxResponseChars,
      next_step: 1,
      confirm_token: null,
      consent: null,
      result: null,
      truncated: false,
      response_meta: null,
      error: null,
      attempts: 0,
      started_at: now,
      active_ms: "0",
      resumed_at: now,
      finished_at: null,
      execution_time_ms: null,
    };
    const run: LiveRun = { row, steps: new Map() };
    const inserted = this.o.store.insertRun(row, queue ? null : this.owner, queue ? 0 : this.o.leaseMs, options.async);
    if (options.async) {
      // The caller is told the run id: its row is flushed first.
      await inserted;
      if (queue) {
        this.wakeup.wake();
        return { run, pending: true };
      }
      return this.follow(run, 0);
    }
    // A synchronous caller waits for the end: step 1 starts while the row is written, and the row's
    // write is awaited before step 1's outcome is.
    run.written = inserted;
    inserted.catch(() => {});
    const answer = await this.follow(run, options.waitMs);
    await inserted;
    return answer;
  }

  /** Continues a run awaiting confirmation; null when it is not the caller's run or not waiting. */
  async confirm(
    runId: string,
    runnerId: string,
    confirmToken: string,
    options: { async: boolean; waitMs: number },
  ): Promise<{ run: LiveRun; pending: boolean } | null> {
    const row = await this.o.store.confirm(runId, runnerId, confirmToken, this.owner, this.o.leaseMs, new Date());
    if (!row) return null;
    const steps = (await this.o.store.stepsOf([row.id])).get(row.id) ?? [];
    return this.follow({ row, steps: new Map(steps.map((s) => [s.step_number, s])) }, options.async ? 0 : options.waitMs);
  }

  private async follow(run: LiveRun, waitMs: number): Promise<{ run: LiveRun; pending: boolean }> {
    const driving = this.track(run);
    if (waitMs <= 0) return { run, pending: true };
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      driving.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    return { run, pending: !ended || run.row.status === "running" };
  }

  private track(run: LiveRun): Promise<void> {
    const driving = this.drive(run)
      .catch((err) => this.o.log.error({ err, run_id: run.row.id }, "workflow run: driving failed; the sweeper takes it over"))
      .finally(() => this.active.delete(run.row.id));
    this.active.set(run.row.id, driving);
    return driving;
  }

  /**
   * Takes over runs whose lease ran out, as many as this process has room for; when there were none, when
   * the next lease runs out (a queued or released run NOTIFYs, so nothing else is waited for).
   */
  private async sweep(): Promise<LookResult> {
    if (this.stopping) return true;
    const room = this.o.concurrency - this.active.size;
    if (room <= 0) return true;
    const rows = await this.o.store.claimDue(this.owner, this.o.leaseMs, room);
    if (rows.length === 0) return { dueInMs: await this.o.store.nextDueInMs() };
    const steps = await this.o.store.stepsOf(rows.map((r) => r.id));
    for (const row of rows) {
      this.o.log.info({ run_id: row.id, step: row.next_step, attempt: row.attempts }, "workflow run: resuming");
      this.track({ row, steps: new Map((steps.get(row.id) ?? []).map((s) => [s.step_number, s])) });
    }
    return true;
  }

  private async drive(run: LiveRun): Promise<void> {
    const { row } = run;
    const principal = fromBinary(PrincipalSchema, row.principal);
    const referenced = referencedSteps(row);
    let lost = false;
    const heartbeat = setInterval(
      () => {
        // After the write under way: a synchronous run's first row may still be on its way.
        (run.written ?? Promise.resolve())
          .catch(() => {})
          .then(() => this.o.store.renewLease(row.id, this.owner, this.o.leaseMs))
          .then((held) => {
            if (!held) lost = true;
          })
          .catch((err) => this.o.log.warn({ err: (err as Error).message, run_id: row.id }, "workflow run: lease renewal failed"));
      },
      Math.max(100, Math.floor(this.o.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      // In the trace the run began in, wherever it is driven (its steps' RPCs and its event join it).
      await withTraceContext(contextFromStored(row.trace_context), () =>
        runInScope({ requestId: row.request_id ?? randomUUID(), principal }, async () => {
          while (row.status === "running" && !lost) {
            if (this.stopping) {
              await run.written;
              await this.o.store.releaseLease(row.id, this.owner, 0);
              return;
            }
            const n = row.next_step;
            const outcome =
              row.attempts > this.o.maxAttempts
                ? gaveUp(row, n, this.o.maxAttempts)
                : await this.runStep(run, n, referenced.has(n));
            if (outcome.kind === "retry") {
              const delay = Math.min(30_000, 250 * 2 ** Math.min(row.attempts, 7));
              this.o.log.warn(
                { run_id: row.id, step: n, why: outcome.why, retry_in_ms: delay },
                "workflow run: step will be tried again",
              );
              await run.written;
              await this.o.store.releaseLease(row.id, this.owner, delay);
              return;
            }
            await this.commit(run, outcome);
          }
          // The last write of a run that goes on elsewhere (stopping, lost lease) still lands or fails here.
          await run.written;
        }),
      );
    } catch (err) {
      if (!(err instanceof LostLease)) throw err;
      this.o.log.warn({ run_id: row.id, step: row.next_step }, "workflow run: another process holds the run now");
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Runs step n: its input from the templates, then the tool call as the runner. */
  private async runStep(run: LiveRun, n: number, keepResult: boolean): Promise<StepOutcome> {
    const { row } = run;
    const def = row.steps[n - 1]!;
    const started = Date.now();
    const base = stepOf(def);
    let input: JsonObject;
    try {
      input = await resolveMapping(def.input_mapping, this.lookup(run));
    } catch (err) {
      if (err instanceof TemplateError) {
        return {
          kind: "done",
          step: {
            ...base,
            status: "failed",
            tool_input: null,
            error: `step ${n}: ${err.message}`,
            error_code: "template_unmatched",
            duration_ms: 0,
          },
        };
      }
      return { kind: "retry", why: (err as Error).message };
    }
    const last = n === row.steps.length;
    const call = await this.o.execution.callStep({
      toolId: def.tool_id,
      input,
      // Intermediate steps get the largest cap, so later templates see their whole result.
      maxResponseChars: last ? row.max_response_chars : MAX_RESPONSE_CHARS,
      confirmToken: row.confirm_token ?? undefined,
      idempotencyKey: `${row.id}:${n}`,
    });
    if (call.kind === "unreachable") return { kind: "retry", why: call.why };
    if (call.kind === "refused") {
      return {
        kind: "done",
        step: {
          ...base,
          status: "failed",
          tool_input: input,
          error: call.keyRefused ? `the API key that started this run was refused: ${call.message}` : call.message,
          // The refusal's own code where execution gave one (insufficient_role for a viewer's run).
          error_code: call.reason || "refused",
          duration_ms: Date.now() - started,
        },
      };
    }
    const duration_ms = Date.now() - started;
    const step = { ...base, tool_id: call.toolId, tool_input: input, duration_ms };
    if (call.kind === "consent") {
      return {
        kind: "done",
        step: { ...step, status: "awaiting_confirmation", error: null, error_code: null },
        consent: call.consent,
      };
    }
    if (call.kind === "not_run") {
      // Refused before it ran: nothing was called or charged. A call with this key still under way
      // elsewhere, or an internal error, is tried again; any other refusal ends the run.
      const { reason } = call;
      if (reason === "idempotency_key_in_flight" || reason === "internal_error" || reason === "catalog_unavailable")
        return { kind: "retry", why: call.error ?? reason };
      return {
        kind: "done",
        step: { ...step, status: "failed", error: call.error ?? "refused", error_code: reason ?? "refused" },
      };
    }
    if (call.kind === "failed") {
      return {
        kind: "done",
        step: {
          ...step,
          status: "failed",
          execution_id: call.executionId,
          error: call.error ?? "the tool failed",
          error_code: call.reason ?? "execution_failed",
        },
      };
    }
    const done: StepOutcome = {
      kind: "done",
      step: {
        ...step,
        status: "completed",
        execution_id: call.executionId,
        error: null,
        result: keepResult && !call.truncated ? call.value : undefined,
        result_truncated: keepResult && call.truncated,
      },
    };
    if (last) done.final = { value: call.value, truncated: call.truncated, responseMeta: call.responseMeta };
    return done;
  }

  /** Values for templates: the run's inputs, and earlier steps' results (kept with them, or read back from execution). */
  private lookup(run: LiveRun): Lookup {
    return async (ref) => {
      if (ref.kind === "inputs") return selectPath(run.row.inputs, ref.path);
      const step = run.steps.get(ref.step);
      if (step?.status !== "completed") throw new TemplateError(`${ref.text}: step ${ref.step} has no result`);
      if (!step.result_truncated) return selectPath(step.result ?? null, ref.path);
      // Larger than a call returns: read the path from the stored result.
      const stored = await this.o.execution.readStored(step.execution_id!, ref.pathText || undefined, STORED_READ_MAX_CHARS);
      if (stored.kind === "unmatched") return { matched: false, value: null };
      if (stored.kind === "too_large")
        throw new TemplateError(`${ref.text}: step ${ref.step}'s result there is over ${STORED_READ_MAX_CHARS} characters`);
      return { matched: true, value: ref.pathText ? stored.value : (mcpTextJson(stored.value) ?? stored.value) };
    };
  }

  /**
   * Writes a step's outcome and applies it to the run in memory. Throws LostLease when the run is no
   * longer this process's (when the write is awaited: at once if the run ended or paused, else by the
   * next write).
   */
  private async commit(run: LiveRun, outcome: Extract<StepOutcome, { kind: "done" }>): Promise<void> {
    const { row } = run;
    const { step } = outcome;
    const total = row.steps.length;
    let runStatus: RunStatus = "running";
    if (step.status === "failed") runStatus = "failed";
    else if (step.status === "awaiting_confirmation") runStatus = "awaiting_confirmation";
    else if (step.step_number === total) runStatus = "completed";
    const ended = runStatus === "completed" || runStatus === "failed";
    const now = new Date();
    const activeMs = Number(row.active_ms) + Math.max(0, now.getTime() - row.resumed_at.getTime());
    const error = runStatus === "failed" ? step.error : null;
    const stepsCompleted = step.status === "completed" ? step.step_number : step.step_number - 1;
    const eventId = timeOrderedUuid();
    const event = ended
      ? {
          id: eventId,
          subject: runStatus === "completed" ? Subjects.workflowCompleted : Subjects.workflowFailed,
          requestId: row.request_id,
          traceContext: row.trace_context,
          payload: toBinary(
            WorkflowEventSchema,
            create(WorkflowEventSchema, {
              eventId,
              occurredAt: timestampNow(),
              requestId: row.request_id ?? "",
              workflowId: row.workflow_id,
              executionId: row.id,
              ownerId: row.runner_id,
              organizationId: row.organization_id,
              status: runStatus === "completed" ? WorkflowRunStatus.COMPLETED : WorkflowRunStatus.FAILED,
              executionTimeMs: BigInt(activeMs),
              stepsCompleted,
              stepsTotal: total,
              error: error ?? undefined,
            }),
          ),
        }
      : undefined;
    const write: StepCommit = {
      runId: row.id,
      leaseOwner: this.owner,
      step,
      runStatus,
      consent: outcome.consent ?? null,
      result: outcome.final,
      error,
      activeMs,
      finishedAt: ended ? now : undefined,
      event,
    };
    const previous = run.written;
    const commit = async () => {
      await previous;
      if (!(await this.o.store.commitStep(write))) throw new LostLease();
    };
    if (runStatus === "running") {
      // The run goes on: its next step starts now, while this outcome is written (it waits for the one
      // before it). A process that dies meanwhile loses at most this write, and the resumed step gets
      // execution's stored outcome again.
      run.written = commit();
      run.written.catch(() => {});
      this.apply(run, write, now);
      return;
    }
    // The run ended or paused: the caller is told once it is written.
    await commit();
    run.written = undefined;
    if (event) this.o.nudge();
    this.apply(run, write, now);
  }

  /** A step's outcome applied to the run in memory, as commitStep writes it, so answers need no read back. */
  private apply(run: LiveRun, c: StepCommit, now: Date): void {
    const { row } = run;
    const { step, runStatus } = c;
    run.steps.set(step.step_number, { ...step, duration_ms: String(step.duration_ms), result: step.result ?? null });
    if (step.status === "completed") row.next_step = step.step_number + 1;
    row.status = runStatus;
    row.attempts = 0;
    row.confirm_token = null;
    row.consent = c.consent ?? null;
    row.error = c.error ?? null;
    if (c.result) {
      row.result = c.result.value;
      row.truncated = c.result.truncated;
      row.response_meta = c.result.responseMeta;
    }
    if (runStatus !== "running") row.active_ms = String(c.activeMs);
    if (runStatus === "completed" || runStatus === "failed") {
      row.finished_at = now;
      row.execution_time_ms = String(c.activeMs);
    }
  }
}

/** The step numbers some template refers to: their results are kept for the steps after them. */
function referencedSteps(row: RunRow): Set<number> {
  const out = new Set<number>();
  for (const def of row.steps)
    for (const t of checkMapping(def.input_mapping, def.step_number)) if (t.ref.kind === "step") out.add(t.ref.step);
  return out;
}

/** Step n's outcome once execution could not be reached `max` times in a row. */
function gaveUp(row: RunRow, n: number, max: number): StepOutcome {
  return {
    kind: "done",
    step: {
      ...stepOf(row.steps[n - 1]!),
      status: "failed",
      tool_input: null,
      error: `step ${n} could not be run: the execution service did not answer after ${max} attempts`,
      error_code: "execution_unavailable",
      duration_ms: 0,
    },
  };
}

/** What every outcome of a step starts from: the step, no execution, no error code, no result kept. */
function stepOf(def: StepDef) {
  return {
    step_number: def.step_number,
    tool_id: def.tool_id,
    tool_name: def.tool_name,
    execution_id: null,
    error_code: null,
    result: undefined,
    result_truncated: false,
  };
}

/** The run's status as the proto enum. */
export function runStatusEnum(status: RunStatus): WorkflowRunStatus {
  switch (status) {
    case "running":
      return WorkflowRunStatus.RUNNING;
    case "completed":
      return WorkflowRunStatus.COMPLETED;
    case "failed":
      return WorkflowRunStatus.FAILED;
    case "awaiting_confirmation":
      return WorkflowRunStatus.AWAITING_CONFIRMATION;
  }
}
