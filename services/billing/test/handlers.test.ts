/**
 * The billing service's own layer, on a real Postgres and without a stack: its handlers through connect's
 * in-memory router transport (the kit's server interceptor, real serialization), its domain rules and
 * stores behind them, built by deps.ts's `createBilling` on the test database after the kit's and
 * billing's migrations. Money comes in as production's does: a Stripe-signed checkout webhook (checked
 * locally, no Stripe API call). After every test the double-entry ledger still balances.
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { loadConfig } from "@toolport/kit/config";
import { createLogger } from "@toolport/kit/logger";
import { HoldStatus, LedgerEntryKind } from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { AuthMethod, Grant, OrgRole, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { inMemoryService, refusal } from "../../../test/harness/in-memory-rpc.js";
import { billingEnv } from "../src/config.js";
import { createBilling } from "../src/deps.js";
import { createBillingHandlers } from "../src/handlers/billing-handlers.js";
import {
  derivedBalances,
  healthyLedger,
  ledgerFacts,
  STRIPE_TEST_KEY,
  signedStripeEvent,
  USDC,
  WEBHOOK_SECRET,
} from "./support.js";

const log = createLogger("billing-test", process.env.TEST_LOG ?? "silent");
const allGrants = Object.values(Grant).filter((g): g is Grant => typeof g === "number" && g !== Grant.UNSPECIFIED);

/** A person signed in as the owner of their organization (every grant), or with `grants` only. */
const person = (extra: { grants?: Grant[]; isPlatformAdmin?: boolean } = {}) =>
  create(PrincipalSchema, {
    accountId: `acct-${randomUUID()}`,
    organizationId: `org-${randomUUID()}`,
    authMethod: AuthMethod.JWT,
    orgRole: OrgRole.OWNER,
    grants: extra.grants ?? allGrants,
    roleGrants: extra.grants ?? allGrants,
    isPlatformAdmin: extra.isPlatformAdmin ?? false,
  });

