/** The webhooks routes' operations (gateway/src/routes/webhooks.ts) and the schemas only they use. */
import type { OperationDoc } from "../describe.js";
import {
  arrayOf,
  boolean,
  closed,
  oneOf,
  ref,
  type Schema,
  string,
  stringOrNull,
  timestamp,
  timestampOrNull,
} from "../schemas.js";

/** The spec's events, the only ones a webhook subscribes to. */
const EVENTS = [
  "tool.execution.completed",
  "tool.execution.failed",
  "workflow.completed",
  "workflow.failed",
  "agent.spend.limit_approaching",
];
const eventName = oneOf(...EVENTS);
const uuid = { type: "string", format: "uuid" };

/** How deliveries are made (spec "Events"), for the operations that lead to them. */
const signing =
  "**Signing.** Each delivery is an HTTPS `POST` of `{event, timestamp, data}` (JSON) with the headers " +
  "`X-Svc-Signature: t=<unix seconds>,sha256=<hex>`, `X-Svc-Event` (the event name), `X-Svc-Delivery` (the delivery's " +
  "id, a UUID, the same on every attempt: deduplicate on it), `Content-Type: application/json` and " +
  "`User-Agent: Svc-Webhooks/1.0`. The digest is HMAC-SHA256 keyed with the whole signing secret (`whsec_...`, UTF-8) " +
  "over `<t>.<raw body>`; recompute it over the raw body, compare in constant time, and reject a `t` more than 300 s " +
  "from now. For 24 hours after a secret rotation the header carries two `sha256=` entries, one per secret.";
const retries =
  "**Attempts.** The receiver must answer 2xx within 10 s; any other status, a timeout, a connection or TLS error, or " +
  "a redirect (never followed) fails the attempt. A failed attempt is retried after about 1 s, then about 4 s " +
  "(exponential backoff, ±20% jitter); after 3 failed attempts the delivery is marked `failed` in its history. " +
  "Delivery is at least once. Plain HTTP and private or internal addresses are never delivered to (checked again at " +
  "every attempt), and a paused webhook receives nothing. A webhook whose every attempt has failed for an hour is " +
  "paused by Toolport with a `disabled_reason`.";

const webhookFields = {
  id: { ...uuid, description: "The webhook's id." },
  url: { ...string, description: "Where deliveries are POSTed (HTTPS)." },
  events: { ...arrayOf(eventName), description: "The events it receives." },
  is_active: { ...boolean, description: "false: paused, nothing is delivered (and nothing is kept for later)." },
  description: { ...string, description: "Free text (empty when none was given)." },
  created_at: timestamp,
  updated_at: timestamp,
  disabled_reason: {
    ...stringOrNull,
    description:
      "Why Toolport paused it (every delivery attempt failed for an hour); null otherwise. Resuming it (`is_active: true`) clears it.",
  },
};
const secret = {
  type: "string",
  pattern: "^whsec_[A-Za-z0-9+/]{43}=$",
  description: "The signing secret (`whsec_` and 32 random bytes in base64). Shown only in this answer: store it now.",
};
const webhookExample = {
  id: "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
  url: "https://example.com/hooks/toolport",
  events: ["tool.execution.completed", "tool.execution.failed"],
  is_active: true,
  description: "calls of my agent",
  created_at: "2026-03-01T12:00:00.000Z",
  updated_at: "2026-03-01T12:00:00.000Z",
  disabled_reason: null,
};
const secretExample = "whsec_q1Yl0dJm3eC8vJp5u6Zr2k9hT4wXbN7sA0fGcE1iLoM=";

const deliveryExample = {
  id: "0e3b7c52-41f9-4d8a-b6a2-9c5e1f7d3a10",
  webhook_id: webhookExample.id,
  event: "tool.execution.completed",
  status: "succeeded",
  created_at: "2026-03-01T12:05:00.000Z",
  attempts: [
    {
      series: 1,
      attempt: 1,
      at: "2026-03-01T12:05:00.120Z",
      status_code: 500,
      error: null,
      duration_ms: 84,
      response_body: "receiver down",
    },
    {
      series: 1,
      attempt: 2,
      at: "2026-03-01T12:05:01.210Z",
      status_code: 200,
      error: null,
      duration_ms: 41,
      response_body: "ok",
    },
  ],
  next_attempt_at: null,
  delivered_at: "2026-03-01T12:05:01.251Z",
};

