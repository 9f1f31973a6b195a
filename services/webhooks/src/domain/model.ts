/** What the webhooks service keeps: a webhook of the registry, a delivery and its attempts (the history). */

export interface WebhookRecord {
  id: string;
  owner_id: string;
  url: string;
  events: string[];
  is_active: boolean;
  description: string;
  /** Why Toolport paused it (the circuit); null when it did not. */
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One attempt, as the history shows it. */
export interface AttemptRecord {
  series: number;
  attempt: number;
  /** ISO 8601, when the attempt started. */
  at: string;
  /** The receiver's status; null when no response came, and then `error` says why. */
  status: number | null;
  error: string | null;
  duration_ms: number;
  /** The first KiB of the receiver's answer. */
  body: string | null;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface DeliveryRecord {
  id: string;
  webhook_id: string;
  event: string;
  event_id: string;
  status: DeliveryStatus;
  /** A redelivery starts the next series; `attempts` counts the current one's. */
  series: number;
  attempts: number;
  attempt_history: AttemptRecord[];
  last_response_status: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

export type WebhookPatch = Partial<Pick<WebhookRecord, "url" | "events" | "is_active" | "description">>;

/** A delivery a sender holds for one attempt: what it sends, where, and the sealed secrets that sign it. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  event: string;
  body: string;
  series: number;
  /** Attempts of this series made before this one. */
  attempts: number;
  url: string;
  secret: Buffer;
  /** The secret a rotation replaced, while it still signs (24 h); null otherwise. */
  previous_secret: Buffer | null;
}

/** What one attempt came to. */
export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  body: string | null;
}
