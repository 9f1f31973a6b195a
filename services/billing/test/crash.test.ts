/**
 * The real billing process (dist/, spawned by the test harness) killed with SIGKILL in the middle of a
 * batch of holds, then restarted: every hold ends captured, released, or open until the service
 * releases it at its expiry, and the wallet balance is exactly what the settled holds say.
 */
import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../test/harness/stack.js";
import {
  billingClient,
  fundByCard,
  healthyLedger,
  ledgerFacts,
  newAccount,
  STRIPE_TEST_KEY,
  USDC,
  WEBHOOK_SECRET,
} from "./support.js";

let stack: Stack;
let pool: Pool;

beforeAll(async () => {
  stack = await startStack(["billing"], {
    STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    BILLING_HOLD_SWEEP_INTERVAL_MS: "250",
  });
  pool = createPool(stack.env.BILLING_DATABASE_URL!, 2);
});
afterAll(async () => {
  await stack?.stopAll();
  await pool?.end();
});

/**
 * Long enough that the captures and releases after the restart land before the holds expire, also on a
 * loaded machine (at 6 s, a slow restart once let a hold to be released expire first); the holds left
 * open still expire within the test.
 */
const HOLD_TTL_SECONDS = 12;

describe("billing killed mid-way through a batch of holds", () => {
  it("loses and makes no money: after restart every hold settles and the balance is exact", async () => {
    const url = `http://127.0.0.1:${stack.ports.billing}`;
    let client = billingClient(url);
    const account = newAccount();
    const walletId = await fundByCard(client, account, 10_000); // 100 USDC
    const price = 100_000n; // 0.1 USDC
    const ids: string[] = Array.from({ length: 400 }, () => randomUUID());
    const acked = new Set<string>();
    let killAfterAcks: () => void;
    const enoughAcks = new Promise<void>((r) => {
      killAfterAcks = r;
    });
    const calls = ids.map((executionId) =>
      client
        .hold({
          executionId,
          accountId: account,
          amountAtomic: price,
          ttlSeconds: HOLD_TTL_SECONDS,
          toolId: "t",
          organizationId: "o",
        })
        .then(
          () => {
            acked.add(executionId);
            if (acked.size >= 25) killAfterAcks();
            return "acknowledged" as const;
          },
          () => "lost" as const, // the connection died with the process
        ),
    );
    await enoughAcks;
    expect(await stack.stop("billing", "SIGKILL")).toBeNull(); // killed by the signal, no exit code
    const outcomes = await Promise.all(calls);
    const inFlight = ids.filter((id) => !acked.has(id));
    expect(outcomes.filter((o) => o === "lost").length).toBe(inFlight.length);
    expect(inFlight.length).toBeGreaterThan(0);

    await stack.start("billing");
    client = billingClient(url);
    const ackedIds = ids.filter((id) => acked.has(id));
    // A third is captured, a third released, and a third left open (as if the caller crashed too).
    const toCapture = ackedIds.filter((_, i) => i % 3 === 0);
    const toRelease = ackedIds.filter((_, i) => i % 3 === 1);
    const leftOpen = ackedIds.filter((_, i) => i % 3 === 2);
    await Promise.all([
      ...toCapture.map((executionId) => client.capture({ executionId })),
      ...toRelease.map((executionId) => client.release({ executionId, reason: "upstream_failed" })),
    ]);

    // Holds whose response was lost in the crash stay open until their expiry, then the service releases them.
    await expect
      .poll(async () => (await pool.query("SELECT COUNT(*)::int AS n FROM holds WHERE status = 'held'")).rows[0].n, {
        timeout: (HOLD_TTL_SECONDS + 20) * 1000,
        interval: 250,
      })
      .toBe(0);

    const { rows } = await pool.query<{ execution_id: string; status: string }>("SELECT execution_id, status FROM holds");
    const byStatus = (s: string) => new Set(rows.filter((r) => r.status === s).map((r) => r.execution_id));
    expect(byStatus("captured")).toEqual(new Set(toCapture));
    expect(byStatus("released")).toEqual(new Set(toRelease));
    // Expired: exactly the acknowledged holds left open, plus any whose response the crash lost.
    const expired = byStatus("expired");
    for (const id of leftOpen) expect(expired.has(id)).toBe(true);
    for (const id of expired) expect(leftOpen.includes(id) || !acked.has(id)).toBe(true);
    expect(rows.length).toBe(toCapture.length + toRelease.length + byStatus("expired").size);

    const balance = await client.getBalance({ accountId: account });
    expect(balance.heldAtomic).toBe(0n);
    expect(balance.balanceAtomic).toBe(100n * USDC - BigInt(toCapture.length) * price);
    expect(balance.availableAtomic).toBe(balance.balanceAtomic);

    // One hold transaction per hold row, one settlement per hold; nothing else touched the wallet.
    const kinds = await pool.query<{ kind: string; n: number }>(
      "SELECT kind, COUNT(*)::int AS n FROM ledger_transactions WHERE wallet_id = $1 GROUP BY kind",
      [walletId],
    );
    const count = Object.fromEntries(kinds.rows.map((r) => [r.kind, r.n]));
    expect(count).toEqual({
      card_payment: 1,
      hold: rows.length,
      capture: toCapture.length,
      release: rows.length - toCapture.length,
    });
    expect(await ledgerFacts(pool)).toEqual(healthyLedger);
  });
});
