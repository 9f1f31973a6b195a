/**
 * Card funding through Stripe Checkout with the official `stripe` library: a hosted checkout session
 * per funding request, and the signed `checkout.session.completed` webhook that says it was paid.
 * The API address is configurable so tests point the library at a local server.
 */
import { invalidArgument, unavailable } from "@toolport/kit/errors";
import Stripe from "stripe";

export interface StripeSettings {
  secretKey: string;
  /** e.g. https://api.stripe.com (the default) or http://127.0.0.1:PORT in tests. */
  apiUrl: string;
  webhookSecret: string | undefined;
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutSession {
  id: string;
  url: string;
}

/** A paid checkout, as read from a verified webhook. */
export interface PaidCheckout {
  sessionId: string;
  walletId: string;
  amountCents: bigint;
}

export type WebhookOutcome = { type: string; paid: PaidCheckout | null };

export class StripeCheckout {
  private readonly stripe: Stripe;

  constructor(private readonly settings: StripeSettings) {
    const api = new URL(settings.apiUrl);
    this.stripe = new Stripe(settings.secretKey, {
      host: api.hostname,
      port: api.port || (api.protocol === "http:" ? 80 : 443),
      protocol: api.protocol === "http:" ? "http" : "https",
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
    });
  }

  async createSession(args: { walletId: string; accountId: string; amountCents: bigint }): Promise<CheckoutSession> {
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.create({
        mode: "payment",
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: "usd",
              unit_amount: Number(args.amountCents),
              product_data: { name: "Toolport wallet funding (USDC)" },
            },
          },
        ],
        success_url: this.settings.successUrl,
        cancel_url: this.settings.cancelUrl,
        client_reference_id: args.walletId,
        metadata: { wallet_id: args.walletId, account_id: args.accountId, amount_cents: args.amountCents.toString() },
      });
    } catch (err) {
      throw unavailable("card_payments_unavailable", "the card payment provider could not create a checkout; try again shortly", {
        details: { retry_after_seconds: 5 },
        cause: err,
      });
    }
    if (!session.url) {
      throw unavailable("card_payments_unavailable", "the card payment provider returned a checkout without a URL", {
        cause: new Error(`checkout session ${session.id} has no url`),
      });
    }
    return { id: session.id, url: session.url };
  }

  /**
   * Verifies the `Stripe-Signature` header over the raw body (Stripe's scheme, 300 s tolerance) and
   * reads a paid checkout out of it. Sessions we did not create (no wallet_id) are not paid checkouts.
   */
  readWebhook(payload: Uint8Array, signature: string): WebhookOutcome {
    const secret = this.settings.webhookSecret;
    if (!secret) {
      throw unavailable("card_payments_not_configured", "Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET)");
    }
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(Buffer.from(payload), signature, secret);
    } catch (err) {
      throw invalidArgument("invalid_signature", "the Stripe-Signature header does not verify for this body", {
        details: { field: "Stripe-Signature" },
        cause: err,
      });
    }
    const paidEvent =
      event.type === "checkout.session.async_payment_succeeded" ||
      (event.type === "checkout.session.completed" && event.data.object.payment_status === "paid");
    if (!paidEvent) return { type: event.type, paid: null };
    const session = event.data.object as Stripe.Checkout.Session;
    const walletId = session.metadata?.wallet_id ?? session.client_reference_id;
    if (!walletId || session.amount_total === null || session.currency?.toLowerCase() !== "usd") {
      return { type: event.type, paid: null };
    }
    return { type: event.type, paid: { sessionId: session.id, walletId, amountCents: BigInt(session.amount_total) } };
  }
}
