/** The billing routes' operations (gateway/src/routes/billing.ts) and the schemas only they use. */
import type { OperationDoc } from "../describe.js";
import {
  boolean,
  closed,
  fieldIs,
  fieldsAre,
  isNull,
  oneOf,
  ref,
  rule,
  type Schema,
  string,
  stringOrNull,
  timestamp,
} from "../schemas.js";

/**
 * An amount in USDC atomic units (6 decimals): a JSON integer, or, past 2^53 (about 9 billion USDC), its
 * decimal string so it stays exact.
 */
const atomic: Schema = {
  description: "USDC atomic units (6 decimals): an integer; a decimal string only past 2^53 - 1.",
  anyOf: [{ type: "integer" }, { type: "string", pattern: "^-?[0-9]+$" }],
};
const usdc: Schema = {
  type: "string",
  pattern: "^-?[0-9]+\\.[0-9]{6}$",
  description: "The same amount in USDC with exactly six decimals (`12.500000`).",
};
/** What an amount field of a body accepts: a JSON integer, or a string of digits for amounts past 2^53. */
const integerInput = (description: string): Schema => ({
  description,
  anyOf: [{ type: "integer" }, { type: "string", pattern: "^-?[0-9]{1,19}$" }],
});

const uuid = { type: "string", format: "uuid" };

// ---- examples ---------------------------------------------------------------------------------

const exampleWalletId = "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8";
const exampleAccountId = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";
const exampleTxHash = `0x${"ab".repeat(32)}`;
const exampleDepositEntry = {
  id: "9d1e2f3a-4b5c-6d7e-8f9a-0b1c2d3e4f5a",
  transaction_id: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
  wallet_id: exampleWalletId,
  kind: "deposit",
  amount_atomic: 4250000,
  balance_after_atomic: 4250000,
  balance_after_usdc: "4.250000",
  reference: exampleTxHash,
  created_at: "2025-06-01T12:00:00.000Z",
};
const exampleSettings = {
  id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
  user_id: exampleAccountId,
  max_per_call_atomic: 5000000,
  daily_limit_atomic: null,
  created_at: "2025-06-01T12:00:00.000Z",
  updated_at: "2025-06-01T12:00:00.000Z",
};
const walletId = { ...uuid, description: "The wallet's id." };

