/**
 * The console's keys screen and the two things issue 29 asks of it, in a real browser against the real
 * stack. Allow-lists have one meaning, both must match: while a person picks, the form shows the count and
 * the first callable tools as `POST /v1/api-keys/callable-tools` answers them (every tool with nothing
 * picked, a service's tools, one tool within its own service, nothing for a tool within another service,
 * with a warning), and the key made from each pick calls exactly that (200 inside, 403
 * `tool_not_permitted` outside). Console keys do not pile up: two screens of one sign-in needing the key at
 * the same moment get one key; sign-out revokes it (the sign-in's route then answers 401, and another tab
 * of the ended sign-in returns to the sign-in form saying why when it next needs the key); the key
 * list tells this sign-in's console key from another sign-in's, a left-over of an earlier console from
 * both, and an expired key from a live one. Each new screen state is scanned with axe and captured.
 */
import { createPool } from "@toolport/kit/pg";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsolePage,
  type ConsoleStack,
  callableSettled,
  checkScreen,
  expectClean,
  LAPTOP,
  launchBrowser,
  newPerson,
  openConsole,
  PHONE,
  type SignedIn,
  screenshot,
  seriousViolations,
  sessionOf,
  signIn,
  signUp,
  startConsoleStack,
} from "./console-support.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field and checked with expect
type Json = any;

