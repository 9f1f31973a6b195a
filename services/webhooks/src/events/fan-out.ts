/**
 * Events in, deliveries out: three durable JetStream consumers (tool executions, workflow runs, spend
 * warnings) turn each new event into one delivery row per active webhook of its owner that subscribes
 * to it (store/fan-out.ts), in the transaction that holds the consumer's inbox rows, so an event is
 * fanned out exactly once however often NATS redelivers it. Events that piled up are fanned out together,
 * in one statement. A paused webhook gets no row: events that happen while it is paused are not kept for later.
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
import type { Outgoing } from "../domain/events.js";
import { type FanOutEvent, insertFanOut } from "../store/fan-out.js";
import { executionOutgoing, spendOutgoing, workflowOutgoing } from "./outgoing.js";

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
    async applyBatch(client, fresh) {
      const events = fresh.flatMap(({ event, eventId }): FanOutEvent[] => {
        const out = outgoing(event);
        return out ? [{ ...out, eventId }] : [];
      });
      await insertFanOut(client, events);
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
