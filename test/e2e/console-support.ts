/**
 * Shared by the console's browser tests (test/e2e/console-*.test.ts): a whole stack with what the
 * screens need (crypto funding, a platform administrator, builtin demo tools, webhooks), Debian's chromium
 * driven by playwright-core, a page that records console errors and any request leaving the gateway's
 * origin, sign-up through the console's own form, an axe-core scan, and the screenshots the README shows
 * (written under docs/console/ with UPDATE_CONSOLE_SCREENSHOTS=1).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { expect } from "vitest";
import { findChromium } from "../../deploy/local/infra.mjs";
import { type ProcessName, repoRoot, type Stack, startStack } from "../harness/stack.js";
import { STRIPE_WEBHOOK_SECRET } from "./execution-support.js";

/** xpub of m/44'/60'/0' of the well-known test mnemonic ("test test ... junk"): crypto funding answers. */
export const DEPOSIT_XPUB =
  "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
export const PASSWORD = "correct horse battery staple";

export const ALL_ROLES: ProcessName[] = ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway"];

export interface ConsoleStack {
  stack: Stack;
  /** The console's address: `${gatewayUrl}/console`. */
  url: string;
  adminEmail: string;
  stop(): Promise<void>;
}

/** Every role but the MCP server; `env` adds to (or overrides) the defaults below. */
export async function startConsoleStack(env: Record<string, string> = {}): Promise<ConsoleStack> {
  const adminEmail = `admin-${randomUUID().slice(0, 8)}@example.com`;
  const stack = await startStack(ALL_ROLES, {
    CATALOG_SECRET_KEY: randomBytes(32).toString("hex"),
    EXECUTION_CONSENT_SECRET: randomBytes(32).toString("hex"),
    STRIPE_WEBHOOK_SECRET,
    STRIPE_SECRET_KEY: "sk_test_unused",
    BILLING_DEPOSIT_XPUB: DEPOSIT_XPUB,
    TOOLPORT_ADMIN_EMAILS: adminEmail,
    TOOL_CALLS_PER_MINUTE: "100000",
    PUBLIC_SEARCHES_PER_MINUTE: "100000",
    // The catalog screen searches with the person's console key, counted per account (tests reload it in polls).
    SEARCHES_PER_MINUTE: "100000",
    ...env,
  });
  return { stack, url: `${stack.gatewayUrl}/console`, adminEmail, stop: () => stack.stopAll() };
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) {
    throw new Error("no chromium: apt-get install chromium (npm test installs it), or set CHROMIUM_PATH");
  }
  return chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions the page logged. */
  errors: string[];
  /** Requests that left the gateway's origin (the console must need none). */
  offsite: string[];
  close(): Promise<void>;
}

/** A fresh browser context (its own storage: a new person) with the clipboard open to the page. */
export async function openConsole(
  browser: Browser,
  s: ConsoleStack,
  viewport: { width: number; height: number } = LAPTOP,
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport, baseURL: s.stack.gatewayUrl });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: s.stack.gatewayUrl });
  const page = await context.newPage();
  const errors: string[] = [];
  const offsite: string[] = [];
  page.on("console", (m) => {
    // A refused request is logged by chromium as a console error ("Failed to load resource: ... 4xx"):
    // those are the API answering, which the screens show; anything else is a defect.
    if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      errors.push(m.text());
    }
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (r) => {
    if (!r.url().startsWith(s.stack.gatewayUrl) && !r.url().startsWith("data:")) offsite.push(r.url());
  });
  return { page, context, errors, offsite, close: () => context.close() };
}

export interface Person {
  email: string;
  password: string;
  name: string;
}

export function newPerson(label = "person"): Person {
  const tag = randomBytes(4).toString("hex");
  return { email: `${label}-${tag}@example.com`, password: PASSWORD, name: `${label[0]!.toUpperCase()}${label.slice(1)} ${tag}` };
}

/** Signs up through the console's form, from `path` (default: the catalog), and waits for the frame. */
export async function signUp(page: Page, s: ConsoleStack, person: Person, at = "/catalog"): Promise<void> {
  await page.goto(`${s.url}${at}`);
  await page.getByRole("button", { name: "Sign up" }).click();
  await page.getByLabel("Name").fill(person.name);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign up" }).click();
  // Attached, not visible: at phone width the navigation is behind the menu button.
  await page.locator("nav#navigation").waitFor({ state: "attached" });
}