export const webhooksSchemas: Record<string, Schema> = {
  Webhook: {
    description:
      "A webhook: the spec's fields, and `disabled_reason`. The signing secret is never part of it (it is shown only " +
      "by create and rotate-secret).",
    ...closed(webhookFields),
  },
  WebhookCreated: {
    description: "A new webhook, and its signing secret, shown this once.",
    ...closed({ ...webhookFields, secret }),
  },
  WebhookSecretRotated: {
    description: "The webhook, its new signing secret (shown this once), and until when the previous one still signs.",
    ...closed({
      ...webhookFields,
      secret,
      previous_secret_expires_at: {
        ...timestamp,
        description: "Until then (24 hours) every delivery is signed with both the new and the previous secret.",
      },
    }),
  },
  WebhookDeliveryAttempt: {
    description: "One HTTP attempt of a delivery.",
    ...closed({
      series: { type: "integer", minimum: 1, description: "From 1; each redelivery starts the next series." },
      attempt: { type: "integer", minimum: 1, maximum: 3, description: "From 1 within its series (at most 3)." },
      at: { ...timestamp, description: "When the attempt was made." },
      status_code: { type: ["integer", "null"], description: "The receiver's HTTP status; null when no response came." },
      error: {
        type: ["string", "null"],
        enum: ["timeout", "connection_error", "tls_error", "address_not_allowed", "internal_error", null],
        description:
          "Why there was no response (`timeout`: no answer within 10 s; `address_not_allowed`: the URL resolved to a " +
          "private or internal address at send); null when a response came.",
      },
      duration_ms: { type: "integer", minimum: 0 },
      response_body: { ...stringOrNull, description: "The first KiB of the receiver's answer; null when none came." },
    }),
  },
  WebhookDelivery: {
    description:
      "One event sent to one webhook: a series of up to 3 attempts; a redelivery adds a new series under the same id. " +
      "`id` is the `X-Svc-Delivery` header.",
    ...closed({
      id: { ...uuid, description: "The delivery's id, sent as `X-Svc-Delivery`." },
      webhook_id: uuid,
      event: {
        ...oneOf(...EVENTS, "webhook.test"),
        description: "The event name (`X-Svc-Event`); `webhook.test` for a test send.",
      },
      status: {
        ...oneOf("pending", "succeeded", "failed"),
        description:
          "`pending`: not attempted yet or a retry is due; `succeeded`: a 2xx came; `failed`: the 3 attempts of its latest series failed.",
      },
      created_at: timestamp,
      attempts: { ...arrayOf(ref("WebhookDeliveryAttempt")), description: "Every attempt of every series, oldest first." },
      next_attempt_at: { ...timestampOrNull, description: "When the next attempt is due; null unless pending." },
      delivered_at: { ...timestampOrNull, description: "When a 2xx was received; null until then." },
    }),
  },
  WebhookDeliveryPage: {
    description: "A page of a webhook's delivery history, newest first.",
    ...closed({
      deliveries: arrayOf(ref("WebhookDelivery")),
      next_cursor: { ...stringOrNull, description: "Pass as `cursor` for the next page; null on the last page." },
    }),
  },
};

const webhookId = { webhook_id: { description: "The webhook's id.", schema: uuid } };
const deliveryId = { delivery_id: { description: "The delivery's id (its `X-Svc-Delivery`).", schema: uuid } };
const ownerOnly = "JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.";

const urlField = {
  type: "string",
  format: "uri",
  pattern: "^https://",
  maxLength: 2048,
  description:
    "HTTPS, without a user name or password (400 `invalid_url`); its host must resolve to public addresses only " +
    "(400 `url_not_allowed` for loopback, private, link-local and other internal ranges).",
};
const eventsField = {
  type: "array",
  items: eventName,
  minItems: 1,
  description: "At least one of the spec's events (400 `invalid_events` names an unknown one); duplicates are dropped.",
};
const descriptionField = { type: "string", maxLength: 500 };

