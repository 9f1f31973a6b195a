/**
 * A published event as its owner's webhooks get it (domain/events.ts Outgoing): exactly the spec's data
 * fields per event ("Events"), or null for an event that notifies nobody.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ExecutionStatus, WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ExecutionEvent, SpendLimitApproaching, WorkflowEvent } from "@toolport/proto/toolport/events/v1/events_pb";
import { envelope, type Outgoing } from "../domain/events.js";

const when = (t: { occurredAt?: Parameters<typeof timestampDate>[0] }) =>
  t.occurredAt ? timestampDate(t.occurredAt) : new Date();

/** A tool execution; probe calls (synthetic) notify nobody. */
export function executionOutgoing(e: ExecutionEvent): Outgoing | null {
  if (e.isProbe || !e.accountId) return null;
  const success = e.status === ExecutionStatus.SUCCESS;
  const event = success ? "tool.execution.completed" : "tool.execution.failed";
  return {
    event,
    ownerId: e.accountId,
    body: envelope(event, when(e), {
      tool_id: e.toolId,
      tool_name: e.toolName,
      status: success ? "success" : "error",
      execution_time: Number.isFinite(e.seconds) ? e.seconds : 0,
      error: success ? null : (e.error ?? "the tool execution failed"),
    }),
  };
}

/** A workflow run that ended; `status` is `completed` or `failed` (the spec leaves the latter's value open). */
export function workflowOutgoing(e: WorkflowEvent): Outgoing | null {
  if (!e.ownerId) return null;
  const completed = e.status === WorkflowRunStatus.COMPLETED;
  if (!completed && e.status !== WorkflowRunStatus.FAILED) return null;
  const event = completed ? "workflow.completed" : "workflow.failed";
  return {
    event,
    ownerId: e.ownerId,
    body: envelope(event, when(e), {
      workflow_id: e.workflowId,
      execution_id: e.executionId,
      status: completed ? "completed" : "failed",
      execution_time_ms: Number(e.executionTimeMs),
      steps_completed: e.stepsCompleted,
      steps_total: e.stepsTotal,
      error: completed ? null : (e.error ?? "a workflow step failed"),
    }),
  };
}

/** A key's daily spend reached 80% of its cap. */
export function spendOutgoing(e: SpendLimitApproaching): Outgoing | null {
  if (!e.accountId) return null;
  const event = "agent.spend.limit_approaching";
  return {
    event,
    ownerId: e.accountId,
    body: envelope(event, when(e), {
      daily_limit_cents: Number(e.dailyLimitCents),
      spent_today_cents: Number(e.spentTodayCents),
      percentage: e.percentage,
    }),
  };
}
