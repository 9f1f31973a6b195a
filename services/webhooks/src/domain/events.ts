/**
 * The events webhooks subscribe to, and what one becomes for its owner's webhooks (Outgoing): the spec's
 * event name, the account whose webhooks get it, and the body every attempt sends, `{event, timestamp,
 * data}`. The timestamp is when the event happened, ISO 8601 with milliseconds. events/outgoing.ts reads
 * each published event into one.
 */

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

/** The body every attempt sends: `{event, timestamp, data}`. */
export function envelope(event: string, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ event, timestamp: at.toISOString(), data });
}

/** The body of a test delivery. */
export function testBody(webhookId: string, at = new Date()): string {
  return envelope(TEST_EVENT, at, { webhook_id: webhookId, message: "a test delivery from Toolport" });
}
