/**
 * The shared counters: fixed-window rate limits and the monthly free tier. They live in identity's
 * Postgres so every gateway and execution replica counts against one number; windows and months are
 * computed from the database clock (see store/counters.ts), so replicas with skewed clocks agree.
 */
import { invalidField, isUuid } from "./validation.js";

export interface RateLimitDefaults {
  [bucket: string]: { limit: number; windowSeconds: number };
}

export interface RateLimitRequest {
  bucket: string;
  subjectKey: string;
  limit: number;
  windowSeconds: number;
  cost: number;
}

/** A limit or window of 0 takes the configured default of a known bucket. */
export function rateLimitRequest(
  defaults: RateLimitDefaults,
  input: { bucket: string; subjectKey: string; limit: number; windowSeconds: number; cost: number | undefined },
): RateLimitRequest {
  const bucket = input.bucket.trim();
  if (!/^[a-z0-9_.:-]{1,64}$/.test(bucket)) throw invalidField("bucket", "must be 1-64 characters of a-z, 0-9, _ . : -");
  const subjectKey = input.subjectKey.trim();
  if (subjectKey === "" || subjectKey.length > 256) throw invalidField("subject_key", "must be 1-256 characters");
  const fallback = defaults[bucket];
  const limit = input.limit || fallback?.limit;
  const windowSeconds = input.windowSeconds || fallback?.windowSeconds;
  if (!limit || limit < 1) throw invalidField("limit", "must be a positive number (no default for this bucket)");
  if (!windowSeconds || windowSeconds < 1 || windowSeconds > 31 * 86_400) {
    throw invalidField("window_seconds", "must be between 1 and 2678400 (no default for this bucket)");
  }
  const cost = input.cost ?? 1;
  if (cost < 1 || cost > limit) throw invalidField("cost", "must be between 1 and the limit");
  return { bucket, subjectKey, limit, windowSeconds, cost };
}

/** One free-tier call of an account, counted once per execution id against the month's `limit`. */
export function freeTierRequest(
  limit: number,
  input: { accountId: string; executionId: string },
): { accountId: string; executionId: string; limit: number } {
  if (!isUuid(input.accountId)) throw invalidField("account_id", "must be an account UUID");
  const executionId = input.executionId.trim();
  if (executionId === "" || executionId.length > 128) throw invalidField("execution_id", "must be 1-128 characters");
  return { accountId: input.accountId, executionId, limit };
}
