/** Wallet funding requests (spec item 18) and the checks on a completed card checkout. */
import { invalidArgument } from "@toolport/kit/errors";
import { MIN_CARD_FUNDING_CENTS } from "./money.js";

export const FUNDING_METHODS = ["card_checkout", "crypto"] as const;
export type FundingMethod = (typeof FUNDING_METHODS)[number];

/** Card amounts above this (100,000 USD) are refused: Stripe's own per-payment maximum is 999,999.99 USD. */
export const MAX_CARD_FUNDING_CENTS = 10_000_000n;

export type FundingRequest = { method: "card_checkout"; amountCents: bigint } | { method: "crypto" };

export function parseFundingRequest(method: string, amountCents: bigint | undefined): FundingRequest {
  if (!(FUNDING_METHODS as readonly string[]).includes(method)) {
    throw invalidArgument(
      "invalid_request",
      method ? `unknown funding method "${method}": use card_checkout or crypto` : "method is required: card_checkout or crypto",
      { details: { field: "method", allowed: [...FUNDING_METHODS] } },
    );
  }
  if (method === "crypto") return { method: "crypto" };
  if (amountCents === undefined) {
    throw invalidArgument("invalid_request", "amount_cents is required for card_checkout (minimum 100)", {
      details: { field: "amount_cents", minimum: Number(MIN_CARD_FUNDING_CENTS) },
    });
  }
  if (amountCents < MIN_CARD_FUNDING_CENTS || amountCents > MAX_CARD_FUNDING_CENTS) {
    throw invalidArgument(
      "invalid_request",
      `amount_cents must be between ${MIN_CARD_FUNDING_CENTS} and ${MAX_CARD_FUNDING_CENTS} for card_checkout`,
      { details: { field: "amount_cents", minimum: Number(MIN_CARD_FUNDING_CENTS), maximum: Number(MAX_CARD_FUNDING_CENTS) } },
    );
  }
  return { method: "card_checkout", amountCents };
}

/** Whether one funding method is offered; when not, the refusal its call would answer with. */
export interface FundingOptionFacts {
  available: boolean;
  reason?: string;
  message?: string;
}

export interface FundingOptionsFacts {
  cardCheckout: FundingOptionFacts;
  crypto: FundingOptionFacts;
  confirmDeposit: FundingOptionFacts;
  automaticDeposits: boolean;
  requiredConfirmations: number;
}

/**
 * What this deployment offers for funding, from what is configured: the same reasons (and 503s) the
 * funding calls answer, told before anyone tries them.
 */
export function fundingOptions(configured: {
  stripe: boolean;
  depositKey: boolean;
  depositNetwork: boolean;
  watching: boolean;
  requiredConfirmations: number;
}): FundingOptionsFacts {
  const offered: FundingOptionFacts = { available: true };
  const noDepositKey: FundingOptionFacts = {
    available: false,
    reason: "deposit_wallet_not_configured",
    message: "Crypto funding is not available: the operator has not configured the platform deposit wallet.",
  };
  return {
    cardCheckout: configured.stripe
      ? offered
      : {
          available: false,
          reason: "card_payments_not_configured",
          message: "Card funding is not available: the operator has not configured card payments (Stripe) on this server.",
        },
    crypto: configured.depositKey ? offered : noDepositKey,
    confirmDeposit: !configured.depositKey
      ? noDepositKey
      : configured.depositNetwork
        ? offered
        : {
            available: false,
            reason: "deposit_network_not_configured",
            message: "Deposits cannot be confirmed here: the operator has not configured the deposit network's endpoint.",
          },
    automaticDeposits: configured.depositKey && configured.depositNetwork && configured.watching,
    requiredConfirmations: configured.requiredConfirmations,
  };
}
