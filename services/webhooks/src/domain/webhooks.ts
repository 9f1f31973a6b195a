/**
 * The webhooks use cases, for a JWT caller's own webhooks only: another owner's webhook is not found,
 * exactly like one that does not exist. Secrets are generated here (`whsec_` + 32 random bytes, base64),
 * sealed before they are stored, returned once by register and rotate, and never logged.
 */
import { randomBytes } from "node:crypto";
import { conflict, invalidArgument, notFound } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import type { AddressPolicy } from "@toolport/kit/outbound";
import { TEST_EVENT, testBody } from "./events.js";
import type { DeliveryRecord, DeliveryStatus, WebhookRecord } from "./model.js";
import type { DeliveryHistory, SecretSealer, SenderWake, WebhookRegistry } from "./ports.js";
import { checkDescription, checkEvents, checkUrl } from "./validation.js";

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_HOURS = 24;
/** A page of the delivery history: `limit` 1-200, 50 when not given. */
export const DELIVERY_PAGE = { min: 1, max: 200, default: 50 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed"];
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const webhookNotFound = (id: string) => notFound("webhook_not_found", `webhook ${id} not found`, { details: { webhook_id: id } });
const deliveryNotFound = (id: string) => notFound("delivery_not_found", `delivery ${id} not found`);

/** The history's cursor: the last row's (created_at, id), opaque to the caller. */
export function encodeCursor(d: DeliveryRecord): string {
  return Buffer.from(JSON.stringify([d.created_at.toISOString(), d.id])).toString("base64url");
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
    const createdAt = new Date(at);
    if (Number.isNaN(createdAt.getTime()) || typeof id !== "string" || !UUID.test(id)) throw new Error("bad");
    return { createdAt, id };
  } catch {
    throw invalidArgument("invalid_cursor", "cursor: not a cursor this endpoint returned", { details: { field: "cursor" } });
  }
}

export interface WebhooksPorts {
  registry: WebhookRegistry;
  history: DeliveryHistory;
  sealer: SecretSealer;
  /** Which addresses a webhook URL may resolve to (checked at registration and update). */
  addresses: AddressPolicy;
  sender: SenderWake;
  log: Logger;
  config: { WEBHOOKS_ALLOW_HTTP: boolean; WEBHOOKS_MAX_PER_USER: number };
}

export interface WebhookInput {
  url: string;
  events: string[];
  description: string;
}

export interface WebhookChange {
  url?: string;
  events?: string[];
  description?: string;
  isActive?: boolean;
}

export class Webhooks {
  constructor(private readonly ports: WebhooksPorts) {}

  private seal(id: string, secret: string): Buffer {
    return this.ports.sealer.seal(secret, `webhook:${id}`);
  }

  private checkUrl(url: string): Promise<string> {
    return checkUrl(url, { allowHttp: this.ports.config.WEBHOOKS_ALLOW_HTTP, policy: this.ports.addresses });
  }

  /** An id that is not a UUID names no webhook. */
  private checkId(id: string): string {
    if (!UUID.test(id)) throw webhookNotFound(id);
    return id;
  }

  /** The owner's webhook, or NOT_FOUND. */
  async get(ownerId: string, id: string): Promise<WebhookRecord> {
    const webhook = await this.ports.registry.get(ownerId, this.checkId(id));
    if (!webhook) throw webhookNotFound(id);
    return webhook;
  }

  /** A new webhook and its secret, shown this once; at most WEBHOOKS_MAX_PER_USER per owner. */
  async register(ownerId: string, input: WebhookInput): Promise<{ webhook: WebhookRecord; secret: string }> {
    const { config } = this.ports;
    const url = await this.checkUrl(input.url);
    const events = checkEvents(input.events);
    const description = checkDescription(input.description);
    const secret = newSecret();
    const webhook = await this.ports.registry.create(
      { ownerId, url, events, description },
      (id) => this.seal(id, secret),
      config.WEBHOOKS_MAX_PER_USER,
    );
    if (!webhook)
      throw invalidArgument(
        "webhook_limit_reached",
        `a user may register at most ${config.WEBHOOKS_MAX_PER_USER} webhooks; delete one first`,
        { details: { limit: config.WEBHOOKS_MAX_PER_USER } },
      );
    this.ports.log.info({ webhook_id: webhook.id, owner_id: ownerId }, "webhook registered");
    return { webhook, secret };
  }

