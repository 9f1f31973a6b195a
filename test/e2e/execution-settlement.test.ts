/**
 * Settlement of price holds when billing is unreachable at settle time, end to end through the gateway on
 * real processes: the upstream (a real HTTP server here) stops the billing process while the call is in
 * flight, so the hold was taken but the capture or release cannot reach billing. The caller still gets its
 * outcome; once billing is back, the execution service's settlement sweeper (EXECUTION_SETTLEMENT_SWEEP_MS,
 * short here) captures the hold exactly once, or releases it, and never settles it again.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../harness/wait.js";
import {
  type AgentKey,
  balanceAtomic,
  type ExecStack,
  fund,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

const SWEEP_MS = 300;
const PRICE_CENTS = 7;
const PRICE_ATOMIC = BigInt(PRICE_CENTS) * 10_000n;

/** An API whose handler stops billing (when asked to) before it answers, i.e. while the call is in flight. */
interface BillingKillerApi {
  url: string;
  port: number;
  /** When set, the next request stops this stack's billing first. */
  stopBillingIn?: ExecStack;
  requests: number;
  close(): Promise<void>;
}

async function startApi(): Promise<BillingKillerApi> {
  const api = { requests: 0 } as BillingKillerApi;
  const server = http.createServer(async (req, res) => {
    api.requests++;
    const target = api.stopBillingIn;
    api.stopBillingIn = undefined;
    if (target) await target.stack.stop("billing");
    const ok = req.url?.startsWith("/run/ok");
    res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
    res.end(JSON.stringify(ok ? { done: true, answer: 42 } : { error: "upstream is down" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api.port = (server.address() as AddressInfo).port;
  api.url = `http://127.0.0.1:${api.port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

const document = {
  openapi: "3.0.3",
  info: { title: "Settlement upstream", version: "1.0.0" },
  paths: {
    "/run/ok": { post: { operationId: "work", responses: { "200": { description: "done" } } } },
    "/run/fail": { post: { operationId: "work_fail", responses: { "200": { description: "never" } } } },
  },
};

let api: BillingKillerApi;
let s: ExecStack;
let executionDb: Pool;
let billingDb: Pool;
let payer: AgentKey;
let tools: Record<string, string>;

beforeAll(async () => {
  api = await startApi();
  s = await startExecStack([`127.0.0.1:${api.port}`], { EXECUTION_SETTLEMENT_SWEEP_MS: String(SWEEP_MS) }, undefined, {
    layout: "per-role",
  });
  executionDb = createPool(s.stack.env.EXECUTION_DATABASE_URL!, 2);
  billingDb = createPool(s.stack.env.BILLING_DATABASE_URL!, 2);
  payer = await registerAgent(s);
  tools = (await publishOpenApi(s, payer, document, api.url)).tools;
  for (const tool of Object.values(tools)) {
    const priced = await s.call("PATCH", `/tools/${tool}`, { key: payer.key, body: { price_per_call_cents: PRICE_CENTS } });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
  }
  await fund(s, payer, 100);
});
afterAll(async () => {
  await executionDb?.end();
  await billingDb?.end();
  await s?.stop();
  await api?.close();
});

const settlementOf = async (executionId: string) =>
  (
    await executionDb.query<{ settlement: string; cost_cents: string }>(
      "SELECT settlement, cost_cents::text FROM executions WHERE id = $1",
      [executionId],
    )
  ).rows[0];

const wallet = async () => {
  const res = await s.call("GET", "/agents/wallet", { key: payer.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { balance_atomic: number; held_atomic: number; available_atomic: number };
};

/** The wallet's ledger entries of this execution (billing books them with the execution id as reference). */
const ledgerFor = async (executionId: string) => {
  const res = await s.call("GET", "/agents/wallet/ledger?limit=100", { key: payer.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as Array<{ kind: string; reference: string; amount_atomic: number }>).filter(
    (e) => e.reference === executionId,
  );
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("settling a price hold when billing is down at settle time", () => {
  it("returns the result, then captures the hold exactly once when billing is back", async () => {
    const start = await balanceAtomic(s, payer);
    api.stopBillingIn = s;
    const r = await s.call("POST", `/tools/call/${tools.work}`, { key: payer.key, body: {} });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, result: { done: true, answer: 42 }, error: null });
    const executionId: string = r.body.execution_id;

    // Billing is down: the hold is waiting for its capture, and sweeps meanwhile change nothing.
    expect(await settlementOf(executionId)).toEqual({ settlement: "capture_pending", cost_cents: String(PRICE_CENTS) });
    await sleep(3 * SWEEP_MS);
    expect((await settlementOf(executionId))?.settlement).toBe("capture_pending");

    await s.stack.start("billing");
    await until("the capture", async () => (await settlementOf(executionId))?.settlement === "captured");
    const settled = await wallet();
    expect(BigInt(settled.balance_atomic)).toBe(start - PRICE_ATOMIC);
    expect(settled.held_atomic).toBe(0);
    // The ledger books the hold and one capture of the price (the capture is what charges the balance).
    const entries = await ledgerFor(executionId);
    expect(entries.map((e) => e.kind).sort(), JSON.stringify(entries)).toEqual(["capture", "hold"]);
    expect(BigInt(entries.find((e) => e.kind === "capture")!.amount_atomic)).toBe(-PRICE_ATOMIC);

    // Further sweeps do not charge it again.
    await sleep(2 * SWEEP_MS + 200);
    expect(BigInt((await wallet()).balance_atomic)).toBe(start - PRICE_ATOMIC);
    expect((await ledgerFor(executionId)).map((e) => e.kind).sort()).toEqual(["capture", "hold"]);
    expect((await settlementOf(executionId))?.settlement).toBe("captured");
  });

  it("releases the hold of a failed call once billing is back; nothing is charged", async () => {
    const before = await wallet();
    api.stopBillingIn = s;
    const r = await s.call("POST", `/tools/call/${tools.work_fail}`, { key: payer.key, body: {} });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: false, result: null });
    const executionId: string = r.body.execution_id;
    expect(await settlementOf(executionId)).toEqual({ settlement: "release_pending", cost_cents: "0" });

    await s.stack.start("billing");
    await until("the release", async () => (await settlementOf(executionId))?.settlement === "released");
    const after = await wallet();
    expect(after.balance_atomic).toBe(before.balance_atomic);
    expect(after.held_atomic).toBe(0);
    expect(after.available_atomic).toBe(before.available_atomic);
    await sleep(2 * SWEEP_MS + 200);
    expect((await wallet()).balance_atomic).toBe(before.balance_atomic);
    // The hold and its release, no capture.
    const entries = await ledgerFor(executionId);
    expect(entries.map((e) => e.kind).sort(), JSON.stringify(entries)).toEqual(["hold", "release"]);
    expect(entries.reduce((sum, e) => sum + BigInt(e.amount_atomic), 0n)).toBe(0n);
  });

  it("stops retrying a capture billing refuses for good (the hold expired meanwhile): released, nothing charged", async () => {
    const before = await wallet();
    api.stopBillingIn = s;
    const r = await s.call("POST", `/tools/call/${tools.work}`, { key: payer.key, body: {} });
    expect(r.body.success, JSON.stringify(r.body)).toBe(true);
    const executionId: string = r.body.execution_id;
    expect((await settlementOf(executionId))?.settlement).toBe("capture_pending");

    // While execution is down too, the hold passes its expiry and billing's own sweeper releases it.
    await s.stack.stop("execution");
    await billingDb.query("UPDATE holds SET expires_at = now() - interval '1 minute' WHERE execution_id = $1", [executionId]);
    await s.stack.start("billing");
    await until(
      "billing to expire the hold",
      async () =>
        (await billingDb.query("SELECT status FROM holds WHERE execution_id = $1", [executionId])).rows[0]?.status === "expired",
      { timeoutMs: 10_000 },
    );
    await s.stack.start("execution");

    // Billing answers hold_expired: the execution is settled as released, with no cost, and left alone.
    await until("the settlement", async () => (await settlementOf(executionId))?.settlement === "released");
    expect(await settlementOf(executionId)).toEqual({ settlement: "released", cost_cents: "0" });
    const attempts = async () =>
      (await s.stack.log("execution")).split("\n").filter((l) => l.includes(executionId) && l.includes("hold")).length;
    const seen = await attempts();
    await sleep(3 * SWEEP_MS);
    expect(await attempts()).toBe(seen);
    const after = await wallet();
    expect(after.balance_atomic).toBe(before.balance_atomic);
    expect(after.held_atomic).toBe(0);
    expect((await ledgerFor(executionId)).map((e) => e.kind).sort()).toEqual(["hold", "release"]);
  });
});
