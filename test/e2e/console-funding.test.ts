/**
 * Funding that ends somewhere, in a real browser against the real stack and a real EVM node (Hardhat,
 * chain 8453, a solc-compiled 6-decimal ERC-20 as USDC): with no Stripe key the wallet screen shows card
 * funding as unavailable, with the reason the API gives, before anyone tries it; a USDC transfer to the
 * wallet's deposit address is confirmed by its hash in the console's form and the balance rises by
 * exactly the amount, once (a second confirm is refused and changes nothing). At 1280x800 and 390x844,
 * scanned with axe. The deposit watcher is off here so the confirmation by hash is what credits.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvmNode, startEvmNode } from "../../services/billing/test/evm.js";
import { gatewayClient } from "../harness/http.js";
import {
  type ConsoleStack,
  expectClean,
  LAPTOP,
  launchBrowser,
  newPerson,
  openConsole,
  PHONE,
  screenshot,
  seriousViolations,
  sessionOf,
  signUp,
  startConsoleStack,
} from "./console-support.js";

/**
 * xpub of m/44'/60'/0' of the BIP-39 test mnemonic "abandon ×11 about"; not Hardhat's development
 * mnemonic, whose first child is the node's deployer (the minter of the test's tokens).
 */
const XPUB = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt";

type Contract = Awaited<ReturnType<EvmNode["deployToken"]>>;

describe("the console's wallet funding", () => {
  let s: ConsoleStack;
  let browser: Browser;
  let evm: EvmNode;
  let usdc: Contract;

  beforeAll(async () => {
    evm = await startEvmNode();
    usdc = await evm.deployToken("USDC");
    [s, browser] = await Promise.all([
      startConsoleStack({
        STRIPE_SECRET_KEY: "",
        BILLING_DEPOSIT_XPUB: XPUB,
        BILLING_USDC_CONTRACT: await usdc.getAddress(),
        BILLING_RPC_URL: evm.url,
        BILLING_DEPOSIT_CONFIRMATIONS: "2",
        BILLING_DEPOSIT_WATCH: "false",
      }),
      launchBrowser(),
    ]);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await evm?.stop();
  });

  /** Mints `amount` and sends it to `to`; returns the transfer's hash. */
  async function send(to: string, amount: bigint): Promise<string> {
    await (await usdc.getFunction("mint")(await evm.deployer.getAddress(), amount)).wait();
    const tx = await usdc.getFunction("transfer")(to, amount);
    await tx.wait();
    return tx.hash as string;
  }

  for (const [label, viewport] of [
    ["laptop", LAPTOP],
    ["phone", PHONE],
  ] as const) {
    it(`shows card funding unavailable and confirms a deposit by hash (${label})`, async () => {
      const c = await openConsole(browser, s, viewport);
      const { page } = c;
      await signUp(page, s, newPerson(`funder-${label}`), "/wallet");
      const me = await sessionOf(page);
      await page.getByTestId("wallet-balance").waitFor();
      expect(await page.getByTestId("wallet-balance").textContent()).toBe("0.00 USDC");

      // The API says why card funding is unavailable; the screen says the same, and offers no checkout.
      const call = gatewayClient(s.stack.gatewayUrl);
      const wallet = (await call("GET", "/agents/wallet", { token: me.token })).body;
      expect(wallet.funding.card_checkout).toMatchObject({ available: false, reason: "card_payments_not_configured" });
      expect(wallet.funding).toMatchObject({ automatic_deposits: false, required_confirmations: 2 });
      const unavailable = page.getByTestId("card-unavailable");
      await unavailable.waitFor();
      expect(await unavailable.textContent()).toBe(wallet.funding.card_checkout.message);
      await page.getByText("card_payments_not_configured").waitFor();
      expect(await page.getByRole("button", { name: "Create a checkout link" }).count()).toBe(0);
      // And the API refuses it just as the screen said.
      const key = (await call("POST", "/api-keys", { token: me.token, body: { name: "card" } })).body.key;
      const card = await call("POST", "/agents/wallets/fund", { key, body: { method: "card_checkout", amount_cents: 500 } });
      expect(card.status).toBe(503);
      expect(card.body.error.code).toBe("card_payments_not_configured");

      // The deposit address, and the hint that a deposit is confirmed by its hash here.
      await page.getByRole("button", { name: "Show the deposit address" }).click();
      const address = (await page.getByTestId("deposit-address").textContent())!;
      expect(address).toBe(wallet.deposit_address);
      expect(await page.getByTestId("deposit-hint").textContent()).toContain("confirm it by its transaction hash");

      // A transfer of 3.5 USDC, confirmed enough (2 blocks: its own and one more).
      const hash = await send(address, 3_500_000n);
      await evm.mine(1);

      // A malformed hash is caught in the form, nothing sent.
      await page.getByLabel("Transaction hash").fill("0x1234");
      await page.getByLabel("Amount sent (USDC)").fill("3.5");
      await page.getByRole("button", { name: "Confirm the deposit" }).click();
      await page.getByText("Enter the transaction hash: 0x followed by 64 hexadecimal characters.").waitFor();

      await page.getByLabel("Transaction hash").fill(hash);
      await page.getByRole("button", { name: "Confirm the deposit" }).click();
      const credited = page.getByTestId("deposit-credited");
      await credited.waitFor();
      expect(await credited.textContent()).toBe("Credited 3.50 USDC: the balance is now 3.50 USDC.");
      await page.getByText("3.50 USDC", { exact: true }).first().waitFor();
      await expect.poll(() => page.getByTestId("wallet-balance").textContent()).toBe("3.50 USDC");
      const entry = page.getByRole("table", { name: "The latest 20 ledger entries, newest first" }).getByRole("row").nth(1);
      await entry.waitFor();
      expect((await entry.getByRole("cell").allTextContents()).slice(1, 5)).toEqual([
        "Deposit",
        "+3.50",
        "3.50",
        hash.toLowerCase(),
      ]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole("heading", { name: "Add funds" }).evaluate((h) => h.scrollIntoView());
      await screenshot(page, `wallet-funding-${label}`);

      // Confirming the same transfer again is refused, and the balance stays.
      await page.getByRole("button", { name: "Confirm the deposit" }).click();
      await page.getByRole("alert").getByText("deposit_already_credited").waitFor();
      const after = (await call("GET", "/agents/wallet", { token: me.token })).body;
      expect(after.balance_atomic).toBe(3_500_000);
      expect(await page.getByTestId("wallet-balance").textContent()).toBe("3.50 USDC");
      expectClean(c);
      await c.close();
    });
  }
});
