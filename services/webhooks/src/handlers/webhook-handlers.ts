/**
 * WebhooksService handlers: a JWT caller's own webhooks only (another user's is NOT_FOUND, like one that
 * does not exist). Secrets are generated here (`whsec_` + 32 random bytes, base64), sealed before they
 * are stored, returned once by create and rotate, and never logged.
 */
import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { conflict, invalidArgument, notFound } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import type { AddressPolicy } from "@toolport/kit/outbound";
import { requirePrincipal } from "@toolport/kit/rpc";
import type { Sealer } from "@toolport/kit/sealing";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import {
  type Delivery,
  type DeliveryAttempt,
  type DeliverySchema,
  DeliveryStatus,
  type Webhook,
  type WebhookSchema,
} from "@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb";
import type { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { TEST_EVENT, testBody } from "./domain/events.js";
import { checkDescription, checkEvents, checkUrl } from "./domain/validation.js";
import type { Sender } from "./sender.js";
import type { DeliveryRow, WebhookRow, WebhookStore } from "./store.js";

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_HOURS = 24;

export interface WebhookDeps {
  store: WebhookStore;
  sealer: Sealer;
  policy: AddressPolicy;
  sender: Sender;
  log: Logger;
  config: { WEBHOOKS_ALLOW_HTTP: boolean; WEBHOOKS_MAX_PER_USER: number };
}

/** Webhook endpoints are JWT only (spec "Authentication"). */
const owner = (context: HandlerContext): Principal => requirePrincipal(context, { jwt: true });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ts = (d: Date | null | undefined): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const webhookNotFound = (id: string) => notFound("webhook_not_found", `webhook ${id} not found`, { details: { webhook_id: id } });

export function webhookMessage(w: WebhookRow): MessageInitShape<typeof WebhookSchema> {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    isActive: w.is_active,
    description: w.description,
    createdAt: ts(w.created_at),
    updatedAt: ts(w.updated_at),
    disabledReason: w.disabled_reason ?? undefined,
  };
}

const statusOf = { pending: DeliveryStatus.PENDING, succeeded: DeliveryStatus.SUCCEEDED, failed: DeliveryStatus.FAILED };

export function deliveryMessage(d: DeliveryRow): MessageInitShape<typeof DeliverySchema> {
  return {
    id: d.id,
    webhookId: d.webhook_id,
    event: d.event,
    eventId: d.event_id,
    status: statusOf[d.status],
    attempts: d.attempts,
    attemptHistory: d.attempt_history.map(
      (
        a,
      ): MessageInitShape<typeof import("@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb").DeliveryAttemptSchema> => ({
        attempt: a.attempt,
        series: a.series,
        attemptedAt: ts(new Date(a.at)),
        responseStatus: a.status ?? undefined,
        responseBody: a.body ?? undefined,
        error: a.error ?? undefined,
        durationMs: a.duration_ms,
      }),
    ),
    lastResponseStatus: d.last_response_status ?? undefined,
    createdAt: ts(d.created_at),
    nextAttemptAt: ts(d.next_attempt_at),
    deliveredAt: ts(d.delivered_at),
  };
}

function cursorOf(d: DeliveryRow): string {
  return Buffer.from(JSON.stringify([d.created_at.toISOString(), d.id])).toString("base64url");
}

function parseCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
    const createdAt = new Date(at);
    if (Number.isNaN(createdAt.getTime()) || typeof id !== "string" || !UUID.test(id)) throw new Error("bad");
    return { createdAt, id };
  } catch {
    throw invalidArgument("invalid_cursor", "cursor: not a cursor this endpoint returned", { details: { field: "cursor" } });
  }
}