export const billingSchemas: Record<string, Schema> = {
  Wallet: {
    description:
      "The caller's USDC wallet: the ledger balance, the part held for calls in flight, and what a new call can spend.",
    ...closed({
      wallet_id: walletId,
      account_id: string,
      balance_usdc: usdc,
      balance_atomic: { ...atomic, description: "Ledger balance, open holds included." },
      held_atomic: { ...atomic, description: "Sum of open price holds (calls in flight)." },
      available_atomic: { ...atomic, description: "balance_atomic - held_atomic: what a new priced call can take." },
      deposit_address: {
        ...stringOrNull,
        description: "The wallet's own USDC deposit address; null when no platform deposit key is configured.",
      },
      network: { ...string, description: "Chain id of the deposit network (`eip155:8453`)." },
      created_at: timestamp,
      funding: ref("FundingOptions"),
    }),
  },
  FundingOption: {
    description:
      "Whether this deployment offers one way of funding; when it does not, `reason` is the error the call " +
      "would answer with (503) and `message` says why in a sentence.",
    ...closed({
      available: boolean,
      reason: { ...stringOrNull, description: "When unavailable: e.g. `card_payments_not_configured`." },
      message: { ...stringOrNull, description: "When unavailable: the reason in a sentence for people." },
    }),
  },
  FundingOptions: {
    description: "The funding this deployment offers, so a client can show an unavailable method as such before anyone tries it.",
    ...closed({
      card_checkout: { ...ref("FundingOption"), description: "`POST /v1/agents/wallets/fund` with `card_checkout`." },
      crypto: { ...ref("FundingOption"), description: "`POST /v1/agents/wallets/fund` with `crypto`." },
      confirm_deposit: { ...ref("FundingOption"), description: "`POST /v1/agents/wallets/confirm-deposit`." },
      automatic_deposits: {
        ...boolean,
        description:
          "True when the service watches the deposit network and credits USDC sent to the deposit address by itself " +
          "once confirmed; confirming by hash stays possible and never credits a transfer twice.",
      },
      required_confirmations: {
        type: "integer",
        minimum: 1,
        description: "Blocks a deposit needs (its own included) before it is credited.",
      },
    }),
  },
  WalletFunding: {
    description:
      'Spec "Wallet funding response": every field present for both methods, the inapplicable ones null. ' +
      "`card_checkout` gives checkout_url; `crypto` gives deposit_address, network and usdc_contract.",
    ...closed(
      {
        wallet_id: walletId,
        method: oneOf("card_checkout", "crypto"),
        checkout_url: { ...stringOrNull, description: "The hosted card checkout to open in a browser (card_checkout)." },
        deposit_address: { ...stringOrNull, description: "Where to send USDC (crypto)." },
        network: { ...stringOrNull, description: "Chain id string, `eip155:8453` (crypto)." },
        usdc_contract: { ...stringOrNull, description: "The USDC token contract on that network (crypto)." },
        balance_usdc: { ...usdc, description: "The balance before this funding, six decimals." },
      },
      {},
      {
        allOf: [
          rule(
            "card_checkout gives checkout_url and nulls the crypto fields; crypto nulls checkout_url",
            fieldIs("method", { const: "card_checkout" }),
            fieldsAre({ checkout_url: string, deposit_address: isNull, network: isNull, usdc_contract: isNull }),
            fieldsAre({ checkout_url: isNull, network: string, usdc_contract: string }),
          ),
        ],
      },
    ),
  },
  LedgerEntry: {
    description: "One movement of the wallet's double-entry ledger.",
    ...closed({
      id: string,
      transaction_id: { ...string, description: "The balanced ledger transaction this entry belongs to." },
      wallet_id: walletId,
      kind: {
        type: ["string", "null"],
        enum: ["deposit", "card_payment", "hold", "capture", "release", "refund", null],
      },
      amount_atomic: { ...atomic, description: "Signed change to the wallet: credits positive, debits negative." },
      balance_after_atomic: { ...atomic, description: "The wallet's balance after this entry." },
      balance_after_usdc: usdc,
      reference: { ...string, description: "What caused it: a transaction hash, a checkout session id, or an execution id." },
      created_at: timestamp,
    }),
  },
  DepositConfirmation: {
    description: "A USDC deposit credited: the amount, the new balance, and the ledger entry.",
    ...closed({
      wallet_id: walletId,
      tx_hash: { ...string, description: "The transaction hash, lower-cased." },
      credited_atomic: {
        description: "The amount credited, in atomic units (null only if billing answered no ledger entry).",
        anyOf: [{ type: "integer" }, { type: "string", pattern: "^-?[0-9]+$" }, isNull],
      },
      balance_atomic: atomic,
      balance_usdc: usdc,
      entry: { anyOf: [ref("LedgerEntry"), isNull] },
    }),
  },
  SpendingSettings: {
    description: 'Spec "Spending settings": the account\'s per-call maximum and optional daily limit, in USDC atomic units.',
    ...closed({
      id: string,
      user_id: { ...string, description: "The account's id." },
      max_per_call_atomic: {
        type: "integer",
        minimum: 0,
        maximum: 5000000,
        description: "Largest price of one call (default and ceiling 5,000,000 = 5.00 USDC).",
      },
      daily_limit_atomic: {
        type: ["integer", "null"],
        minimum: 0,
        description: "Most spent per day (UTC); null means no daily limit (the default).",
      },
      created_at: timestamp,
      updated_at: timestamp,
    }),
  },
};

