/**
 * The console's catalog screens in a real browser against the whole stack: a person signs up, pages
 * through the public services ("More services" reads the next page of the list, which more public services
 * published here make two), searches (the query survives a reload; results name their service), runs a builtin Text Utilities tool from its generated form and reads the
 * result, also by path; a service published by an agent, backed by an HTTP server started here that
 * checks its bearer token, is connected on the page its configuration_url names (signed out first, then
 * back on that page after signing up), its readiness turning ready without a reload, with a stored token
 * and then an env:// reference, each accepted by the upstream; a result holding credentials shows the
 * redaction report and marks the masked values; a shortened result explains what was dropped and is read
 * back by path. Each screen is scanned with axe-core and photographed at laptop and phone widths.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Locator, Page } from "playwright-core";
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
  startConsoleStack,
} from "./console-support.js";

const STORED_TOKEN = "tok-stored-0123456789";
const ENV_TOKEN = "tok-from-env-9876543210";
const AWS_KEY_ID = "AKIA2E0A8F3B244C9986";

/** The upstream: a profile that needs `Authorization: Bearer <token>`; deploy keys, notes and items (no auth). */
async function startProfileApi() {
  const seen: string[] = [];
  const notes: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/profile") {
      const auth = req.headers.authorization ?? "";
      seen.push(auth);
      if (auth !== `Bearer ${STORED_TOKEN}` && auth !== `Bearer ${ENV_TOKEN}`) return json(401, { error: "bad token" });
      return json(200, { user: "ada", plan: "pro", auth_source: auth.endsWith(ENV_TOKEN) ? "from env" : "stored" });
    }
    if (url.pathname === "/deploy-keys") {
      return json(200, { service: "ci", aws: { access_key_id: AWS_KEY_ID, region: "eu-west-1" }, rotated: false });
    }
    if (url.pathname === "/notes" && req.method === "POST") {
      notes.push(url.pathname);
      return json(201, { id: `note-${notes.length}` });
    }
    if (url.pathname === "/items") {
      const n = Number(url.searchParams.get("n") ?? 10);
      return json(200, { items: Array.from({ length: n }, (_, i) => ({ id: i, name: `item ${i}` })) });
    }
    return json(404, { error: "no such path" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    notes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const profileDocument = (title: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0" },
  components: { securitySchemes: { token: { type: "http", scheme: "bearer" } } },
  security: [{ token: [] }],
  paths: {
    "/profile": {
      get: { operationId: "get_profile", summary: "The signed-in user's profile", responses: { "200": { description: "ok" } } },
    },
    "/deploy-keys": {
      get: {
        operationId: "list_deploy_keys",
        summary: "Deploy keys of the CI",
        security: [],
        responses: { "200": { description: "ok" } },
      },
    },
    "/notes": {
      post: {
        operationId: "create_note",
        summary: "Write a note",
        security: [],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { type: "object", required: ["text"], properties: { text: { type: "string" } } } },
          },
        },
        responses: { "201": { description: "created" } },
      },
    },
    "/items": {
      get: {
        operationId: "list_items",
        summary: "Items",
        security: [],
        parameters: [{ name: "n", in: "query", schema: { type: "integer", minimum: 0, maximum: 1000 } }],
        responses: { "200": { description: "ok" } },
      },
    },
  },
});

let s: ConsoleStack;
let browser: Browser;
let upstream: Awaited<ReturnType<typeof startProfileApi>>;
let service: { id: string; name: string; tools: Record<string, string> };
/** The builtin service of sample data (listed after every real one). */
const SAMPLE_DATA = "Sample Store (demo data)";
/** Public services published here besides the profile API, so that the console's list of services (12 a page) takes two. */
const EXTRA_SERVICES = 10;
let extraServices: string[] = [];

/** A one-operation document: a public service that only fills the list. */
const fillerDocument = (title: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0" },
  paths: { "/ping": { get: { operationId: "ping", summary: "Ping", responses: { "200": { description: "ok" } } } } },
});

async function api(path: string, init: { token?: string; key?: string; method?: string; body?: unknown } = {}) {
  const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.key ? { "svc-api-key": init.key } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read loosely in assertions, like the other e2e tests
  return { status: res.status, body: (await res.json()) as any };
}

