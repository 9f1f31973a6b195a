/**
 * toolport.execution.completed / .failed: written to the outbox in the same transaction as the
 * execution row, with what the reliability block (catalog), key usage (identity), webhooks and spend
 * warnings (billing) need.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { currentRequestId } from "@toolport/kit/context";
import { type OutboxRow, outboxRow, Subjects } from "@toolport/kit/events";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { ErrorClassName } from "../domain/failure.js";
import type { ExecutionRecord } from "../domain/ports.js";

const errorClasses: Record<ErrorClassName, ErrorClass> = {
  auth: ErrorClass.AUTH,
  caller: ErrorClass.CALLER,
  platform: ErrorClass.PLATFORM,
  upstream: ErrorClass.UPSTREAM,
};

/** An execution's event as the outbox row the kit's relay publishes (see store/executions-store.ts record). */
export function executionEventRow(record: ExecutionRecord): OutboxRow {
  const eventId = record.id; // one event per execution: its id doubles as the de-duplication id
  const success = record.status === "success";
  const message = create(ExecutionEventSchema, {
    eventId,
    occurredAt: timestampFromDate(new Date(record.executedAt.getTime() + record.durationMs)),
    requestId: currentRequestId() ?? "",
    executionId: record.id,
    toolId: record.tool.id,
    toolName: record.tool.name,
    serviceId: record.tool.serviceId,
    serviceName: record.tool.serviceName,
    accountId: record.caller.accountId,
    organizationId: record.caller.organizationId,
    keyId: record.caller.keyId,
    status: success ? ExecutionStatus.SUCCESS : ExecutionStatus.ERROR,
    seconds: record.durationMs / 1000,
    error: record.error ?? undefined,
    errorClass: record.errorClass ? errorClasses[record.errorClass] : ErrorClass.UNSPECIFIED,
    errorType: record.errorType ?? undefined,
    costCents: record.costCents,
    costAtomic: record.costCents * 10_000n,
    isPaid: record.tool.isPaid,
    isProbe: false,
    freeTier: record.freeTier,
  });
  return outboxRow(success ? Subjects.executionCompleted : Subjects.executionFailed, ExecutionEventSchema, message, eventId);
}
