/**
 * Price holds on the real service (in-process, real Postgres and NATS): no money is ever lost or made,
 * whatever the concurrency, retries or limits.
 */
import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { HoldStatus } from "@toolport/proto/toolport/billing/v1/billing_resources_pb";
import { Grant } from "@toolport/proto/toolport/common/v1/principal_pb";
import { SpendLimitApproachingSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  as,
  type BillingUnderTest,
  derivedBalances,
  fundByCard,
  healthyLedger,
  ledgerFacts,
  newAccount,
  refusal,
  STRIPE_TEST_KEY,
  startBilling,
  USDC,
  WEBHOOK_SECRET,
} from "./support.js";

let billing: BillingUnderTest;
beforeAll(async () => {
  billing = await startBilling({
    STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    BILLING_HOLD_SWEEP_INTERVAL_MS: "200",
  });
});
afterAll(() => billing?.stop());

const hold = (accountId: string, amountAtomic: bigint, extra: Record<string, unknown> = {}) =>
  billing.client.hold({
    executionId: randomUUID(),
    accountId,
    amountAtomic,
    toolId: "tool-1",
    organizationId: "org-1",
    ...extra,
  });

async function balances(accountId: string) {
  return billing.client.getBalance({ accountId });
}

describe("holds under concurrency", () => {
  it("200 concurrent holds of 1 USDC against 50 USDC: exactly 50 succeed, the rest fail for the balance", async () => {
    const account = newAccount();
    const walletId = await fundByCard(billing.client, account, 5000);
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => hold(account, USDC)));
    const ok = results.filter((r) => r.status === "fulfilled").map((r) => r.value.hold!);
    expect(ok).toHaveLength(50);
    const failures = await Promise.all(
      results.filter((r) => r.status === "rejected").map((r) => refusal(Promise.reject(r.reason))),
    );
    expect(failures).toHaveLength(150);
    for (const f of failures) expect(f).toMatchObject({ code: Code.FailedPrecondition, reason: "insufficient_balance" });

    let after = await balances(account);
    expect(after).toMatchObject({ balanceAtomic: 50n * USDC, heldAtomic: 50n * USDC, availableAtomic: 0n });

    // Capture half, release half, concurrently.
    await Promise.all(
      ok.map((h, i) =>
        i % 2 === 0
          ? billing.client.capture({ executionId: h.executionId })
          : billing.client.release({ executionId: h.executionId, reason: "upstream_failed" }),
      ),
    );
    after = await balances(account);
    expect(after).toMatchObject({
      balanceAtomic: 25n * USDC,
      heldAtomic: 0n,
      availableAtomic: 25n * USDC,
      balanceUsdc: "25.000000",
    });
    expect(await derivedBalances(billing.pool, walletId)).toEqual({ available: 25n * USDC, held: 0n });
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("the same hold sent twice, and a capture retried, charge once", async () => {
    const account = newAccount();
    const walletId = await fundByCard(billing.client, account, 1000);
    const executionId = randomUUID();
    const request = { executionId, accountId: account, amountAtomic: 2n * USDC, toolId: "t", organizationId: "o" };
    const [a, b] = await Promise.all([billing.client.hold(request), billing.client.hold(request)]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.hold!.executionId).toBe(b.hold!.executionId);
    const again = await billing.client.hold(request);
    expect(again.replayed).toBe(true);
    expect((await balances(account)).availableAtomic).toBe(8n * USDC);

    // A capture "timed out" on the caller's side and is sent again, twice at once.
    const captures = await Promise.all([1, 2, 3].map(() => billing.client.capture({ executionId })));
    expect(captures.filter((c) => !c.replayed)).toHaveLength(1);
    const entryIds = new Set(captures.map((c) => c.entry!.transactionId));
    expect(entryIds.size).toBe(1);
    expect(captures[0]!.hold!.status).toBe(HoldStatus.CAPTURED);
    expect(await balances(account)).toMatchObject({ balanceAtomic: 8n * USDC, heldAtomic: 0n, availableAtomic: 8n * USDC });
    const { rows } = await billing.pool.query("SELECT kind FROM ledger_transactions WHERE reference = $1 ORDER BY created_at", [
      executionId,
    ]);
    expect(rows.map((r) => r.kind)).toEqual(["hold", "capture"]);

    expect(await refusal(billing.client.release({ executionId, reason: "late" }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "hold_already_captured",
    });
    expect(await refusal(billing.client.hold({ ...request, amountAtomic: 3n * USDC }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "idempotency_key_reused",
    });
    expect(await derivedBalances(billing.pool, walletId)).toEqual({ available: 8n * USDC, held: 0n });
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("a release is idempotent and a capture after it is refused", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 500);
    const { hold: h } = await hold(account, USDC);
    const releases = await Promise.all(
      [1, 2].map(() => billing.client.release({ executionId: h!.executionId, reason: "failed" })),
    );
    expect(releases.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await refusal(billing.client.capture({ executionId: h!.executionId }))).toMatchObject({
      reason: "hold_already_released",
    });
    expect(await refusal(billing.client.capture({ executionId: randomUUID() }))).toMatchObject({
      code: Code.NotFound,
      reason: "hold_not_found",
    });
    expect((await balances(account)).availableAtomic).toBe(5n * USDC);
  });

  it("the account's daily limit holds under concurrency", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 5000);
    await billing.client.updateSpendingSettings({ dailyLimitAtomic: 10n * USDC }, as(account));
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => hold(account, USDC)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect(await refusal(Promise.reject(r.reason))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "spend_limit_exceeded",
        details: { limit: "daily_limit_atomic" },
      });
    }
    // Released holds no longer count against the day; captured ones do.
    const held = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.hold!.executionId] : []));
    await billing.client.release({ executionId: held[0]!, reason: "failed" });
    await billing.client.capture({ executionId: held[1]! });
    await hold(account, USDC);
    expect((await refusal(hold(account, USDC))).details.limit).toBe("daily_limit_atomic");
  });

  it("a key's per-call and daily caps (cents) hold under concurrency", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 5000);
    const keyCaps = { maxCostPerCallCents: 60n, dailySpendLimitCents: 500n };
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => hold(account, 500_000n, { keyId: "key-1", keyCaps })), // 50 cents each
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect((await refusal(Promise.reject(r.reason))).details.limit).toBe("key_daily_spend_limit_cents");
    }
    // Another key of the same account is not held back by key-1's day.
    await hold(account, 500_000n, { keyId: "key-2", keyCaps });
    expect((await refusal(hold(account, 610_000n, { keyId: "key-3", keyCaps }))).details.limit).toBe(
      "key_max_cost_per_call_cents",
    );
  });

  it("the 5,000,000 ceiling applies whatever the settings, and max_per_call_atomic below it", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 5000);
    await hold(account, 5_000_000n);
    expect((await refusal(hold(account, 5_000_001n))).details.limit).toBe("per_call_ceiling");
    await billing.client.updateSpendingSettings({ maxPerCallAtomic: 100_000n }, as(account));
    await hold(account, 100_000n);
    expect((await refusal(hold(account, 100_001n))).details.limit).toBe("max_per_call_atomic");
  });
});