/** The signed-in person's session token, as the console keeps it. */
async function tokenOf(page: Page): Promise<string> {
  // Strings run in the page: this file has no DOM types (like console-support.ts).
  return (await page.evaluate(`JSON.parse(localStorage.getItem("toolport.session") ?? "{}").token`)) as string;
}

/**
 * Axe finds nothing serious and a screenshot is taken, at laptop and phone widths, scrolled to `at` (the
 * part worth showing) or the top.
 */
async function audit(page: Page, name: string, at?: Locator): Promise<void> {
  for (const viewport of [LAPTOP, PHONE]) {
    await page.setViewportSize(viewport);
    expect(await seriousViolations(page), `${name} at ${viewport.width}px`).toEqual([]);
    if (at) await at.evaluate((el: { scrollIntoView(options: object): void }) => el.scrollIntoView({ block: "start" }));
    else await page.evaluate("window.scrollTo(0, 0)");
    await screenshot(page, name);
  }
  await page.setViewportSize(LAPTOP);
}

/** The item of the connect page's readiness list for a tool. */
const readinessOf = (page: Page, tool: string) => page.locator(".readiness-list li").filter({ hasText: tool });

beforeAll(async () => {
  upstream = await startProfileApi();
  [s, browser] = await Promise.all([
    startConsoleStack({
      EXECUTION_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
      CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
      TOOLPORT_SECRET_CONSOLE_TOKEN: ENV_TOKEN,
    }),
    launchBrowser(),
  ]);
  // The publisher is an agent of its own: the people below are not its managers.
  const agent = await api("/agents", { method: "POST", body: { name: "publisher", operator_email: "publisher@example.com" } });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const name = `Profile API ${Date.now().toString(36)}`;
  const published = await api("/services", {
    method: "POST",
    key: agent.body.api_key,
    body: { api: { document: profileDocument(name), base_url: upstream.url }, visibility: "public" },
  });
  expect(published.status, JSON.stringify(published.body)).toBe(201);
  service = {
    id: published.body.service.id,
    name,
    tools: Object.fromEntries(published.body.tools.map((t: { name: string; id: string }) => [t.name, t.id])),
  };
  // Named to sort before the builtin services (the list is by name, sample data last).
  extraServices = Array.from({ length: EXTRA_SERVICES }, (_, i) => `Atlas Filler ${String(i + 1).padStart(2, "0")}`);
  for (const title of extraServices) {
    const filler = await api("/services", {
      method: "POST",
      key: agent.body.api_key,
      body: { api: { document: fillerDocument(title), base_url: upstream.url }, visibility: "public" },
    });
    expect(filler.status, JSON.stringify(filler.body)).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await upstream?.close();
});

describe("the catalog screens", () => {
  it("searches, runs a builtin tool from its form, and reads the result, also by path", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("ada"));

    // No query yet: recommendations and the public services, a page at a time (3 builtin services, the
    // profile API and the fillers: 14, so 12 and then 2; by name, sample data last).
    await page.getByRole("heading", { name: "Recommended tools" }).waitFor();
    const services = page.getByRole("list", { name: "Services" });
    await services.getByRole("heading", { name: extraServices[0] }).waitFor();
    expect(await services.getByRole("listitem").count()).toBe(12);
    expect(await services.getByRole("heading", { name: "Text Utilities" }).count()).toBe(0);
    expect(await page.getByTestId("services-shown").textContent()).toBe("12 services shown; more remain.");
    const more = page.getByRole("button", { name: "More services" });
    await more.click();
    await services.getByRole("heading", { name: "Text Utilities" }).waitFor();
    const names = await services.getByRole("heading", { level: 3 }).allTextContents();
    expect(names).toEqual([...extraServices, "Data Utilities", service.name, "Text Utilities", SAMPLE_DATA]);
    expect(await page.getByTestId("services-shown").textContent()).toBe("14 services shown.");
    expect(await more.count()).toBe(0);
    // The focus moved to the first service added (its search link), not lost with the button.
    expect(await page.evaluate(`document.activeElement?.textContent`)).toBe("Search Text Utilities tools");
    expect(await seriousViolations(page)).toEqual([]);

    // Search with Enter; the query goes into the address and survives a reload.
    const box = page.getByRole("searchbox", { name: "Search tools" });
    await box.fill("slugify");
    await box.press("Enter");
    await page.waitForURL(/\/console\/catalog\?q=slugify$/);
    const result = page.getByRole("link", { name: "slugify", exact: true });
    await result.waitFor();
    await page.reload();
    await result.waitFor();
    expect(await page.getByRole("searchbox", { name: "Search tools" }).inputValue()).toBe("slugify");
    const card = page.locator(".tool-card").filter({ has: result });
    // Its service's name, read by the service's id.
    await card.locator(".card-service").getByText("Text Utilities", { exact: true }).waitFor();
    expect(await card.locator(".badge").first().textContent()).toBe("ready");

    // The tool page: parameters, and the generated form checked on submit.
    await result.click();
    await page.getByRole("heading", { level: 1, name: "slugify" }).waitFor();
    expect(await page.getByRole("table").first().textContent()).toContain("max_length");
    await page.getByLabel("text (required)").fill("Crème Brûlée: 10 Easy Steps!");
    await page.getByLabel("separator").selectOption("_");
    await page.getByLabel("max_length").fill("500");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("At most 200.").waitFor();
    expect(await page.evaluate(`document.activeElement?.getAttribute("name")`)).toBe("max_length");
    await page.getByLabel("max_length").fill("40");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    const tree = page.locator(".call-result .json-tree");
    expect(await tree.textContent()).toContain('"creme_brulee_10_easy_steps"');

    // The same through the API: the stored result is the person's (the console key acts for them).
    const executionId = (await page.getByTestId("execution-id").textContent())!;
    const token = await tokenOf(page);
    const stored = await api(`/tools/executions/${executionId}/result`, { token });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.result).toEqual({ slug: "creme_brulee_10_easy_steps" });

    // Read a part by path.
    await page.getByLabel("Path", { exact: true }).fill("slug");
    await page.getByRole("button", { name: "Read", exact: true }).click();
    const read = page.locator(".stored-result");
    await read.getByText("at slug", { exact: true }).waitFor();
    expect(await read.locator(".json-tree .json-string").textContent()).toBe('"creme_brulee_10_easy_steps"');
    await audit(page, "tool", page.getByRole("heading", { name: "Result", exact: true }));

    // An array parameter is a JSON text area, checked before sending.
    await page.goto(`${s.url}/tools/text-extract`);
    await page.getByRole("heading", { level: 1, name: "extract" }).waitFor();
    await page.getByLabel("text (required)").fill("Mail ana@example.com or see https://example.org #launch");
    await page.getByLabel("kinds").fill('["emails"');
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText(/Not valid JSON/).waitFor();
    await page.getByLabel("kinds").fill('["emails", "hashtags"]');
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    const extracted = await page.locator(".call-result .json-tree").textContent();
    expect(extracted).toContain('"ana@example.com"');
    expect(extracted).toContain('"#launch"');
    expect(extracted).not.toContain("urls");

    // Back in the catalog, the calls show in slugify's reliability (recorded from the execution events).
    await page.goto(`${s.url}/catalog?q=slugify`);
    const reliability = page.locator(".tool-card").filter({ has: result }).locator(".reliability");
    await expect
      .poll(
        async () => {
          await page.reload();
          await result.waitFor();
          return (await reliability.count()) > 0 ? await reliability.textContent() : "";
        },
        { timeout: 20_000 },
      )
      .toMatch(/Success.*too few calls to tell \(1 call in 30 days\).*p50.*Last failure\s*none/);
    await audit(page, "catalog");

    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });

  it("connects a credential on the configuration_url page; readiness turns ready without a reload and the upstream accepts it", async () => {
    // The link a search result carries, as an agent would hand it to its operator.
    const found = await api(`/tools/public/search?query=get_profile&service_id=${service.id}`);
    const hit = found.body.find((t: { id: string }) => t.id === service.tools.get_profile);
    expect(hit.readiness).toBe("needs_credential");
    expect(hit.configuration_url).toBe(`${s.stack.gatewayUrl}/console/services/${service.id}/connect`);

    // Signed out, the page asks to sign in (here: sign up) and then shows the same page.
    const c = await openConsole(browser, s);
    const { page } = c;
    const person = newPerson("bea");
    await page.goto(hit.configuration_url);
    await page.getByRole("heading", { name: "Sign in to Toolport" }).waitFor();
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByLabel("Name").fill(person.name);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { level: 1, name: `Connect ${service.name}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/services/${service.id}/connect`);
    await readinessOf(page, "get_profile").getByText("needs credential").waitFor();
    expect(await readinessOf(page, "list_items").textContent()).toContain("ready");
    await page.getByRole("heading", { name: "Connect with Bearer token" }).waitFor();

    // Connect a stored token: readiness turns ready in place (no navigation happens).
    await page.evaluate("window.stayed = true");
    await page.getByLabel("Token", { exact: true }).fill(STORED_TOKEN);
    expect(await page.getByLabel("Only me").isChecked()).toBe(true);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await readinessOf(page, "get_profile").getByText("ready").waitFor();
    await page.getByText("Connected: Bearer token for you, ending in 6789.").waitFor();
    expect(await page.evaluate("window.stayed")).toBe(true);
    expect(await page.getByRole("table").textContent()).toContain("ends in 6789");
    const token = await tokenOf(page);
    const listed = await api(`/services/${service.id}/credentials`, { token });
    expect(listed.body).toEqual([
      expect.objectContaining({ type: "bearer", scope: "caller", is_reference: false, hint: "6789" }),
    ]);

    // Run the tool from its page: the upstream accepts the token.
    await readinessOf(page, "get_profile").getByRole("link", { name: "get_profile" }).click();
    await page.getByRole("heading", { level: 1, name: "get_profile" }).waitFor();
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    expect(await page.locator(".call-result .json-tree").textContent()).toContain('"stored"');
    expect(upstream.seen).toContain(`Bearer ${STORED_TOKEN}`);

    // An env:// reference instead: checked in the page, accepted, shown as a reference, resolved at call time.
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: `Connect ${service.name}` }).waitFor();
    await page.getByLabel("Use a reference (env:// or vault://)").check();
    await page.getByLabel("Token reference").fill("env:/TOOLPORT_SECRET_CONSOLE_TOKEN");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("A reference starts with env:// or vault://.").waitFor();
    await page.getByLabel("Token reference").fill("env://TOOLPORT_SECRET_CONSOLE_TOKEN");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("Connected: Bearer token for you, as a reference.").waitFor();
    await page.getByRole("table").getByText("reference").waitFor();
    expect((await api(`/services/${service.id}/credentials`, { token })).body).toEqual([
      expect.objectContaining({ type: "bearer", scope: "caller", is_reference: true, hint: null }),
    ]);
    await audit(page, "connect");

    await page.goto(`${s.url}/tools/${service.tools.get_profile}`);
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    expect(await page.locator(".call-result .json-tree").textContent()).toContain('"from env"');
    expect(upstream.seen).toContain(`Bearer ${ENV_TOKEN}`);

    // Disconnect: the tool needs a credential again.
    await page.goBack();
    await page.getByRole("button", { name: "Disconnect your credential" }).click();
    await readinessOf(page, "get_profile").getByText("needs credential").waitFor();
    expect((await api(`/services/${service.id}/credentials`, { token })).body).toEqual([]);

    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });

  it("highlights the redaction report and explains a shortened result, read back by path", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    const person = newPerson("cy");
    await signUp(page, s, person, `/tools/${service.tools.list_deploy_keys}`);
    await page.getByRole("heading", { level: 1, name: "list_deploy_keys" }).waitFor();
    await page.getByRole("button", { name: "Run" }).click();
    const report = page.locator(".redaction");
    await report.getByRole("heading", { name: /masked/ }).waitFor();
    expect(await report.textContent()).toContain("aws.access_key_id");
    const marked = page.locator(".call-result mark.redacted");
    expect(await marked.count()).toBeGreaterThan(0);
    expect(await marked.first().textContent()).toMatch(/^\[REDACTED:[A-Z_]+\]$/);
    expect(await page.locator('.call-result [data-path="aws.access_key_id"]').getAttribute("class")).toContain("json-marked");
    expect(await page.locator("main").textContent()).not.toContain(AWS_KEY_ID);
    await audit(page, "tool-redaction", page.getByRole("heading", { name: "Result", exact: true }));

    // The report's path reads the stored (masked) value.
    await report.getByRole("button", { name: "Read aws.access_key_id by path" }).click();
    await page.locator(".stored-result").getByText("at aws.access_key_id", { exact: true }).waitFor();
    expect(await page.locator(".stored-result mark.redacted").textContent()).toMatch(/^\[REDACTED:/);

    // A result over the cap: what was dropped is said, and the rest is read by path.
    await page.goto(`${s.url}/tools/${service.tools.list_items}`);
    await page.getByRole("heading", { level: 1, name: "list_items" }).waitFor();
    await page.getByLabel("n", { exact: true }).fill("300");
    await page.getByLabel("Answer size cap").fill("500");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "The answer was shortened" }).waitFor();
    const note = (await page.locator(".call-result").textContent()) ?? "";
    expect(note).toMatch(/of 300 items kept/);
    await page.getByLabel("Path", { exact: true }).fill("items[250].name");
    await page.getByRole("button", { name: "Read", exact: true }).click();
    await page.locator(".stored-result").getByText("at items[250].name", { exact: true }).waitFor();
    expect(await page.locator(".stored-result .json-tree .json-string").textContent()).toBe('"item 250"');

    // With a key that asks for confirmation (made here and handed to the console as its key), a call that
    // writes is shown first, and runs only once confirmed.
    const token = await tokenOf(page);
    const me = await api("/accounts/me", { token });
    const orgId: string = me.body.personal_organization_id;
    const confirming = await api("/api-keys", {
      method: "POST",
      token,
      body: { name: "asks first", organization_id: orgId, permissions: { require_confirmation: true } },
    });
    expect(confirming.status, JSON.stringify(confirming.body)).toBe(200);
    const keyItem = `toolport.console-key.${me.body.id}.${orgId}`;
    // The console caches its key per sign-in (the session token's tail names it; api.ts).
    const keyValue = JSON.stringify({
      id: confirming.body.id,
      key: confirming.body.key,
      signIn: token.slice(-16),
      expiresAt: null,
    });
    await page.evaluate(`localStorage.setItem(${JSON.stringify(keyItem)}, ${JSON.stringify(keyValue)})`);
    await page.goto(`${s.url}/tools/${service.tools.create_note}`);
    await page.getByLabel("text (required)").fill("remember the milk");
    await page.getByRole("button", { name: "Run" }).click();
    const ask = page.getByRole("alert").filter({ hasText: "Confirm this call." });
    await ask.waitFor();
    expect(await ask.locator("pre").textContent()).toContain('"text": "remember the milk"');
    expect(upstream.notes).toHaveLength(0);
    await ask.getByRole("button", { name: "Confirm and run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    expect(await page.locator(".call-result .json-tree").textContent()).toContain('"note-1"');
    expect(upstream.notes).toHaveLength(1);

    // Without a credential, the tool page says so (with the way to connect), and a run fails upstream of nothing.
    await page.goto(`${s.url}/tools/${service.tools.get_profile}`);
    await page.getByRole("heading", { level: 1, name: "get_profile" }).waitFor();
    expect(await page.getByRole("link", { name: `Connect ${service.name}` }).getAttribute("href")).toBe(
      `/console/services/${service.id}/connect`,
    );
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("The tool failed:").waitFor();
    expect(await page.locator(".call-result").textContent()).toContain("no credential is connected");

    // Signed in again elsewhere: the search shows the tool needing a credential for this person, with the
    // failure in its reliability.
    const other = await openConsole(browser, s);
    await signIn(other.page, s, person, `/catalog?q=get_profile`);
    const card = other.page
      .locator(".tool-card")
      .filter({ hasText: service.name })
      .filter({ has: other.page.getByRole("link", { name: "get_profile", exact: true }) });
    await card.getByText("needs credential").waitFor();
    expect(await card.getByRole("link", { name: `Connect ${service.name}` }).getAttribute("href")).toBe(
      `/console/services/${service.id}/connect`,
    );
    await expect
      .poll(
        async () => {
          await other.page.reload();
          await card.waitFor();
          return (await card.locator(".reliability").count()) > 0 ? await card.locator(".reliability").textContent() : "";
        },
        { timeout: 20_000 },
      )
      .toMatch(/Last failure.*\d.*\(auth/);
    expect(other.errors).toEqual([]);
    await other.close();

    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });
});
