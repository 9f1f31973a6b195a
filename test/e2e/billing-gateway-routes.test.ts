/**
 * The gateway's billing routes, end to end over HTTP: the real gateway, identity and billing processes
 * (dist/), a real EVM node and a local Stripe API. Callers are real agents registered through
 * POST /v1/agents (their wallets created by billing) and a real human signed up for a JWT. The JSON is
 * the spec's, to the letter.
 */
import { type Contract, getAddress, HDNodeWallet, Mnemonic } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvmNode, startEvmNode } from "../../services/billing/test/evm.js";
import { type StripeApi, startStripeApi } from "../../services/billing/test/stripe-api.js";
import { STRIPE_TEST_KEY, signedStripeEvent, WEBHOOK_SECRET } from "../../services/billing/test/support.js";
import { checkReply } from "../harness/shapes.js";
import { type Stack, startStack } from "../harness/stack.js";

const xpub = HDNodeWallet.fromMnemonic(
  Mnemonic.fromPhrase("test test test test test test test test test test test junk"),
  "m/44'/60'/0'",
).neuter().extendedKey;

let stack: Stack;
let evm: EvmNode;
let usdc: Contract;
let stripeApi: StripeApi;

beforeAll(async () => {
  evm = await startEvmNode();
  usdc = await evm.deployToken("USDC");
  stripeApi = await startStripeApi();
  stack = await startStack(["billing", "identity", "gateway"], {
    BILLING_DEPOSIT_XPUB: xpub,
    BILLING_USDC_CONTRACT: await usdc.getAddress(),
    BILLING_RPC_URL: evm.url,
    BILLING_DEPOSIT_CONFIRMATIONS: "2",
    // Confirming by hash alone; the watcher crediting by itself has its own test (deposit-watcher).
    BILLING_DEPOSIT_WATCH: "false",
    STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: stripeApi.url,
    // Every test registers its own agents; the 5/min/IP limit is identity's own test's business.
    REGISTRATIONS_PER_MINUTE: "1000",
  });
});
afterAll(async () => {
  await stack?.stopAll();
  await stripeApi?.stop();
  await evm?.stop();
});

interface Caller {
  id: string;
  headers: Record<string, string>;
}

const url = (p: string) => `${stack.gatewayUrl}/v1${p}`;

/** A freshly registered agent: its account id and its API key. */
async function newAccount(): Promise<Caller> {
  const res = await fetch(url("/agents"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "billing-test-agent", operator_email: "ops@example.com" }),
  });
  const body = (await res.json()) as { agent_id: string; api_key: string };
  if (res.status !== 200) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.agent_id, headers: { "svc-api-key": body.api_key } };
}

