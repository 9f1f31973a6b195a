/**
 * The deposit watcher against a real EVM node (Hardhat, chain 8453) with a standard ERC-20 deployed as
 * USDC: a transfer to a wallet's deposit address is credited by itself once it has the required
 * confirmations and not before, exactly once across restarts, rescans and confirm-deposit by hash in
 * either order; transfers to other addresses and of other tokens are ignored; every log query spans at
 * most the configured number of blocks. The node is reached through a small recording proxy (a real
 * HTTP server in front of it) so the test can read the ranges the watcher asked for.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { metrics } from "@toolport/kit/metrics";
import { type Contract, HDNodeWallet, Mnemonic, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../../test/harness/wait.js";
import { type EvmNode, startEvmNode } from "./evm.js";
import { as, type BillingUnderTest, healthyLedger, ledgerFacts, newAccount, refusal, startBilling, USDC } from "./support.js";

// Not Hardhat's development mnemonic: its first child is the node's deployer account, which mints the
// test's tokens, and every mint would then be a deposit of the first wallet.
const xpub = HDNodeWallet.fromMnemonic(
  Mnemonic.fromPhrase("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"),
  "m/44'/60'/0'",
).neuter().extendedKey;

const CONFIRMATIONS = 3;
const MAX_BLOCKS = 4;

let evm: EvmNode;
let proxy: RecordingProxy;
let usdc: Contract;
let otherToken: Contract;
let billing: BillingUnderTest;

beforeAll(async () => {
  evm = await startEvmNode();
  proxy = await recordingProxy(evm.url);
  usdc = await evm.deployToken("USDC");
  otherToken = await evm.deployToken("FAKE");
  billing = await startBilling({
    BILLING_DEPOSIT_XPUB: xpub,
    BILLING_USDC_CONTRACT: await usdc.getAddress(),
    BILLING_RPC_URL: proxy.url,
    BILLING_DEPOSIT_CONFIRMATIONS: String(CONFIRMATIONS),
    BILLING_DEPOSIT_WATCH_INTERVAL_MS: "50",
    BILLING_DEPOSIT_WATCH_MAX_BLOCKS: String(MAX_BLOCKS),
  });
}, 120_000);
afterAll(async () => {
  await billing?.stop();
  await proxy?.close();
  await evm?.stop();
});

async function depositAddress(account: string): Promise<string> {
  const res = await billing.client.fundWallet({ method: "crypto" }, as(account));
  return res.depositAddress!;
}

/** Mints `amount` to the deployer and sends it to `to`; returns the transfer's hash and block. */
async function send(token: Contract, to: string, amount: bigint): Promise<{ hash: string; block: bigint }> {
  await (await token.getFunction("mint")(await evm.deployer.getAddress(), amount)).wait();
  const tx = await token.getFunction("transfer")(to, amount);
  const receipt = await tx.wait();
  return { hash: (tx.hash as string).toLowerCase(), block: BigInt(receipt.blockNumber) };
}

/** The watcher's stored cursor: the first block it has not scanned. */
async function cursor(): Promise<bigint | null> {
  const { rows } = await billing.pool.query<{ next_block: bigint }>("SELECT next_block FROM deposit_watch_cursors");
  return rows[0]?.next_block ?? null;
}

/** Waits until the watcher has scanned every block up to and including `block`. */
async function scannedThrough(block: bigint): Promise<void> {
  await until(`the watcher to scan block ${block}`, async () => ((await cursor()) ?? -1n) > block, { timeoutMs: 30_000 });
}

/** Waits until the watcher has scanned every block confirmed enough now, and stands before the first that is not. */
async function caughtUp(): Promise<bigint> {
  const confirmedHead = BigInt(await evm.provider.getBlockNumber()) - BigInt(CONFIRMATIONS) + 1n;
  await scannedThrough(confirmedHead);
  expect(await cursor()).toBe(confirmedHead + 1n); // and never past it
  return confirmedHead;
}

