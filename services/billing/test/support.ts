/**
 * What the billing integration tests share: a billing service started in this process on a fresh
 * database of the run's Postgres and on the run's NATS, a gRPC client to it, callers as principals,
 * funding through Stripe-signed webhooks, and the ledger's invariants read straight from its tables.
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type Client, ConnectError } from "@connectrpc/connect";
import { readError } from "@toolport/kit/errors";
import type { Pool } from "@toolport/kit/pg";
import { createServiceClient, principalHeader } from "@toolport/kit/rpc";
import { type RunningService, startService } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { AuthMethod, Grant, OrgRole, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import Stripe from "stripe";
import { inject } from "vitest";
import { serverUrl, testDatabase } from "../../../test/harness/db.js";
import { billingService } from "../src/role.js";

export const WEBHOOK_SECRET = "whsec_test_billing_secret";
export const STRIPE_TEST_KEY = "sk_test_billing";

export interface BillingUnderTest {
  client: Client<typeof BillingService>;
  pool: Pool;
  url: string;
  env: Record<string, string>;
  /**
   * Stops the service and starts it again on the same database, with `env` changed by `changes`
   * (`client` and `url` then point at the new process).
   */
  restart(changes?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/** Billing in this process (src, not dist), with the given extra variables. */
export async function startBilling(extraEnv: Record<string, string> = {}): Promise<BillingUnderTest> {
  const db = await testDatabase("billing");
  const env: Record<string, string> = {
    DATABASE_URL: serverUrl(),
    BILLING_DATABASE_URL: db.url,
    NATS_URL: inject("natsUrl"),
    PORT: "0",
    LOG_LEVEL: process.env.BILLING_TEST_LOG_LEVEL ?? "silent",
    ...extraEnv,
  };
  let running: RunningService = await startService(billingService, env);
  const url = `http://127.0.0.1:${running.server.port}`;
  const underTest: BillingUnderTest = {
    client: billingClient(url),
    pool: db.pool,
    url,
    env,
    async restart(changes = {}) {
      await running.stop();
      Object.assign(env, changes);
      running = await startService(billingService, env);
      underTest.url = `http://127.0.0.1:${running.server.port}`;
      underTest.client = billingClient(underTest.url);
    },
    async stop() {
      await running.stop();
      await db.pool.end();
    },
  };
  return underTest;
}

export function billingClient(url: string): Client<typeof BillingService> {
  return createServiceClient(BillingService, url, { timeoutMs: 30_000 });
}

/** Every grant: what identity gives the owner of an organization using an unrestricted key. */
const ownerGrants = Object.values(Grant).filter((g): g is Grant => typeof g === "number" && g !== Grant.UNSPECIFIED);

/**
 * A caller: gRPC call options carrying its principal, as identity writes it for an owner with an
 * unrestricted key (`grants` narrows it, as identity would for a restricted key or a viewer).
 */
export function as(accountId: string, extra: { isPlatformAdmin?: boolean; keyId?: string; grants?: Grant[] } = {}) {
  const principal = create(PrincipalSchema, {
    accountId,
    organizationId: `org-${accountId}`,
    authMethod: AuthMethod.API_KEY,
    orgRole: OrgRole.OWNER,
    grants: ownerGrants,
    roleGrants: ownerGrants,
    ...extra,
  });
  return { headers: principalHeader(principal) };
}

export const newAccount = () => `acct-${randomUUID()}`;

/** The reason of a refused call (fails the test when the call succeeded). */
export async function refusal(
  call: Promise<unknown>,
): Promise<{ code: number; reason: string; details: Record<string, unknown> }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const received = readError(err);
    return { code: received.code, reason: received.reason, details: received.details as Record<string, unknown> };
  }
  throw new Error("expected the call to be refused, but it succeeded");
}

const stripe = new Stripe(STRIPE_TEST_KEY);

/** A Stripe-format event body and its valid Stripe-Signature header. */
export function signedStripeEvent(type: string, session: Record<string, unknown>, secret = WEBHOOK_SECRET) {
  const payload = JSON.stringify({
    id: `evt_${randomUUID().replace(/-/g, "")}`,
    object: "event",
    api_version: "2025-01-01",
    created: Math.floor(Date.now() / 1000),
    type,
    data: { object: { object: "checkout.session", ...session } },
  });
  return { payload, signature: stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

/**
 * Credits `cents` to the account's wallet the way production does: a paid checkout session's signed
 * `checkout.session.completed` webhook. Returns the wallet id.
 */
export async function fundByCard(client: Client<typeof BillingService>, accountId: string, cents: number): Promise<string> {
  const { wallet } = await client.createWallet({ accountId });
  const event = signedStripeEvent("checkout.session.completed", {
    id: `cs_test_${randomUUID().replace(/-/g, "")}`,
    amount_total: cents,
    currency: "usd",
    payment_status: "paid",
    client_reference_id: wallet!.walletId,
    metadata: { wallet_id: wallet!.walletId, account_id: accountId, amount_cents: String(cents) },
  });
  const res = await client.handleStripeWebhook({ payload: new TextEncoder().encode(event.payload), signature: event.signature });
  if (!res.credited) throw new Error("funding webhook did not credit");
  return wallet!.walletId;
}

export interface LedgerFacts {
  /** Sum of every entry of every account: zero in a double-entry ledger. */
  total: bigint;
  /** Ledger transactions whose entries do not sum to zero. */
  unbalanced: bigint;
  /** Wallet accounts whose cached balance differs from the sum of their entries. */
  drifted: bigint;
  /** Wallet accounts below zero. */
  negative: bigint;
}

export async function ledgerFacts(pool: Pool): Promise<LedgerFacts> {
  const { rows } = await pool.query<LedgerFacts>(`
    SELECT (SELECT COALESCE(SUM(amount), 0)::bigint FROM ledger_entries) AS total,
           (SELECT COUNT(*) FROM (SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING SUM(amount) <> 0) u) AS unbalanced,
           (SELECT COUNT(*) FROM ledger_accounts a
             WHERE a.balance IS NOT NULL
               AND a.balance <> (SELECT COALESCE(SUM(e.amount), 0) FROM ledger_entries e WHERE e.account_id = a.id)) AS drifted,
           (SELECT COUNT(*) FROM ledger_accounts WHERE balance < 0) AS negative`);
  return rows[0]!;
}

export const healthyLedger: LedgerFacts = { total: 0n, unbalanced: 0n, drifted: 0n, negative: 0n };

/** A wallet's balances summed from its entries (not from the cached column). */
export async function derivedBalances(pool: Pool, walletId: string): Promise<{ available: bigint; held: bigint }> {
  const { rows } = await pool.query<{ kind: string; sum: bigint }>(
    `SELECT a.kind, COALESCE(SUM(e.amount), 0)::bigint AS sum FROM ledger_accounts a
       LEFT JOIN ledger_entries e ON e.account_id = a.id WHERE a.wallet_id = $1 GROUP BY a.kind`,
    [walletId],
  );
  const by = Object.fromEntries(rows.map((r) => [r.kind, r.sum]));
  return { available: by.wallet_available ?? 0n, held: by.wallet_held ?? 0n };
}

export const USDC = 1_000_000n;
