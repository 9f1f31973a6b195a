/**
 * Events in, deliveries out: three durable JetStream consumers (tool executions, workflow runs, spend
 * warnings) turn each new event into one delivery row per active webhook of its owner that subscribes
 * to it, in the same statement as the consumer's inbox row (store.ts FAN_OUT_SQL), so an event is
 * fanned out exactly once however often NATS redelivers it. A paused webhook gets no row: events that
 * happen while it is paused are not kept for later.
 */
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { type RunningConsumer, startConsumer } from "@toolport/kit/events";
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import {
  ExecutionEventSchema,
  SpendLimitApproachingSchema,
  WorkflowEventSchema,
} from "@toolport/proto/toolport/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { executionOutgoing, type Outgoing, spendOutgoing, workflowOutgoing } from "./domain/events.js";
import { FAN_OUT_SQL } from "./store.js";

function fanOut<Desc extends DescMessage>(
  options: { nc: NatsConnection; pool: Pool; log: Logger },
  durable: string,
  subject: string,
  schema: Desc,
  outgoing: (event: MessageShape<Desc>) => Outgoing | null,
): Promise<RunningConsumer> {
  return startConsumer({
    ...options,
    durable,
    subject,
    schema,
    applyStatement: {
      sql: FAN_OUT_SQL,
      row(event, eventId) {
        const out = outgoing(event);
        return out && { event_id: eventId, owner_id: out.ownerId, event: out.event, body: out.body };
      },
    },
  });
}

export async function startFanOut(options: { nc: NatsConnection; pool: Pool; log: Logger }): Promise<RunningConsumer[]> {
  return Promise.all([
    fanOut(options, "webhooks-executions", "toolport.execution.*", ExecutionEventSchema, executionOutgoing),
    fanOut(options, "webhooks-workflows", "toolport.workflow.*", WorkflowEventSchema, workflowOutgoing),
    fanOut(options, "webhooks-spend", "toolport.spend.limit_approaching", SpendLimitApproachingSchema, spendOutgoing),
  ]);
}
