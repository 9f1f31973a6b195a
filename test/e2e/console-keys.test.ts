/**
 * The console's key, wallet and assistant screens in a real browser against the real stack: a key made
 * with an allow-list is shown once, permits only its tool, has its calls counted on the usage page, and
 * is refused once revoked; funding by crypto shows the wallet's deposit address and its QR code, with the
 * sign-in's console key, whose revocation on the keys screen ends the sign-in (the gateway makes no other
 * for it); the spending settings refuse a bad value and save a good one; the .mcp.json helper copies the file and
 * the `claude mcp add` line. Every screen is scanned with axe and captured at laptop and phone width.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../harness/http.js";
import {
  type ConsolePage,
  type ConsoleStack,
  callableSettled,
  checkScreen,
  consoleApi,
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
  untilIndexed,
} from "./console-support.js";
import { fund } from "./execution-support.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field and checked with expect
type Json = any;

describe("the console's keys, wallet and assistant screens", () => {
  let s: ConsoleStack;
  let browser: Browser;

  const api = consoleApi(() => s);

  beforeAll(async () => {
    [s, browser] = await Promise.all([startConsoleStack(), launchBrowser()]);
    await untilIndexed(s, "slugify", "text-slugify");
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  it("creates a key with an allow-list, shows it once, counts its calls and refuses it once revoked", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("keys"), "/keys");
    const me = await sessionOf(page);

    // The form (in a drawer: the list comes first): agent, purpose, one builtin tool picked from the
    // catalog, a daily cap in dollars.
    await page.getByRole("button", { name: "New key" }).first().click();
    await page.getByLabel("Name", { exact: true }).fill("slug bot");
    await page.getByLabel("Agent name").fill("Slugger");
    await page.getByLabel("Agent type").selectOption("coding_agent");
    await page.getByLabel("Purpose").fill("Turns titles into slugs for the blog");
    await page.getByLabel("Search the catalog").fill("slugify");
    await page.getByLabel("Search the catalog").press("Enter");
    await page.getByRole("button", { name: "Allow tool slugify" }).click();
    await page.getByRole("button", { name: "Remove tool slugify" }).waitFor();
    await callableSettled(page);
    // A cap that is not a dollar amount is refused beside its field, before anything is sent.
    await page.getByLabel("Daily cap (USD)").fill("12.345");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("The daily cap has more than two decimals").waitFor();
    expect((await api("/api-keys", { token: me.token })).body).toEqual([]);
    await page.getByLabel("Daily cap (USD)").fill("12.34");
    await page.getByRole("button", { name: "Create key" }).click();

    const shown = page.getByTestId("shown-once");
    await shown.waitFor();
    const key = (await shown.textContent())!.trim();
    expect(key).toMatch(/^tp_/);
    await page.getByRole("heading", { name: "slug bot" }).waitFor();

    // What was created, through the API: the allow-list holds slugify's id, the cap is exact cents.
    const found = (await api("/tools/public/search?query=slugify")).body as Json[];
    const slugify = found.find((t) => t.slug === "text-slugify");
    const [listed] = (await api(`/api-keys?organization_id=${me.orgId}`, { token: me.token })).body as Json[];
    expect(listed).toMatchObject({
      name: "slug bot",
      key_prefix: key.slice(0, 8),
      agent_name: "Slugger",
      agent_type: "coding_agent",
      purpose: "Turns titles into slugs for the blog",
      organization_id: me.orgId,
      permissions: {
        allowed_tools: [slugify.id],
        allowed_services: null,
        max_cost_per_call_cents: null,
        daily_spend_limit_cents: 1234,
        require_confirmation: false,
      },
    });
    await checkScreen(page, "keys", page.getByRole("status").filter({ has: shown }));

    // Shown once: after a reload the key is nowhere on the page, the list still names it.
    await page.reload();
    await page.getByRole("heading", { name: "slug bot" }).waitFor();
    expect(await page.getByTestId("shown-once").count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    await page.getByText("Tools: 1 listed, in any service; $12.34 a day at most.").waitFor();

    // The allow-list at work: slugify runs (twice, once failing on its input), another tool is refused.
    const slug = await api("/tools/call/text-slugify", { key, method: "POST", body: { tool_input: { text: "Hello World" } } });
    expect(slug.status).toBe(200);
    expect(slug.body).toMatchObject({ success: true, result: { slug: "hello-world" } });
    const failed = await api("/tools/call/text-slugify", { key, method: "POST", body: { tool_input: { text: "!!!" } } });
    expect(failed.body.success ?? false).toBe(false);
    const other = await api("/tools/call/text-word-count", { key, method: "POST", body: { tool_input: { text: "a b" } } });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe("tool_not_permitted");

    // The usage page shows what the API counts (usage arrives from execution events: wait for it).
    const counted = failed.status === 200 ? 2 : 1;
    await expect
      .poll(async () => (await api(`/api-keys/${listed.id}/usage?days=7`, { token: me.token })).body.calls, { timeout: 20_000 })
      .toBe(counted);
    const usage = (await api(`/api-keys/${listed.id}/usage?days=7`, { token: me.token })).body;
    await page.getByRole("link", { name: "slug bot", exact: true }).click();
    await page.getByRole("heading", { name: "Usage of slug bot" }).waitFor();
    await page.getByLabel("Window").selectOption("7");
    await page.getByRole("heading", { name: "Last 7 days" }).waitFor();
    expect(await page.getByTestId("usage-calls").textContent()).toBe(String(counted));
    const rate = `${Math.round(usage.success_rate * 1000) / 10}%`;
    expect(await page.getByTestId("usage-success-rate").textContent()).toBe(rate);
    const toolRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "slugify" }) });
    expect(await toolRow.getByRole("cell").allTextContents()).toEqual([
      "slugify",
      usage.top_tools[0].service_name,
      String(counted),
      String(usage.top_tools[0].successes),
      `${Math.round((usage.top_tools[0].successes / counted) * 1000) / 10}%`,
    ]);
    await page.getByRole("img", { name: `Calls by tool: slugify ${counted} call${counted === 1 ? "" : "s"}` }).waitFor();
    // Per day: a bar for each UTC date the 7 days touch, today's with the calls, and the chart's table.
    const today = usage.daily[usage.daily.length - 1];
    expect(usage.daily).toHaveLength(8);
    expect(today.calls).toBe(counted);
    const calls = page.getByRole("figure", { name: "Calls per day" });
    await calls
      .getByRole("img", { name: `Calls per day: ${counted} call${counted === 1 ? "" : "s"} in the last 7 days`, exact: false })
      .waitFor();
    await calls.getByText("Show the numbers").click();
    const rows = calls.getByRole("row");
    expect(await rows.count()).toBe(9);
    expect(await rows.last().getByRole("cell").allTextContents()).toEqual([
      today.date,
      `${counted} call${counted === 1 ? "" : "s"}`,
    ]);
    expect(await rows.nth(1).getByRole("cell").allTextContents()).toEqual([usage.daily[0].date, "0 calls"]);
    await checkScreen(page, "key-usage");

    // Revoke, with its confirmation step; the key is refused right away.
    await page.getByRole("link", { name: "All keys" }).click();
    await page.getByRole("button", { name: "Revoke slug bot", exact: true }).click();
    await page.getByRole("button", { name: "Revoke slug bot?" }).click();
    await page.getByText("No keys in this organization yet.").waitFor();
    const refused = await api("/tools/call/text-slugify", { key, method: "POST", body: { tool_input: { text: "again" } } });
    expect(refused.status).toBe(401);
    await page.getByLabel("Show revoked keys").check();
    await page.getByRole("heading", { name: "slug bot" }).waitFor();
    expectClean(c);
    await c.close();
  });

  it("funds by crypto: the wallet's deposit address, its network and a QR code", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("wallet"), "/wallet");
    const me = await sessionOf(page);
    await page.getByTestId("wallet-balance").waitFor();
    expect(await page.getByTestId("wallet-balance").textContent()).toBe("0.00 USDC");

    await page.getByRole("button", { name: "Show the deposit address" }).click();
    const address = (await page.getByTestId("deposit-address").textContent())!;
    const wallet = (await api("/agents/wallet", { token: me.token })).body;
    expect(address).toBe(wallet.deposit_address);
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await page.getByTestId("deposit-network").textContent()).toContain(wallet.network);
    const qr = page.getByRole("img", { name: `QR code of the deposit address ${address}` });
    await qr.waitFor();
    const box = await qr.boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    await page.getByRole("button", { name: "Copy the address" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(address);

    // A card payment completes (Stripe's signed webhook): the balance and the ledger show it exactly.
    const created = await api("/api-keys", { token: me.token, method: "POST", body: { name: "funding" } });
    const exec = { stack: s.stack, call: gatewayClient(s.stack.gatewayUrl), stop: s.stop };
    await fund(exec, { id: me.accountId, key: created.body.key }, 1234);
    await page.reload();
    await page.getByText("12.34 USDC").first().waitFor();
    expect(await page.getByTestId("wallet-balance").textContent()).toBe("12.34 USDC");
    const ledger = page.getByRole("table", { name: "The latest 20 ledger entries, newest first" });
    // The ledger is its own read: the balance can show before its rows do.
    await ledger.getByRole("cell", { name: "Card payment" }).first().waitFor();
    const entry = ledger.getByRole("row").nth(1);
    const cells = await entry.getByRole("cell").allTextContents();
    expect(cells.slice(1, 4)).toEqual(["Card payment", "+12.34", "12.34"]);
    await page.getByRole("button", { name: "Show the deposit address" }).click();
    await page.getByTestId("deposit-address").waitFor();
    await checkScreen(page, "wallet", page.getByRole("heading", { name: "Add funds" }));
    await api(`/api-keys/${created.body.id}`, { token: me.token, method: "DELETE" });

    // The funding ran with this sign-in's console key, which the keys screen marks. The gateway makes no
    // other for this sign-in once it is revoked: revoking it ends the sign-in, as the form warns.
    await page.getByRole("link", { name: "API keys" }).click();
    const card = page.getByRole("listitem").filter({ hasText: "console key of this sign-in" });
    await card.getByRole("heading", { name: "Toolport console" }).waitFor();
    const [consoleKey] = ((await api(`/api-keys?organization_id=${me.orgId}`, { token: me.token })).body as Json[]).filter(
      (k) => k.console_key === "session",
    );
    await card.getByRole("button", { name: "Revoke Toolport console", exact: true }).click();
    await card.getByText("revoking it ends the sign-in").waitFor();
    await card.getByRole("button", { name: "Revoke Toolport console?" }).click();
    await page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    await page.getByText("You revoked the console key of your sign-in, which ended it.").waitFor();
    expect(await page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('toolport.console-key.'))")).toEqual([]);
    const listed = (await api(`/api-keys?organization_id=${me.orgId}&include_revoked=true`, { token: me.token })).body as Json[];
    expect(listed.find((k) => k.id === consoleKey.id)?.revoked_at).toEqual(expect.any(String));
    expectClean(c);
    await c.close();
  });

  it("refuses a bad spending setting beside the form and saves a good one", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("spender"), "/wallet");
    const me = await sessionOf(page);
    const perCall = page.getByLabel("Per-call maximum (USDC)");
    await expect.poll(() => perCall.inputValue()).toBe("5");
    expect(await page.getByLabel("Daily limit (USDC)").inputValue()).toBe("");

    await perCall.fill("7.5");
    await page.getByRole("button", { name: "Save spending settings" }).click();
    await page.getByText("The per-call maximum can be at most 5.00 USDC.").waitFor();
    expect(await perCall.getAttribute("aria-invalid")).toBe("true");
    await perCall.fill("0.1234567");
    await page.getByRole("button", { name: "Save spending settings" }).click();
    await page.getByText("The per-call maximum has more than six decimals").waitFor();
    expect((await api("/x402/settings", { token: me.token })).body.max_per_call_atomic).toBe(5_000_000);

    await perCall.fill("0.25");
    await page.getByLabel("Daily limit (USDC)").fill("20.000001");
    await page.getByRole("button", { name: "Save spending settings" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await api("/x402/settings", { token: me.token })).body).toMatchObject({
      max_per_call_atomic: 250_000,
      daily_limit_atomic: 20_000_001,
    });
    await page.reload();
    await expect.poll(() => page.getByLabel("Per-call maximum (USDC)").inputValue()).toBe("0.25");
    expect(await page.getByLabel("Daily limit (USDC)").inputValue()).toBe("20.000001");

    // Emptying the daily limit removes it.
    await page.getByLabel("Daily limit (USDC)").fill("");
    await page.getByRole("button", { name: "Save spending settings" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await api("/x402/settings", { token: me.token })).body.daily_limit_atomic).toBeNull();
    expectClean(c);
    await c.close();
  });

  it("shows the .mcp.json and the claude mcp add line, each with a copy button", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("assistant"), "/mcp");
    const me = await sessionOf(page);
    const answer = (await api(`/coding-client/mcp-json?org_id=${me.orgId}`, { token: me.token })).body;
    const file = page.getByTestId("mcp-json");
    await file.waitFor();
    expect(JSON.parse((await file.textContent())!)).toEqual(answer.mcp_json);
    expect(answer.mcp_json.mcpServers.danube.headers["svc-org-id"]).toBe(me.orgId);

    const command = (await page.getByTestId("mcp-command").textContent())!;
    // Single quotes: the shell must pass the placeholder on, not expand the key into the project's file.
    expect(command).toBe(
      `claude mcp add --transport http --scope project danube ${s.stack.mcpUrl} ` +
        `--header 'svc-api-key: \${DANUBE_API_KEY}' --header 'svc-org-id: ${me.orgId}'`,
    );
    expect(answer.instructions).toContain(command);
    expect(await page.getByTestId("mcp-export").textContent()).toBe("export DANUBE_API_KEY=tp_your_key");

    await page.getByRole("button", { name: "Copy the command" }).click();
    await page.getByRole("button", { name: /^Copied/ }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(command);
    await page.getByRole("button", { name: "Copy .mcp.json" }).click();
    expect(JSON.parse((await page.evaluate("navigator.clipboard.readText()")) as string)).toEqual(answer.mcp_json);
    await page.getByRole("link", { name: "Create an API key" }).waitFor();
    await checkScreen(page, "mcp");
    expectClean(c);
    await c.close();
  });
});
