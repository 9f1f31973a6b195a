/**
 * A newcomer's own private API in the console's catalog, in a real browser against the whole stack: a
 * person signs up, publishes a private service (backed by an HTTP server started here) and finds its tool
 * by searching the catalog, with its service's name and readiness, at laptop and phone widths; another
 * person's private tool with the same words is not among the results, and the public search (what the
 * screen used before) finds neither. The tool opens and runs from its result. Scanned with axe-core.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** The upstream: answers every GET with the wombats it was asked about. */
async function startWombatApi() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ path: url.pathname, wombats: ["Wally", "Winnie"] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const wombatDocument = (title: string, operationId: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0" },
  paths: {
    [`/${operationId}`]: {
      get: { operationId, summary: "List the wombats of the burrow census", responses: { "200": { description: "ok" } } },
    },
  },
});

let s: ConsoleStack;
let browser: Browser;
let upstream: Awaited<ReturnType<typeof startWombatApi>>;

async function api(path: string, token: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read loosely in assertions, like the other e2e tests
  return { status: res.status, body: (await res.json()) as any };
}

/** Publishes a private service in the person's organization (as the console acts in it). */
async function publishPrivate(page: Page, title: string, operationId: string) {
  const { token, orgId } = await sessionOf(page);
  const res = await fetch(`${s.stack.gatewayUrl}/v1/services`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "svc-org-id": orgId, "content-type": "application/json" },
    body: JSON.stringify({ api: { document: wombatDocument(title, operationId), base_url: upstream.url } }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: read loosely, as above
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(body.service.visibility).toBe("private");
  return { serviceId: body.service.id as string, toolId: body.tools[0].id as string, token };
}

beforeAll(async () => {
  upstream = await startWombatApi();
  [s, browser] = await Promise.all([
    startConsoleStack({
      EXECUTION_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
      CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
    }),
    launchBrowser(),
  ]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await upstream?.close();
});

describe("the catalog, signed in", () => {
  it("finds the person's own private tool, not another person's, at laptop and phone widths", async () => {
    const tag = Date.now().toString(36);
    // Another person's private service, with the same words.
    const other = await openConsole(browser, s);
    await signUp(other.page, s, newPerson("bo"));
    await publishPrivate(other.page, `Bo's Burrow ${tag}`, "list_wombats_bo");
    await other.close();

    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("ada"));
    const title = `Ada's Burrow ${tag}`;
    const mine = await publishPrivate(page, title, "list_wombats");

    // The public search finds neither private tool: what the screen searched before could not show it.
    const pub = await api("/tools/public/search?query=wombats%20burrow%20census", mine.token);
    expect(pub.status).toBe(200);
    expect(pub.body.map((t: { service_id: string }) => t.service_id)).not.toContain(mine.serviceId);

    for (const viewport of [LAPTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(`${s.url}/catalog`);
      const box = page.getByRole("searchbox", { name: "Search tools" });
      await box.fill("wombats of the burrow census");
      await box.press("Enter");
      const result = page.getByRole("link", { name: "list_wombats", exact: true });
      await result.waitFor();
      const card = page.locator(".tool-card").filter({ has: result });
      // Its service's name (read from the organization's own service, which the public route does not show).
      await card.locator(".card-service").getByText(title, { exact: true }).waitFor();
      expect(await card.locator(".badge").first().textContent()).toBe("ready");
      expect(await page.getByRole("link", { name: "list_wombats_bo", exact: true }).count()).toBe(0);
      expect(
        await page
          .locator(".tool-card")
          .filter({ hasText: `Bo's Burrow ${tag}` })
          .count(),
      ).toBe(0);
      expect(await seriousViolations(page), `catalog at ${viewport.width}px`).toEqual([]);
      await card.evaluate((el: { scrollIntoView(options: object): void }) => el.scrollIntoView({ block: "start" }));
      await screenshot(page, "catalog-private");
    }

    // The result opens the tool, which runs.
    await page.setViewportSize(LAPTOP);
    await page.getByRole("link", { name: "list_wombats", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "list_wombats" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/tools/${mine.toolId}`);
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    expect(await page.locator(".call-result .json-tree").textContent()).toContain('"Winnie"');

    expectClean(c);
    await c.close();
  });
});
