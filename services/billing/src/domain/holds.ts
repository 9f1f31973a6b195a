/**
 * The rules a price hold must pass. They run inside the transaction that holds the wallet's row lock,
 * on figures read in that transaction, so two concurrent holds can never both squeeze under a limit.
 */
import { type DomainError, failedPrecondition, invalidArgument, permissionDenied } from "@toolport/kit/errors";
import { centsToAtomic, formatUsdc, PER_CALL_CEILING_ATOMIC } from "./money.js";

/** Longest a hold may stay open before the service releases it. */
export const MAX_HOLD_TTL_SECONDS = 86_400;

export interface HoldRequestInput {
  executionId: string;
  accountId: string;
  keyId: string | null;
  amountAtomic: bigint;
  keyMaxCostPerCallCents: bigint | null;
  keyDailySpendLimitCents: bigint | null;
  ttlSeconds: number | null;
}

/** Shape checks, before any database work. */
export function validateHoldRequest(input: HoldRequestInput): void {
  if (!input.executionId || input.executionId.length > 128) {
    throw invalidArgument("invalid_request", "execution_id is required (at most 128 characters)", {
      details: { field: "execution_id" },
    });
  }
  if (!input.accountId) {
    throw invalidArgument("invalid_request", "account_id is required", { details: { field: "account_id" } });
  }
  if (input.amountAtomic <= 0n) {
    throw invalidArgument("invalid_request", "amount_atomic must be a positive number of atomic units", {
      details: { field: "amount_atomic" },
    });
  }
  for (const [field, value] of [
    ["key_caps.max_cost_per_call_cents", input.keyMaxCostPerCallCents],
    ["key_caps.daily_spend_limit_cents", input.keyDailySpendLimitCents],
  ] as const) {
    if (value !== null && value < 0n) {
      throw invalidArgument("invalid_request", `${field} must not be negative`, { details: { field } });
    }
  }
  if (input.ttlSeconds !== null && (input.ttlSeconds < 1 || input.ttlSeconds > MAX_HOLD_TTL_SECONDS)) {
    throw invalidArgument("invalid_request", `ttl_seconds must be between 1 and ${MAX_HOLD_TTL_SECONDS}`, {
      details: { field: "ttl_seconds" },
    });
  }
}

/** Everything a hold is judged against, read under the wallet lock. */
export interface HoldFigures {
  amount: bigint;
  available: bigint;
  accountMaxPerCall: bigint;
  accountDailyLimit: bigint | null;
  /** The account's holds today that still count: open and captured. */
  accountSpentToday: bigint;
  keyMaxPerCallCents: bigint | null;
  keyDailyLimitCents: bigint | null;
  /** The key's open and captured holds today. */
  keySpentToday: bigint;
}

/** The first limit the hold would break, as the error to answer with; null when it may go ahead. */
export function holdRefusal(f: HoldFigures): DomainError | null {
  const over = (limit: string, message: string, limitValue: bigint, unit: "atomic" | "cents", extra = {}) =>
    permissionDenied("spend_limit_exceeded", message, {
      details: { limit, [`limit_${unit}`]: Number(limitValue), price_atomic: Number(f.amount), ...extra },
    });
  if (f.amount > PER_CALL_CEILING_ATOMIC) {
    return over(
      "per_call_ceiling",
      `the price ${formatUsdc(f.amount)} USDC is above the per-call ceiling of ${formatUsdc(PER_CALL_CEILING_ATOMIC)} USDC`,
      PER_CALL_CEILING_ATOMIC,
      "atomic",
    );
  }
  if (f.amount > f.accountMaxPerCall) {
    return over(
      "max_per_call_atomic",
      `the price ${formatUsdc(f.amount)} USDC is above the account's max_per_call_atomic (${f.accountMaxPerCall})`,
      f.accountMaxPerCall,
      "atomic",
    );
  }
  if (f.keyMaxPerCallCents !== null && f.amount > centsToAtomic(f.keyMaxPerCallCents)) {
    return over(
      "key_max_cost_per_call_cents",
      `the price ${formatUsdc(f.amount)} USDC is above this key's per-call cap of ${f.keyMaxPerCallCents} cents`,
      f.keyMaxPerCallCents,
      "cents",
    );
  }
  if (f.accountDailyLimit !== null && f.accountSpentToday + f.amount > f.accountDailyLimit) {
    return over(
      "daily_limit_atomic",
      `this call would take today's spend past the account's daily_limit_atomic (${f.accountDailyLimit})`,
      f.accountDailyLimit,
      "atomic",
      { spent_today_atomic: Number(f.accountSpentToday) },
    );
  }
  if (f.keyDailyLimitCents !== null && f.keySpentToday + f.amount > centsToAtomic(f.keyDailyLimitCents)) {
    return over(
      "key_daily_spend_limit_cents",
      `this call would take today's spend on this key past its daily cap of ${f.keyDailyLimitCents} cents`,
      f.keyDailyLimitCents,
      "cents",
      { spent_today_atomic: Number(f.keySpentToday) },
    );
  }
  if (f.amount > f.available) {
    return failedPrecondition(
      "insufficient_balance",
      `wallet balance too low: the price is ${formatUsdc(f.amount)} USDC and ${formatUsdc(f.available)} USDC is available`,
      {
        details: {
          price_atomic: Number(f.amount),
          price_usdc: formatUsdc(f.amount),
          available_atomic: Number(f.available),
          balance_usdc: formatUsdc(f.available),
        },
      },
    );
  }
  return null;
}

/** What Capture does to a hold in each state: charge it, answer as before (retry), or refuse. */
export function captureStep(executionId: string, status: HoldStatusName): "apply" | "replay" {
  switch (status) {
    case "held":
      return "apply";
    case "captured":
    case "refunded":
      return "replay";
    case "released":
      throw failedPrecondition(
        "hold_already_released",
        `the hold for execution ${executionId} was released; nothing to capture`,
        {
          details: { execution_id: executionId, status },
        },
      );
    case "expired":
      throw failedPrecondition(
        "hold_expired",
        `the hold for execution ${executionId} expired and was released; nothing to capture`,
        { details: { execution_id: executionId, status } },
      );
  }
}

/** What Release does: return the money, answer as before, or refuse after a capture. */
export function releaseStep(executionId: string, status: HoldStatusName): "apply" | "replay" {
  switch (status) {
    case "held":
      return "apply";
    case "released":
    case "expired":
      return "replay";
    case "captured":
    case "refunded":
      throw failedPrecondition(
        "hold_already_captured",
        `the hold for execution ${executionId} was captured; it cannot be released`,
        {
          details: { execution_id: executionId, status },
        },
      );
  }
}

/** What Refund does: return a captured charge, answer as before, or refuse an uncaptured hold. */
export function refundStep(executionId: string, status: HoldStatusName): "apply" | "replay" {
  switch (status) {
    case "captured":
      return "apply";
    case "refunded":
      return "replay";
    default:
      throw failedPrecondition(
        "hold_not_captured",
        `execution ${executionId} was not charged (hold ${status}); nothing to refund`,
        {
          details: { execution_id: executionId, status },
        },
      );
  }
}

type HoldStatusName = "held" | "captured" | "released" | "expired" | "refunded";