/** A sample of one of the process's Prometheus metrics (billing runs in this process). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const values = (await metrics.getSingleMetric(name)!.get()).values;
  const found = values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return found?.value ?? 0;
}

async function balance(account: string): Promise<bigint> {
  return (await billing.client.getBalance({ accountId: account })).balanceAtomic;
}

async function depositRows(hash: string): Promise<{ credited_by: string; amount: bigint }[]> {
  const { rows } = await billing.pool.query("SELECT credited_by, amount FROM deposits WHERE tx_hash = $1", [hash]);
  return rows;
}

async function ledgerRows(hash: string): Promise<number> {
  const { rows } = await billing.pool.query("SELECT 1 FROM ledger_transactions WHERE kind = 'deposit' AND reference = $1", [
    hash,
  ]);
  return rows.length;
}

describe("the deposit watcher", () => {
  it("credits a transfer to a deposit address once it has the required confirmations, not before, and only once", async () => {
    const a = newAccount();
    const address = await depositAddress(a);
    await caughtUp();
    const creditedBefore = await metric("toolport_deposits_credited_total", { source: "watcher" });
    const { hash, block } = await send(usdc, address, 7_250_000n);

    // 1, then 2 confirmations: the watcher stops right before the transfer's block.
    expect(await caughtUp()).toBe(block - 2n);
    expect(await balance(a)).toBe(0n);
    await evm.mine(1);
    expect(await caughtUp()).toBe(block - 1n);
    expect(await balance(a)).toBe(0n);
    expect(await depositRows(hash)).toEqual([]);

    // The 3rd confirmation: credited, by the watcher, the amount sent.
    await evm.mine(1);
    await scannedThrough(block);
    expect(await balance(a)).toBe(7_250_000n);
    expect(await depositRows(hash)).toEqual([{ credited_by: "watcher", amount: 7_250_000n }]);
    expect(await metric("toolport_deposits_credited_total", { source: "watcher" })).toBe(creditedBefore + 1);

    // More blocks, more rounds: never a second credit.
    await evm.mine(2 * MAX_BLOCKS);
    await caughtUp();
    expect(await balance(a)).toBe(7_250_000n);
    expect(await ledgerRows(hash)).toBe(1);
    const entries = await billing.client.listLedgerEntries({}, as(a));
    expect(entries.entries.map((e) => [e.reference, e.amountAtomic])).toEqual([[hash, 7_250_000n]]);
    expect(await metric("toolport_deposits_credited_total", { source: "watcher" })).toBe(creditedBefore + 1);
    expect(await metric("toolport_deposit_watcher_next_block")).toBe(Number(await cursor()));
    expect(await metric("toolport_deposit_watcher_lag_blocks")).toBe(0);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("ignores a transfer to an address that is not a deposit address, and another token sent to a deposit address", async () => {
    const a = newAccount();
    const address = await depositAddress(a);
    const stranger = Wallet.createRandom().address;
    const toStranger = await send(usdc, stranger, 4n * USDC);
    const otherCoin = await send(otherToken, address, 4n * USDC);
    await evm.mine(CONFIRMATIONS);
    await scannedThrough(otherCoin.block);
    expect(await depositRows(toStranger.hash)).toEqual([]);
    expect(await depositRows(otherCoin.hash)).toEqual([]);
    expect(await balance(a)).toBe(0n);
    // The same address does get a USDC transfer (the watcher is not simply idle).
    const real = await send(usdc, address, 1n * USDC);
    await evm.mine(CONFIRMATIONS);
    await scannedThrough(real.block);
    expect(await balance(a)).toBe(1n * USDC);
  });

  it("after a restart resumes from its stored cursor: neither misses a transfer nor credits one twice", async () => {
    const a = newAccount();
    const b = newAccount();
    const addressA = await depositAddress(a);
    const addressB = await depositAddress(b);
    const first = await send(usdc, addressA, 2n * USDC);
    await caughtUp(); // not yet confirmed: not credited before the stop
    expect(await balance(a)).toBe(0n);

    // Restarted without its watcher: the watcher is down while the first transfer confirms and a
    // second is made and confirmed.
    await billing.restart({ BILLING_DEPOSIT_WATCH: "false" });
    const stoppedAt = await cursor();
    const second = await send(usdc, addressB, 3n * USDC);
    await evm.mine(3 * MAX_BLOCKS); // several bounded steps to catch up
    expect(await cursor()).toBe(stoppedAt);
    expect(await balance(a)).toBe(0n);

    await billing.restart({ BILLING_DEPOSIT_WATCH: "true" });
    await caughtUp();
    expect(await balance(a)).toBe(2n * USDC);
    expect(await balance(b)).toBe(3n * USDC);
    expect(await depositRows(first.hash)).toEqual([{ credited_by: "watcher", amount: 2n * USDC }]);
    expect(await depositRows(second.hash)).toEqual([{ credited_by: "watcher", amount: 3n * USDC }]);

    // A crash after crediting but before moving the cursor: the watcher scans those blocks again on its
    // next start and credits nothing twice.
    await billing.restart({ BILLING_DEPOSIT_WATCH: "false" });
    await billing.pool.query("UPDATE deposit_watch_cursors SET next_block = $1", [first.block - 1n]);
    await billing.restart({ BILLING_DEPOSIT_WATCH: "true" });
    await caughtUp();
    expect(await balance(a)).toBe(2n * USDC);
    expect(await balance(b)).toBe(3n * USDC);
    expect(await ledgerRows(first.hash)).toBe(1);
    expect(await ledgerRows(second.hash)).toBe(1);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("a transfer the watcher credited is a 409 to confirm-deposit by hash, never a second credit", async () => {
    const a = newAccount();
    const { hash, block } = await send(usdc, await depositAddress(a), 5n * USDC);
    await evm.mine(CONFIRMATIONS);
    await scannedThrough(block);
    expect(await depositRows(hash)).toEqual([{ credited_by: "watcher", amount: 5n * USDC }]);
    expect(await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 5n * USDC }, as(a)))).toMatchObject({
      code: Code.AlreadyExists,
      reason: "deposit_already_credited",
    });
    expect(await balance(a)).toBe(5n * USDC);
    expect(await ledgerRows(hash)).toBe(1);
  });

  it("a transfer confirmed by hash first is skipped by the watcher", async () => {
    const a = newAccount();
    const address = await depositAddress(a);
    // The watcher off while the caller confirms, so the confirmation surely comes first.
    await billing.restart({ BILLING_DEPOSIT_WATCH: "false" });
    const { hash, block } = await send(usdc, address, 6n * USDC);
    await evm.mine(CONFIRMATIONS);
    const confirmed = await billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 6n * USDC }, as(a));
    expect(confirmed.balanceAtomic).toBe(6n * USDC);

    await billing.restart({ BILLING_DEPOSIT_WATCH: "true" });
    await scannedThrough(block);
    await caughtUp();
    expect(await depositRows(hash)).toEqual([{ credited_by: "confirm", amount: 6n * USDC }]);
    expect(await balance(a)).toBe(6n * USDC);
    expect(await ledgerRows(hash)).toBe(1);
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("asks the node for at most BILLING_DEPOSIT_WATCH_MAX_BLOCKS blocks per log query", () => {
    expect(proxy.logRanges.length).toBeGreaterThan(0);
    for (const [from, to] of proxy.logRanges) {
      expect(to - from + 1n).toBeGreaterThan(0n);
      expect(to - from + 1n).toBeLessThanOrEqual(BigInt(MAX_BLOCKS));
    }
  });

  it("tells the wallet's reader that deposits are credited automatically, and card funding is not configured", async () => {
    const res = await billing.client.getWallet({}, as(newAccount()));
    expect(res.funding).toMatchObject({
      automaticDeposits: true,
      requiredConfirmations: CONFIRMATIONS,
      crypto: { available: true },
      confirmDeposit: { available: true },
      cardCheckout: { available: false, reason: "card_payments_not_configured" },
    });
  });
});

interface RecordingProxy {
  url: string;
  /** [fromBlock, toBlock] of every eth_getLogs call forwarded. */
  logRanges: [bigint, bigint][];
  close(): Promise<void>;
}

/** A real HTTP server in front of the node: forwards every JSON-RPC request and notes eth_getLogs ranges. */
async function recordingProxy(target: string): Promise<RecordingProxy> {
  const logRanges: [bigint, bigint][] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const calls = [JSON.parse(body)].flat() as { method: string; params?: { fromBlock?: string; toBlock?: string }[] }[];
    for (const call of calls) {
      const filter = call.params?.[0];
      if (call.method === "eth_getLogs" && filter?.fromBlock && filter.toBlock) {
        logRanges.push([BigInt(filter.fromBlock), BigInt(filter.toBlock)]);
      }
    }
    const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(upstream.status, { "content-type": "application/json" });
    res.end(await upstream.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logRanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
