/** What the webhooks domain needs from the outside world; implemented in store/ and delivery/. */
import type { DeliveryRecord, WebhookPatch, WebhookRecord } from "./model.js";

export interface WebhookRegistry {
  /** Registers a webhook unless its owner already has `max`; null when at the limit. `seal` seals its secret, bound to its id. */
  create(
    input: { ownerId: string; url: string; events: string[]; description: string },
    seal: (id: string) => Buffer,
    max: number,
  ): Promise<WebhookRecord | null>;
  /** The owner's webhooks, newest first. */
  list(ownerId: string): Promise<WebhookRecord[]>;
  /** The owner's webhook; null for another owner's, as for none. */
  get(ownerId: string, id: string): Promise<WebhookRecord | null>;
  /** Only the given fields change; resuming clears the circuit's reason and its failure clock. */
  update(ownerId: string, id: string, patch: WebhookPatch): Promise<WebhookRecord | null>;
  /** Its deliveries go with it. */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** The new sealed secret signs from now on; the one it replaces signs beside it for `overlapHours`. */
  rotate(
    ownerId: string,
    id: string,
    sealed: Buffer,
    overlapHours: number,
  ): Promise<{ webhook: WebhookRecord; previousExpiresAt: Date } | null>;
}

export interface DeliveryHistory {
  /** Newest first; `after` is the last row's (created_at, id) of the page before. */
  deliveries(
    webhookId: string,
    options: { status?: string; limit: number; after?: { createdAt: Date; id: string } },
  ): Promise<{ rows: DeliveryRecord[]; more: boolean }>;
  /**
   * A new series of attempts for a delivery that is not pending (same id, its history kept). Null when
   * there is no such delivery of this webhook; "pending" when one is still being attempted.
   */
  redeliver(webhookId: string, deliveryId: string): Promise<DeliveryRecord | "pending" | null>;
  /** A delivery for this webhook alone (the test event), due now. */
  addDelivery(webhookId: string, event: string, body: string): Promise<DeliveryRecord>;
}

/** Seals a signing secret at rest, bound to what it belongs to (@toolport/kit/sealing). */
export interface SecretSealer {
  seal(plaintext: string, context: string): Buffer;
}

/** The sender, told that a delivery is due now. */
export interface SenderWake {
  wake(): void;
}