  list(ownerId: string): Promise<WebhookRecord[]> {
    return this.ports.registry.list(ownerId);
  }

  /** Only the given fields change, with the same checks as at registration. */
  async update(ownerId: string, id: string, change: WebhookChange): Promise<WebhookRecord> {
    this.checkId(id);
    const patch = {
      url: change.url === undefined ? undefined : await this.checkUrl(change.url),
      events: change.events === undefined ? undefined : checkEvents(change.events),
      description: change.description === undefined ? undefined : checkDescription(change.description),
      is_active: change.isActive,
    };
    const webhook = await this.ports.registry.update(ownerId, id, patch);
    if (!webhook) throw webhookNotFound(id);
    return webhook;
  }

  async remove(ownerId: string, id: string): Promise<void> {
    if (!(await this.ports.registry.delete(ownerId, this.checkId(id)))) throw webhookNotFound(id);
  }

  /** A new secret (shown this once); the previous one signs beside it for ROTATION_OVERLAP_HOURS. */
  async rotateSecret(ownerId: string, id: string): Promise<{ webhook: WebhookRecord; secret: string; previousExpiresAt: Date }> {
    this.checkId(id);
    const secret = newSecret();
    const rotated = await this.ports.registry.rotate(ownerId, id, this.seal(id, secret), ROTATION_OVERLAP_HOURS);
    if (!rotated) throw webhookNotFound(id);
    this.ports.log.info({ webhook_id: id }, "webhook secret rotated");
    return { ...rotated, secret };
  }

  /** A page of the webhook's deliveries, newest first, and the cursor of the next when there is one. */
  async deliveries(
    ownerId: string,
    id: string,
    options: { status?: string; limit?: number; cursor?: string },
  ): Promise<{ deliveries: DeliveryRecord[]; nextCursor?: string }> {
    const webhook = await this.get(ownerId, id);
    const status = options.status?.trim() || undefined;
    if (status !== undefined && !STATUSES.includes(status as DeliveryStatus))
      throw invalidArgument("invalid_request", "status: must be pending, succeeded or failed", {
        details: { field: "status" },
      });
    const limit = options.limit ?? DELIVERY_PAGE.default;
    if (!Number.isInteger(limit) || limit < DELIVERY_PAGE.min || limit > DELIVERY_PAGE.max)
      throw invalidArgument("invalid_request", `limit: must be ${DELIVERY_PAGE.min}-${DELIVERY_PAGE.max}`, {
        details: { field: "limit" },
      });
    const page = await this.ports.history.deliveries(webhook.id, {
      status,
      limit,
      after: options.cursor ? decodeCursor(options.cursor) : undefined,
    });
    const last = page.rows[page.rows.length - 1];
    return { deliveries: page.rows, nextCursor: page.more && last ? encodeCursor(last) : undefined };
  }

  /** A new series of attempts for a delivery that succeeded or failed; CONFLICT while one is running. */
  async redeliver(ownerId: string, id: string, deliveryId: string): Promise<DeliveryRecord> {
    const webhook = await this.get(ownerId, id);
    if (!UUID.test(deliveryId)) throw deliveryNotFound(deliveryId);
    const result = await this.ports.history.redeliver(webhook.id, deliveryId);
    if (result === null) throw deliveryNotFound(deliveryId);
    if (result === "pending")
      throw conflict("delivery_pending", "the delivery is still being attempted; redeliver it once it has succeeded or failed");
    this.ports.sender.wake();
    return result;
  }

  /** A `webhook.test` delivery to this webhook alone; CONFLICT when it is paused. */
  async sendTest(ownerId: string, id: string): Promise<DeliveryRecord> {
    const webhook = await this.get(ownerId, id);
    if (!webhook.is_active)
      throw conflict("webhook_paused", "the webhook is paused; resume it (is_active true) to send a test event");
    return this.ports.history.addDelivery(webhook.id, TEST_EVENT, testBody(webhook.id));
  }
}
