/** Domain records to their proto messages. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type DeliveryAttemptSchema,
  type DeliverySchema,
  DeliveryStatus,
  type WebhookSchema,
} from "@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb";
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from "../domain/model.js";

/** A date as a Timestamp; absent stays absent. */
export const timestamp = (d: Date | null | undefined): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);

export function webhookMessage(w: WebhookRecord): MessageInitShape<typeof WebhookSchema> {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    isActive: w.is_active,
    description: w.description,
    createdAt: timestamp(w.created_at),
    updatedAt: timestamp(w.updated_at),
    disabledReason: w.disabled_reason ?? undefined,
  };
}

const statusOf = { pending: DeliveryStatus.PENDING, succeeded: DeliveryStatus.SUCCEEDED, failed: DeliveryStatus.FAILED };

function attemptMessage(a: AttemptRecord): MessageInitShape<typeof DeliveryAttemptSchema> {
  return {
    attempt: a.attempt,
    series: a.series,
    attemptedAt: timestamp(new Date(a.at)),
    responseStatus: a.status ?? undefined,
    responseBody: a.body ?? undefined,
    error: a.error ?? undefined,
    durationMs: a.duration_ms,
  };
}

export function deliveryMessage(d: DeliveryRecord): MessageInitShape<typeof DeliverySchema> {
  return {
    id: d.id,
    webhookId: d.webhook_id,
    event: d.event,
    eventId: d.event_id,
    status: statusOf[d.status],
    attempts: d.attempts,
    attemptHistory: d.attempt_history.map(attemptMessage),
    lastResponseStatus: d.last_response_status ?? undefined,
    createdAt: timestamp(d.created_at),
    nextAttemptAt: timestamp(d.next_attempt_at),
    deliveredAt: timestamp(d.delivered_at),
  };
}
