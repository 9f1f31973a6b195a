/**
 * Key usage from `toolport.execution.*`: every execution stamped with a key, except synthetic probe
 * calls, becomes one row of key_usage, and every execution that counted against its account's free tier
 * one row of free_tier_calls (what a month that has ended is reconciled to, store/leases.ts), in one
 * statement per batch. Both are keyed by the execution, so a redelivered event writes nothing and the
 * consumer keeps no inbox rows.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { PoisonMessageError, type RunningConsumer, startConsumer } from "@toolport/kit/events";
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { type ExecutionEvent, ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { type KeyUsageRow, keyUsageJson, RECORD_KEY_USAGE_SQL } from "../store/keys.js";

export const KEY_USAGE_DURABLE = "identity-key-usage";
export const EXECUTION_SUBJECTS = "toolport.execution.*";

/** The row an event becomes, or null when it counts neither towards a key's usage nor the free tier. */
export function usageRow(event: ExecutionEvent, eventId: string): KeyUsageRow | null {
  const keyUse = Boolean(event.keyId) && !event.isProbe;
  if (!keyUse && !event.freeTier) return null;
  if (!event.executionId || !event.toolId) throw new PoisonMessageError("execution event without execution_id or tool_id");
  return {
    executionId: event.executionId,
    eventId,
    keyId: keyUse ? event.keyId! : null,
    freeTier: event.freeTier,
    accountId: event.accountId,
    toolId: event.toolId,
    toolName: event.toolName,
    serviceId: event.serviceId,
    serviceName: event.serviceName,
    success: event.status === ExecutionStatus.SUCCESS,
    seconds: Number.isFinite(event.seconds) && event.seconds >= 0 ? event.seconds : 0,
    isPaid: event.isPaid,
    costCents: event.costCents,
    occurredAt: event.occurredAt ? timestampDate(event.occurredAt) : new Date(),
  };
}

export function startKeyUsageConsumer(options: { nc: NatsConnection; pool: Pool; log: Logger }): Promise<RunningConsumer> {
  return startConsumer({
    ...options,
    durable: KEY_USAGE_DURABLE,
    subject: EXECUTION_SUBJECTS,
    schema: ExecutionEventSchema,
    applyStatement: {
      sql: RECORD_KEY_USAGE_SQL,
      row(event, eventId) {
        const row = usageRow(event, event.eventId || eventId);
        return row ? keyUsageJson(row) : null;
      },
      // Both rows are one per execution (ON CONFLICT): a repeated event writes nothing, no inbox needed.
      inbox: false,
    },
  });
}