export function createWebhookHandlers(deps: WebhookDeps): ServiceImpl<typeof WebhooksService> {
  const { store, sealer, policy, config } = deps;
  const seal = (id: string, secret: string) => sealer.seal(secret, `webhook:${id}`);
  const checkId = (id: string) => {
    if (!UUID.test(id)) throw webhookNotFound(id);
    return id;
  };
  const mine = async (ownerId: string, id: string) => {
    const webhook = await store.get(ownerId, checkId(id));
    if (!webhook) throw webhookNotFound(id);
    return webhook;
  };

  return {
    async createWebhook(req, context) {
      const me = owner(context);
      const url = await checkUrl(req.url, { allowHttp: config.WEBHOOKS_ALLOW_HTTP, policy });
      const events = checkEvents(req.events);
      const description = checkDescription(req.description ?? "");
      const secret = newSecret();
      const webhook = await store.create(
        { ownerId: me.accountId, url, events, description },
        (id) => seal(id, secret),
        config.WEBHOOKS_MAX_PER_USER,
      );
      if (!webhook)
        throw invalidArgument(
          "webhook_limit_reached",
          `a user may register at most ${config.WEBHOOKS_MAX_PER_USER} webhooks; delete one first`,
          { details: { limit: config.WEBHOOKS_MAX_PER_USER } },
        );
      deps.log.info({ webhook_id: webhook.id, owner_id: me.accountId }, "webhook registered");
      return { webhook: webhookMessage(webhook), secret };
    },

    async listWebhooks(_req, context) {
      const me = owner(context);
      return { webhooks: (await store.list(me.accountId)).map(webhookMessage) };
    },

    async getWebhook(req, context) {
      const me = owner(context);
      return { webhook: webhookMessage(await mine(me.accountId, req.webhookId)) };
    },

    async updateWebhook(req, context) {
      const me = owner(context);
      const id = checkId(req.webhookId);
      const patch = {
        url: req.url === undefined ? undefined : await checkUrl(req.url, { allowHttp: config.WEBHOOKS_ALLOW_HTTP, policy }),
        events: req.events === undefined ? undefined : checkEvents(req.events.values),
        description: req.description === undefined ? undefined : checkDescription(req.description),
        is_active: req.isActive,
      };
      const webhook = await store.update(me.accountId, id, patch);
      if (!webhook) throw webhookNotFound(id);
      return { webhook: webhookMessage(webhook) };
    },

    async deleteWebhook(req, context) {
      const me = owner(context);
      if (!(await store.delete(me.accountId, checkId(req.webhookId)))) throw webhookNotFound(req.webhookId);
      return { deleted: true };
    },

    async rotateSecret(req, context) {
      const me = owner(context);
      const id = checkId(req.webhookId);
      const secret = newSecret();
      const rotated = await store.rotate(me.accountId, id, seal(id, secret), ROTATION_OVERLAP_HOURS);
      if (!rotated) throw webhookNotFound(id);
      deps.log.info({ webhook_id: id }, "webhook secret rotated");
      return { webhook: webhookMessage(rotated.webhook), secret, previousSecretExpiresAt: ts(rotated.previousExpiresAt) };
    },

    async listDeliveries(req, context) {
      const me = owner(context);
      const webhook = await mine(me.accountId, req.webhookId);
      const status = req.status?.trim() || undefined;
      if (status !== undefined && !(status in statusOf))
        throw invalidArgument("invalid_request", "status: must be pending, succeeded or failed", {
          details: { field: "status" },
        });
      const limit = req.limit ?? 50;
      if (!Number.isInteger(limit) || limit < 1 || limit > 200)
        throw invalidArgument("invalid_request", "limit: must be 1-200", { details: { field: "limit" } });
      const page = await store.deliveries(webhook.id, {
        status,
        limit,
        after: req.cursor ? parseCursor(req.cursor) : undefined,
      });
      const last = page.rows[page.rows.length - 1];
      return { deliveries: page.rows.map(deliveryMessage), nextCursor: page.more && last ? cursorOf(last) : undefined };
    },

    async redeliver(req, context) {
      const me = owner(context);
      const webhook = await mine(me.accountId, req.webhookId);
      if (!UUID.test(req.deliveryId)) throw notFound("delivery_not_found", `delivery ${req.deliveryId} not found`);
      const result = await store.redeliver(webhook.id, req.deliveryId);
      if (result === null) throw notFound("delivery_not_found", `delivery ${req.deliveryId} not found`);
      if (result === "pending")
        throw conflict("delivery_pending", "the delivery is still being attempted; redeliver it once it has succeeded or failed");
      deps.sender.wake();
      return { delivery: deliveryMessage(result) };
    },

    async sendTestEvent(req, context) {
      const me = owner(context);
      const webhook = await mine(me.accountId, req.webhookId);
      if (!webhook.is_active)
        throw conflict("webhook_paused", "the webhook is paused; resume it (is_active true) to send a test event");
      const delivery = await store.addDelivery(webhook.id, TEST_EVENT, testBody(webhook.id));
      return { delivery: deliveryMessage(delivery) };
    },
  };
}

export type { Delivery, DeliveryAttempt, Webhook };