describe("spend warning", () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: inject("natsUrl") });
  });
  afterAll(() => nc?.close());

  it("publishes toolport.spend.limit_approaching once per key per day at 80% of its daily cap", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 5000);
    const received: ReturnType<typeof fromBinary<typeof SpendLimitApproachingSchema>>[] = [];
    const sub = nc.subscribe("toolport.spend.limit_approaching");
    (async () => {
      for await (const msg of sub) {
        const event = fromBinary(SpendLimitApproachingSchema, msg.data);
        if (event.accountId === account) received.push(event);
      }
    })();
    const keyCaps = { dailySpendLimitCents: 100n };
    const spend = async (atomic: bigint) => {
      const { hold: h } = await hold(account, atomic, { keyId: "key-w", keyCaps, organizationId: "org-w" });
      await billing.client.capture({ executionId: h!.executionId });
    };
    await spend(500_000n); // 50 cents: 50%
    await spend(290_000n); // 79 cents
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(0);
    await spend(10_000n); // 80 cents: 80%
    await spend(100_000n); // 90 cents: still the same day, no second warning
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      accountId: account,
      organizationId: "org-w",
      keyId: "key-w",
      dailyLimitCents: 100n,
      spentTodayCents: 80n,
      percentage: 80,
      day: new Date().toISOString().slice(0, 10),
    });
    sub.unsubscribe();
  });
});

