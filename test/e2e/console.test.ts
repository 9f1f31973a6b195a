/**
 * The console's frame in a real browser (Debian's chromium, headless, driven by playwright-core), and how
 * the gateway serves it: every /console address answers the page with its security and caching headers,
 * hashed assets are cached for a year and compressed, the first load stays under 200 KB of compressed
 * JavaScript (printed), nothing is fetched from another origin; a person signs up, a wrong password is
 * refused in the form, the organization switcher changes the organization requests run in, a refused
 * session token returns to the sign-in form saying why, the phone layout's menu opens and closes, and the
 * sign-in screen passes axe-core at both sizes.
 */
import { gunzipSync } from "node:zlib";
import type { Browser, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  LAPTOP,
  launchBrowser,
  newPerson,
  openConsole,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
  signUp,
  signUpByApi,
  startConsoleStack,
} from "./console-support.js";

/** The budget for the first load's JavaScript, compressed. */
const FIRST_LOAD_JS_BUDGET = 200 * 1024;

describe("the console", () => {
  let s: ConsoleStack;
  let browser: Browser;

  beforeAll(async () => {
    [s, browser] = await Promise.all([startConsoleStack(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  it("answers every console address with the page, its security headers, and no script from elsewhere", async () => {
    for (const address of [
      "/console",
      "/console/",
      "/console/catalog",
      "/console/services/abc/connect",
      "/console/no/such/screen",
    ]) {
      const res = await fetch(`${s.stack.gatewayUrl}${address}`);
      expect(res.status, address).toBe(200);
      expect(res.headers.get("content-type"), address).toContain("text/html");
      expect(res.headers.get("cache-control"), address).toBe("no-cache");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      const html = await res.text();
      expect(html).toContain('<div id="root">');
      expect(html).not.toMatch(/(src|href)="https?:\/\//); // nothing loaded from elsewhere
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    }
    const head = await fetch(`${s.stack.gatewayUrl}/console/keys`, { method: "HEAD" });
    expect(head.status).toBe(200);
  });

  it("caches hashed assets for a year, compresses them, and refuses what is not there", async () => {
    const html = await (await fetch(`${s.stack.gatewayUrl}/console/`)).text();
    const script = /<script[^>]+src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const plain = await fetch(`${s.stack.gatewayUrl}${script}`, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toContain("text/javascript");
    expect(plain.headers.get("content-encoding")).toBeNull();
    const raw = Buffer.from(await plain.arrayBuffer());

    // undici's fetch decodes for us; a raw request shows what went over the wire.
    const { request } = await import("undici");
    const gz = await request(`${s.stack.gatewayUrl}${script}`, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers.vary).toContain("Accept-Encoding");
    const zipped = Buffer.from(await gz.body.arrayBuffer());
    expect(gunzipSync(zipped).equals(raw)).toBe(true);
    expect(zipped.length).toBeLessThan(raw.length / 2);
    const br = await request(`${s.stack.gatewayUrl}${script}`, { headers: { "accept-encoding": "br, gzip" } });
    expect(br.headers["content-encoding"]).toBe("br");
    await br.body.dump();

    const missing = await fetch(`${s.stack.gatewayUrl}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const traversal = await fetch(`${s.stack.gatewayUrl}/console/assets/..%2F..%2Fpackage.json`);
    expect(traversal.status).toBe(404);
    const post = await fetch(`${s.stack.gatewayUrl}/console/keys`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");

    // Stripe's default return addresses lead to the wallet screen.
    for (const [from, to] of [
      ["/checkout/success?session_id=cs_1", "/console/wallet?checkout=success"],
      ["/checkout/cancelled", "/console/wallet?checkout=cancelled"],
    ] as const) {
      const res = await fetch(`${s.stack.gatewayUrl}${from}`, { redirect: "manual" });
      expect(res.status, from).toBe(302);
      expect(res.headers.get("location"), from).toBe(to);
    }
  });

  it("loads under 200 KB of compressed JavaScript on a signed-in first visit, all from the gateway", async () => {
    // A person who signed in before opens the catalog in a browser with an empty cache: the frame and the
    // catalog screen's chunk.
    const person = newPerson("budget");
    const { token, accountId } = await signUpByApi(s, person);
    const c = await openConsole(browser, s);
    await c.context.addInitScript(
      `localStorage.setItem("toolport.session", JSON.stringify(${JSON.stringify({ token, accountId, expiresAt: Date.now() + 3_000_000 })}))`,
    );
    const scripts: Request[] = [];
    c.page.on("requestfinished", (r) => {
      if (r.resourceType() === "script") scripts.push(r);
    });
    await c.page.goto(`${s.url}/catalog`, { waitUntil: "networkidle" });
    await c.page.getByRole("heading", { level: 1, name: /catalog/i }).waitFor();
    let total = 0;
    const lines: string[] = [];
    for (const r of scripts) {
      const response = await r.response();
      const encoding = (await response?.allHeaders())?.["content-encoding"];
      const size = (await r.sizes()).responseBodySize;
      // The gateway compresses every asset over 1 KB (middleware/console.ts); a smaller one is sent as is.
      if (size > 1024 || encoding !== undefined) expect(encoding ?? "none", r.url()).toMatch(/^(br|gzip)$/);
      total += size;
      lines.push(`  ${new URL(r.url()).pathname}: ${(size / 1024).toFixed(1)} KB (${encoding})`);
    }
    process.stdout.write(
      `console first load: ${scripts.length} scripts, ${(total / 1024).toFixed(1)} KB compressed\n${lines.join("\n")}\n`,
    );
    expect(scripts.length).toBeGreaterThan(0);
    expect(total).toBeLessThan(FIRST_LOAD_JS_BUDGET);
    expect(c.offsite).toEqual([]);
    expect(c.errors).toEqual([]);
    await c.close();
  });

  it("signs a person up into the catalog, refuses a wrong password in the form, and signs in again", async () => {
    const person = newPerson("ada");
    const c = await openConsole(browser, s);
    await signUp(c.page, s, person);
    await c.page.getByRole("heading", { level: 1, name: /catalog/i }).waitFor();
    expect(await c.page.evaluate("location.pathname")).toBe("/console/catalog");
    await c.page.getByRole("button", { name: "Sign out" }).click();
    await c.page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();

    await c.page.getByLabel("Email").fill(person.email);
    await c.page.getByLabel("Password").fill("not the password at all");
    await c.page.getByRole("button", { name: "Sign in" }).click();
    const alert = c.page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("invalid_credentials");
    expect(await c.page.getByRole("navigation", { name: "Console" }).count()).toBe(0);

    await signIn(c.page, s, person, "/keys");
    expect(await c.page.evaluate("location.pathname")).toBe("/console/keys");
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });

  it("switches organization: the switcher lists the person's organizations and requests carry the chosen one", async () => {
    const person = newPerson("org");
    const { token } = await signUpByApi(s, person);
    const team = await fetch(`${s.stack.gatewayUrl}/v1/organizations`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "Research team" }),
    });
    expect(team.status).toBe(200);
    const teamId = ((await team.json()) as { id: string }).id;

    const c = await openConsole(browser, s);
    await signIn(c.page, s, person, "/webhooks");
    const switcher = c.page.getByLabel("Organization");
    await c.page.locator("#organization option").nth(1).waitFor({ state: "attached" });
    const options = await switcher.locator("option").allTextContents();
    expect(options.some((o) => o.includes("(personal)"))).toBe(true);
    expect(options.some((o) => o.startsWith("Research team"))).toBe(true);

    const orgHeaders: string[] = [];
    c.page.on("request", (r) => {
      if (r.url().includes("/v1/")) orgHeaders.push(r.headers()["svc-org-id"] ?? "");
    });
    await switcher.selectOption(teamId);
    await c.page.reload();
    await c.page.getByRole("navigation", { name: "Console" }).waitFor();
    // The choice is known once the person's organizations have loaded again (on a busy machine, after the frame).
    await expect.poll(() => c.page.getByLabel("Organization").inputValue(), { timeout: 10_000 }).toBe(teamId);
    await c.page.waitForLoadState("networkidle");
    expect(orgHeaders.filter((h) => h === teamId).length).toBeGreaterThan(0);
    expect(c.errors).toEqual([]);
    await c.close();
  });

  it("signs out revoking the console key it made for key-only operations", async () => {
    const person = newPerson("keyed");
    const c = await openConsole(browser, s);
    await signUp(c.page, s, person, "/wallet");
    // Funding is open to API keys only: the console makes its key for it.
    await c.page.getByRole("button", { name: "Show the deposit address" }).click();
    await c.page
      .getByText(/^0x[0-9a-fA-F]{40}$/)
      .first()
      .waitFor();
    const stored = JSON.parse(
      (await c.page.evaluate(
        `Object.entries(localStorage).find(([k]) => k.startsWith("toolport.console-key."))?.[1] ?? "null"`,
      )) as string,
    ) as { id: string; key: string };
    expect(stored.key).toMatch(/^tp_/);
    const works = await fetch(`${s.stack.gatewayUrl}/v1/agents/wallet`, { headers: { "svc-api-key": stored.key } });
    expect(works.status).toBe(200);

    await c.page.getByRole("button", { name: "Sign out" }).click();
    await c.page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    // Only the organization last chosen stays (a preference, no credential).
    const left = (await c.page.evaluate(`Object.keys(localStorage).filter((k) => k.startsWith("toolport."))`)) as string[];
    expect(left.every((k) => k.startsWith("toolport.organization."))).toBe(true);
    const refused = await fetch(`${s.stack.gatewayUrl}/v1/agents/wallet`, { headers: { "svc-api-key": stored.key } });
    expect(refused.status).toBe(401);
    const login = await fetch(`${s.stack.gatewayUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: person.email, password: person.password }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const listed = await fetch(`${s.stack.gatewayUrl}/v1/api-keys?include_revoked=true`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    const keys = (await listed.json()) as Array<{ id: string; console_key: string | null; revoked_at: string | null }>;
    expect(keys.find((k) => k.id === stored.id)).toMatchObject({ console_key: "session", revoked_at: expect.any(String) });
    expect(c.errors).toEqual([]);
    await c.close();
  });

  it("returns to the sign-in form, saying why, when the session token is refused", async () => {
    const c = await openConsole(browser, s);
    await c.page.goto(`${s.url}/catalog`);
    await c.page.evaluate(
      `localStorage.setItem("toolport.session", JSON.stringify({ token: "not-a-token", accountId: "x", expiresAt: Date.now() + 3600000 }))`,
    );
    await c.page.reload();
    await c.page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    expect(await c.page.getByText("Your session ended").count()).toBe(1);
    expect(await c.page.evaluate(`localStorage.getItem("toolport.session")`)).toBeNull();
    await c.close();
  });

  it("opens the navigation from the menu button at phone width, and moves focus to the content on a new screen", async () => {
    const person = newPerson("phone");
    const c = await openConsole(browser, s, PHONE);
    await signUp(c.page, s, person);
    const menu = c.page.getByRole("button", { name: "Menu" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await c.page.getByRole("link", { name: "Wallet" }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await c.page.getByRole("link", { name: "Wallet" }).click();
    await c.page.waitForURL(/\/console\/wallet/);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await c.page.evaluate("document.activeElement?.id")).toBe("main");
    expect(c.errors).toEqual([]);
    await c.close();
  });

  it("works from the keyboard: the skip link first, then the navigation, a screen opened with Enter", async () => {
    const c = await openConsole(browser, s);
    await signUp(c.page, s, newPerson("keys"));
    await c.page.reload();
    await c.page.getByRole("heading", { level: 1, name: /catalog/i }).waitFor();
    await c.page.keyboard.press("Tab");
    expect(await c.page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    await c.page.keyboard.press("Enter");
    expect(await c.page.evaluate("location.hash")).toBe("#main");
    // From the top again: Tab through the navigation to Wallet and open it.
    await c.page.reload();
    await c.page.getByRole("heading", { level: 1, name: /catalog/i }).waitFor();
    for (let i = 0; i < 20; i++) {
      await c.page.keyboard.press("Tab");
      if ((await c.page.evaluate("document.activeElement?.textContent")) === "Wallet") break;
    }
    expect(await c.page.evaluate("document.activeElement?.textContent")).toBe("Wallet");
    await c.page.keyboard.press("Enter");
    await c.page.waitForURL(/\/console\/wallet/);
    expect(await c.page.evaluate("document.activeElement?.id")).toBe("main");
    expect(c.errors).toEqual([]);
    await c.close();
  });

  it("answers an unknown console address with a page that says so", async () => {
    const c = await openConsole(browser, s);
    await signUp(c.page, s, newPerson("lost"), "/no/such/screen");
    await c.page.getByRole("heading", { name: "Not found" }).waitFor();
    expect(await c.page.getByText("/console/no/such/screen").count()).toBe(1);
    await c.close();
  });

  for (const viewport of [LAPTOP, PHONE]) {
    it(`has no serious accessibility violation on the sign-in and sign-up forms at ${viewport.width}x${viewport.height}`, async () => {
      const c = await openConsole(browser, s, viewport);
      await c.page.goto(`${s.url}/catalog`);
      await c.page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
      expect(await seriousViolations(c.page)).toEqual([]);
      await screenshot(c.page, "sign-in");
      await c.page.getByRole("button", { name: "Sign up" }).click();
      await c.page.getByRole("heading", { name: "Create a Toolport account" }).waitFor();
      expect(await seriousViolations(c.page)).toEqual([]);
      expect(c.errors).toEqual([]);
      await c.close();
    });
  }
});