describe("billing: handlers, domain and stores on Postgres", () => {
  let db: TestDatabase;
  let billing: ReturnType<typeof inMemoryService<typeof BillingService>>;
  /** Internal RPCs (Hold, Capture, Release, CreateWallet, GetBalance) are called by execution with a caller's principal. */
  let internal: ReturnType<ReturnType<typeof inMemoryService<typeof BillingService>>["as"]>;

  beforeAll(async () => {
    db = await migratedDatabase("billing_handlers", "billing");
    const config = loadConfig(billingEnv, { STRIPE_SECRET_KEY: STRIPE_TEST_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    billing = inMemoryService(BillingService, createBillingHandlers(createBilling(db.pool, config), log), "billing");
    internal = billing.as(person());
  });
  afterEach(async () => {
    expect(await ledgerFacts(db.pool)).toEqual(healthyLedger);
  });
  afterAll(async () => {
    await db?.pool.end();
  });

  /** Credits `cents` by a signed, paid checkout webhook; answers the wallet id. */
  async function fund(who: Principal, cents: number, sessionId = `cs_test_${randomUUID().replace(/-/g, "")}`) {
    const { wallet } = await internal.createWallet({ accountId: who.accountId });
    const event = signedStripeEvent("checkout.session.completed", {
      id: sessionId,
      amount_total: cents,
      currency: "usd",
      payment_status: "paid",
      client_reference_id: wallet!.walletId,
      metadata: { wallet_id: wallet!.walletId, account_id: who.accountId, amount_cents: String(cents) },
    });
    return {
      walletId: wallet!.walletId,
      event,
      result: await billing.anonymous.handleStripeWebhook({
        payload: new TextEncoder().encode(event.payload),
        signature: event.signature,
      }),
    };
  }

  const hold = (who: Principal, amountAtomic: bigint, extra: Record<string, unknown> = {}) =>
    internal.hold({ executionId: randomUUID(), accountId: who.accountId, amountAtomic, toolId: "tool-1", ...extra });

  describe("wallets and card funding", () => {
    it("credits a signed paid checkout once, shows it in the caller's wallet and ledger, and refuses what is not", async () => {
      const alice = person();
      const asAlice = billing.as(alice);
      // Signed in: the wallet is made on first read; anonymous: no wallet at all.
      expect((await asAlice.getWallet({})).wallet).toMatchObject({ accountId: alice.accountId, balanceAtomic: 0n });
      expect(await refusal(billing.anonymous.getWallet({}))).toMatchObject({ code: Code.Unauthenticated });

      const { walletId, event, result } = await fund(alice, 2500);
      expect(result).toMatchObject({ credited: true, walletId, entry: { kind: LedgerEntryKind.CARD_PAYMENT } });
      // The same event again (Stripe retries) credits nothing more and answers the first entry.
      const again = await billing.anonymous.handleStripeWebhook({
        payload: new TextEncoder().encode(event.payload),
        signature: event.signature,
      });
      expect(again).toMatchObject({ credited: false, walletId, entry: { id: result.entry!.id } });
      // A payload whose signature does not match is refused and credits nothing.
      const forged = signedStripeEvent("checkout.session.completed", { id: "cs_forged" }, "whsec_someone_else");
      expect(
        await refusal(
          billing.anonymous.handleStripeWebhook({
            payload: new TextEncoder().encode(forged.payload),
            signature: forged.signature,
          }),
        ),
      ).toMatchObject({ code: Code.InvalidArgument });

      const wallet = (await asAlice.getWallet({})).wallet!;
      expect(wallet).toMatchObject({ walletId, balanceAtomic: 25n * USDC, heldAtomic: 0n, availableAtomic: 25n * USDC });
      expect(await derivedBalances(db.pool, walletId)).toEqual({ available: 25n * USDC, held: 0n });
      const entries = (await asAlice.listLedgerEntries({})).entries;
      expect(entries.map((e) => [e.kind, e.amountAtomic])).toEqual([[LedgerEntryKind.CARD_PAYMENT, 25n * USDC]]);
      // Another person sees their own (empty) wallet, never Alice's.
      expect((await billing.as(person()).listLedgerEntries({})).entries).toEqual([]);

      expect(await refusal(asAlice.listLedgerEntries({ limit: 501 }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "invalid_request",
        message: expect.stringContaining("limit"),
      });
      expect(await refusal(internal.createWallet({ accountId: "" }))).toMatchObject({
        code: Code.InvalidArgument,
        message: expect.stringContaining("account_id"),
      });
      // Crypto funding without a deposit key is unavailable, not a 500.
      expect(await refusal(asAlice.fundWallet({ method: "crypto" }))).toMatchObject({
        code: Code.Unavailable,
        reason: "deposit_wallet_not_configured",
      });
    });
  });

  describe("holds", () => {
    it("holds a price from the available balance, captures it once and refuses to release what was captured", async () => {
      const alice = person();
      const { walletId } = await fund(alice, 1000);
      const placed = await hold(alice, 3n * USDC, { keyId: "key-1" });
      expect(placed).toMatchObject({ replayed: false, availableAtomic: 7n * USDC, hold: { status: HoldStatus.HELD } });
      expect(await internal.getBalance({ accountId: alice.accountId })).toMatchObject({
        balanceAtomic: 10n * USDC,
        heldAtomic: 3n * USDC,
        availableAtomic: 7n * USDC,
      });
      // The same execution id again is the same hold, not a second one.
      const replay = await internal.hold({
        executionId: placed.hold!.executionId,
        accountId: alice.accountId,
        amountAtomic: 3n * USDC,
        keyId: "key-1",
        toolId: "tool-1",
      });
      expect(replay).toMatchObject({ replayed: true, hold: { executionId: placed.hold!.executionId } });
      expect((await internal.getBalance({ accountId: alice.accountId })).heldAtomic).toBe(3n * USDC);

      const executionId = placed.hold!.executionId;
      const captured = await internal.capture({ executionId });
      expect(captured).toMatchObject({
        replayed: false,
        hold: { status: HoldStatus.CAPTURED },
        entry: { kind: LedgerEntryKind.CAPTURE },
      });
      expect(await internal.capture({ executionId })).toMatchObject({ replayed: true, entry: { id: captured.entry!.id } });
      expect(await refusal(internal.release({ executionId, reason: "late" }))).toMatchObject({
        code: Code.FailedPrecondition,
        reason: "hold_already_captured",
      });
      expect(await internal.getBalance({ accountId: alice.accountId })).toMatchObject({
        balanceAtomic: 7n * USDC,
        heldAtomic: 0n,
        availableAtomic: 7n * USDC,
      });
      expect(await derivedBalances(db.pool, walletId)).toEqual({ available: 7n * USDC, held: 0n });
      expect(await refusal(internal.capture({ executionId: randomUUID() }))).toMatchObject({
        code: Code.NotFound,
        reason: "hold_not_found",
      });
    });

    it("releases a hold's money back once and refuses to capture it afterwards", async () => {
      const alice = person();
      await fund(alice, 500);
      const { executionId } = (await hold(alice, 2n * USDC)).hold!;
      const released = await internal.release({ executionId, reason: "upstream_failed" });
      expect(released).toMatchObject({ replayed: false, hold: { status: HoldStatus.RELEASED } });
      expect(await internal.release({ executionId, reason: "upstream_failed" })).toMatchObject({ replayed: true });
      expect(await refusal(internal.capture({ executionId }))).toMatchObject({
        code: Code.FailedPrecondition,
        reason: "hold_already_released",
      });
      expect(await internal.getBalance({ accountId: alice.accountId })).toMatchObject({
        balanceAtomic: 5n * USDC,
        heldAtomic: 0n,
        availableAtomic: 5n * USDC,
      });
    });

    it("refuses a hold beyond the balance or a limit, or with a bad field, and changes no balance when it does", async () => {
      const alice = person();
      await fund(alice, 300);
      const before = await internal.getBalance({ accountId: alice.accountId });

      expect(await refusal(hold(alice, 4n * USDC))).toMatchObject({
        code: Code.FailedPrecondition,
        reason: "insufficient_balance",
      });
      expect(await refusal(hold(alice, 2n * USDC, { keyId: "key-1", keyCaps: { maxCostPerCallCents: 100n } }))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "spend_limit_exceeded",
      });
      for (const [extra, field] of [
        [{ amountAtomic: 0n }, "amount_atomic"],
        [{ executionId: "" }, "execution_id"],
        [{ ttlSeconds: 86_401 }, "ttl_seconds"],
        [{ keyCaps: { dailySpendLimitCents: -1n } }, "key_caps.daily_spend_limit_cents"],
      ] as const) {
        expect(await refusal(hold(alice, USDC, extra))).toMatchObject({
          code: Code.InvalidArgument,
          reason: "invalid_request",
          message: expect.stringContaining(field),
        });
      }

      // The account's own per-call limit, set by a person who may manage spending.
      const asAlice = billing.as(alice);
      const settings = (await asAlice.updateSpendingSettings({ maxPerCallAtomic: USDC })).settings!;
      expect(settings.maxPerCallAtomic).toBe(USDC);
      expect((await asAlice.getSpendingSettings({})).settings?.maxPerCallAtomic).toBe(USDC);
      expect(await refusal(hold(alice, 2n * USDC))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "spend_limit_exceeded",
      });
      expect(await internal.getBalance({ accountId: alice.accountId })).toEqual(before);
      expect((await asAlice.listLedgerEntries({})).entries.map((e) => e.kind)).toEqual([LedgerEntryKind.CARD_PAYMENT]);
    });
  });

  describe("spending settings and refunds", () => {
    it("lets only a person with the spending grant change the limits, and only an operator refund a charge", async () => {
      const viewer = person({ grants: [Grant.CALL_TOOLS] });
      const asViewer = billing.as(viewer);
      const unchanged = (await asViewer.getSpendingSettings({})).settings!;
      expect(await refusal(asViewer.updateSpendingSettings({ maxPerCallAtomic: 1n }))).toMatchObject({
        code: Code.PermissionDenied,
      });
      expect((await asViewer.getSpendingSettings({})).settings).toEqual(unchanged);
      expect(await refusal(billing.anonymous.updateSpendingSettings({ maxPerCallAtomic: 1n }))).toMatchObject({
        code: Code.Unauthenticated,
      });

      const alice = person();
      await fund(alice, 300);
      const { executionId } = (await hold(alice, USDC)).hold!;
      await internal.capture({ executionId });
      expect(await refusal(billing.as(alice).refund({ executionId, reason: "mine" }))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "forbidden",
      });
      expect((await internal.getBalance({ accountId: alice.accountId })).availableAtomic).toBe(2n * USDC);
      const operator = billing.as(person({ isPlatformAdmin: true }));
      const refunded = await operator.refund({ executionId, reason: "tool was down" });
      expect(refunded).toMatchObject({
        replayed: false,
        hold: { status: HoldStatus.REFUNDED },
        entry: { kind: LedgerEntryKind.REFUND },
      });
      expect(await operator.refund({ executionId, reason: "tool was down" })).toMatchObject({ replayed: true });
      expect((await internal.getBalance({ accountId: alice.accountId })).availableAtomic).toBe(3n * USDC);
    });
  });
});
