/**
 * Issue 33, the first hour: a newcomer adds their own API from the console, finds it, calls it. In a real
 * browser against the whole stack, with an HTTP server started here that serves the OpenAPI document and
 * is the API's upstream: a pasted YAML document is previewed (its tools and the import's warnings, nothing
 * stored), published private, found on its service page (tools, readiness), one of its tools called from
 * the try-it form (the upstream sees the call), re-imported with a new version and deleted; a document's
 * URL is published at phone width, where the tools table shows one card per row; a broken document is
 * refused naming its defect and where it is; a new API key is shown in a dialog that must be dismissed.
 * Through the API: the preview route, and the 415 for a YAML body saying what to send. Screens are
 * scanned with axe and photographed at both widths (docs/console/, UPDATE_CONSOLE_SCREENSHOTS=1).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Call, gatewayClient } from "../harness/http.js";
import { type McpUpstream, startMcpUpstream } from "../harness/upstreams.js";
import {
  type ConsoleStack,
  checkScreen,
  expectClean,
  launchBrowser,
  newPerson,
  openConsole,
  PHONE,
  sessionOf,
  signUp,
  startConsoleStack,
} from "./console-support.js";

interface Upstream {
  url: string;
  port: number;
  /** Paths the upstream was asked for, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** The notes API: its OpenAPI document at /openapi.json and its operations. */