/** Signs in through the console's form at `at`. */
export async function signIn(page: Page, s: ConsoleStack, person: Person, at = "/catalog"): Promise<void> {
  await page.goto(`${s.url}${at}`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("nav#navigation").waitFor({ state: "attached" });
}

/** Signs up with the API (no browser), e.g. for the administrator, whose email the stack names. */
export async function signUpByApi(s: ConsoleStack, person: Person): Promise<{ token: string; accountId: string }> {
  const res = await fetch(`${s.stack.gatewayUrl}/v1/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(person),
  });
  const body = (await res.json()) as { access_token: string; account_id: string };
  if (res.status !== 201 && res.status !== 200) throw new Error(`signup answered ${res.status}: ${JSON.stringify(body)}`);
  return { token: body.access_token, accountId: body.account_id };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core (WCAG 2 A and AA rules) on the page; returns the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated rather than added as a script tag: the console's CSP (rightly) refuses inline scripts.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(axeSource);
  // A string, run in the page (this file has no DOM types): axe's WCAG 2.0/2.1 A and AA rules.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
  })()`)) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * With UPDATE_CONSOLE_SCREENSHOTS=1, saves the page as docs/console/<name>-<width>x<height>.png (the
 * README shows them); otherwise takes the screenshot (it must render) and keeps it in memory.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const viewport = page.viewportSize()!;
  const png = await page.screenshot({ fullPage: false });
  if (process.env.UPDATE_CONSOLE_SCREENSHOTS) {
    const dir = path.join(repoRoot, "docs/console");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${name}-${viewport.width}x${viewport.height}.png`), png);
  }
}

/** Who is signed in on a page, as the console keeps it in the page's storage. */
export interface SignedIn {
  token: string;
  accountId: string;
  /** The organization the console acts in. */
  orgId: string;
}

/** The session the console keeps in this page's storage, and the organization it acts in. */
export async function sessionOf(page: Page): Promise<SignedIn> {
  const raw = (await page.evaluate(`(() => {
    const session = JSON.parse(localStorage.getItem("toolport.session"));
    const orgId = localStorage.getItem("toolport.organization." + session.accountId);
    return { token: session.token, accountId: session.accountId, orgId };
  })()`)) as { token: string; accountId: string; orgId: string | null };
  if (!raw.orgId) throw new Error("the console chose no organization");
  return { token: raw.token, accountId: raw.accountId, orgId: raw.orgId };
}

/**
 * Scans the screen and captures it at laptop and phone width (scrolled to `show`, else to the top),
 * ending at laptop width.
 */
export async function checkScreen(page: Page, name: string, show?: Locator): Promise<void> {
  for (const viewport of [LAPTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.getByRole("heading", { level: 1 }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate("window.scrollTo(0, 0)");
    const box = show ? await show.boundingBox() : null;
    if (box) await page.evaluate(`window.scrollTo(0, ${Math.max(0, box.y - 16)})`);
    await screenshot(page, name);
  }
  await page.setViewportSize(LAPTOP);
}

/**
 * Waits for the allow-list picker's live summary to settle after a pick. The summary sits above the
 * catalog search and the form's buttons and changes height when its count comes back; a click dispatched
 * while it does can press on one element and release on another, and then clicks nothing (the browser
 * fires the click on their common ancestor) although the click reports success.
 */
export async function callableSettled(page: Page): Promise<void> {
  await page.locator('[data-testid="callable"][aria-busy="false"]').waitFor();
}

/** The page logged no error and asked nothing of another origin. */
export function expectClean(c: ConsolePage): void {
  expect(c.errors).toEqual([]);
  expect(c.offsite).toEqual([]);
}

/** A JSON answer of the gateway, read field by field by the tests. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field and checked with expect
export type ApiAnswer = { status: number; body: any };

/** A `/v1` call as a test makes it beside the browser: a person's token or a key, an optional JSON body. */
export function consoleApi(s: () => ConsoleStack) {
  return async (
    path: string,
    init: { token?: string; key?: string; method?: string; body?: unknown } = {},
  ): Promise<ApiAnswer> => {
    const res = await fetch(`${s().stack.gatewayUrl}/v1${path}`, {
      method: init.method ?? "GET",
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.key ? { "svc-api-key": init.key } : {}),
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
}

/** Waits (at most 30 s) until the public search for `query` finds the builtin tool `slug`: the catalog indexed it. */
export async function untilIndexed(s: ConsoleStack, query: string, slug: string): Promise<void> {
  const api = consoleApi(() => s);
  for (const end = Date.now() + 30_000; ; ) {
    const found = await api(`/tools/public/search?query=${encodeURIComponent(query)}`);
    if (Array.isArray(found.body) && found.body.some((t: { slug?: string }) => t.slug === slug)) return;
    if (Date.now() > end) throw new Error(`${slug} never appeared in the public search for "${query}"`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
