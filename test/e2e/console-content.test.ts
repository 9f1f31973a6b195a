/**
 * The console's content screens in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against the whole stack: a person creates a webhook, reads its secret once, sees a tool call's delivery
 * appear in the history without a reload (the HTTPS receiver got it, signed with that secret), pauses and
 * resumes it and redelivers; creates a skill from a SKILL.md after the live frontmatter check complained,
 * submits it, and an administrator approves it from the review queue; builds a two-step workflow whose
 * second step uses the first one's result (a reference to a later step is held back), saves it, runs it
 * and finds the run in its history. Each screen is scanned with axe-core and photographed at a laptop's
 * and a phone's width.
 */
import { verify } from "@toolport/webhooks-verify";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import {
  type ConsolePage,
  type ConsoleStack,
  launchBrowser,
  newPerson,
  openConsole,
  PASSWORD,
  type Person,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
  signUp,
  signUpByApi,
  startConsoleStack,
} from "./console-support.js";

/** The session token the console keeps for the signed-in person. */
async function tokenOf(page: Page): Promise<string> {
  // A string, run in the page (this file has no DOM types).
  return (await page.evaluate(`JSON.parse(localStorage.getItem("toolport.session") ?? "{}").token`)) as string;
}

describe("the console's webhooks, skills, review queue and workflows", () => {
  let s: ConsoleStack;
  let browser: Browser;
  let receiver: Receiver;

  async function api(method: string, path: string, auth: { token?: string; key?: string }, body?: unknown) {
    const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, {
      method,
      headers: {
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.key ? { "svc-api-key": auth.key } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the bodies it asserts on
    return { status: res.status, body: (await res.json()) as any };
  }

  /** The axe scan and the screenshot of the screen as it is now. */
  async function check(c: ConsolePage, name: string) {
    expect(await seriousViolations(c.page)).toEqual([]);
    await screenshot(c.page, name);
  }

  /** Signs `person` in at a phone's width on `path`, waits for `ready`, scans and photographs it. */
  async function onPhone(person: Person, path: string, name: string, ready: (page: Page) => Promise<void>) {
    const c = await openConsole(browser, s, PHONE);
    await signIn(c.page, s, person, path);
    await ready(c.page);
    await check(c, name);
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();
  }

  beforeAll(async () => {
    const ca = await testCertificates();
    receiver = await startHttpsReceiver();
    [s, browser] = await Promise.all([
      startConsoleStack({
        NODE_EXTRA_CA_CERTS: ca.caFile,
        // The receiver's own port only: any other loopback address stays refused.
        WEBHOOKS_OUTBOUND_ALLOW: `127.0.0.1:${receiver.port}`,
        WEBHOOKS_POLL_MS: "200",
      }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await receiver?.close();
  });

  it("creates a webhook, shows a call's signed delivery without a reload, pauses, resumes and redelivers", async () => {
    const c = await openConsole(browser, s);
    const person = newPerson("hooks");
    await signUp(c.page, s, person, "/webhooks");
    const page = c.page;
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();

    // A refusal from the API is shown beside the form.
    const url = `${receiver.url}/console-hook`;
    await page.getByRole("button", { name: "New webhook" }).first().click();
    await page.getByLabel("Endpoint URL").fill("https://10.1.2.3/hook");
    await page.getByRole("checkbox", { name: /tool\.execution\.completed/ }).check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByRole("alert").filter({ hasText: "url_not_allowed" }).waitFor();

    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByLabel("Description (optional)").fill("calls of my agent");
    await page.getByRole("button", { name: "Create webhook" }).click();
    const secret = (await page.getByTestId("shown-once").textContent())?.trim() ?? "";
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("link", { name: url }).waitFor();
    await check(c, "webhooks");

    await page.getByRole("link", { name: "Open its page" }).click();
    await page.getByRole("heading", { name: "Webhook", level: 1 }).waitFor();
    await page.getByText("No deliveries yet.").waitFor();

    // A call as the person (a key made with their session), while the page is open.
    const token = await tokenOf(page);
    const key = await api("POST", "/api-keys", { token }, { name: "calls" });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const called = await api("POST", "/tools/call/text-word-count", { key: key.body.key }, { text: "one two three" });
    expect(called.status, JSON.stringify(called.body)).toBe(200);

    const row = page.locator("tr[data-delivery]").filter({ hasText: "tool.execution.completed" });
    await row.filter({ hasText: "succeeded" }).waitFor({ timeout: 20_000 });
    const [received] = (await receiver.waitFor(1)).filter((r) => r.path === "/console-hook");
    expect(received).toBeDefined();
    expect(verify({ secret, body: received!.body, header: received!.headers["x-svc-signature"] })).toMatchObject({ ok: true });
    const deliveryId = await row.getAttribute("data-delivery");
    expect(received!.headers["x-svc-delivery"]).toBe(deliveryId);

    await row.getByRole("button", { name: "1 attempt" }).click();
    const attempts = page.locator(`#attempts-${deliveryId}`);
    await attempts.getByRole("cell", { name: "200", exact: true }).waitFor();
    await check(c, "webhook");

    // Pause, then resume: the status changes on the page and through the API.
    const webhookId = page.url().split("/").pop()!;
    const details = page.locator(".content-details");
    await page.getByRole("button", { name: "Pause" }).click();
    await details.getByText("paused").waitFor();
    expect((await api("GET", `/webhooks/${webhookId}`, { token })).body.is_active).toBe(false);
    await page.getByRole("button", { name: "Resume" }).click();
    await details.getByText("active").waitFor();
    expect((await api("GET", `/webhooks/${webhookId}`, { token })).body.is_active).toBe(true);

    // Redeliver: a second series under the same id reaches the receiver, and its attempt appears.
    await row.getByRole("button", { name: "Redeliver" }).click();
    await page.getByRole("status").filter({ hasText: "Sent again" }).waitFor();
    await row.getByRole("button", { name: "2 attempts" }).waitFor({ timeout: 20_000 });
    await attempts.getByRole("cell", { name: "2 · 1" }).waitFor();
    const again = (await receiver.waitFor(2)).filter((r) => r.path === "/console-hook");
    expect(again.map((r) => r.headers["x-svc-delivery"])).toEqual([deliveryId, deliveryId]);

    // Rotate: the new secret in a dialog that stays until dismissed, not the first one.
    await page.getByRole("button", { name: "Rotate the secret" }).click();
    await page.getByRole("button", { name: "Rotate", exact: true }).click();
    const rotated = page.getByRole("dialog", { name: "Your webhook's new signing secret" });
    const newSecret = (await rotated.getByTestId("shown-once").textContent())!.trim();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    await rotated.getByRole("button", { name: "Done, I have copied it" }).click();
    await rotated.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(newSecret);
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();

    await onPhone(person, "/webhooks", "webhooks", (p) => p.getByRole("link", { name: url }).waitFor());
    await onPhone(person, `/webhooks/${webhookId}`, "webhook", async (p) => {
      const delivery = p.locator("tr[data-delivery]").filter({ hasText: "succeeded" });
      await delivery.waitFor();
      // A card per delivery, each cell labelled from its column's header (the screen gives no labels).
      const displayOf = (row: unknown) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(row).display;
      expect(await delivery.evaluate(displayOf)).toBe("block");
      expect(await delivery.locator("td").first().getAttribute("data-label")).toBe("Event");
      await delivery.scrollIntoViewIfNeeded();
    });
  }, 240_000);

  it("creates a skill after the live frontmatter check, and an administrator approves its submission", async () => {
    const c = await openConsole(browser, s);
    const person = newPerson("skills");
    await signUp(c.page, s, person, "/skills");
    const page = c.page;
    // The form is in a drawer: the list comes first.
    await page.getByRole("button", { name: "New skill" }).first().click();
    const skillMd = page.getByLabel("SKILL.md", { exact: true });
    const name = page.getByLabel("Name", { exact: true });

    // A bad frontmatter: the check complains beside each field as the person types.
    await skillMd.fill("---\nname: CSV Notes\n---\n# CSV notes\n");
    await page.locator("#skill-md-check").getByText("description: is required").waitFor();
    await page.locator("#skill-name-check").getByText("must be lowercase letters").waitFor();
    expect(await skillMd.getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("button", { name: "Create skill" }).click();
    await page.getByRole("alert").filter({ hasText: "Fix the problems marked above first" }).waitFor();
    expect((await api("GET", "/skills/my", { token: await tokenOf(page) })).body).toEqual([]);

    // Fixed: the name follows the frontmatter's.
    const skillName = `csv-notes-${person.name.split(" ")[1]}`;
    await skillMd.fill(
      `---\nname: ${skillName}\ndescription: Take tidy notes from CSV files; use it when a CSV needs a summary.\nlicense: MIT\n---\n# CSV notes\n\nRead the file, then summarise each column.\n`,
    );
    await page.getByText("Frontmatter looks right").waitFor();
    expect(await name.inputValue()).toBe(skillName);
    await page.getByRole("button", { name: "Create skill" }).click();
    const card = page.locator("li[data-skill]").filter({ hasText: skillName });
    await card.waitFor();

    await card.getByRole("button", { name: "Submit for public release" }).click();
    await card.getByText("Submitted for review.").waitFor();
    const submission = page.locator("li[data-submission]").filter({ hasText: skillName });
    await submission.getByText("pending").waitFor();
    const token = await tokenOf(page);
    expect((await api("GET", "/skill-submissions/my", { token })).body).toMatchObject([
      { skill_name: skillName, status: "pending" },
    ]);

    // The screen with a skill and the frontmatter check at work on a new draft.
    await page.getByRole("button", { name: "New skill" }).click();
    await skillMd.fill("---\nname: Charts\ndescription: Draw charts from a CSV file.\n---\n# Charts\n");
    await page.getByText("Frontmatter looks right").waitFor();
    await page.locator("#skill-name-check").getByText("must be lowercase letters").waitFor();
    await check(c, "skills");

    // Someone who is not an administrator opening the queue sees the refusal explained.
    await page.goto(`${s.url}/review`);
    await page.getByText("for Toolport's platform administrators").waitFor();
    await page.getByRole("alert").filter({ hasText: "platform_admin_only" }).waitFor();
    expect(await page.getByRole("link", { name: "Review queue" }).count()).toBe(0);

    // The administrator, signed up by the API and signed in through the form.
    const admin: Person = { email: s.adminEmail, password: PASSWORD, name: "Toolport Admin" };
    await signUpByApi(s, admin);
    const a = await openConsole(browser, s);
    await signIn(a.page, s, admin, "/review");
    await a.page.getByRole("link", { name: "Review queue" }).waitFor();
    const pending = a.page.locator("li[data-submission]").filter({ hasText: skillName });
    await pending.locator("p", { hasText: "Take tidy notes from CSV files" }).waitFor();
    await pending.getByText("SKILL.md", { exact: true }).click();
    await pending.locator("pre").getByText("summarise each column").waitFor();
    await check(a, "review");
    await onPhone(admin, "/review", "review", (p) => p.locator("li[data-submission]").filter({ hasText: skillName }).waitFor());

    await pending.getByLabel(`Notes for the submitter of ${skillName}`).fill("Clear and useful, thanks.");
    await pending.getByRole("button", { name: "Approve" }).click();
    await a.page
      .getByRole("status")
      .filter({ hasText: `${skillName} approved` })
      .waitFor();
    expect(a.errors).toEqual([]);
    expect(a.offsite).toEqual([]);
    await a.close();

    // The person sees the decision and its notes; the skill is public.
    await page.goto(`${s.url}/skills`);
    await submission.getByText("approved").waitFor();
    await submission.getByText("Clear and useful, thanks.").waitFor();
    const listed = await api("GET", `/skills/public?search=${skillName}`, {});
    expect(listed.body.map((x: { name: string }) => x.name)).toContain(skillName);
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();

    await onPhone(person, "/skills", "skills", (p) =>
      p.locator("li[data-skill]").filter({ hasText: skillName }).first().waitFor(),
    );
  }, 240_000);

  it("builds a two-step workflow with template hints, holds back a reference to a later step, saves and runs it", async () => {
    const c = await openConsole(browser, s);
    const person = newPerson("flows");
    await signUp(c.page, s, person, "/workflows");
    const page = c.page;
    await page.getByText("No workflows yet.").waitFor();
    await page.getByRole("link", { name: "New workflow" }).click();
    await page.getByRole("heading", { name: "New workflow", level: 1 }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Shout a slug");
    await page.getByLabel("Inputs", { exact: true }).fill("title");

    const step1 = page.getByRole("group", { name: "Step 1", exact: true });
    await step1.getByLabel("Find a tool for step 1").fill("slugify");
    await step1.getByRole("button", { name: "Use slugify" }).first().click();
    await step1.getByLabel("Value of text", { exact: true }).waitFor();

    await page.getByRole("button", { name: "Add a step" }).click();
    const step2 = page.getByRole("group", { name: "Step 2", exact: true });
    await step2.getByLabel("Find a tool for step 2").fill("change case");
    await step2.getByRole("button", { name: "Use change_case" }).first().click();
    await step2.getByLabel("Value of to", { exact: true }).waitFor();

    // A reference to a later step is flagged beside its value, and the save is held back.
    const first = step1.getByLabel("Value of text", { exact: true });
    await first.fill("{{steps.2.result.slug}}");
    await step1.getByText("refers to step 2, which does not run before step 1").waitFor();
    expect(await first.getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.getByRole("alert").filter({ hasText: "Not saved yet" }).waitFor();
    const token = await tokenOf(page);
    expect((await api("GET", "/workflows/my", { token })).body).toEqual([]);
    // Step 1 is offered no step results at all.
    expect(await step1.getByRole("button", { name: /steps\./ }).count()).toBe(0);

    // Fixed with the hints: the run's input in step 1, step 1's slug in step 2.
    await first.fill("");
    await first.focus();
    await step1.getByRole("button", { name: "{{inputs.title}}" }).click();
    expect(await first.inputValue()).toBe("{{inputs.title}}");
    const second = step2.getByLabel("Value of text", { exact: true });
    await second.focus();
    await step2.getByRole("button", { name: "{{steps.1.result.slug}}" }).click();
    expect(await second.inputValue()).toBe("{{steps.1.result.slug}}");
    await step2.getByLabel("Value of to", { exact: true }).fill("upper");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.getByRole("heading", { name: "Shout a slug", level: 1 }).waitFor();
    const workflowId = page.url().split("/").pop()!;
    const saved = await api("GET", `/workflows/${workflowId}`, { token });
    expect(saved.body.steps.map((x: { tool_name: string; input_mapping: unknown }) => [x.tool_name, x.input_mapping])).toEqual([
      ["slugify", { text: "{{inputs.title}}" }],
      ["change_case", { text: "{{steps.1.result.slug}}", to: "upper" }],
    ]);

    // Run it with an input: the run completes with the second step's output, and joins the history.
    await page.getByLabel("Input title").fill("Hello Console World");
    await page.getByRole("button", { name: "Run workflow" }).click();
    const run = page.locator(".content-run");
    await run.getByText("HELLO-CONSOLE-WORLD").waitFor({ timeout: 30_000 });
    await run.locator(".badge", { hasText: "completed" }).first().waitFor();
    const history = page.locator(".content-runs li[data-run]");
    await history.filter({ hasText: "completed" }).waitFor();
    const runs = await api("GET", `/workflows/${workflowId}/runs`, { token });
    expect(runs.body.map((r: { status: string; result: unknown }) => [r.status, r.result])).toEqual([
      ["completed", { result: "HELLO-CONSOLE-WORLD" }],
    ]);
    await history.first().locator("summary").first().click();
    await check(c, "workflow");

    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("link", { name: "Shout a slug" }).waitFor();
    await check(c, "workflows");
    expect(c.errors).toEqual([]);
    expect(c.offsite).toEqual([]);
    await c.close();

    await onPhone(person, "/workflows", "workflows", (p) => p.getByRole("link", { name: "Shout a slug" }).waitFor());
    await onPhone(person, `/workflows/${workflowId}`, "workflow", (p) =>
      p.locator(".content-runs li[data-run]").filter({ hasText: "completed" }).waitFor(),
    );
  }, 240_000);
});