async function startNotesApi(): Promise<Upstream> {
  const seen: string[] = [];
  let url = "";
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    seen.push(`${req.method} ${path}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (path === "/openapi.json") return json(200, notesDocument("Harbor Notes", url));
    if (path === "/notes" && req.method === "GET") return json(200, { count: 1, latest: "buy rope" });
    if (path.startsWith("/notes/")) return json(200, { id: path.split("/").pop(), text: "buy rope" });
    return json(404, { error: "no such path" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
  return { url, port, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The document served by URL: its calls need an API key (header X-Notes-Key). */
function notesDocument(title: string, upstream: string) {
  return {
    openapi: "3.0.3",
    info: { title, version: "1.0.0" },
    servers: [{ url: upstream }],
    components: { securitySchemes: { notes_key: { type: "apiKey", in: "header", name: "X-Notes-Key" } } },
    security: [{ notes_key: [] }],
    paths: {
      "/notes": { get: { operationId: "list_notes", summary: "List the notes", responses: { "200": { description: "ok" } } } },
    },
  };
}

/**
 * The pasted document, in YAML: two operations, and a field OpenAPI does not define (`info.audience`),
 * which the import ignores with a warning naming it.
 */
const notesYaml = (title: string, upstream: string, extra = "") => `openapi: 3.0.3
info:
  title: ${title}
  version: 1.0.0
  audience: internal
servers:
  - url: ${upstream}
paths:
  /notes:
    get:
      operationId: list_notes
      summary: List the notes
      responses:
        "200":
          description: ok
  /notes/{note_id}:
    get:
      operationId: get_note
      summary: One note
      parameters:
        - name: note_id
          in: path
          required: true
          schema:
            type: string
      responses:
        "200":
          description: ok
${extra}`;

const ARCHIVE_OPERATION = `  /notes/{note_id}/archive:
    post:
      operationId: archive_note
      parameters:
        - name: note_id
          in: path
          required: true
          schema:
            type: string
      responses:
        "200":
          description: ok
`;

let s: ConsoleStack;
let browser: Browser;
let upstream: Upstream;
let mcp: McpUpstream;
let call: Call;

beforeAll(async () => {
  [upstream, mcp] = await Promise.all([startNotesApi(), startMcpUpstream()]);
  const allow = `127.0.0.1:${upstream.port},127.0.0.1:${mcp.port}`;
  [s, browser] = await Promise.all([
    startConsoleStack({ EXECUTION_OUTBOUND_ALLOW: allow, CATALOG_OUTBOUND_ALLOW: allow }),
    launchBrowser(),
  ]);
  call = gatewayClient(s.stack.gatewayUrl);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await upstream?.close();
  await mcp?.close();
});

/** The services the person's organization has, through the API. */
async function servicesOf(page: Page): Promise<{ id: string; name: string; visibility: string }[]> {
  const me = await sessionOf(page);
  const listed = await call("GET", "/services", { token: me.token, headers: { "svc-org-id": me.orgId } });
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return listed.body as { id: string; name: string; visibility: string }[];
}

describe("publishing from the console", () => {
  it("previews a pasted YAML document, publishes it private, calls a tool, re-imports it and deletes it", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("publisher"), "/services");
    const title = `Harbor Notes ${Date.now().toString(36)}`;

    // An empty list says what to do first.
    await page.getByText("No services yet").waitFor();
    await checkScreen(page, "services-empty");
    await page.getByRole("link", { name: "Publish an API" }).first().click();
    await page.getByRole("heading", { level: 1, name: "Publish an API" }).waitFor();

    // Preview: the tools and the warning, and nothing stored yet.
    await page.getByLabel("OpenAPI document (JSON or YAML)").fill(notesYaml(title, upstream.url));
    await page.getByRole("button", { name: "Preview the tools" }).click();
    const preview = page.getByRole("region", { name: "Tools to be created" });
    await preview.waitFor();
    expect(await preview.getByRole("row").count()).toBe(3);
    expect(await preview.getByRole("row").nth(1).textContent()).toContain("GET /notes");
    expect(await preview.getByRole("row").nth(2).textContent()).toContain("GET /notes/{note_id}");
    expect(await page.getByTestId("preview-count").textContent()).toBe("2 tools");
    const warnings = page.locator(".preview-warnings li");
    expect(await warnings.allTextContents()).toEqual(["ignored fields OpenAPI does not define: #/info/audience"]);
    expect(await servicesOf(page)).toEqual([]);
    expect(await page.getByLabel("Service name").inputValue()).toBe(title);
    await checkScreen(page, "publish", page.getByRole("heading", { name: "2. What will be published" }));

    // Publish, private (the default): the service's page, its tools ready (no credential needed).
    expect(await page.getByRole("radio", { name: /^Private/ }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: title }).waitFor();
    await page.getByText("Published. Open a tool below to try it.").waitFor();
    await expect.poll(() => page.getByTestId("service-readiness").textContent()).toBe("2 of 2 active tools ready for you.");
    const [published] = await servicesOf(page);
    expect(published).toMatchObject({ name: title, visibility: "private" });
    expect(page.url()).toContain(`/console/services/${published!.id}`);
    // Private: not in the public list.
    const isPublic = await call("GET", `/services/public/${published!.id}`);
    expect(isPublic.status).toBe(404);
    await checkScreen(page, "service");

    // Found in My services too.
    await page.getByRole("link", { name: "My services" }).click();
    await page.getByRole("link", { name: title }).click();
    await page.getByRole("heading", { level: 1, name: title }).waitFor();

    // Call a tool from the try-it form: the upstream answers.
    const tools = page.getByRole("region", { name: "Tools of this service" });
    await tools.getByRole("link", { name: "list_notes" }).click();
    await page.getByRole("heading", { level: 1, name: "list_notes" }).waitFor();
    const before = upstream.seen.filter((p) => p === "GET /notes").length;
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: "Result", exact: true }).waitFor();
    expect(await page.locator(".call-result .json-tree").textContent()).toContain('"buy rope"');
    expect(upstream.seen.filter((p) => p === "GET /notes").length).toBe(before + 1);

    // Re-import a new version with one more operation: three tools.
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: title }).waitFor();
    await page.getByRole("button", { name: "Re-import" }).click();
    const drawer = page.getByRole("dialog", { name: `Re-import ${title}` });
    await drawer.getByLabel("New document").fill(notesYaml(title, upstream.url, ARCHIVE_OPERATION));
    await drawer.getByRole("button", { name: "Re-import now" }).click();
    expect(await drawer.getByTestId("reimport-result").textContent()).toBe("Re-imported: 3 tools from the source.");
    await drawer.getByRole("button", { name: "Close" }).click();
    await tools.getByRole("link", { name: "archive_note" }).waitFor();
    expect(await tools.getByRole("row").count()).toBe(4);

    // Delete: red, asked twice, then gone from the page and the API.
    const remove = page.getByRole("button", { name: "Delete", exact: true });
    expect(await remove.getAttribute("class")).toBe("button-danger");
    await remove.click();
    await page.getByRole("button", { name: "Delete for good" }).click();
    await page.getByText(`Deleted ${title}.`).waitFor();
    expect(await servicesOf(page)).toEqual([]);
    const me = await sessionOf(page);
    const gone = await call("GET", `/services/${published!.id}`, { token: me.token, headers: { "svc-org-id": me.orgId } });
    expect(gone.status).toBe(404);
    expectClean(c);
    await c.close();
  });

  it("publishes a document from its URL at phone width, where the tools table shows one card per row", async () => {
    const c = await openConsole(browser, s, PHONE);
    const { page } = c;
    await signUp(page, s, newPerson("phone"), "/services/new");
    await page.getByRole("heading", { level: 1, name: "Publish an API" }).waitFor();
    await page.getByRole("radio", { name: /A document's URL/ }).check();
    await page.getByLabel("Document URL").fill(`${upstream.url}/openapi.json`);
    await page.getByRole("button", { name: "Preview the tools" }).click();
    await page.getByRole("region", { name: "Tools to be created" }).waitFor();
    expect(await page.getByTestId("preview-count").textContent()).toBe("1 tool");
    expect(await page.locator(".preview-warnings").count()).toBe(0);
    await page.getByText("Calls need a credential (notes_key)").waitFor();
    await page.getByRole("radio", { name: /^Public/ }).check();
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Harbor Notes" }).waitFor();
    // Its tool waits for a credential: readiness says so, and the connect button leads to the connect page.
    await expect
      .poll(() => page.getByTestId("service-readiness").textContent())
      .toBe("0 of 1 active tool ready for you; 1 waits for a credential.");
    const [published] = await servicesOf(page);
    expect(await page.getByRole("link", { name: "Connect", exact: true }).getAttribute("href")).toBe(
      `/console/services/${published!.id}/connect`,
    );
    expect(published).toMatchObject({ name: "Harbor Notes", visibility: "public" });
    expect((await call("GET", `/services/public/${published!.id}`)).status).toBe(200);

    // The phone layout: the header row is out of sight, each row a card as wide as the content, each
    // cell labelled by its column.
    const region = page.getByRole("region", { name: "Tools of this service" });
    await region.getByRole("link", { name: "list_notes" }).waitFor();
    const layout = (await region.evaluate(`(() => {
      const table = document.querySelector('section[aria-label="Tools of this service"] table');
      const row = table.querySelector("tbody tr");
      const cell = row.querySelector("td");
      const head = table.querySelector("thead");
      return {
        row: getComputedStyle(row).display,
        cell: getComputedStyle(cell).display,
        label: getComputedStyle(cell, "::before").content,
        labelPosition: getComputedStyle(cell, "::before").position,
        cellLeft: cell.getBoundingClientRect().left,
        cellWidth: cell.getBoundingClientRect().width,
        contentLeft: cell.querySelector("a").getBoundingClientRect().left,
        labels: [...row.querySelectorAll("td")].map((td) => td.dataset.label),
        headHeight: head.getBoundingClientRect().height,
        rowWidth: row.getBoundingClientRect().width,
        pageWidth: document.documentElement.clientWidth,
        overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      };
    })()`)) as {
      row: string;
      cell: string;
      label: string;
      labelPosition: string;
      cellLeft: number;
      cellWidth: number;
      contentLeft: number;
      labels: string[];
      headHeight: number;
      rowWidth: number;
      pageWidth: number;
      overflow: boolean;
    };
    expect(layout.row).toBe("block");
    expect(layout.cell).toBe("block");
    expect(layout.labelPosition).toBe("absolute");
    // The cell's content starts right of its label, not squeezed under it.
    expect(layout.contentLeft).toBeGreaterThan(layout.cellLeft + layout.cellWidth * 0.3);
    expect(layout.label).toBe('"Tool"');
    expect(layout.labels).toEqual(["Tool", "Operation", "Readiness", "Status"]);
    expect(layout.headHeight).toBeLessThanOrEqual(1);
    expect(layout.rowWidth).toBeGreaterThan(layout.pageWidth * 0.8);
    expect(layout.overflow).toBe(false);
    expectClean(c);
    await c.close();
  });

  it("previews and publishes an MCP server from its URL, its tools/list becoming the tools", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("mcp"), "/services/new");
    await page.getByRole("radio", { name: /An MCP server/ }).check();
    await page.getByLabel("MCP server URL").fill(mcp.url);
    await page.getByRole("button", { name: "Preview the tools" }).click();
    const preview = page.getByRole("region", { name: "Tools to be created" });
    await preview.waitFor();
    const search = preview.getByRole("row").filter({ hasText: "search_docs" });
    expect(await search.textContent()).toContain("MCP tool");
    expect(await search.textContent()).toContain("query, limit");
    const previewed = await preview.getByRole("row").count();
    expect(previewed).toBeGreaterThan(2);
    expect(await servicesOf(page)).toEqual([]);
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "test-upstream" }).waitFor();
    const tools = page.getByRole("region", { name: "Tools of this service" });
    await tools.getByRole("link", { name: "search_docs" }).waitFor();
    expect(await tools.getByRole("row").count()).toBe(previewed);
    const [published] = await servicesOf(page);
    expect(published).toMatchObject({ name: "test-upstream", visibility: "private" });
    expectClean(c);
    await c.close();
  });

  it("names a broken document's defect and where it is, and stores nothing", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("broken"), "/services/new");
    const document = page.getByLabel("OpenAPI document (JSON or YAML)");
    const preview = page.getByRole("button", { name: "Preview the tools" });

    // No paths: named, not "[object Object] is not a valid Openapi API definition".
    await document.fill("openapi: 3.0.3\ninfo:\n  title: Empty\n  version: '1'\n");
    await preview.click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain(
      "invalid OpenAPI document at #/paths: an OpenAPI 3.0 document needs a `paths` object",
    );
    expect(await page.getByTestId("defect-location").textContent()).toBe("Where: #/paths");

    // A YAML syntax error: its line and column.
    await document.fill("openapi: 3.0.3\ninfo:\n  title: [unclosed\n  version: '1'\npaths: {}\n");
    await preview.click();
    await expect.poll(() => page.getByTestId("defect-location").textContent()).toMatch(/^Where: line \d+, column \d+$/);
    expect(await alert.textContent()).toContain("the document is not valid JSON or YAML");
    await checkScreen(page, "publish-error", alert);
    expect(await servicesOf(page)).toEqual([]);
    expectClean(c);
    await c.close();
  });

  it("shows a new API key in a dialog that stays until dismissed", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    await signUp(page, s, newPerson("dialog"), "/keys");
    // The list first: the form waits behind "New key".
    expect(await page.getByLabel("Name", { exact: true }).isVisible()).toBe(false);
    await page.getByText("No keys in this organization yet.").waitFor();
    await page.getByRole("button", { name: "New key" }).first().click();
    const drawer = page.getByRole("dialog", { name: "Create a key" });
    await drawer.getByLabel("Name", { exact: true }).fill("deploy bot");
    await drawer.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Your new API key" });
    await dialog.waitFor();
    const key = (await dialog.getByTestId("shown-once").textContent())!.trim();
    expect(key).toMatch(/^tp_/);
    // Modal: the page behind it is inert, and the create drawer closed.
    expect(await page.evaluate(`document.querySelector("dialog.secret-dialog").matches(":modal")`)).toBe(true);
    expect(await drawer.isVisible()).toBe(false);
    await page.getByRole("heading", { name: "deploy bot" }).waitFor();
    await dialog.getByRole("button", { name: "Done, I have copied it" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(key);
    expectClean(c);
    await c.close();
  });

  it("answers a YAML body with a 415 saying what to send, and previews through the API", async () => {
    const agent = await call("POST", "/agents", { body: { name: "yaml-sender", operator_email: "yaml@example.com" } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    const key = agent.body.api_key as string;
    const yaml = notesYaml("Yaml Notes", upstream.url);
    for (const type of ["application/yaml", "text/yaml"]) {
      for (const path of ["/services", "/services/preview"]) {
        const refused = await call("POST", path, { key, body: yaml, headers: { "content-type": type } });
        expect(refused.status, `${type} to ${path}`).toBe(415);
        expect(refused.body.error.code).toBe("unsupported_media_type");
        expect(refused.body.error.message).toContain('{"api": {"document_text": "<the document as text>"}}');
      }
    }
    // What it says to send works, and a preview stores nothing.
    const previewed = await call("POST", "/services/preview", { key, body: { api: { document_text: yaml } } });
    expect(previewed.status, JSON.stringify(previewed.body)).toBe(200);
    expect(previewed.body).toMatchObject({
      name: "Yaml Notes",
      service_type: "api",
      base_url: upstream.url,
      security_schemes: [],
      warnings: ["ignored fields OpenAPI does not define: #/info/audience"],
    });
    expect(previewed.body.tools.map((t: { name: string; method: string; path: string; parameters: string[] }) => t)).toEqual([
      {
        name: "list_notes",
        description: "List the notes",
        method: "GET",
        path: "/notes",
        parameters: [],
        deprecated: false,
        side_effecting: false,
      },
      {
        name: "get_note",
        description: "One note",
        method: "GET",
        path: "/notes/{note_id}",
        parameters: ["note_id"],
        deprecated: false,
        side_effecting: false,
      },
    ]);
    expect((await call("GET", "/services", { key })).body).toEqual([]);
    const published = await call("POST", "/services", { key, body: { api: { document_text: yaml } } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect(published.body.tools).toHaveLength(2);
    // A broken document previews as it publishes: a 400 naming where.
    const broken = await call("POST", "/services/preview", {
      key,
      body: { api: { document_text: "openapi: 3.0.3\ninfo: {}\n" } },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatchObject({ code: "invalid_openapi_document", details: { location: "#/paths" } });
  });
});
