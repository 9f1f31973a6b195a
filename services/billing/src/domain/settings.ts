/** Spending settings (spec "Spending settings"): a per-call maximum under the ceiling and an optional daily limit. */
import { invalidArgument } from "@toolport/kit/errors";
import { PER_CALL_CEILING_ATOMIC } from "./money.js";

/**
 * Largest daily limit accepted: the spec renders daily_limit_atomic as a JSON integer, which stays
 * exact up to 2^53 - 1 (about 9 billion USDC).
 */
export const MAX_DAILY_LIMIT_ATOMIC = BigInt(Number.MAX_SAFE_INTEGER);

export interface SettingsChange {
  maxPerCallAtomic?: bigint;
  /** null removes the daily limit; undefined leaves it as it is. */
  dailyLimitAtomic?: bigint | null;
}

export function validateSettingsChange(change: SettingsChange): void {
  const { maxPerCallAtomic, dailyLimitAtomic } = change;
  if (maxPerCallAtomic !== undefined && (maxPerCallAtomic < 0n || maxPerCallAtomic > PER_CALL_CEILING_ATOMIC)) {
    throw invalidArgument(
      "invalid_request",
      `max_per_call_atomic must be between 0 and the per-call ceiling of ${PER_CALL_CEILING_ATOMIC} atomic units`,
      { details: { field: "max_per_call_atomic", minimum: 0, maximum: Number(PER_CALL_CEILING_ATOMIC) } },
    );
  }
  if (dailyLimitAtomic !== undefined && dailyLimitAtomic !== null) {
    if (dailyLimitAtomic < 0n || dailyLimitAtomic > MAX_DAILY_LIMIT_ATOMIC) {
      throw invalidArgument(
        "invalid_request",
        `daily_limit_atomic must be null (no limit) or between 0 and ${MAX_DAILY_LIMIT_ATOMIC} atomic units`,
        { details: { field: "daily_limit_atomic", minimum: 0, maximum: Number(MAX_DAILY_LIMIT_ATOMIC) } },
      );
    }
  }
}
