/**
 * The console's Activity screen and the key usage page's refusals, in a real browser against the real
 * stack, at laptop (1280x800) and phone (390x844) width: a person with no calls sees an empty state that
 * says what to do first (and no chart scale); a call made with a key shows in the log and its stored
 * result opens from its row; a call refused by the key's allow-list is listed with its reason and counted
 * on the key's usage page, which links to the key's calls. Every screen is scanned with axe.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  checkScreen,
  consoleApi,
  expectClean,
  LAPTOP,
  launchBrowser,
  newPerson,
  openConsole,
  PHONE,
  sessionOf,
  signUp,
  startConsoleStack,
  untilIndexed,
} from "./console-support.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field and checked with expect
type Json = any;

describe("the console's activity log", () => {
  let s: ConsoleStack;
  let browser: Browser;

  const api = consoleApi(() => s);

  beforeAll(async () => {
    [s, browser] = await Promise.all([startConsoleStack(), launchBrowser()]);
    await untilIndexed(s, "word count", "text-word-count");
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  for (const viewport of [LAPTOP, PHONE]) {
    it(`lists calls and refusals, opens a result, and reads right when empty (${viewport.width}x${viewport.height})`, async () => {
      const c = await openConsole(browser, s, viewport);
      const { page } = c;
      await signUp(page, s, newPerson("activity"), "/activity");
      const me = await sessionOf(page);

      // Nothing yet: the log says what to do first.
      await page.getByRole("heading", { name: "Activity", level: 1 }).waitFor();
      const empty = page.getByTestId("activity-empty");
      await empty.waitFor();
      expect(await empty.textContent()).toContain("Make a first call");
      await checkScreen(page, "activity-empty");

      // Two keys: one that may call anything, one that may only count words.
      const makeKey = async (name: string, permissions: unknown) => {
        const res = await api("/api-keys", {
          token: me.token,
          method: "POST",
          body: { name, organization_id: me.orgId, permissions },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body as { id: string; key: string };
      };
      const wordCount = (await api("/tools/public/search?query=word count")).body.find((t: Json) => t.slug === "text-word-count");
      const open = await makeKey("open key", null);
      const narrow = await makeKey("word key", { allowed_tools: [wordCount.id] });
      const idle = await makeKey("idle key", null);

      // A fresh key's usage: no chart scale over nothing, and what to do first.
      await page.goto(`${s.url}/keys/${idle.id}`);
      await page.getByRole("heading", { name: "Usage of idle key" }).waitFor();
      await page.getByTestId("usage-empty").waitFor();
      const idleText = (await page.locator("main").textContent()) ?? "";
      expect(idleText).not.toContain("100%");
      expect(idleText).toContain("Make a first call with this key");
      expect(await page.getByTestId("usage-first-last").textContent()).toBe("No call made with this key in this window yet.");
      await checkScreen(page, "key-usage-empty");

      const ran = await api("/tools/call/text-slugify", {
        key: open.key,
        method: "POST",
        body: { tool_input: { text: "Hello Log" } },
      });
      expect(ran.body).toMatchObject({ success: true, result: { slug: "hello-log" } });
      const refused = await api("/tools/call/text-slugify", {
        key: narrow.key,
        method: "POST",
        body: { tool_input: { text: "No" } },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe("tool_not_permitted");

      // The refused key's usage counts the refusal and explains the empty totals.
      await page.goto(`${s.url}/keys/${narrow.id}`);
      await page.getByRole("heading", { name: "Usage of word key" }).waitFor();
      expect(await page.getByTestId("usage-refused").textContent()).toBe("1");
      expect(await page.getByTestId("usage-refusals").textContent()).toContain("tool_not_permitted (1)");
      expect(await page.getByTestId("usage-first-last").textContent()).toContain("every call made with this key was refused");
      expect((await page.locator("main").textContent()) ?? "").not.toContain("100%");
      await checkScreen(page, "key-usage-refused");
      // From the key's usage to its calls in the log.
      await page.getByRole("link", { name: "This key's calls" }).click();
      await page.getByRole("heading", { name: "Activity", level: 1 }).waitFor();
      const narrowRows = page.getByTestId("activity-row");
      await expect.poll(() => narrowRows.count()).toBe(1);
      expect(await narrowRows.first().getAttribute("data-status")).toBe("refused");

      // The whole log, reached from the navigation at laptop width (the phone's is behind a menu).
      if (viewport === LAPTOP) {
        await page.goto(`${s.url}/catalog`);
        await page.locator("nav#navigation").getByRole("link", { name: "Activity" }).click();
      } else {
        await page.goto(`${s.url}/activity`);
      }
      await page.getByRole("heading", { name: "Activity", level: 1 }).waitFor();
      const rows = page.getByTestId("activity-row");
      await expect.poll(() => rows.count()).toBe(2);
      const [refusedRow, ranRow] = [rows.nth(0), rows.nth(1)];
      expect(await refusedRow.getAttribute("data-status")).toBe("refused");
      expect(await refusedRow.locator('[data-label="Key"]').textContent()).toBe("word key");
      expect(await refusedRow.locator('[data-label="Tool"]').textContent()).toContain("slugify");
      expect(await refusedRow.locator('[data-label="Outcome"]').textContent()).toContain("tool_not_permitted");
      expect(await refusedRow.locator('[data-label="Result"]').textContent()).toBe("did not run");
      expect(await ranRow.getAttribute("data-status")).toBe("success");
      expect(await ranRow.locator('[data-label="Key"]').textContent()).toBe("open key");
      expect(await ranRow.locator('[data-label="Cost"]').textContent()).toBe("$0.00");
      // Every cell names its column, for a stylesheet that lays rows out as cards.
      expect(await ranRow.locator("td:not([data-label])").count()).toBe(0);

      // Filters: only the refused calls.
      await page.getByLabel("Outcome").selectOption("refused");
      await expect.poll(() => rows.count()).toBe(1);
      await page.getByLabel("Outcome").selectOption("");
      await expect.poll(() => rows.count()).toBe(2);

      // The call's stored result opens from its row.
      await ranRow.getByRole("button", { name: "Open the result of slugify" }).click();
      const result = page.getByTestId("activity-result");
      await result.waitFor();
      expect(await result.textContent()).toContain(ran.body.execution_id);
      expect(await result.textContent()).toContain("hello-log");
      await checkScreen(page, "activity", rows.first());
      expectClean(c);
      await c.close();
    });
  }
});
