/** The billing service's own environment (on top of the common service variables), parsed once at start. */
import { flag, url } from "@toolport/kit/config";
import { isAddress } from "ethers";
import { z } from "zod";
import { parseXpub } from "./chain/deposit-addresses.js";

/** Native USDC on Base (eip155:8453). */
export const BASE_USDC_CONTRACT = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/** The deposit network: Base mainnet, the one network the spec supports. */
export const DEPOSIT_CHAIN_ID = 8453n;
export const DEPOSIT_NETWORK = `eip155:${DEPOSIT_CHAIN_ID}`;

const optional = (schema: z.ZodType<string>) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema.optional());

export const billingEnv = {
  BILLING_DEPOSIT_XPUB: optional(
    z
      .string()
      .trim()
      .refine(
        (v) => {
          try {
            parseXpub(v);
            return true;
          } catch {
            return false;
          }
        },
        { message: "must be an extended public key (xpub...), e.g. of m/44'/60'/0'; never a private key" },
      ),
  ).describe(
    "platform extended public key; each wallet's deposit address is its child 0/<index>. Unset: crypto funding answers 503",
  ),
  BILLING_USDC_CONTRACT: z
    .string()
    .trim()
    .default(BASE_USDC_CONTRACT)
    .refine((v) => isAddress(v), { message: "must be a 0x-prefixed 20-byte contract address" })
    .transform((v) => v.toLowerCase())
    .describe("USDC token contract on the deposit network (eip155:8453)"),
  BILLING_RPC_URL: optional(url(["http", "https"])).describe(
    "JSON-RPC endpoint of the deposit network, read to confirm deposits. Unset: confirm-deposit answers 503",
  ),
  BILLING_DEPOSIT_CONFIRMATIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(12)
    .describe("blocks a deposit transaction needs (its own included) before it is credited"),
  BILLING_DEPOSIT_WATCH: flag(true).describe(
    "watch the deposit network and credit USDC transfers to deposit addresses by itself (needs BILLING_DEPOSIT_XPUB and BILLING_RPC_URL)",
  ),
  BILLING_DEPOSIT_WATCH_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(3_600_000)
    .default(5_000)
    .describe("how often the deposit watcher reads new blocks once it has caught up"),
  BILLING_DEPOSIT_WATCH_MAX_BLOCKS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1_000)
    .describe("most blocks the deposit watcher asks the node for in one log query (endpoints cap eth_getLogs ranges)"),
  BILLING_DEPOSIT_WATCH_START_BLOCK: z
    .preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), z.coerce.number().int().min(0).optional())
    .describe(
      "first block the deposit watcher scans when it has no stored cursor yet; unset: it starts at the newest confirmed block",
    ),
  BILLING_HOLD_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(600)
    .describe("how long a hold stays open when the request gives no ttl_seconds; then the sweeper releases it"),
  BILLING_HOLD_SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(5_000)
    .describe(
      "how often expired open holds are looked for and released at most; idle, the sweeper looks when the next open hold expires, at least every 5 minutes (or the default TTL when shorter)",
    ),
  STRIPE_SECRET_KEY: optional(z.string().trim()).describe("Stripe secret key (sk_...). Unset: card_checkout answers 503"),
  STRIPE_WEBHOOK_SECRET: optional(z.string().trim()).describe(
    "signing secret (whsec_...) of the Stripe webhook endpoint POST /v1/billing/stripe/webhook",
  ),
  STRIPE_API_URL: url(["http", "https"], "https://api.stripe.com").describe(
    "Stripe API address (tests point it at a local server)",
  ),
  STRIPE_SUCCESS_URL: url(["http", "https"], "http://localhost:8080/checkout/success?session_id={CHECKOUT_SESSION_ID}").describe(
    "where Stripe Checkout sends the payer after paying",
  ),
  STRIPE_CANCEL_URL: url(["http", "https"], "http://localhost:8080/checkout/cancelled").describe(
    "where Stripe Checkout sends the payer who cancels",
  ),
};

/** billing's own settings as the kit loads them (kit/service ServiceConfig adds the common ones). */
export type BillingEnv = z.infer<z.ZodObject<typeof billingEnv>>;
