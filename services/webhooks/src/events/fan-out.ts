/**
 * Events in, deliveries out: three durable JetStream consumers (tool executions, workflow runs, spend
 * warnings) turn each new event into one delivery row per active webhook of its owner that subscribes
 * to it (store/fan-out.ts), in the transaction that holds the consumer's inbox rows, so an event is
 * fanned out exactly once however often NATS redelivers it. Events that piled up are fanned out together,
 * in one statement. A paused webhook gets no row: events that happen while it is paused are not kept for later.
 * The inbox rows are kept as long as delivery records (WEBHOOKS_RETENTION_DAYS, pruned hourly by the role),
 * and an event the stream stored longer ago than that is not fanned out (the kit's inboxDays): the stream
 * replayed from its start (a consumer deleted and made again) sends no webhook a second delivery of an old event.
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

/** The durable consumers, whose inbox rows the role prunes. */
export const FAN_OUT_CONSUMERS = ["webhooks-executions", "webhooks-workflows", "webhooks-spend"] as const;

function fanOut<Desc extends DescMessage>(
  options: { nc: NatsConnection; pool: Pool; log: Logger; inboxDays: number },
  durable: (typeof FAN_OUT_CONSUMERS)[number],
  subject: string,
  schema: Desc,
  outgoing: (event: MessageShape<Desc>) => Outgoing | null,
): Promise<RunningConsumer> {
  return startConsumer({
    nc: options.nc,
    pool: options.pool,
    log: options.log,
    inboxDays: options.inboxDays,
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

export async function startFanOut(options: {
  nc: NatsConnection;
  pool: Pool;
  log: Logger;
  /** How long inbox rows are kept (pruneInbox), in days. */
  inboxDays: number;
}): Promise<RunningConsumer[]> {
  return Promise.all([
    fanOut(options, "webhooks-executions", "toolport.execution.*", ExecutionEventSchema, executionOutgoing),
    fanOut(options, "webhooks-workflows", "toolport.workflow.*", WorkflowEventSchema, workflowOutgoing),
    fanOut(options, "webhooks-spend", "toolport.spend.limit_approaching", SpendLimitApproachingSchema, spendOutgoing),
  ]);
}