export const webhooksOps = {
  create: {
    operationId: "createWebhook",
    summary: "Register a webhook",
    description:
      `Registers a webhook for the caller's events and answers it with its signing secret (\`secret\`, \`whsec_...\`), ` +
      `shown this once: no other route returns it (rotate it with \`POST /webhooks/{webhook_id}/rotate-secret\`). ` +
      `${ownerOnly} At most 20 webhooks per user by default (400 \`webhook_limit_reached\`).\n\n${signing}\n\n${retries}`,
    tags: ["Webhooks"],
    body: {
      schema: {
        type: "object",
        required: ["url", "events"],
        properties: { url: urlField, events: eventsField, description: descriptionField },
      },
      example: {
        url: "https://example.com/hooks/toolport",
        events: ["tool.execution.completed", "tool.execution.failed"],
        description: "calls of my agent",
      },
    },
    responses: {
      200: {
        description: "The webhook (active), with its signing secret.",
        schema: ref("WebhookCreated"),
        example: { ...webhookExample, secret: secretExample },
      },
    },
  },
  list: {
    operationId: "listWebhooks",
    summary: "The caller's webhooks",
    description: "Newest first, without signing secrets. JWT only (an API key gets 401).",
    tags: ["Webhooks"],
    responses: {
      200: { description: "The caller's webhooks, newest first.", schema: arrayOf(ref("Webhook")), example: [webhookExample] },
    },
  },
  get: {
    operationId: "getWebhook",
    summary: "A webhook",
    description: `${ownerOnly} The signing secret is not shown.`,
    tags: ["Webhooks"],
    path: webhookId,
    responses: { 200: { description: "The webhook.", schema: ref("Webhook"), example: webhookExample } },
  },
  update: {
    operationId: "updateWebhook",
    summary: "Change, pause or resume a webhook",
    description:
      "Only the included fields change, with the same checks as at registration; `events` replaces the set. " +
      "`is_active: false` pauses it: nothing is delivered, and events meanwhile are not kept for later (a delivery " +
      "already pending waits, and continues once resumed). `is_active: true` resumes it and clears `disabled_reason`. " +
      ownerOnly,
    tags: ["Webhooks"],
    path: webhookId,
    body: {
      schema: {
        type: "object",
        properties: { url: urlField, events: eventsField, is_active: boolean, description: descriptionField },
      },
      required: false,
      example: { is_active: false },
    },
    responses: { 200: { description: "The webhook as changed.", schema: ref("Webhook"), example: webhookExample } },
  },
  delete: {
    operationId: "deleteWebhook",
    summary: "Delete a webhook",
    description: `Deletes it for good, with its delivery history. ${ownerOnly}`,
    tags: ["Webhooks"],
    path: webhookId,
    responses: {
      200: { description: "Deleted.", schema: closed({ deleted: { const: true } }), example: { deleted: true } },
    },
  },
  rotateSecret: {
    operationId: "rotateWebhookSecret",
    summary: "Rotate a webhook's signing secret",
    description:
      "Answers a new signing secret, shown this once. For 24 hours (until `previous_secret_expires_at`) every " +
      "delivery carries two signatures, `t=<unix>,sha256=<hex>,sha256=<hex>`, one per secret, so receivers can switch " +
      "without losing any; a second rotation within those 24 hours drops the oldest secret. " +
      ownerOnly,
    tags: ["Webhooks"],
    path: webhookId,
    responses: {
      200: {
        description: "The webhook, the new secret and the previous secret's expiry.",
        schema: ref("WebhookSecretRotated"),
        example: { ...webhookExample, secret: secretExample, previous_secret_expires_at: "2026-03-02T12:00:00.000Z" },
      },
    },
  },
  listDeliveries: {
    operationId: "listWebhookDeliveries",
    summary: "A webhook's delivery history",
    description:
      "Newest first, paged by cursor: each delivery's status, and every attempt with its response status code, " +
      `error and the first KiB of the response body. Records that are no longer pending are kept 30 days. ${ownerOnly}` +
      `\n\n${retries}`,
    tags: ["Webhooks"],
    path: webhookId,
    query: {
      status: { description: "Only deliveries in this status (default all).", schema: oneOf("pending", "succeeded", "failed") },
      limit: {
        description: "At most this many (1-200, default 50).",
        schema: { type: "integer", minimum: 1, maximum: 200, default: 50 },
      },
      cursor: {
        description: "`next_cursor` of the previous page (400 `invalid_cursor` for anything else).",
        schema: string,
      },
    },
    responses: {
      200: {
        description: "A page of deliveries.",
        schema: ref("WebhookDeliveryPage"),
        example: { deliveries: [deliveryExample], next_cursor: null },
      },
    },
  },
  redeliver: {
    operationId: "redeliverWebhookDelivery",
    summary: "Send a delivery again",
    description:
      "Starts a new series of up to 3 attempts of a delivery that succeeded or failed, under the same id (so the " +
      "same `X-Svc-Delivery`), with the same body; its history is kept. 404 `delivery_not_found` for a delivery this " +
      `webhook does not have. ${ownerOnly}`,
    tags: ["Webhooks"],
    path: { ...webhookId, ...deliveryId },
    responses: {
      200: {
        description: "The delivery, pending again.",
        schema: ref("WebhookDelivery"),
        example: { ...deliveryExample, status: "pending", next_attempt_at: "2026-03-01T13:00:00.000Z", delivered_at: null },
      },
      409: { description: "`delivery_pending`: the delivery is still being attempted.", schema: ref("Error") },
    },
  },
  sendTest: {
    operationId: "sendWebhookTestEvent",
    summary: "Send a test event",
    description:
      "Queues a `webhook.test` event (`data`: `{webhook_id, message}`) to this webhook alone, signed and retried like " +
      "any delivery; follow it in the delivery history. " +
      `${ownerOnly}\n\n${signing}\n\n${retries}`,
    tags: ["Webhooks"],
    path: webhookId,
    responses: {
      200: {
        description: "The delivery, pending.",
        schema: ref("WebhookDelivery"),
        example: {
          ...deliveryExample,
          event: "webhook.test",
          status: "pending",
          attempts: [],
          next_attempt_at: "2026-03-01T13:00:00.000Z",
          delivered_at: null,
        },
      },
      409: { description: "`webhook_paused`: the webhook is paused; resume it first.", schema: ref("Error") },
    },
  },
} satisfies Record<string, OperationDoc>;
