/**
 * /v1 routes served by the billing service. Each renders the spec's JSON exactly, so they are dedicated
 * handlers rather than generic rows: the Wallet funding response has every field present (inapplicable
 * ones null) and its method as a string, Spending settings carry atomic amounts as JSON integers, and
 * the Stripe webhook passes the raw body through untouched for its signature.
 */

import { enumName, isoTime } from "@toolport/kit/proto-json";
import {
  FundingMethod,
  type FundingOption,
  type LedgerEntry,
  LedgerEntryKindSchema,
} from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import type { AppDeps } from "../deps.js";
import { bigintField, fieldError, intQuery, namedField, objectBody, timeValue } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { billingOps as ops } from "../openapi/operations/billing.js";

export function billingRoutes(api: DescribedRouter, deps: AppDeps): void {
  const billing = deps.clients.billing;
  const identity = deps.clients.identity;

  api.post("/agents/wallets/fund", ops.fundWallet, auth(identity, "api_key"), async (ctx) => {
    const body = objectBody(ctx);
    const method = body.method;
    if (method !== undefined && method !== null && typeof method !== "string") {
      throw fieldError("method", "method must be a string: card_checkout or crypto");
    }
    // amount_cents is ignored for crypto (spec item 18), so only card_checkout parses it.
    const amountCents = method === "card_checkout" ? bigintField(body, "amount_cents") : undefined;
    const res = await billing.fundWallet({ method: method ?? "", amountCents: amountCents ?? undefined });
    ctx.body = {
      wallet_id: res.walletId,
      method: res.method === FundingMethod.CARD_CHECKOUT ? "card_checkout" : "crypto",
      checkout_url: res.checkoutUrl ?? null,
      deposit_address: res.depositAddress ?? null,
      network: res.network ?? null,
      usdc_contract: res.usdcContract ?? null,
      balance_usdc: res.balanceUsdc,
    };
  });

  api.post("/agents/wallets/confirm-deposit", ops.confirmDeposit, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const body = objectBody(ctx);
    const txHash = body.tx_hash;
    if (typeof txHash !== "string" || txHash === "") {
      throw fieldError("tx_hash", "tx_hash is required: the 0x-prefixed hash of your USDC transfer");
    }
    const expected = bigintField(body, "expected_amount_atomic");
    if (expected === null) {
      throw fieldError("expected_amount_atomic", "expected_amount_atomic is required: the USDC amount sent, in atomic units");
    }
    const res = await billing.confirmDeposit({ txHash, expectedAmountAtomic: expected });
    ctx.body = {
      wallet_id: res.walletId,
      tx_hash: txHash.toLowerCase(),
      credited_atomic: res.entry ? jsonInteger(res.entry.amountAtomic) : null,
      balance_atomic: jsonInteger(res.balanceAtomic),
      balance_usdc: res.balanceUsdc,
      entry: res.entry ? entryJson(res.entry) : null,
    };
  });

  api.get("/agents/wallet", ops.getWallet, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const { wallet, funding } = await billing.getWallet({});
    if (!wallet || !funding) throw new Error("billing returned no wallet");
    ctx.body = {
      wallet_id: wallet.walletId,
      account_id: wallet.accountId,
      balance_usdc: wallet.balanceUsdc,
      balance_atomic: jsonInteger(wallet.balanceAtomic),
      held_atomic: jsonInteger(wallet.heldAtomic),
      available_atomic: jsonInteger(wallet.availableAtomic),
      deposit_address: wallet.depositAddress ?? null,
      network: wallet.network,
      created_at: iso(wallet.createdAt),
      funding: {
        card_checkout: optionJson(funding.cardCheckout),
        crypto: optionJson(funding.crypto),
        confirm_deposit: optionJson(funding.confirmDeposit),
        automatic_deposits: funding.automaticDeposits,
        required_confirmations: funding.requiredConfirmations,
      },
    };
  });

  api.get("/agents/wallet/ledger", ops.listLedger, auth(identity, "api_key_or_jwt"), async (ctx) => {
    // As sent: `limit=` or a repeated limit is refused, a repeated `before` ignored.
    const limit = intQuery(ctx.query.limit, "limit", { fail: namedField, exact: true });
    const before = timeValue(typeof ctx.query.before === "string" ? ctx.query.before : undefined, "before", namedField);
    const { entries } = await billing.listLedgerEntries({ limit, before });
    ctx.body = entries.map(entryJson);
  });

  api.get("/x402/settings", ops.getSpendingSettings, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const { settings } = await billing.getSpendingSettings({});
    ctx.body = settingsJson(settings);
  });

  api.patch("/x402/settings", ops.updateSpendingSettings, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const body = objectBody(ctx);
    const maxPerCall = bigintField(body, "max_per_call_atomic");
    if (maxPerCall === null && "max_per_call_atomic" in body) {
      throw fieldError("max_per_call_atomic", "max_per_call_atomic cannot be null: give an integer from 0 to 5000000");
    }
    const clearDaily = "daily_limit_atomic" in body && body.daily_limit_atomic === null;
    const daily = bigintField(body, "daily_limit_atomic");
    const { settings } = await billing.updateSpendingSettings({
      maxPerCallAtomic: maxPerCall ?? undefined,
      dailyLimitAtomic: daily ?? undefined,
      clearDailyLimitAtomic: clearDaily,
    });
    ctx.body = settingsJson(settings);
  });

  // Stripe calls this with no credential; the Stripe-Signature header over the raw body is the proof.
  api.post("/billing/stripe/webhook", ops.stripeWebhook, async (ctx) => {
    const signature = ctx.get("stripe-signature");
    if (!signature) throw fieldError("Stripe-Signature", "the Stripe-Signature header is missing");
    const res = await billing.handleStripeWebhook({
      payload: new Uint8Array(ctx.request.rawBody ?? Buffer.alloc(0)),
      signature,
    });
    ctx.body = { received: true, event_type: res.eventType, credited: res.credited };
  });
}

/** Atomic amounts as JSON integers (exact below 2^53, about 9 billion USDC), else as a string. */
function jsonInteger(value: bigint): number | string {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

const iso = isoTime;

function settingsJson(settings: Awaited<ReturnType<AppDeps["clients"]["billing"]["getSpendingSettings"]>>["settings"]) {
  if (!settings) throw new Error("billing returned no settings");
  return {
    id: settings.id,
    user_id: settings.userId,
    max_per_call_atomic: jsonInteger(settings.maxPerCallAtomic),
    daily_limit_atomic: settings.dailyLimitAtomic === undefined ? null : jsonInteger(settings.dailyLimitAtomic),
    created_at: iso(settings.createdAt),
    updated_at: iso(settings.updatedAt),
  };
}

function optionJson(option: FundingOption | undefined) {
  return { available: option?.available ?? false, reason: option?.reason ?? null, message: option?.message ?? null };
}

function entryJson(entry: LedgerEntry) {
  return {
    id: entry.id,
    transaction_id: entry.transactionId,
    wallet_id: entry.walletId,
    kind: enumName(LedgerEntryKindSchema, entry.kind),
    amount_atomic: jsonInteger(entry.amountAtomic),
    balance_after_atomic: jsonInteger(entry.balanceAfterAtomic),
    balance_after_usdc: entry.balanceAfterUsdc,
    reference: entry.reference,
    created_at: iso(entry.createdAt),
  };
}
