/**
 * toolport.execution.completed / .failed -> one row in `executions`, the facts behind the reliability
 * block and recommendations. Durable (one consumer shared by the replicas: the table is shared); a
 * redelivered event is recorded once because its execution's row is already there (the statement's
 * conflict clause), so the consumer keeps no inbox rows.
 */

import { timestampDate } from "@bufbuild/protobuf/wkt";
import { PoisonMessageError, type RunningConsumer, startConsumer } from "@toolport/kit/events";
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import { enumName } from "@toolport/kit/proto-json";
import { ErrorClassSchema, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { type ExecutionEvent, ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { isUuid } from "../domain/slug.js";
import { type ExecutionFact, executionRow, RECORD_EXECUTIONS_SQL } from "../store/executions-store.js";

export function factFromEvent(e: ExecutionEvent): ExecutionFact {
  if (!isUuid(e.toolId)) throw new PoisonMessageError(`execution event ${e.eventId} has no valid tool_id`);
  if (!e.executionId) throw new PoisonMessageError(`execution event ${e.eventId} has no execution_id`);
  const success = e.status === ExecutionStatus.SUCCESS;
  return {
    executionId: e.executionId,
    toolId: e.toolId,
    serviceId: e.serviceId,
    accountId: e.accountId,
    organizationId: e.organizationId,
    success,
    seconds: Number.isFinite(e.seconds) && e.seconds >= 0 ? e.seconds : 0,
    errorClass: success ? null : (enumName(ErrorClassSchema, e.errorClass) ?? null),
    errorType: success ? null : (e.errorType ?? null),
    error: success ? null : (e.error ?? null),
    isProbe: e.isProbe,
    occurredAt: e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
  };
}

export function startExecutionsConsumer(nc: NatsConnection, pool: Pool, log: Logger): Promise<RunningConsumer> {
  return startConsumer({
    nc,
    pool,
    log,
    durable: "catalog-executions",
    subject: "toolport.execution.*",
    schema: ExecutionEventSchema,
    // One row per execution (ON CONFLICT (execution_id) DO NOTHING): a repeated event writes nothing, no inbox needed.
    applyStatement: { sql: RECORD_EXECUTIONS_SQL, row: (event) => executionRow(factFromEvent(event)), inbox: false },
  });
}
