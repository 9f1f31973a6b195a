/** The execution service's own variables, on top of every service's (see @toolport/kit/service). */
import { serviceUrls, url } from "@toolport/kit/config";
import { outboundDnsEnv } from "@toolport/kit/outbound";
import type { BaseConfig } from "@toolport/kit/service";
import { z } from "zod";
import { DEFAULT_STORE_MAX_CHARS } from "./domain/cap.js";

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const executionEnv = {
  CATALOG_URL: serviceUrls.CATALOG_URL,
  BILLING_URL: serviceUrls.BILLING_URL,
  IDENTITY_URL: serviceUrls.IDENTITY_URL,
  EXECUTION_CONSENT_SECRET: z
    .string()
    .min(32, "must be at least 32 characters (e.g. `openssl rand -base64 48`)")
    .optional()
    .describe(
      "HMAC key of confirm tokens; unset = a random key per process (tokens do not survive a restart; a warning is logged)",
    ),
  EXECUTION_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .describe(
      "hosts, IPs or CIDR ranges (optionally :port) upstream calls may reach although private or loopback, comma-separated",
    ),
  ...outboundDnsEnv,
  EXECUTION_UPSTREAM_TIMEOUT_MS: positiveInt(30_000).describe("deadline of one upstream call (REST or MCP), milliseconds"),
  EXECUTION_MAX_RESPONSE_BYTES: positiveInt(10 * 1024 * 1024).describe("largest upstream response body read, bytes"),
  EXECUTION_STORE_MAX_CHARS: positiveInt(DEFAULT_STORE_MAX_CHARS).describe("storage cap of one result, characters of JSON"),
  EXECUTION_OAUTH_REFRESH_BEFORE_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(60)
    .describe("an OAuth access token expiring within this many seconds is refreshed before the call uses it"),
  EXECUTION_SETTLEMENT_SWEEP_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(15_000)
    .describe(
      "how often price holds left capture_pending / release_pending (billing unreachable at settle time) are retried, milliseconds; while none is pending the sweep slows down to 4x this",
    ),
  EXECUTION_RATE_LIMIT_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("tool calls per key per minute; 0 = identity's TOOL_CALLS_PER_MINUTE default"),
  EXECUTION_ALLOWANCE_BLOCK: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(64)
    .describe(
      "largest block of tool-call allowance (rate limit, free tier) reserved from identity at once; 1 = one identity statement per call",
    ),
  EXECUTION_TOOL_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(3_000)
    .describe(
      "how long a resolved tool is reused, milliseconds (emptied at once by every toolport.catalog.tool.changed event); 0 = no cache",
    ),
  EXECUTION_BATCH_LEASE_MS: z.coerce
    .number()
    .int()
    .min(300)
    .max(600_000)
    .default(30_000)
    .describe(
      "how long an async batch stays with the process running it without a renewal (renewed every third); when it runs out (the process died) another round takes the batch over, milliseconds",
    ),
  EXECUTION_BATCH_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 60 * 60 * 1000)
    .describe("how long an async batch stays readable after it ended, milliseconds (default 24 h)"),
  EXECUTION_ENV_SECRET_PREFIX: z
    .string()
    .min(1)
    .default("TOOLPORT_SECRET_")
    .describe("only environment variables with this prefix can be referenced by env:// credentials"),
  VAULT_ADDR: url(["http", "https"]).optional().describe("HashiCorp Vault address for vault:// credential references"),
  VAULT_TOKEN: z.string().min(1).optional().describe("Vault token for vault:// references"),
  VAULT_NAMESPACE: z.string().min(1).optional().describe("Vault Enterprise namespace, if any"),
  EXECUTION_VAULT_PATH_PREFIX: z.string().optional().describe("vault:// references must start with this <mount>/<path> prefix"),
  UPGRADE_URL: url(["http", "https"], "http://localhost:8080/v1/agents/wallets/fund").describe("upgrade_url in 429 usage bodies"),
};

export type ExecutionConfig = z.infer<z.ZodObject<typeof executionEnv>> & BaseConfig;