export const billingOps = {
  fundWallet: {
    operationId: "fundWallet",
    summary: "Fund the wallet",
    description:
      "`card_checkout` creates a hosted card checkout for `amount_cents` (100 to 10,000,000) and returns its URL; the " +
      "wallet is credited when the payment completes. `crypto` returns the deposit address, network and USDC " +
      "contract; after sending USDC, confirm it with `POST /agents/wallets/confirm-deposit` (where the operator runs " +
      "the deposit watcher, `GET /agents/wallet` says `funding.automatic_deposits: true` and the transfer is also " +
      "credited by itself once confirmed; never twice). 503 when card payments or the platform deposit wallet are " +
      "not configured; `GET /agents/wallet` tells which (`funding`) before trying.",
    tags: ["Billing"],
    body: {
      schema: {
        type: "object",
        required: ["method"],
        properties: {
          method: oneOf("card_checkout", "crypto"),
          amount_cents: integerInput("Required for card_checkout: 100 (1.00 USD) to 10,000,000 cents; ignored for crypto."),
        },
      },
      example: { method: "card_checkout", amount_cents: 2500 },
    },
    responses: {
      200: {
        description: "The funding instructions.",
        schema: ref("WalletFunding"),
        example: {
          wallet_id: exampleWalletId,
          method: "crypto",
          checkout_url: null,
          deposit_address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
          network: "eip155:8453",
          usdc_contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          balance_usdc: "0.000000",
        },
      },
    },
  },
  confirmDeposit: {
    operationId: "confirmWalletDeposit",
    summary: "Confirm a USDC deposit",
    description:
      "Credits a USDC transfer to the wallet's deposit address once it has enough confirmations on the deposit " +
      "network. 400 when the transaction reverted, holds no USDC transfer to this wallet, or transfers another " +
      "amount than `expected_amount_atomic`; 412 `deposit_not_confirmed` while it is not mined or not confirmed " +
      "enough (confirm again later); 409 `deposit_already_credited` for a hash credited before (never twice).",
    tags: ["Billing"],
    body: {
      schema: {
        type: "object",
        required: ["tx_hash", "expected_amount_atomic"],
        properties: {
          tx_hash: { type: "string", pattern: "^0x[0-9a-fA-F]{64}$", description: "The hash of your USDC transfer." },
          expected_amount_atomic: integerInput("The USDC amount sent, in atomic units (positive)."),
        },
      },
      example: { tx_hash: exampleTxHash, expected_amount_atomic: 4250000 },
    },
    responses: {
      200: {
        description: "Credited.",
        schema: ref("DepositConfirmation"),
        example: {
          wallet_id: exampleWalletId,
          tx_hash: exampleTxHash,
          credited_atomic: 4250000,
          balance_atomic: 4250000,
          balance_usdc: "4.250000",
          entry: exampleDepositEntry,
        },
      },
      409: { description: "`deposit_already_credited`: this transaction was credited before.", schema: ref("Error") },
      412: {
        description: "`deposit_not_confirmed`: not mined yet, or fewer confirmations than required (`details`).",
        schema: ref("Error"),
      },
    },
  },
  getWallet: {
    operationId: "getWallet",
    summary: "The caller's wallet",
    description:
      "The wallet's balances and deposit address, and `funding`: which funding methods this deployment offers " +
      "(card checkout, crypto deposits, confirming a deposit by hash) and why one is unavailable.",
    tags: ["Billing"],
    responses: {
      200: {
        description: "The wallet and its balances.",
        schema: ref("Wallet"),
        example: {
          wallet_id: exampleWalletId,
          account_id: exampleAccountId,
          balance_usdc: "4.250000",
          balance_atomic: 4250000,
          held_atomic: 0,
          available_atomic: 4250000,
          deposit_address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
          network: "eip155:8453",
          created_at: "2025-06-01T12:00:00.000Z",
          funding: {
            card_checkout: {
              available: false,
              reason: "card_payments_not_configured",
              message: "Card funding is not available: the operator has not configured card payments (Stripe) on this server.",
            },
            crypto: { available: true, reason: null, message: null },
            confirm_deposit: { available: true, reason: null, message: null },
            automatic_deposits: true,
            required_confirmations: 12,
          },
        },
      },
    },
  },
  listLedger: {
    operationId: "listWalletLedger",
    summary: "The wallet's ledger entries",
    description: "Newest first; page back with `before` (the created_at of the last entry seen).",
    tags: ["Billing"],
    query: {
      limit: { description: "At most this many (1-500, default 50).", schema: { type: "integer", minimum: 1, maximum: 500 } },
      before: { description: "Only entries created before this instant (ISO 8601).", schema: timestamp },
    },
    responses: {
      200: {
        description: "Entries, newest first.",
        schema: { type: "array", items: ref("LedgerEntry") },
        example: [exampleDepositEntry],
      },
    },
  },
  getSpendingSettings: {
    operationId: "getSpendingSettings",
    summary: "The spending settings",
    description: "Created with the defaults (max_per_call_atomic 5,000,000, no daily limit) on first read.",
    tags: ["Billing"],
    responses: {
      200: {
        description: "The account's spending settings.",
        schema: ref("SpendingSettings"),
        example: exampleSettings,
      },
    },
  },
  updateSpendingSettings: {
    operationId: "updateSpendingSettings",
    summary: "Change the spending settings",
    description:
      "Changes only the fields sent. `max_per_call_atomic` 0 to 5,000,000 (the per-call ceiling holds whatever it " +
      "says); `daily_limit_atomic` 0 to 2^53 - 1, or null to remove the daily limit.",
    tags: ["Billing"],
    body: {
      schema: {
        type: "object",
        properties: {
          max_per_call_atomic: integerInput("0 to 5,000,000 atomic units; not null."),
          daily_limit_atomic: {
            description: "0 to 9007199254740991 atomic units, or null for no daily limit.",
            anyOf: [{ type: "integer" }, { type: "string", pattern: "^-?[0-9]{1,19}$" }, { type: "null" }],
          },
        },
      },
      example: { max_per_call_atomic: 250000, daily_limit_atomic: 20000000 },
    },
    responses: {
      200: {
        description: "The settings as changed.",
        schema: ref("SpendingSettings"),
        example: {
          ...exampleSettings,
          max_per_call_atomic: 250000,
          daily_limit_atomic: 20000000,
          updated_at: "2025-06-02T08:15:00.000Z",
        },
      },
    },
  },
  stripeWebhook: {
    operationId: "receiveStripeWebhook",
    summary: "Stripe's payment events (for Stripe)",
    description:
      "Called by Stripe, with no credential: the `Stripe-Signature` header over the raw body is the proof (400 " +
      "`invalid_signature` when it does not verify, 400 when it is missing). A paid `checkout.session.completed` or " +
      "`checkout.session.async_payment_succeeded` credits the wallet once; a repeat answers `credited` false. 503 " +
      "when card payments are not configured.",
    tags: ["Billing"],
    headers: {
      "Stripe-Signature": {
        description: "Stripe's signature of the raw body (`t=...,v1=...`).",
        schema: string,
        required: true,
      },
    },
    body: {
      description: "The Stripe event, exactly as Stripe sent it (the signature covers these bytes).",
      schema: { type: "object", description: "A Stripe event object." },
      example: {
        id: "evt_1QfK2mL3nP4qR5sT6uV7wX8y",
        object: "event",
        type: "checkout.session.completed",
        created: 1748779200,
        livemode: true,
        data: {
          object: {
            id: "cs_live_a1B2c3D4e5F6g7H8i9J0kL1m",
            object: "checkout.session",
            mode: "payment",
            status: "complete",
            payment_status: "paid",
            amount_total: 2500,
            currency: "usd",
            client_reference_id: exampleWalletId,
            metadata: { wallet_id: exampleWalletId, account_id: exampleAccountId, amount_cents: "2500" },
          },
        },
      },
    },
    responses: {
      200: {
        description: "The event was verified and handled.",
        schema: closed({
          received: { const: true },
          event_type: { ...string, description: "The Stripe event's type." },
          credited: { ...boolean, description: "Whether this delivery credited a wallet." },
        }),
        example: { received: true, event_type: "checkout.session.completed", credited: true },
      },
    },
  },
} satisfies Record<string, OperationDoc>;
