/** The webhooks service's own variables, on top of every service's (see @toolport/kit/service). */
import { flag } from "@toolport/kit/config";
import { outboundDnsEnv } from "@toolport/kit/outbound";
import type { BaseConfig } from "@toolport/kit/service";
import { z } from "zod";

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

export const webhooksEnv = {
  WEBHOOKS_SECRET_KEY: z
    .string()
    .optional()
    .describe(
      "seals the signing secrets at rest: 32 bytes as 64 hex characters or base64; unset = a fixed development key (a warning is logged)",
    ),
  WEBHOOKS_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .describe("comma-separated hosts, IPs or CIDR ranges (optionally :port) that deliveries may reach although private"),
  ...outboundDnsEnv,
  WEBHOOKS_ALLOW_HTTP: flag(false).describe("accept http:// webhook URLs (test set-ups only; the spec requires HTTPS)"),
  WEBHOOKS_MAX_PER_USER: int(1, 1000, 20).describe("webhooks one user may register"),
  WEBHOOKS_ENDPOINT_CONCURRENCY: int(1, 1000, 10).describe("attempts in flight at once per webhook"),
  WEBHOOKS_TIMEOUT_MS: int(100, 60_000, 10_000).describe("how long an attempt waits for the receiver's answer"),
  WEBHOOKS_CIRCUIT_MS: int(1000, 30 * 86_400_000, 3_600_000).describe(
    "a webhook whose every attempt failed for this long is paused, with a reason",
  ),
  WEBHOOKS_POLL_MS: int(50, 60_000, 1000).describe(
    "how often due deliveries are looked for when nothing wakes the sender; idle, the wait is until the next pending delivery falls due (5 minutes with none pending: new deliveries NOTIFY)",
  ),
  WEBHOOKS_RETENTION_DAYS: int(1, 3650, 30).describe("days delivery records and the consumers' inbox rows are kept"),
};

export type WebhooksConfig = z.infer<z.ZodObject<typeof webhooksEnv>> & BaseConfig;
