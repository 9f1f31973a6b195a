/**
 * Crypto funding and deposit confirmation against a real EVM node (Hardhat, chain 8453) with a standard
 * ERC-20 deployed as USDC: the deposit address is the caller's own, a transfer is credited once per
 * transaction hash after the configured confirmations, and anything else is refused without a credit.
 */
import { Code } from "@connectrpc/connect";
import { type Contract, getAddress, HDNodeWallet, Mnemonic } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvmNode, startEvmNode } from "./evm.js";
import {
  as,
  type BillingUnderTest,
  derivedBalances,
  healthyLedger,
  ledgerFacts,
  newAccount,
  refusal,
  startBilling,
  USDC,
} from "./support.js";

const xpub = HDNodeWallet.fromMnemonic(
  Mnemonic.fromPhrase("test test test test test test test test test test test junk"),
  "m/44'/60'/0'",
).neuter().extendedKey;

let evm: EvmNode;
let usdc: Contract;
let otherToken: Contract;
let billing: BillingUnderTest;

beforeAll(async () => {
  evm = await startEvmNode();
  usdc = await evm.deployToken("USDC");
  otherToken = await evm.deployToken("FAKE");
  billing = await startBilling({
    BILLING_DEPOSIT_XPUB: xpub,
    BILLING_USDC_CONTRACT: await usdc.getAddress(),
    BILLING_RPC_URL: evm.url,
    BILLING_DEPOSIT_CONFIRMATIONS: "3",
    // Confirming by hash alone; the watcher crediting by itself has its own test (deposit-watcher).
    BILLING_DEPOSIT_WATCH: "false",
  });
});
afterAll(async () => {
  await billing?.stop();
  await evm?.stop();
});

async function depositAddress(account: string): Promise<string> {
  const res = await billing.client.fundWallet({ method: "crypto" }, as(account));
  return res.depositAddress!;
}

/** Mints `amount` to the deployer and sends it to `to`; returns the transfer's hash. */
async function send(token: Contract, to: string, amount: bigint): Promise<string> {
  await (await token.getFunction("mint")(await evm.deployer.getAddress(), amount)).wait();
  const tx = await token.getFunction("transfer")(to, amount);
  await tx.wait();
  return tx.hash as string;
}

describe("crypto funding", () => {
  it("returns the caller's own deposit address, the network, the USDC contract and the balance", async () => {
    const a = newAccount();
    const res = await billing.client.fundWallet({ method: "crypto", amountCents: 5n }, as(a));
    expect(res.network).toBe("eip155:8453");
    expect(res.usdcContract).toBe(getAddress(await usdc.getAddress()));
    expect(res.balanceUsdc).toBe("0.000000");
    expect(res.checkoutUrl).toBeUndefined();
    expect(res.depositAddress).toBe(getAddress(res.depositAddress!)); // EIP-55 checksummed
    // The same caller always gets the same address; another caller another one.
    expect(await depositAddress(a)).toBe(res.depositAddress);
    expect(await depositAddress(newAccount())).not.toBe(res.depositAddress);
    // The address is the xpub's child 0/<index> of this wallet.
    const { rows } = await billing.pool.query("SELECT deposit_index FROM wallets WHERE account_id = $1", [a]);
    const expected = HDNodeWallet.fromExtendedKey(xpub).deriveChild(0).deriveChild(Number(rows[0].deposit_index)).address;
    expect(res.depositAddress).toBe(expected);
  });
});

