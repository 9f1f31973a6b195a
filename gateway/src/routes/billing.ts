/**
 * /v1 routes served by the billing service. Each renders the spec's JSON exactly, so they are dedicated
 * handlers rather than generic rows: the Wallet funding response has every field present (inapplicable
 * ones null) and its method as a string, Spending settings carry atomic amounts as JSON integers, and
 * the Stripe webhook passes the raw body through untouched for its signature.
 */

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { RouterContext } from "@koa/router";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import {
  FundingMethod,
  type FundingOption,
  type LedgerEntry,
  LedgerEntryKindSchema,
} from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import type { AppDeps } from "../deps.js";
import { HttpError } from "../http/errors.js";
import { objectBody } from "../http/input.js";
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
    const amountCents = method === "card_checkout" ? integerField(body, "amount_cents") : undefined;
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
    const expected = integerField(body, "expected_amount_atomic");
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
    const limit = queryInteger(ctx, "limit");
    const beforeRaw = typeof ctx.query.before === "string" ? ctx.query.before : undefined;
    let before: Timestamp | undefined;
    if (beforeRaw !== undefined) {
      const date = new Date(beforeRaw);
      if (Number.isNaN(date.getTime())) throw fieldError("before", "before must be an ISO 8601 timestamp");
      before = timestampFromDate(date);
    }
    const { entries } = await billing.listLedgerEntries({ limit: limit ?? undefined, before });
    ctx.body = entries.map(entryJson);
  });

  api.get("/x402/settings", ops.getSpendingSettings, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const { settings } = await billing.getSpendingSettings({});
    ctx.body = settingsJson(settings);
  });

  api.patch("/x402/settings", ops.updateSpendingSettings, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const body = objectBody(ctx);
    const maxPerCall = integerField(body, "max_per_call_atomic");
    if (maxPerCall === null && "max_per_call_atomic" in body) {
      throw fieldError("max_per_call_atomic", "max_per_call_atomic cannot be null: give an integer from 0 to 5000000");
    }
    const clearDaily = "daily_limit_atomic" in body && body.daily_limit_atomic === null;
    const daily = integerField(body, "daily_limit_atomic");
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

function fieldError(field: string, message: string): HttpError {
  return new HttpError(400, "invalid_request", message, { field });
}

/**
 * An integer field: a JSON integer, or a string of digits for amounts past 2^53. Absent or null is
 * null; anything else is a 400 naming the field (the service checks ranges).
 */
function integerField(body: JsonObject, field: string): bigint | null {
  const value: JsonValue | undefined = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^-?\d{1,19}$/.test(value)) return BigInt(value);
  throw fieldError(field, `${field} must be an integer`);
}

function queryInteger(ctx: RouterContext, field: string): number | null {
  const raw = ctx.query[field];
  if (raw === undefined) return null;
  if (typeof raw !== "string" || !/^-?\d{1,9}$/.test(raw)) throw fieldError(field, `${field} must be an integer`);
  return Number(raw);
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