describe("expired holds", () => {
  it("are released by the service after their timeout, and a late capture is refused", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 300);
    const { hold: h } = await hold(account, 2n * USDC, { ttlSeconds: 1 });
    expect((await balances(account)).availableAtomic).toBe(USDC);
    await expect.poll(async () => (await balances(account)).availableAtomic, { timeout: 5000, interval: 100 }).toBe(3n * USDC);
    const { rows } = await billing.pool.query("SELECT status FROM holds WHERE execution_id = $1", [h!.executionId]);
    expect(rows[0].status).toBe("expired");
    expect(await refusal(billing.client.capture({ executionId: h!.executionId }))).toMatchObject({ reason: "hold_expired" });
    expect((await billing.client.release({ executionId: h!.executionId, reason: "x" })).replayed).toBe(true);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });
});

describe("refunds", () => {
  it("return a captured charge to the wallet once, for platform operators only", async () => {
    const account = newAccount();
    await fundByCard(billing.client, account, 300);
    const { hold: h } = await hold(account, USDC);
    await billing.client.capture({ executionId: h!.executionId });
    expect(
      await refusal(billing.client.refund({ executionId: h!.executionId, reason: "bad result" }, as("someone"))),
    ).toMatchObject({
      code: Code.PermissionDenied,
    });
    const admin = as("operator", { isPlatformAdmin: true });
    const [first, second] = [
      await billing.client.refund({ executionId: h!.executionId, reason: "bad result" }, admin),
      await billing.client.refund({ executionId: h!.executionId, reason: "bad result" }, admin),
    ];
    expect([first.replayed, second.replayed]).toEqual([false, true]);
    expect((await balances(account)).balanceAtomic).toBe(3n * USDC);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });
});

describe("wallets", () => {
  it("CreateWallet is idempotent per account, even when called concurrently", async () => {
    const account = newAccount();
    const wallets = await Promise.all(Array.from({ length: 10 }, () => billing.client.createWallet({ accountId: account })));
    expect(new Set(wallets.map((w) => w.wallet!.walletId)).size).toBe(1);
    expect(wallets[0]!.wallet).toMatchObject({ accountId: account, balanceUsdc: "0.000000", network: "eip155:8453" });
    const other = await billing.client.createWallet({ accountId: newAccount() });
    expect(other.wallet!.walletId).not.toBe(wallets[0]!.wallet!.walletId);
  });
});

describe("the ledger itself", () => {
  it("refuses edits in place: entries and transactions are append-only, cached balances move only with entries", async () => {
    const account = newAccount();
    const walletId = await fundByCard(billing.client, account, 100);
    await expect(billing.pool.query("UPDATE ledger_entries SET amount = amount + 1")).rejects.toThrow(/append-only/);
    await expect(billing.pool.query("DELETE FROM ledger_transactions")).rejects.toThrow(/append-only/);
    await expect(
      billing.pool.query("UPDATE ledger_accounts SET balance = balance + 1 WHERE wallet_id = $1", [walletId]),
    ).rejects.toThrow(/only through ledger entries/);
  });

  it("refuses an unbalanced transaction at commit", async () => {
    const account = newAccount();
    const walletId = await fundByCard(billing.client, account, 100);
    const client = await billing.pool.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query(
        "INSERT INTO ledger_transactions (kind, reference, wallet_id, wallet_amount, wallet_balance_after) VALUES ('deposit', $1, $2, 1, 1) RETURNING id",
        [randomUUID(), walletId],
      );
      await client.query(
        "INSERT INTO ledger_entries (transaction_id, account_id, amount) SELECT $1, id, 1 FROM ledger_accounts WHERE wallet_id = $2 AND kind = 'wallet_available'",
        [rows[0].id, walletId],
      );
      await expect(client.query("COMMIT")).rejects.toThrow(/not balanced/);
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
    expect((await balances(account)).balanceAtomic).toBe(USDC);
  });
});

