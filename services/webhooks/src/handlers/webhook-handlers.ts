/**
 * WebhooksService handlers: proto in, a use case of domain/webhooks.ts, proto out. Webhook endpoints are
 * JWT only (spec "Authentication"): the caller's own webhooks.
 */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Logger } from "@toolport/kit/logger";
import type { AddressPolicy } from "@toolport/kit/outbound";
import { requirePrincipal } from "@toolport/kit/rpc";
import type { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import type { DeliveryHistory, SecretSealer, SenderWake, WebhookRegistry } from "../domain/ports.js";
import { Webhooks, type WebhooksPorts } from "../domain/webhooks.js";
import { deliveryMessage, timestamp, webhookMessage } from "./convert.js";

export interface WebhookDeps {
  store: WebhookRegistry & DeliveryHistory;
  sealer: SecretSealer;
  policy: AddressPolicy;
  sender: SenderWake;
  log: Logger;
  config: WebhooksPorts["config"];
}

/** The caller's account: webhooks belong to an account, whichever organization it acts in. */
const owner = (context: HandlerContext): string => requirePrincipal(context, { jwt: true }).accountId;

export function createWebhookHandlers(deps: WebhookDeps): ServiceImpl<typeof WebhooksService> {
  const webhooks = new Webhooks({
    registry: deps.store,
    history: deps.store,
    sealer: deps.sealer,
    addresses: deps.policy,
    sender: deps.sender,
    log: deps.log,
    config: deps.config,
  });

  return {
    async createWebhook(req, context) {
      const { webhook, secret } = await webhooks.register(owner(context), {
        url: req.url,
        events: req.events,
        description: req.description ?? "",
      });
      return { webhook: webhookMessage(webhook), secret };
    },

    async listWebhooks(_req, context) {
      return { webhooks: (await webhooks.list(owner(context))).map(webhookMessage) };
    },

    async getWebhook(req, context) {
      return { webhook: webhookMessage(await webhooks.get(owner(context), req.webhookId)) };
    },

    async updateWebhook(req, context) {
      const webhook = await webhooks.update(owner(context), req.webhookId, {
        url: req.url,
        events: req.events?.values,
        description: req.description,
        isActive: req.isActive,
      });
      return { webhook: webhookMessage(webhook) };
    },

    async deleteWebhook(req, context) {
      await webhooks.remove(owner(context), req.webhookId);
      return { deleted: true };
    },

    async rotateSecret(req, context) {
      const rotated = await webhooks.rotateSecret(owner(context), req.webhookId);
      return {
        webhook: webhookMessage(rotated.webhook),
        secret: rotated.secret,
        previousSecretExpiresAt: timestamp(rotated.previousExpiresAt),
      };
    },

    async listDeliveries(req, context) {
      const page = await webhooks.deliveries(owner(context), req.webhookId, {
        status: req.status,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { deliveries: page.deliveries.map(deliveryMessage), nextCursor: page.nextCursor };
    },

    async redeliver(req, context) {
      return { delivery: deliveryMessage(await webhooks.redeliver(owner(context), req.webhookId, req.deliveryId)) };
    },

    async sendTestEvent(req, context) {
      return { delivery: deliveryMessage(await webhooks.sendTest(owner(context), req.webhookId)) };
    },
  };
}
