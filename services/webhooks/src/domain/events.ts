/**
 * What an event becomes for its owner's webhooks: the spec's event name, the account whose webhooks
 * get it, and the body every attempt sends, `{event, timestamp, data}` with exactly the spec's data
 * fields per event ("Events"). The timestamp is when the event happened, ISO 8601 with milliseconds.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ExecutionStatus, WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ExecutionEvent, SpendLimitApproaching, WorkflowEvent } from "@toolport/proto/toolport/events/v1/events_pb";

export const EVENT_NAMES = [
  "tool.execution.completed",
  "tool.execution.failed",
  "workflow.completed",
  "workflow.failed",
  "agent.spend.limit_approaching",
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** Sent only by POST /webhooks/{id}/test, to that webhook alone; not subscribable. */
export const TEST_EVENT = "webhook.test";

export interface Outgoing {
  event: string;
  ownerId: string;
  body: string;
}

function envelope(event: string, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ event, timestamp: at.toISOString(), data });
}

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

/** The body of a test delivery. */
export function testBody(webhookId: string, at = new Date()): string {
  return envelope(TEST_EVENT, at, { webhook_id: webhookId, message: "a test delivery from Toolport" });
}
