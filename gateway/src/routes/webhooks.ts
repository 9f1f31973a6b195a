/**
 * /v1 routes served by the webhooks service (spec items 23-26; JWT only, the owner's webhooks only).
 * Each renders its JSON here: the spec's Webhook fields (plus `disabled_reason` when Toolport paused
 * it), the secret beside them on create and rotate, and the delivery history with statuses as words.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import { type Delivery, DeliveryStatusSchema, type Webhook } from "@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb";
import type { AppDeps } from "../deps.js";
import { badField, boolField, intQuery, objectBody, queryString, stringField } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { webhooksOps as ops } from "../openapi/operations/webhooks.js";

export function webhookJson(w: Webhook | undefined): JsonObject {
  if (!w) return {};
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    is_active: w.isActive,
    description: w.description,
    created_at: isoTime(w.createdAt),
    updated_at: isoTime(w.updatedAt),
    disabled_reason: w.disabledReason ?? null,
  };
}

export function deliveryJson(d: Delivery | undefined): JsonObject {
  if (!d) return {};
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event: d.event,
    status: enumName(DeliveryStatusSchema, d.status),
    created_at: isoTime(d.createdAt),
    attempts: d.attemptHistory.map((a) => ({
      series: a.series,
      attempt: a.attempt,
      at: isoTime(a.attemptedAt),
      status_code: a.responseStatus ?? null,
      error: a.error ?? null,
      duration_ms: a.durationMs,
      response_body: a.responseBody ?? null,
    })),
    next_attempt_at: isoTime(d.nextAttemptAt),
    delivered_at: isoTime(d.deliveredAt),
  };
}

function eventsField(body: Record<string, unknown>): string[] | undefined {
  const value = body.events;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((e) => typeof e !== "string"))
    throw badField("events", "must be an array of event names");
  return value as string[];
}

export function webhooksRoutes(api: DescribedRouter, deps: AppDeps): void {
  const webhooks = deps.clients.webhooks;
  const jwt = auth(deps.clients.identity, "jwt");

  api.post("/webhooks", ops.create, jwt, async (ctx) => {
    const body = objectBody(ctx);
    const url = stringField(body, "url");
    if (url === undefined) throw badField("url", "is required");
    const events = eventsField(body);
    if (events === undefined) throw badField("events", "is required");
    const res = await webhooks.createWebhook({ url, events, description: stringField(body, "description") });
    ctx.body = { ...webhookJson(res.webhook), secret: res.secret };
  });

  api.get("/webhooks", ops.list, jwt, async (ctx) => {
    ctx.body = (await webhooks.listWebhooks({})).webhooks.map(webhookJson);
  });

  api.get("/webhooks/:webhook_id", ops.get, jwt, async (ctx) => {
    ctx.body = webhookJson((await webhooks.getWebhook({ webhookId: ctx.params.webhook_id! })).webhook);
  });

  api.patch("/webhooks/:webhook_id", ops.update, jwt, async (ctx) => {
    const body = objectBody(ctx);
    const events = eventsField(body);
    const res = await webhooks.updateWebhook({
      webhookId: ctx.params.webhook_id!,
      url: stringField(body, "url"),
      events: events === undefined ? undefined : { values: events },
      isActive: boolField(body, "is_active"),
      description: stringField(body, "description"),
    });
    ctx.body = webhookJson(res.webhook);
  });

  api.delete("/webhooks/:webhook_id", ops.delete, jwt, async (ctx) => {
    ctx.body = { deleted: (await webhooks.deleteWebhook({ webhookId: ctx.params.webhook_id! })).deleted };
  });

  api.post("/webhooks/:webhook_id/rotate-secret", ops.rotateSecret, jwt, async (ctx) => {
    const res = await webhooks.rotateSecret({ webhookId: ctx.params.webhook_id! });
    ctx.body = {
      ...webhookJson(res.webhook),
      secret: res.secret,
      previous_secret_expires_at: isoTime(res.previousSecretExpiresAt),
    };
  });

  api.get("/webhooks/:webhook_id/deliveries", ops.listDeliveries, jwt, async (ctx) => {
    const res = await webhooks.listDeliveries({
      webhookId: ctx.params.webhook_id!,
      status: queryString(ctx, "status"),
      limit: intQuery(ctx.query.limit, "limit"),
      cursor: queryString(ctx, "cursor"),
    });
    ctx.body = { deliveries: res.deliveries.map(deliveryJson), next_cursor: res.nextCursor ?? null };
  });

  api.post("/webhooks/:webhook_id/deliveries/:delivery_id/redeliver", ops.redeliver, jwt, async (ctx) => {
    const res = await webhooks.redeliver({ webhookId: ctx.params.webhook_id!, deliveryId: ctx.params.delivery_id! });
    ctx.body = deliveryJson(res.delivery);
  });

  api.post("/webhooks/:webhook_id/test", ops.sendTest, jwt, async (ctx) => {
    ctx.body = deliveryJson((await webhooks.sendTestEvent({ webhookId: ctx.params.webhook_id! })).delivery);
  });
}
