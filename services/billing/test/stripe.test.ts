/**
 * Card funding with the official `stripe` library pointed at a local HTTP server that answers like
 * Stripe's API, and webhooks signed with Stripe's scheme: the checkout is created with the right amount
 * for the caller's wallet, and only a verified `checkout.session.completed` credits it, once.
 */
import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { FundingMethod } from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StripeApi, startStripeApi } from "./stripe-api.js";
import {
  as,
  type BillingUnderTest,
  healthyLedger,
  ledgerFacts,
  newAccount,
  refusal,
  STRIPE_TEST_KEY,
  signedStripeEvent,
  startBilling,
  USDC,
  WEBHOOK_SECRET,
} from "./support.js";

let stripeApi: StripeApi;
let billing: BillingUnderTest;

beforeAll(async () => {
  stripeApi = await startStripeApi();
  billing = await startBilling({
    STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: stripeApi.url,
  });
});
afterAll(async () => {
  await billing?.stop();
  await stripeApi?.stop();
});

const webhook = (event: { payload: string; signature: string }) =>
  billing.client.handleStripeWebhook({ payload: new TextEncoder().encode(event.payload), signature: event.signature });

describe("card checkout", () => {
  it("creates a hosted checkout for the amount, tied to the caller's wallet, and returns its URL", async () => {
    stripeApi.seen.length = 0;
    const account = newAccount();
    const res = await billing.client.fundWallet({ method: "card_checkout", amountCents: 2500n }, as(account));
    expect(res.method).toBe(FundingMethod.CARD_CHECKOUT);
    expect(res.checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    expect(res.depositAddress).toBeUndefined();
    expect(res.network).toBeUndefined();
    expect(res.usdcContract).toBeUndefined();
    expect(res.balanceUsdc).toBe("0.000000");

    expect(stripeApi.seen).toHaveLength(1);
    const [request] = stripeApi.seen;
    expect(request!.authorization).toBe(`Bearer ${STRIPE_TEST_KEY}`);
    expect(Object.fromEntries(request!.form)).toMatchObject({
      mode: "payment",
      "line_items[0][quantity]": "1",
      "line_items[0][price_data][currency]": "usd",
      "line_items[0][price_data][unit_amount]": "2500",
      client_reference_id: res.walletId,
      "metadata[wallet_id]": res.walletId,
      "metadata[account_id]": account,
    });
    const { rows } = await billing.pool.query("SELECT wallet_id, amount_cents FROM card_checkouts");
    expect(rows).toContainEqual({ wallet_id: res.walletId, amount_cents: 2500n });
  });

  it("answers unavailable when Stripe refuses, and records nothing", async () => {
    stripeApi.failNext();
    expect(
      await refusal(billing.client.fundWallet({ method: "card_checkout", amountCents: 500n }, as(newAccount()))),
    ).toMatchObject({
      code: Code.Unavailable,
      reason: "card_payments_unavailable",
    });
  });
});

describe("Stripe webhook", () => {
  async function openCheckout(cents: bigint) {
    const account = newAccount();
    const res = await billing.client.fundWallet({ method: "card_checkout", amountCents: cents }, as(account));
    const sessionId = res.checkoutUrl!.split("/").pop()!;
    return { account, walletId: res.walletId, sessionId };
  }
  const session = (walletId: string, sessionId: string, cents: number, extra: object = {}) => ({
    id: sessionId,
    amount_total: cents,
    currency: "usd",
    payment_status: "paid",
    client_reference_id: walletId,
    metadata: { wallet_id: walletId },
    ...extra,
  });

  it("credits a completed checkout once, however often Stripe redelivers it", async () => {
    const { account, walletId, sessionId } = await openCheckout(2500n);
    const event = signedStripeEvent("checkout.session.completed", session(walletId, sessionId, 2500));
    const first = await webhook(event);
    expect(first).toMatchObject({ eventType: "checkout.session.completed", credited: true, walletId });
    expect(first.entry).toMatchObject({ amountAtomic: 25n * USDC, reference: sessionId });
    const again = await Promise.all(
      [1, 2, 3].map(() => webhook(signedStripeEvent("checkout.session.completed", session(walletId, sessionId, 2500)))),
    );
    expect(again.map((r) => r.credited)).toEqual([false, false, false]);
    expect((await billing.client.getBalance({ accountId: account })).balanceUsdc).toBe("25.000000");
    const { rows } = await billing.pool.query(
      "SELECT credited_at IS NOT NULL AS credited FROM card_checkouts WHERE session_id = $1",
      [sessionId],
    );
    expect(rows[0].credited).toBe(true);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("refuses a bad signature, a tampered body, another secret and an old timestamp", async () => {
    const { account, walletId, sessionId } = await openCheckout(1000n);
    const good = signedStripeEvent("checkout.session.completed", session(walletId, sessionId, 1000));
    const cases = [
      { payload: good.payload, signature: "t=1,v1=deadbeef" },
      { payload: good.payload.replace("1000", "900000"), signature: good.signature },
      signedStripeEvent("checkout.session.completed", session(walletId, sessionId, 1000), "whsec_someone_else"),
      { payload: good.payload, signature: good.signature.replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`) },
    ];
    for (const c of cases) {
      expect(await refusal(webhook(c))).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_signature" });
    }
    expect((await billing.client.getBalance({ accountId: account })).balanceAtomic).toBe(0n);
  });

  it("does not credit unpaid sessions or other events; credits an async payment when it succeeds", async () => {
    const { account, walletId, sessionId } = await openCheckout(700n);
    const unpaid = await webhook(
      signedStripeEvent("checkout.session.completed", session(walletId, sessionId, 700, { payment_status: "unpaid" })),
    );
    expect(unpaid.credited).toBe(false);
    const other = await webhook(signedStripeEvent("checkout.session.expired", session(walletId, sessionId, 700)));
    expect(other).toMatchObject({ eventType: "checkout.session.expired", credited: false });
    expect((await billing.client.getBalance({ accountId: account })).balanceAtomic).toBe(0n);
    const paid = await webhook(signedStripeEvent("checkout.session.async_payment_succeeded", session(walletId, sessionId, 700)));
    expect(paid.credited).toBe(true);
    expect((await billing.client.getBalance({ accountId: account })).balanceUsdc).toBe("7.000000");
  });

  it("ignores a paid session for a wallet this deployment does not have", async () => {
    const res = await webhook(signedStripeEvent("checkout.session.completed", session(randomUUID(), "cs_test_foreign", 500)));
    expect(res.credited).toBe(false);
  });
});