/** A human signed up with a password: its account id and a Toolport-issued JWT. */
async function newHuman(): Promise<Caller> {
  const res = await fetch(url("/auth/signup"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `h-${crypto.randomUUID()}@example.com`, password: "correct horse battery" }),
  });
  const body = (await res.json()) as { account_id: string; access_token: string };
  if (res.status !== 200) throw new Error(`signup failed: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.account_id, headers: { authorization: `Bearer ${body.access_token}` } };
}

async function call(method: string, path: string, caller: Caller | null, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url(path), {
    method,
    headers: { "content-type": "application/json", ...(caller?.headers ?? {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown> & { error?: { code: string; details: Record<string, unknown> } };
  // The spec's response shapes, checked as gatewayClient checks them (test/harness/shapes.ts).
  checkReply({ method, path, status: res.status, body: json, requestBody: body });
  return { status: res.status, body: json };
}

describe("POST /v1/agents/wallets/fund", () => {
  it("crypto: every field of the funding response, the card ones null", async () => {
    const account = await newAccount();
    const res = await call("POST", "/agents/wallets/fund", account, { method: "crypto" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ["balance_usdc", "checkout_url", "deposit_address", "method", "network", "usdc_contract", "wallet_id"].sort(),
    );
    expect(res.body).toMatchObject({
      method: "crypto",
      checkout_url: null,
      network: "eip155:8453",
      usdc_contract: getAddress(await usdc.getAddress()),
      balance_usdc: "0.000000",
    });
    expect(res.body.deposit_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(res.body.wallet_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("card_checkout: the checkout URL, the crypto fields null", async () => {
    const res = await call("POST", "/agents/wallets/fund", await newAccount(), { method: "card_checkout", amount_cents: 1500 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      method: "card_checkout",
      deposit_address: null,
      network: null,
      usdc_contract: null,
      balance_usdc: "0.000000",
    });
    expect(res.body.checkout_url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(Object.keys(res.body)).toHaveLength(7);
  });

  it.each([
    [{ method: "paypal" }, "method"],
    [{}, "method"],
    [{ method: 7 }, "method"],
    [{ method: "card_checkout" }, "amount_cents"],
    [{ method: "card_checkout", amount_cents: 99 }, "amount_cents"],
    [{ method: "card_checkout", amount_cents: "lots" }, "amount_cents"],
    [{ method: "card_checkout", amount_cents: 150.5 }, "amount_cents"],
  ])("400 naming the field for %o", async (body, field) => {
    const res = await call("POST", "/agents/wallets/fund", await newAccount(), body);
    expect(res.status).toBe(400);
    expect(res.body.error!.details.field).toBe(field);
    expect(res.body.detail).toEqual(expect.any(String));
  });

  it("401 without an API key, and with a JWT only (the endpoint takes an API key)", async () => {
    expect((await call("POST", "/agents/wallets/fund", null, { method: "crypto" })).status).toBe(401);
    const jwt = await call("POST", "/agents/wallets/fund", await newHuman(), { method: "crypto" });
    expect(jwt.status).toBe(401);
  });
});

describe("POST /v1/agents/wallets/confirm-deposit", () => {
  it("credits a confirmed USDC transfer, answers the new balance and the ledger entry, then 409 for the same hash", async () => {
    const account = await newAccount();
    const { body: funding } = await call("POST", "/agents/wallets/fund", account, { method: "crypto" });
    await (await usdc.getFunction("mint")(funding.deposit_address, 4_250_000n)).wait();
    // A mint is a Transfer from the zero address: exactly what arrives at a deposit address.
    const filter = usdc.filters.Transfer!(undefined, funding.deposit_address);
    const [log] = await usdc.queryFilter(filter);
    const txHash = log!.transactionHash;
    await evm.mine(1);

    const res = await call("POST", "/agents/wallets/confirm-deposit", account, {
      tx_hash: txHash,
      expected_amount_atomic: 4_250_000,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      wallet_id: funding.wallet_id,
      tx_hash: txHash.toLowerCase(),
      credited_atomic: 4_250_000,
      balance_atomic: 4_250_000,
      balance_usdc: "4.250000",
      entry: {
        id: expect.any(String),
        transaction_id: expect.any(String),
        wallet_id: funding.wallet_id,
        kind: "deposit",
        amount_atomic: 4_250_000,
        balance_after_atomic: 4_250_000,
        balance_after_usdc: "4.250000",
        reference: txHash.toLowerCase(),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    const again = await call("POST", "/agents/wallets/confirm-deposit", account, {
      tx_hash: txHash,
      expected_amount_atomic: "4250000",
    });
    expect(again.status).toBe(409);
    expect(again.body.error!.code).toBe("deposit_already_credited");

    const wallet = await call("GET", "/agents/wallet", account);
    expect(wallet.body).toMatchObject({ balance_usdc: "4.250000", balance_atomic: 4_250_000, held_atomic: 0 });
    const ledger = await call("GET", "/agents/wallet/ledger", account);
    expect(ledger.body).toEqual([expect.objectContaining({ kind: "deposit", amount_atomic: 4_250_000 })]);
  });

  it.each([
    [{ expected_amount_atomic: 5 }, "tx_hash"],
    [{ tx_hash: "0xabc", expected_amount_atomic: 5 }, "tx_hash"],
    [{ tx_hash: `0x${"1".repeat(64)}` }, "expected_amount_atomic"],
    [{ tx_hash: `0x${"1".repeat(64)}`, expected_amount_atomic: 0 }, "expected_amount_atomic"],
    [{ tx_hash: `0x${"1".repeat(64)}`, expected_amount_atomic: "1.5" }, "expected_amount_atomic"],
  ])("400 naming the field for %o", async (body, field) => {
    const res = await call("POST", "/agents/wallets/confirm-deposit", await newAccount(), body);
    expect(res.status).toBe(400);
    expect(res.body.error!.details.field).toBe(field);
  });
});

describe("/v1/x402/settings", () => {
  it("GET: the spec's Spending settings with the defaults, for an API key or a JWT", async () => {
    const account = await newAccount();
    const res = await call("GET", "/x402/settings", account);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: account.id,
      max_per_call_atomic: 5_000_000,
      daily_limit_atomic: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // A human with a JWT has settings of its own, with the same defaults.
    const human = await newHuman();
    const viaJwt = await call("GET", "/x402/settings", human);
    expect(viaJwt.status).toBe(200);
    expect(viaJwt.body).toMatchObject({ user_id: human.id, max_per_call_atomic: 5_000_000, daily_limit_atomic: null });
  });

  it("PATCH changes only the fields sent; null removes the daily limit", async () => {
    const account = await newAccount();
    let res = await call("PATCH", "/x402/settings", account, { daily_limit_atomic: 20_000_000 });
    expect(res.body).toMatchObject({ max_per_call_atomic: 5_000_000, daily_limit_atomic: 20_000_000 });
    res = await call("PATCH", "/x402/settings", account, { max_per_call_atomic: 250_000 });
    expect(res.body).toMatchObject({ max_per_call_atomic: 250_000, daily_limit_atomic: 20_000_000 });
    res = await call("PATCH", "/x402/settings", account, { daily_limit_atomic: null });
    expect(res.body).toMatchObject({ max_per_call_atomic: 250_000, daily_limit_atomic: null });
    expect((await call("GET", "/x402/settings", account)).body).toMatchObject({
      max_per_call_atomic: 250_000,
      daily_limit_atomic: null,
    });
  });

  it.each([
    [{ max_per_call_atomic: 5_000_001 }, "max_per_call_atomic"],
    [{ max_per_call_atomic: -1 }, "max_per_call_atomic"],
    [{ max_per_call_atomic: null }, "max_per_call_atomic"],
    [{ max_per_call_atomic: "many" }, "max_per_call_atomic"],
    [{ daily_limit_atomic: -5 }, "daily_limit_atomic"],
    [{ daily_limit_atomic: 1.25 }, "daily_limit_atomic"],
  ])("PATCH %o is a 400 naming the field, and nothing changes", async (body, field) => {
    const account = await newAccount();
    const res = await call("PATCH", "/x402/settings", account, body);
    expect(res.status).toBe(400);
    expect(res.body.error!.details.field).toBe(field);
    expect((await call("GET", "/x402/settings", account)).body).toMatchObject({
      max_per_call_atomic: 5_000_000,
      daily_limit_atomic: null,
    });
  });

  it("PATCH with a body that is not an object is a 400", async () => {
    expect((await call("PATCH", "/x402/settings", await newAccount(), [1, 2])).status).toBe(400);
  });
});

describe("POST /v1/billing/stripe/webhook", () => {
  it("credits a signed checkout.session.completed once from the raw body; a bad signature is a 400", async () => {
    const account = await newAccount();
    const { body: funding } = await call("POST", "/agents/wallets/fund", account, {
      method: "card_checkout",
      amount_cents: 1200,
    });
    const sessionId = String(funding.checkout_url).split("/").pop();
    const event = signedStripeEvent("checkout.session.completed", {
      id: sessionId,
      amount_total: 1200,
      currency: "usd",
      payment_status: "paid",
      metadata: { wallet_id: funding.wallet_id },
    });
    // Stripe's exact bytes: spacing the JSON differently would break the signature.
    const post = (payload: string, signature: string) =>
      fetch(url("/billing/stripe/webhook"), {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature },
        body: payload,
      });
    const first = await post(event.payload, event.signature);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: true, event_type: "checkout.session.completed", credited: true });
    const second = await post(event.payload, event.signature);
    expect(await second.json()).toMatchObject({ credited: false });
    const bad = await post(event.payload.replace("1200", "9999"), event.signature);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_signature");
    const unsigned = await fetch(url("/billing/stripe/webhook"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unsigned.status).toBe(400);
    expect((await call("GET", "/agents/wallet", account)).body).toMatchObject({ balance_usdc: "12.000000" });
  });
});
