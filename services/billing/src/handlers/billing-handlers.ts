/**
 * BillingService handlers: thin, proto in -> domain rules and stores -> proto out. Caller-facing RPCs
 * act on the principal's account; internal ones (CreateWallet, GetBalance, Hold, Capture, Release) name
 * the account in the request, as proto/README.md says.
 */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { invalidArgument, permissionDenied, unavailable } from "@toolport/kit/errors";
import { authorityOf, Grant, requireGrant } from "@toolport/kit/grants";
import type { Logger } from "@toolport/kit/logger";
import { depositsCredited } from "@toolport/kit/metrics";
import { requirePrincipal } from "@toolport/kit/rpc";
import { FundingMethod } from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import type { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { checksumAddress } from "../chain/addresses.js";
import { DEPOSIT_NETWORK } from "../config.js";
import type { Billing } from "../deps.js";
import { matchDeposit, validateDepositRequest } from "../domain/deposits.js";
import { fundingOptions, parseFundingRequest } from "../domain/funding.js";
import { validateHoldRequest } from "../domain/holds.js";
import { formatUsdc } from "../domain/money.js";
import { validateSettingsChange } from "../domain/settings.js";
import { entryMessage, fundingOptionsMessage, holdMessage, settingsMessage, walletMessage } from "./to-proto.js";

const caller = (context: HandlerContext): Principal => requirePrincipal(context);

function requireAccountId(accountId: string): string {
  if (!accountId) throw invalidArgument("invalid_request", "account_id is required", { details: { field: "account_id" } });
  return accountId;
}

export function createBillingHandlers(billing: Billing, log: Logger): ServiceImpl<typeof BillingService> {
  const { wallets, holds, settings, funding } = billing;

  return {
    async createWallet(req) {
      return { wallet: walletMessage(await wallets.ensure(requireAccountId(req.accountId))) };
    },

    async getWallet(_req, context) {
      const wallet = await wallets.ensure(caller(context).accountId);
      const options = fundingOptions({
        stripe: Boolean(billing.stripe),
        depositKey: Boolean(billing.addresses),
        depositNetwork: Boolean(billing.chain),
        watching: billing.config.BILLING_DEPOSIT_WATCH,
        requiredConfirmations: billing.config.BILLING_DEPOSIT_CONFIRMATIONS,
      });
      return { wallet: walletMessage(wallet), funding: fundingOptionsMessage(options) };
    },

    async getBalance(req) {
      const wallet = await wallets.ensure(requireAccountId(req.accountId));
      return {
        walletId: wallet.id,
        balanceAtomic: wallet.balance,
        heldAtomic: wallet.held,
        availableAtomic: wallet.available,
        balanceUsdc: formatUsdc(wallet.balance),
      };
    },

    async fundWallet(req, context) {
      const { accountId } = caller(context);
      const request = parseFundingRequest(req.method, req.amountCents);
      if (request.method === "crypto") {
        if (!billing.addresses) {
          throw unavailable(
            "deposit_wallet_not_configured",
            "crypto funding is not available: the platform deposit wallet is not configured",
          );
        }
        const wallet = await wallets.ensure(accountId);
        return {
          walletId: wallet.id,
          method: FundingMethod.CRYPTO,
          depositAddress: wallet.depositAddress ? checksumAddress(wallet.depositAddress) : undefined,
          network: DEPOSIT_NETWORK,
          usdcContract: checksumAddress(billing.config.BILLING_USDC_CONTRACT),
          balanceUsdc: formatUsdc(wallet.balance),
        };
      }
      if (!billing.stripe) {
        throw unavailable("card_payments_not_configured", "card funding is not available: card payments are not configured");
      }
      const wallet = await wallets.ensure(accountId);
      const session = await billing.stripe.createSession({ walletId: wallet.id, accountId, amountCents: request.amountCents });
      await funding.recordCheckout(session.id, wallet.id, request.amountCents);
      log.info(
        { wallet_id: wallet.id, checkout_session: session.id, amount_cents: Number(request.amountCents) },
        "card checkout created",
      );
      return {
        walletId: wallet.id,
        method: FundingMethod.CARD_CHECKOUT,
        checkoutUrl: session.url,
        balanceUsdc: formatUsdc(wallet.balance),
      };
    },

    async confirmDeposit(req, context) {
      const { accountId } = caller(context);
      const txHash = validateDepositRequest(req.txHash, req.expectedAmountAtomic);
      if (!billing.addresses) {
        throw unavailable(
          "deposit_wallet_not_configured",
          "deposits are not available: the platform deposit wallet is not configured",
        );
      }
      if (!billing.chain) {
        throw unavailable(
          "deposit_network_not_configured",
          "deposits cannot be confirmed: no deposit network endpoint is configured",
        );
      }
      // A hash credited before is a clear 409 at once, even while the deposit network is unreachable.
      await funding.refuseCreditedDeposit(txHash);
      const wallet = await wallets.ensure(accountId);
      const { receipt, latestBlock } = await billing.chain.receipt(txHash);
      const match = matchDeposit({
        receipt,
        latestBlock,
        requiredConfirmations: billing.config.BILLING_DEPOSIT_CONFIRMATIONS,
        usdcContract: billing.config.BILLING_USDC_CONTRACT,
        depositAddress: wallet.depositAddress!,
        expectedAmount: req.expectedAmountAtomic,
      });
      const credited = await funding.creditDeposit({
        accountId,
        txHash,
        amount: match.amount,
        blockNumber: match.blockNumber,
        creditedBy: "confirm",
      });
      depositsCredited.inc({ source: "confirm" });
      log.info({ wallet_id: credited.walletId, tx_hash: txHash, amount_atomic: match.amount.toString() }, "deposit credited");
      return {
        walletId: credited.walletId,
        balanceAtomic: credited.balance,
        balanceUsdc: formatUsdc(credited.balance),
        entry: entryMessage(credited.entry),
      };
    },

    async handleStripeWebhook(req) {
      if (!billing.stripe) {
        throw unavailable("card_payments_not_configured", "card payments are not configured");
      }
      const outcome = billing.stripe.readWebhook(req.payload, req.signature);
      if (!outcome.paid) return { eventType: outcome.type, credited: false };
      const { paid } = outcome;
      let credited: Awaited<ReturnType<typeof funding.creditCheckout>>;
      try {
        credited = await funding.creditCheckout(paid);
      } catch (err) {
        if ((err as { reason?: string }).reason !== "wallet_not_found") throw err;
        // Signed by Stripe but for a wallet this deployment does not have (a shared Stripe account).
        log.warn({ checkout_session: paid.sessionId, wallet_id: paid.walletId }, "paid checkout for an unknown wallet ignored");
        return { eventType: outcome.type, credited: false };
      }
      if (!credited) {
        const earlier = await billing.ledger.find(billing.pool, "card_payment", paid.sessionId);
        return {
          eventType: outcome.type,
          credited: false,
          walletId: paid.walletId,
          entry: earlier ? entryMessage(earlier) : undefined,
        };
      }
      log.info({ wallet_id: credited.walletId, checkout_session: paid.sessionId }, "card payment credited");
      return { eventType: outcome.type, credited: true, walletId: credited.walletId, entry: entryMessage(credited.entry) };
    },

    async getSpendingSettings(_req, context) {
      return { settings: settingsMessage(await settings.get(caller(context).accountId)) };
    },

    async updateSpendingSettings(req, context) {
      const principal = caller(context);
      requireGrant(authorityOf(principal), Grant.MANAGE_SPENDING, "change spending settings");
      const { accountId } = principal;
      const change = {
        maxPerCallAtomic: req.maxPerCallAtomic,
        dailyLimitAtomic: req.clearDailyLimitAtomic ? null : req.dailyLimitAtomic,
      };
      validateSettingsChange(change);
      return { settings: settingsMessage(await settings.update(accountId, change)) };
    },

    async hold(req) {
      const input = {
        executionId: req.executionId,
        accountId: req.accountId,
        keyId: req.keyId || null,
        amountAtomic: req.amountAtomic,
        keyMaxCostPerCallCents: req.keyCaps?.maxCostPerCallCents ?? null,
        keyDailySpendLimitCents: req.keyCaps?.dailySpendLimitCents ?? null,
        ttlSeconds: req.ttlSeconds ?? null,
      };
      validateHoldRequest(input);
      const result = await holds.place({ ...input, toolId: req.toolId, organizationId: req.organizationId });
      return { hold: holdMessage(result.hold), replayed: result.replayed, availableAtomic: result.available };
    },

    async capture(req) {
      const result = await holds.capture(req.executionId);
      return {
        hold: holdMessage(result.hold),
        replayed: result.replayed,
        entry: result.entry ? entryMessage(result.entry) : undefined,
      };
    },

    async release(req) {
      const result = await holds.release(req.executionId, req.reason);
      return { hold: holdMessage(result.hold), replayed: result.replayed };
    },

    async refund(req, context) {
      if (!caller(context).isPlatformAdmin) {
        throw permissionDenied("forbidden", "only platform operators may refund a charge");
      }
      const result = await holds.refund(req.executionId, req.reason);
      return {
        hold: holdMessage(result.hold),
        replayed: result.replayed,
        entry: result.entry ? entryMessage(result.entry) : undefined,
      };
    },

    async listLedgerEntries(req, context) {
      const limit = req.limit ?? 50;
      if (limit < 1 || limit > 500) {
        throw invalidArgument("invalid_request", "limit must be between 1 and 500", { details: { field: "limit" } });
      }
      const wallet = await wallets.ensure(caller(context).accountId);
      const before = req.before ? new Date(Number(req.before.seconds) * 1000 + Math.floor(req.before.nanos / 1e6)) : null;
      const entries = await billing.ledger.list(billing.pool, wallet.id, limit, before);
      return { entries: entries.map(entryMessage) };
    },
  };
}