describe("bad input names the field", () => {
  const cases: [string, () => Promise<unknown>, string][] = [
    [
      "hold without execution id",
      () => billing.client.hold({ executionId: "", accountId: "a", amountAtomic: 1n }),
      "execution_id",
    ],
    ["hold without account", () => billing.client.hold({ executionId: "e", accountId: "", amountAtomic: 1n }), "account_id"],
    ["hold of zero", () => billing.client.hold({ executionId: "e", accountId: "a", amountAtomic: 0n }), "amount_atomic"],
    [
      "hold of a negative amount",
      () => billing.client.hold({ executionId: "e", accountId: "a", amountAtomic: -5n }),
      "amount_atomic",
    ],
    [
      "hold with ttl 0",
      () => billing.client.hold({ executionId: "e", accountId: "a", amountAtomic: 1n, ttlSeconds: 0 }),
      "ttl_seconds",
    ],
    [
      "max_per_call above ceiling",
      () => billing.client.updateSpendingSettings({ maxPerCallAtomic: 5_000_001n }, as("s")),
      "max_per_call_atomic",
    ],
    [
      "negative max_per_call",
      () => billing.client.updateSpendingSettings({ maxPerCallAtomic: -1n }, as("s")),
      "max_per_call_atomic",
    ],
    [
      "negative daily limit",
      () => billing.client.updateSpendingSettings({ dailyLimitAtomic: -1n }, as("s")),
      "daily_limit_atomic",
    ],
    ["unknown funding method", () => billing.client.fundWallet({ method: "paypal" }, as("s")), "method"],
    ["missing funding method", () => billing.client.fundWallet({ method: "" }, as("s")), "method"],
    ["card without amount", () => billing.client.fundWallet({ method: "card_checkout" }, as("s")), "amount_cents"],
    [
      "card below 100 cents",
      () => billing.client.fundWallet({ method: "card_checkout", amountCents: 99n }, as("s")),
      "amount_cents",
    ],
    [
      "deposit with a bad hash",
      () => billing.client.confirmDeposit({ txHash: "0x12", expectedAmountAtomic: 1n }, as("s")),
      "tx_hash",
    ],
    [
      "deposit without an amount",
      () => billing.client.confirmDeposit({ txHash: `0x${"a".repeat(64)}`, expectedAmountAtomic: 0n }, as("s")),
      "expected_amount_atomic",
    ],
    ["ledger page of 0", () => billing.client.listLedgerEntries({ limit: 0 }, as("s")), "limit"],
    ["create wallet without account", () => billing.client.createWallet({ accountId: "" }), "account_id"],
  ];
  it.each(cases)("%s", async (_name, call, field) => {
    const r = await refusal(call());
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.details.field).toBe(field);
  });

  it("caller-facing calls without a principal are unauthenticated", async () => {
    expect((await refusal(billing.client.getSpendingSettings({}))).code).toBe(Code.Unauthenticated);
  });
});

describe("spending settings", () => {
  it("defaults to 5,000,000 per call and no daily limit; only included fields change; null clears the limit", async () => {
    const account = newAccount();
    const { settings } = await billing.client.getSpendingSettings({}, as(account));
    expect(settings).toMatchObject({ userId: account, maxPerCallAtomic: 5_000_000n });
    expect(settings!.dailyLimitAtomic).toBeUndefined();
    const set = await billing.client.updateSpendingSettings({ dailyLimitAtomic: 7n * USDC }, as(account));
    expect(set.settings).toMatchObject({ id: settings!.id, maxPerCallAtomic: 5_000_000n, dailyLimitAtomic: 7n * USDC });
    const max = await billing.client.updateSpendingSettings({ maxPerCallAtomic: 0n }, as(account));
    expect(max.settings).toMatchObject({ maxPerCallAtomic: 0n, dailyLimitAtomic: 7n * USDC });
    const cleared = await billing.client.updateSpendingSettings(
      { clearDailyLimitAtomic: true, dailyLimitAtomic: 1n },
      as(account),
    );
    expect(cleared.settings!.maxPerCallAtomic).toBe(0n);
    expect(cleared.settings!.dailyLimitAtomic).toBeUndefined();
  });

  it("are changed only with the manage_spending grant: a restricted key is refused and nothing changes", async () => {
    const account = newAccount();
    await billing.client.updateSpendingSettings({ maxPerCallAtomic: 42n }, as(account));
    const restricted = as(account, { grants: [Grant.CALL_TOOLS] });
    expect(await refusal(billing.client.updateSpendingSettings({ maxPerCallAtomic: 4_000_000n }, restricted))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "key_restricted",
    });
    // Reading needs no grant; the value is the one set before.
    expect((await billing.client.getSpendingSettings({}, restricted)).settings!.maxPerCallAtomic).toBe(42n);
  });
});