describe("confirm deposit", () => {
  it("credits a confirmed transfer once; a second confirm of the hash is a 409 and never a second credit", async () => {
    const a = newAccount();
    const address = await depositAddress(a);
    const hash = await send(usdc, address, 12_500_000n);

    // Mined in one block: 1 confirmation of the 3 required.
    expect(
      await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 12_500_000n }, as(a))),
    ).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "deposit_not_confirmed",
      details: { confirmations: 1, required_confirmations: 3 },
    });
    await evm.mine(2);
    const res = await billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 12_500_000n }, as(a));
    expect(res).toMatchObject({ balanceAtomic: 12_500_000n, balanceUsdc: "12.500000" });
    expect(res.entry).toMatchObject({
      amountAtomic: 12_500_000n,
      balanceAfterAtomic: 12_500_000n,
      reference: hash.toLowerCase(),
    });

    expect(
      await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 12_500_000n }, as(a))),
    ).toMatchObject({
      code: Code.AlreadyExists,
      reason: "deposit_already_credited",
    });
    // Upper-case spelling of the same hash is the same hash.
    expect(
      (
        await refusal(
          billing.client.confirmDeposit({ txHash: `0x${hash.slice(2).toUpperCase()}`, expectedAmountAtomic: 12_500_000n }, as(a)),
        )
      ).reason,
    ).toBe("deposit_already_credited");
    const wallet = (await billing.client.getWallet({}, as(a))).wallet!;
    expect(wallet.balanceAtomic).toBe(12_500_000n);
    expect(await derivedBalances(billing.pool, wallet.walletId)).toEqual({ available: 12_500_000n, held: 0n });
    expect(await ledgerFacts(billing.pool)).toEqual(healthyLedger);
  });

  it("credits once when the same hash is confirmed many times at once", async () => {
    const a = newAccount();
    const hash = await send(usdc, await depositAddress(a), 3n * USDC);
    await evm.mine(3);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 3n * USDC }, as(a))),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect((await refusal(Promise.reject(r.reason))).reason).toBe("deposit_already_credited");
    }
    expect((await billing.client.getBalance({ accountId: a })).balanceAtomic).toBe(3n * USDC);
  });

  it("refuses a mismatched amount without crediting, then credits the right one", async () => {
    const a = newAccount();
    const hash = await send(usdc, await depositAddress(a), 2n * USDC);
    await evm.mine(3);
    expect(await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 3n * USDC }, as(a)))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "deposit_amount_mismatch",
      details: { field: "expected_amount_atomic" },
    });
    expect((await billing.client.getBalance({ accountId: a })).balanceAtomic).toBe(0n);
    await billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 2n * USDC }, as(a));
    expect((await billing.client.getBalance({ accountId: a })).balanceAtomic).toBe(2n * USDC);
  });

  it("refuses a transfer to another address, even another wallet's deposit address", async () => {
    const a = newAccount();
    const b = newAccount();
    await depositAddress(a);
    const hash = await send(usdc, await depositAddress(b), USDC);
    await evm.mine(3);
    expect(await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: USDC }, as(a)))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "deposit_address_mismatch",
    });
    expect((await billing.client.getBalance({ accountId: a })).balanceAtomic).toBe(0n);
    // The rightful owner can still confirm it.
    await billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: USDC }, as(b));
    expect((await billing.client.getBalance({ accountId: b })).balanceAtomic).toBe(USDC);
  });

  it("refuses a transfer of another token to the deposit address", async () => {
    const a = newAccount();
    const hash = await send(otherToken, await depositAddress(a), USDC);
    await evm.mine(3);
    expect(await refusal(billing.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: USDC }, as(a)))).toMatchObject({
      reason: "deposit_transfer_not_found",
    });
  });

  it("answers a hash the network does not know as not confirmed", async () => {
    const a = newAccount();
    expect(
      await refusal(billing.client.confirmDeposit({ txHash: `0x${"ab".repeat(32)}`, expectedAmountAtomic: USDC }, as(a))),
    ).toMatchObject({ code: Code.FailedPrecondition, reason: "deposit_not_confirmed", details: { confirmations: 0 } });
  });
});

describe("without configuration", () => {
  it("answers 503-class errors when the deposit wallet or the deposit network is not configured", async () => {
    const bare = await startBilling({});
    const withoutRpc = await startBilling({ BILLING_DEPOSIT_XPUB: xpub });
    try {
      expect(await refusal(bare.client.fundWallet({ method: "crypto" }, as("x")))).toMatchObject({
        code: Code.Unavailable,
        reason: "deposit_wallet_not_configured",
      });
      expect(await refusal(bare.client.fundWallet({ method: "card_checkout", amountCents: 500n }, as("x")))).toMatchObject({
        code: Code.Unavailable,
        reason: "card_payments_not_configured",
      });
      const hash = `0x${"cd".repeat(32)}`;
      expect(await refusal(withoutRpc.client.confirmDeposit({ txHash: hash, expectedAmountAtomic: 1n }, as("x")))).toMatchObject({
        code: Code.Unavailable,
        reason: "deposit_network_not_configured",
      });
      // Wallets made before the xpub existed get their address once it is configured.
      const { wallet } = await bare.client.createWallet({ accountId: "early" });
      expect(wallet!.depositAddress).toBeUndefined();
    } finally {
      await bare.stop();
      await withoutRpc.stop();
    }
  });
});
