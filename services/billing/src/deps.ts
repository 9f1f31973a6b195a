/**
 * The billing service's parts, built once per start from its configuration: the stores over its
 * database, the deposit address deriver, the deposit network reader and the card checkout client (each
 * of the last three absent when not configured, which the funding calls answer with 503).
 */
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import type { ServiceConfig, ServiceContext } from "@toolport/kit/service";
import { DepositAddresses } from "./chain/deposit-addresses.js";
import { ChainReader } from "./chain/receipts.js";
import { type BillingEnv, type billingEnv, DEPOSIT_CHAIN_ID } from "./config.js";
import { SpendWarnings } from "./events/spend-warnings.js";
import { StripeCheckout } from "./payments/stripe-checkout.js";
import { DepositCursorStore } from "./store/deposit-cursor.js";
import { FundingStore } from "./store/funding.js";
import { HoldStore } from "./store/holds.js";
import { Ledger } from "./store/ledger.js";
import { SettingsStore } from "./store/settings.js";
import { WalletStore } from "./store/wallets.js";

export interface Billing {
  pool: Pool;
  config: BillingEnv;
  wallets: WalletStore;
  holds: HoldStore;
  settings: SettingsStore;
  funding: FundingStore;
  ledger: Ledger;
  depositCursors: DepositCursorStore;
  addresses: DepositAddresses | undefined;
  chain: ChainReader | undefined;
  stripe: StripeCheckout | undefined;
}

export function createBilling(pool: Pool, config: BillingEnv): Billing {
  const addresses = config.BILLING_DEPOSIT_XPUB ? new DepositAddresses(config.BILLING_DEPOSIT_XPUB) : undefined;
  const ledger = new Ledger();
  const wallets = new WalletStore(pool, addresses);
  return {
    pool,
    config,
    wallets,
    ledger,
    holds: new HoldStore(pool, wallets, ledger, new SpendWarnings(), config.BILLING_HOLD_TTL_SECONDS),
    settings: new SettingsStore(pool),
    funding: new FundingStore(pool, wallets, ledger),
    depositCursors: new DepositCursorStore(pool),
    addresses,
    chain: config.BILLING_RPC_URL ? new ChainReader(config.BILLING_RPC_URL, DEPOSIT_CHAIN_ID) : undefined,
    stripe: config.STRIPE_SECRET_KEY
      ? new StripeCheckout({
          secretKey: config.STRIPE_SECRET_KEY,
          apiUrl: config.STRIPE_API_URL,
          webhookSecret: config.STRIPE_WEBHOOK_SECRET,
          successUrl: config.STRIPE_SUCCESS_URL,
          cancelUrl: config.STRIPE_CANCEL_URL,
        })
      : undefined,
  };
}

/** What the role's routes and background work receive (role.ts). */
export interface BillingDeps extends Billing {
  log: Logger;
  /** Closes the chain client, after the deposit watcher that reads through it has stopped. */
  close(): Promise<void>;
}

export function createDeps(ctx: ServiceContext<ServiceConfig<typeof billingEnv>>): BillingDeps {
  const billing = createBilling(ctx.pool, ctx.config);
  return {
    ...billing,
    log: ctx.log,
    async close() {
      billing.chain?.destroy();
    },
  };
}