describe("the console's allow-lists and console keys", () => {
  let s: ConsoleStack;
  let browser: Browser;
  /** Builtin tools and services by slug (ids and names), read from the public catalog. */
  const tools: Record<string, { id: string; name: string; service_id: string }> = {};
  const services: Record<string, { id: string; name: string }> = {};

  const api = async (
    path: string,
    init: { token?: string; key?: string; org?: string; method?: string; body?: unknown } = {},
  ) => {
    const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, {
      method: init.method ?? "GET",
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.key ? { "svc-api-key": init.key } : {}),
        ...(init.org ? { "svc-org-id": init.org } : {}),
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };

  /** What the gateway says a pair of allow-lists lets through (the number the console must show). */
  const callable = async (me: SignedIn, lists: { allowed_services: string[] | null; allowed_tools: string[] | null }) => {
    const res = await api("/api-keys/callable-tools", { token: me.token, org: me.orgId, method: "POST", body: lists });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { count: number; tools: Json[]; warnings: string[] };
  };

  /** Calls a builtin tool by slug with `key`: the status and the error code, if any. */
  const call = async (key: string, slug: string, input: Record<string, unknown>) => {
    const res = await api(`/tools/call/${slug}`, { key, method: "POST", body: { tool_input: input } });
    return { status: res.status, code: res.body?.error?.code as string | undefined };
  };

  /** Console keys of the person (this organization), revoked ones included. */
  const consoleKeys = async (me: SignedIn) => {
    const res = await api(`/api-keys?organization_id=${me.orgId}&include_revoked=true`, { token: me.token });
    expect(res.status).toBe(200);
    return (res.body as Json[]).filter((k) => k.console_key !== null);
  };

  beforeAll(async () => {
    [s, browser] = await Promise.all([startConsoleStack(), launchBrowser()]);
    // The builtin tools are searchable once the catalog has indexed them.
    for (const end = Date.now() + 30_000; ; ) {
      const found = await Promise.all(
        ["slugify", "word count", "uuid"].map((q) => api(`/tools/public/search?query=${encodeURIComponent(q)}`)),
      );
      for (const t of found.flatMap((f) => (Array.isArray(f.body) ? f.body : []))) tools[t.slug] = t;
      if (tools["text-slugify"] && tools["text-word-count"] && tools["data-uuid-generate"]) break;
      if (Date.now() > end) throw new Error("the builtin tools never appeared in the public search");
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const svc of (await api("/services/public?limit=500")).body as Json[]) services[svc.id] = svc;
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  /** The callable set the form shows once the picking has settled: the count, or null while it counts. */
  const shownCount = async (page: Page): Promise<number | null> => {
    const box = page.getByTestId("callable");
    if ((await box.getAttribute("aria-busy")) !== "false") return null;
    const count = box.getByTestId("callable-count");
    return (await count.count()) > 0 ? Number(await count.textContent()) : null;
  };

  it("shows live what the picked allow-lists let through, as the gateway counts it and as the key is held to", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("lists"), "/keys");
    await page.getByRole("button", { name: "New key" }).first().click();
    const me = await sessionOf(page);
    const slugify = tools["text-slugify"]!;
    const wordCount = tools["text-word-count"]!;
    const uuid = tools["data-uuid-generate"]!;
    const text = services[slugify.service_id]!;
    const data = services[uuid.service_id]!;
    expect(wordCount.service_id).toBe(text.id);
    expect(data.id).not.toBe(text.id);

    const box = page.getByTestId("callable");
    // The create form is in a drawer: opened before picking, closed when a key is made.
    const openForm = async () => {
      if (!(await page.getByLabel("Search the catalog").isVisible())) {
        await page.getByRole("button", { name: "New key" }).first().click();
      }
    };
    const pickService = async (query: string, service: { name: string }) => {
      await openForm();
      await page.getByLabel("Search the catalog").fill(query);
      await page.getByLabel("Search the catalog").press("Enter");
      await page
        .getByRole("button", { name: `Allow service ${service.name} (every tool)` })
        .first()
        .click();
      await page.getByRole("button", { name: `Remove service ${service.name}` }).waitFor();
      await callableSettled(page);
    };
    const pickTool = async (query: string, tool: { name: string }) => {
      await openForm();
      await page.getByLabel("Search the catalog").fill(query);
      await page.getByLabel("Search the catalog").press("Enter");
      await page.getByRole("button", { name: `Allow tool ${tool.name}`, exact: true }).click();
      await page.getByRole("button", { name: `Remove tool ${tool.name}` }).waitFor();
      await callableSettled(page);
    };
    /** Creates the key from the current picks; answers its secret and how the list summarises it. */
    const create = async (name: string) => {
      await page.getByLabel("Name", { exact: true }).fill(name);
      await page.getByRole("button", { name: "Create key" }).click();
      const card = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name, exact: true }) });
      await card.waitFor();
      const key = (await page.getByTestId("shown-once").textContent())!.trim();
      const summary = (await card.locator(".key-permissions dd").textContent())!;
      // The key is shown in a dialog, dismissed before going on.
      await page.getByRole("button", { name: "Done, I have copied it" }).click();
      return { key, summary };
    };

    // Nothing picked: every tool, no warning, and only then the "every tool" sentence.
    const every = await callable(me, { allowed_services: null, allowed_tools: null });
    expect(every.count).toBeGreaterThanOrEqual(15);
    expect(every.warnings).toEqual([]);
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(every.count);
    expect(await box.textContent()).toContain("Nothing picked: the key may call every tool");
    expect(await page.getByRole("alert").count()).toBe(0);

    // One service: its tools, counted.
    await pickService("slugify", text);
    const ofText = await callable(me, { allowed_services: [text.id], allowed_tools: null });
    expect(ofText.count).toBeGreaterThan(1);
    expect(ofText.count).toBeLessThan(every.count);
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(ofText.count);
    expect(await box.textContent()).not.toContain("Nothing picked");
    const listed = box.getByRole("list", { name: "Tools the key may call" }).getByRole("listitem");
    expect(await listed.count()).toBe(Math.min(ofText.count, 10));
    expect(await listed.first().textContent()).toBe(`${ofText.tools[0].name} in ${text.name}`);
    expect(await page.getByRole("alert").count()).toBe(0);
    const serviceKey = await create("text only");
    expect(serviceKey.summary).toBe("Tools: every tool of 1 listed service.");
    expect(await call(serviceKey.key, "text-word-count", { text: "a b" })).toEqual({ status: 200, code: undefined });
    expect(await call(serviceKey.key, "data-uuid-generate", {})).toEqual({ status: 403, code: "tool_not_permitted" });

    // One tool and its own service: that one tool.
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(every.count);
    await pickTool("slugify", slugify);
    await pickService("slugify", text);
    const own = await callable(me, { allowed_services: [text.id], allowed_tools: [slugify.id] });
    expect(own).toMatchObject({ count: 1, tools: [{ id: slugify.id, name: slugify.name, service_name: text.name }] });
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(1);
    expect(await listed.allTextContents()).toEqual([`${slugify.name} in ${text.name}`]);
    const oneKey = await create("slugify only");
    expect(oneKey.summary).toBe("Tools: 1 listed, within 1 service.");
    expect(await call(oneKey.key, "text-slugify", { text: "Hello World" })).toEqual({ status: 200, code: undefined });
    expect(await call(oneKey.key, "text-word-count", { text: "a b" })).toEqual({ status: 403, code: "tool_not_permitted" });

    // One tool and another service: nothing, said in an alert with the gateway's warnings.
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(every.count);
    await pickTool("slugify", slugify);
    await pickService("uuid", data);
    const none = await callable(me, { allowed_services: [data.id], allowed_tools: [slugify.id] });
    expect(none.count).toBe(0);
    expect(none.warnings.length).toBeGreaterThan(0);
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(0);
    const alert = page.getByRole("alert").filter({ hasText: "This key would be able to call nothing." });
    await alert.waitFor();
    for (const warning of none.warnings) expect(await alert.textContent()).toContain(warning);
    expect(await box.textContent()).not.toContain("Nothing picked");
    await checkScreen(page, "keys-callable", page.getByRole("group", { name: "Allowed tools and services" }));
    const noneKey = await create("nothing at all");
    expect(noneKey.summary).toBe("Tools: 1 listed, within 1 service.");
    expect(await call(noneKey.key, "text-slugify", { text: "Hello World" })).toEqual({ status: 403, code: "tool_not_permitted" });
    expect(await call(noneKey.key, "data-uuid-generate", {})).toEqual({ status: 403, code: "tool_not_permitted" });

    // The key page says the same, from the key's own lists.
    await page.getByRole("link", { name: "slugify only", exact: true }).click();
    await page.getByRole("heading", { name: "Usage of slugify only" }).waitFor();
    expect(await page.getByTestId("key-permissions").textContent()).toBe("Tools: 1 listed, within 1 service.");
    await page.getByText("Calls only tools listed that are also in the listed services.").waitFor();
    await expect.poll(() => shownCount(page), { timeout: 10_000 }).toBe(1);
    await page.getByRole("link", { name: "All keys" }).click();
    await page.getByRole("link", { name: "nothing at all", exact: true }).click();
    await page.getByRole("heading", { name: "Usage of nothing at all" }).waitFor();
    await page.getByRole("alert").filter({ hasText: "This key would be able to call nothing." }).waitFor();
    expectClean(c);
    await c.close();
  });

  it("gives two screens of one sign-in that need the console key at once the same, single key", async () => {
    const c = await openConsole(browser, s);
    await signUp(c.page, s, newPerson("screens"), "/keys");
    const me = await sessionOf(c.page);
    expect(await consoleKeys(me)).toEqual([]);
    const second = await c.context.newPage();
    const slugify = tools["text-slugify"]!;

    // Both open the tool page (it reads the tool with the console key) and run it, at the same moment. The
    // browser holds each screen's request for the key until both have asked, then lets both go at once:
    // the gateway, not this browser, must make them one key.
    let asked = 0;
    let release = () => {};
    const both = new Promise<void>((resolve) => {
      release = resolve;
    });
    await c.context.route("**/v1/auth/console-key", async (route) => {
      if (++asked === 2) release();
      await Promise.race([both, new Promise((r) => setTimeout(r, 10_000))]);
      await route.continue();
    });
    await Promise.all([c.page, second].map((p) => p.goto(`${s.url}/tools/${slugify.id}`)));
    await Promise.all([c.page, second].map((p) => p.getByLabel("text (required)").fill("Two Screens")));
    await Promise.all([c.page, second].map((p) => p.getByRole("button", { name: "Run" }).click()));
    for (const p of [c.page, second]) {
      await p.getByRole("heading", { name: "Result", exact: true }).waitFor();
      expect(await p.locator(".call-result .json-tree").textContent()).toContain('"two-screens"');
    }
    expect(asked).toBe(2);
    await c.context.unrouteAll();
    const made = await consoleKeys(me);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      console_key: "session",
      revoked_at: null,
      permissions: null,
      expires_at: expect.any(String),
    });
    // The key both screens hold is that one.
    const cached = JSON.parse(
      (await second.evaluate(`localStorage.getItem("toolport.console-key.${me.accountId}.${me.orgId}")`)) as string,
    ) as { id: string };
    expect(cached.id).toBe(made[0].id);

    // Asked again for this sign-in (here over HTTP, as a third screen would), the gateway gives it back.
    const again = await api("/auth/console-key", { token: me.token, org: me.orgId, method: "POST", body: {} });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: made[0].id, console_key: "session", organization_id: me.orgId });
    expect(await consoleKeys(me)).toHaveLength(1);

    await second.close();
    await c.page.goto(`${s.url}/keys`);
    const card = c.page.getByRole("listitem").filter({ hasText: "console key of this sign-in" });
    expect(await card.getByRole("heading").textContent()).toBe(made[0].name);
    expectClean(c);
    await c.close();
  });

  it("revokes the console key on sign-out and marks other sign-ins' keys, left-overs and expired keys", async () => {
    const person = newPerson("signout");
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, person, "/wallet");
    const me = await sessionOf(page);

    // A left-over of the old console (a key per browser, no end), marked as the migration marks them.
    const old = await api("/api-keys", {
      token: me.token,
      method: "POST",
      body: { name: "Toolport console", organization_id: me.orgId },
    });
    expect(old.status, JSON.stringify(old.body)).toBe(200);
    const db = createPool(s.stack.env.IDENTITY_DATABASE_URL!, 1);
    try {
      await db.query("UPDATE api_keys SET console_session = 'left_over' WHERE id = $1", [old.body.id]);
    } finally {
      await db.end();
    }
    // Another sign-in of the same person (another browser), with its console key.
    const login = await api("/auth/login", { method: "POST", body: { email: person.email, password: person.password } });
    const elsewhere = await api("/auth/console-key", {
      token: login.body.access_token,
      method: "POST",
      body: { organization_id: me.orgId },
    });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    expect(elsewhere.body.console_key).toBe("session");

    // This sign-in's key, made when funding needs it.
    await page.getByRole("button", { name: "Show the deposit address" }).click();
    await page.getByTestId("deposit-address").waitFor();
    const mine = (await consoleKeys(me)).filter((k) => k.id !== old.body.id && k.id !== elsewhere.body.id);
    expect(mine).toHaveLength(1);
    expect(mine[0].console_key).toBe("session");
    const cached = JSON.parse(
      (await page.evaluate(`localStorage.getItem("toolport.console-key.${me.accountId}.${me.orgId}")`)) as string,
    ) as { id: string; key: string };
    expect(cached.id).toBe(mine[0].id);
    expect((await api("/agents/wallet", { key: cached.key })).status).toBe(200);

    // The list: agents' keys apart from the console's, each console key for what it is.
    await page.getByRole("link", { name: "API keys" }).click();
    const section = page.getByRole("region", { name: "Console keys" });
    await section.waitFor();
    const cards = section.getByRole("listitem");
    await expect.poll(() => cards.count()).toBe(3);
    const badges = await cards.locator(".key-head .badge").allTextContents();
    expect(badges.sort()).toEqual(["console key of another sign-in", "console key of this sign-in", "left-over console key"]);
    const leftOver = cards.filter({ hasText: "left-over console key" });
    expect(await leftOver.locator("code").textContent()).toBe(`${old.body.key_prefix}…`);
    await leftOver.getByText("Nothing uses it now; revoke it.").waitFor();
    await section.getByText("One left-over console key").waitFor();
    const thisOne = cards.filter({ hasText: "console key of this sign-in" });
    expect(await thisOne.locator("code").textContent()).toBe(`${mine[0].key_prefix}…`);
    await thisOne.getByText("Expires", { exact: true }).waitFor();
    expect(await page.getByText("No keys for agents in this organization yet.").count()).toBe(1);
    await checkScreen(page, "keys-console", page.getByRole("heading", { name: "Console keys" }));

    // An expired key is shown as expired (here the other sign-in's, its end moved to the past).
    const db2 = createPool(s.stack.env.IDENTITY_DATABASE_URL!, 1);
    try {
      await db2.query("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", [elsewhere.body.id]);
    } finally {
      await db2.end();
    }
    await page.reload();
    const other = cards.filter({ hasText: "console key of another sign-in" });
    await other.locator(".badge", { hasText: "expired" }).waitFor();
    await other.getByText("Expired", { exact: true }).waitFor();
    expect(await other.getByRole("button", { name: /^Revoke/ }).count()).toBe(0);

    // Sign-out ends the sign-in: its key is refused, and so is asking for another with its token.
    const tab = await c.context.newPage();
    await tab.goto(`${s.url}/wallet`);
    await tab.getByRole("button", { name: "Show the deposit address" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    expect(await page.evaluate(`Object.keys(localStorage).filter((k) => k.startsWith("toolport.console-key."))`)).toEqual([]);
    expect((await api("/agents/wallet", { key: cached.key })).status).toBe(401);
    const ended = await api("/auth/console-key", { token: me.token, org: me.orgId, method: "POST", body: {} });
    expect(ended.status).toBe(401);
    expect(ended.body.error.code).toBe("console_session_ended");
    // A tab still open on the ended sign-in finds out when it next needs the key, and says why.
    await tab.getByRole("button", { name: "Show the deposit address" }).click();
    await tab.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    await tab.getByText("This sign-in has ended (signed out in another tab").waitFor();
    await tab.close();

    // Signed in again: the ended key is gone from the list, the left-over is still there, revoked from it.
    await signIn(page, s, person, "/keys");
    const again = await sessionOf(page);
    const listed = await consoleKeys(again);
    expect(listed.find((k) => k.id === mine[0].id)?.revoked_at).toEqual(expect.any(String));
    await leftOver.waitFor();
    expect(await cards.filter({ hasText: "console key of this sign-in" }).count()).toBe(0);
    await leftOver.getByRole("button", { name: "Revoke Toolport console", exact: true }).click();
    await leftOver.getByRole("button", { name: "Revoke Toolport console?" }).click();
    await expect.poll(() => cards.filter({ hasText: "left-over console key" }).count()).toBe(0);
    expect((await api("/agents/wallet", { key: old.body.key })).status).toBe(401);
    expectClean(c);
    await c.close();
  });
});
