/**
 * The API reference page (GET /docs) in a real browser: Debian's chromium, headless, driven by
 * playwright-core. The page is Swagger UI served by the gateway itself (no CDN) rendering GET
 * /v1/openapi.json: it loads, lists the execution routes, and logs no console error. `npm test` installs
 * chromium (deploy/local/infra.mjs ensureBinaries); CHROMIUM_PATH points at another one.
 *
 * With UPDATE_DOCS_SCREENSHOT=1 it also writes docs/api-reference.png, the screenshot the README shows.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../../deploy/local/infra.mjs";
import { type Stack, startStack } from "../harness/stack.js";

describe("the API reference page", () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = findChromium();
    if (!executablePath) {
      throw new Error("no chromium: apt-get install chromium (npm test installs it), or set CHROMIUM_PATH");
    }
    // The page needs the gateway alone (the description is built from its routes); the quickstart that
    // `GET /` names is identity's guide, with the catalog's starter tools.
    stack = await startStack(["catalog", "identity", "gateway"]);
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stopAll();
  });

  it("serves the page and its assets from the gateway, scripts from its own origin only", async () => {
    const page = await fetch(`${stack.gatewayUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//); // nothing fetched from elsewhere
    expect(html).not.toMatch(/<script>(?!<)/); // no inline script
    for (const asset of ["swagger-ui.css", "swagger-ui-bundle.js", "reference.js"]) {
      const res = await fetch(`${stack.gatewayUrl}/docs/assets/${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const missing = await fetch(`${stack.gatewayUrl}/docs/assets/package.json`);
    expect(missing.status).toBe(404);
  });

  it("serves the description as YAML too, the same document", async () => {
    const yaml = await fetch(`${stack.gatewayUrl}/v1/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toContain("application/yaml");
    const text = await yaml.text();
    expect(text.startsWith("openapi: 3.1.0\n")).toBe(true);
    const json = (await (await fetch(`${stack.gatewayUrl}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const path of Object.keys(json.paths)) expect(text).toContain(`  ${path}:\n`);
  });

  it("serves llms.txt at the root, written from the same description: every route, linked to the page", async () => {
    const res = await fetch(`${stack.gatewayUrl}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    const doc = (await (await fetch(`${stack.gatewayUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    expect(text).toMatch(/^# Toolport API\n\n> /);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(text).toContain(
          `[${method.toUpperCase()} ${path}](${stack.env.PUBLIC_URL}/docs#/${op.tags[0]}/${op.operationId})`,
        );
      }
    }
  });

  it("sends a browser at / to the console and a program to the API root", async () => {
    const browserAsks = await fetch(`${stack.gatewayUrl}/`, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
      redirect: "manual",
    });
    expect(browserAsks.status).toBe(302);
    expect(browserAsks.headers.get("location")).toBe("/console/");

    // curl sends `Accept: */*`, fetch's default; no Accept at all reads the same.
    for (const accept of ["*/*", "application/json", undefined]) {
      const res = await fetch(`${stack.gatewayUrl}/`, { headers: accept ? { accept } : {}, redirect: "manual" });
      expect(res.status, String(accept)).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      const root = (await res.json()) as Record<string, string>;
      const origin = stack.env.PUBLIC_URL;
      expect(root).toMatchObject({
        api: `${origin}/v1`,
        openapi: `${origin}/v1/openapi.json`,
        docs: `${origin}/docs`,
        quickstart: `${origin}/v1/agents/quickstart.md`,
        console: `${origin}/console/`,
      });
      // Every link it names answers (the console's page is built by `npm test` before the tests run).
      for (const link of [root.openapi, root.docs, root.quickstart, root.console]) {
        const answer = await fetch(link!);
        expect(answer.status, link).toBe(200);
      }
      const quickstart = await (await fetch(root.quickstart!)).text();
      expect(quickstart).toContain("# Toolport quickstart");
    }

    // Other methods on / are still the spec's 404, not a redirect.
    const post = await fetch(`${stack.gatewayUrl}/`, { method: "POST", headers: { accept: "text/html" }, redirect: "manual" });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("opens the console in a browser at the bare address", async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.gatewayUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/console/");
    await page.close();
  });

  it("renders the description in a browser: the execution routes are listed, no console error", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    const offsite: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(stack.gatewayUrl) && !r.url().startsWith("data:")) offsite.push(r.url());
    });

    await page.goto(`${stack.gatewayUrl}/docs`, { waitUntil: "networkidle" });
    await page.waitForSelector(".opblock", { timeout: 15_000 });
    const title = await page.locator(".info .title").first().textContent();
    expect(title).toContain("Toolport API");
    expect(title).toContain("1.0.0");
    const paths = await page.locator(".opblock-summary-path").allInnerTexts();
    const normalised = paths.map((p) => p.replace(/\u200b/g, "").trim());
    for (const route of ["/v1/tools/call/{tool_id}", "/v1/tools/call/batch", "/v1/tools/executions/{execution_id}/result"]) {
      expect(normalised, route).toContain(route);
    }
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);

    const file = process.env.UPDATE_DOCS_SCREENSHOT
      ? path.join(import.meta.dirname, "../../docs/api-reference.png")
      : path.join(mkdtempSync(path.join(tmpdir(), "toolport-docs-")), "api-reference.png");
    writeFileSync(file, await page.screenshot({ fullPage: false }));
    await page.close();
  });
});
