/**
 * The OAuth consent page and the connected apps on the keys screen, in a real browser against the real
 * stack (issue 32). An MCP client is played by this file: its Client ID Metadata Document is served over
 * HTTPS by a test receiver (identity trusts the test CA through NODE_EXTRA_CA_CERTS and may fetch from that
 * one loopback port through IDENTITY_OUTBOUND_ALLOW), and its redirect_uri is a plain local HTTP server.
 * The browser goes to `/oauth/authorize`, is sent to the console's consent page, signs in there (the
 * request survives the sign-in), sees who asks and the first-time warning, picks a permission and allows;
 * it lands on the redirect_uri with the code, which is exchanged for tokens with the PKCE verifier. The
 * grant shows on the keys screen with that permission, is revoked there, and its access token is then
 * refused. Denying sends the browser back with `error=access_denied`, grants nothing, and the request,
 * once answered, shows as over. Both screens are scanned with axe and captured at laptop and phone width.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import {
  type ConsolePage,
  type ConsoleStack,
  checkScreen,
  launchBrowser,
  newPerson,
  openConsole,
  sessionOf,
  signUpByApi,
  startConsoleStack,
} from "./console-support.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field and checked with expect
type Json = any;

const CLIENT_NAME = "Harbor Assistant";

describe("the console's OAuth consent page and connected apps", () => {
  let s: ConsoleStack;
  let browser: Browser;
  let documents: Receiver;
  let redirects: http.Server;
  let clientId: string;
  let redirectUri: string;

  const api = async (path: string, token: string) => {
    const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const post = async (path: string, token: string, body: unknown) => {
    const res = await fetch(`${s.stack.gatewayUrl}/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as Json;
    expect(res.status, JSON.stringify(answer)).toBeLessThan(300);
    return answer;
  };

  beforeAll(async () => {
    const ca = await testCertificates();
    redirects = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("back at the app");
    });
    await new Promise<void>((resolve) => redirects.listen(0, "127.0.0.1", resolve));
    redirectUri = `http://127.0.0.1:${(redirects.address() as AddressInfo).port}/callback`;
    documents = await startHttpsReceiver();
    clientId = `${documents.url}/oauth/client.json`;
    const document = {
      client_id: clientId,
      client_name: CLIENT_NAME,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
    documents.respond((req) =>
      req.path === "/oauth/client.json"
        ? { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(document) }
        : { status: 404, body: "no such document" },
    );
    [s, browser] = await Promise.all([
      startConsoleStack({
        NODE_EXTRA_CA_CERTS: ca.caFile,
        // The document's own port only: any other loopback address stays refused.
        IDENTITY_OUTBOUND_ALLOW: `127.0.0.1:${documents.port}`,
      }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await documents?.close();
    if (redirects) {
      redirects.closeAllConnections();
      await new Promise((resolve) => redirects.close(resolve));
    }
  });

  /** An authorization request as an MCP client makes it: PKCE S256, a state, this stack's MCP server. */
  function authorizeUrl(state: string) {
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state,
      resource: s.stack.mcpUrl,
      scope: "mcp",
    });
    return { url: `${s.stack.gatewayUrl}/oauth/authorize?${query}`, verifier };
  }

  /** The page asked nothing of another origin but the client's redirect_uri, and logged no error. */
  function expectOnlyRedirectLeft(c: ConsolePage) {
    expect(c.errors).toEqual([]);
    expect(c.offsite.filter((u) => !u.startsWith(new URL(redirectUri).origin))).toEqual([]);
  }

  it("signs in on the consent page, allows with a permission, and the grant is listed, then revoked, on the keys screen", async () => {
    const person = newPerson("oauth");
    const { token, accountId } = await signUpByApi(s, person);
    // An organization of the person's own, and one where another person made them a viewer: a viewer
    // cannot let an app call that organization's tools, so the page does not offer it.
    const team = await post("/organizations", token, { name: "Harbor Team" });
    const other = await signUpByApi(s, newPerson("owner"));
    const watched = await post("/organizations", other.token, { name: "Watched Co" });
    await post(`/organizations/${watched.id}/members`, other.token, { account_id: accountId, role: "viewer" });
    const c = await openConsole(browser, s);
    const { page } = c;

    // The gateway checks the request and sends the browser to the console, which asks to sign in first.
    const { url, verifier } = authorizeUrl("xyz");
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe("/console/oauth/authorize");
    const requestId = new URL(page.url()).searchParams.get("request");
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await page.getByText("An app asks to use Toolport for you").waitFor();
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    // The same request, now answered by a signed-in person: who asks, where the browser goes back to.
    await page.getByRole("heading", { level: 1, name: `Allow ${CLIENT_NAME} to use Toolport?` }).waitFor();
    expect(new URL(page.url()).searchParams.get("request")).toBe(requestId);
    expect(await page.getByTestId("signed-in-as").textContent()).toBe(`Signed in as ${person.email}`);
    expect(await page.getByTestId("first-time").textContent()).toContain(
      `You have never allowed this app before. Only continue if you started this from ${CLIENT_NAME}`,
    );
    await page.getByText(clientId, { exact: true }).waitFor();
    expect(await page.getByTestId("redirect-host").textContent()).toBe(
      `After you decide, you go back to ${new URL(redirectUri).host}.`,
    );
    const organization = page.getByLabel("Organization");
    const offered = await organization.locator("option").allTextContents();
    expect(offered).toHaveLength(2);
    expect(offered[0]).toMatch(/\(personal\) · owner$/);
    expect(offered[1]).toBe("Harbor Team · owner");
    await checkScreen(page, "oauth-consent");

    // Where and what: the team, confirmation before writes, and a daily cap.
    await organization.selectOption(team.id);
    await page.getByLabel("Require confirmation for calls that write, send, spend or delete").check();
    await page.getByLabel("Daily cap (USD)").fill("5");
    await page.getByRole("button", { name: "Allow" }).click();

    await page.waitForURL((u) => u.toString().startsWith(redirectUri));
    const landed = new URL(page.url());
    expect(landed.searchParams.get("state")).toBe("xyz");
    expect(landed.searchParams.get("iss")).toBe(new URL(s.stack.gatewayUrl).origin);
    const code = landed.searchParams.get("code");
    expect(code).toBeTruthy();

    // The client redeems the code with its verifier (a public client: no secret).
    const exchanged = await fetch(`${s.stack.gatewayUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: code!,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: redirectUri,
        resource: s.stack.mcpUrl,
      }),
    });
    const tokens = (await exchanged.json()) as Json;
    expect(exchanged.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens).toMatchObject({ token_type: "Bearer", scope: "mcp" });
    const info = await api("/oauth/token-info", tokens.access_token);
    expect(info).toMatchObject({ status: 200, body: { active: true, client_id: clientId, resource: s.stack.mcpUrl } });

    // The grant: a key of the person's with the permission chosen on the page.
    const grants = (await api("/oauth/grants", token)).body as Json[];
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      client_id: clientId,
      client_name: CLIENT_NAME,
      key: {
        id: info.body.key_id,
        oauth_client_id: clientId,
        organization_id: team.id,
        permissions: {
          allowed_tools: null,
          allowed_services: null,
          max_cost_per_call_cents: null,
          daily_spend_limit_cents: 500,
          require_confirmation: true,
        },
      },
    });

    // The keys screen lists it among the connected apps, not among the keys.
    await page.goto(`${s.url}/keys`);
    const card = page.getByTestId("oauth-grant");
    await card.getByRole("heading", { name: CLIENT_NAME }).waitFor();
    // Listed whatever organization the console acts in (here the personal one), naming the grant's.
    const text = await card.textContent();
    expect(text).toContain(new URL(clientId).host);
    expect(text).toContain("Harbor Team");
    expect(text).toContain("$5.00 a day at most; confirmation before writes, sends, spends and deletes.");
    await page.getByText("No keys in this organization yet.").waitFor();
    expect(await page.getByRole("heading", { name: `MCP: ${CLIENT_NAME}` }).count()).toBe(0);
    expect(await card.getByRole("link", { name: `Usage of ${CLIENT_NAME}` }).getAttribute("href")).toBe(
      `/console/keys/${info.body.key_id}`,
    );
    await checkScreen(page, "keys-oauth", card);

    // Its usage page, like any key's, though the grant is in another organization than the console's.
    await card.getByRole("link", { name: `Usage of ${CLIENT_NAME}` }).click();
    await page.getByRole("heading", { level: 1, name: `Usage of MCP: ${CLIENT_NAME}` }).waitFor();
    expect(await page.getByTestId("key-permissions").textContent()).toContain("$5.00 a day at most");
    await page.getByText(`OAuth grant to ${new URL(clientId).host}`).waitFor();
    await page.getByRole("link", { name: "All keys" }).click();

    // Revoked there, the client's access token is refused at once.
    await card.getByRole("button", { name: `Revoke ${CLIENT_NAME}`, exact: true }).click();
    await card.getByRole("button", { name: `Revoke ${CLIENT_NAME}?` }).click();
    await page.getByText("No app is connected through OAuth.").waitFor();
    expect((await api("/oauth/token-info", tokens.access_token)).status).toBe(401);
    expect(((await api("/oauth/grants", token)).body as Json[]).length).toBe(0);
    expectOnlyRedirectLeft(c);
    await c.close();
  });

  it("denies: back to the app with access_denied, nothing granted, and the answered request is over", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    const person = newPerson("deny");
    const { url } = authorizeUrl("deny-state");
    await page.goto(url);
    const consentUrl = page.url();
    // Signing up on the consent page keeps the request too.
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByLabel("Name").fill(person.name);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { level: 1, name: `Allow ${CLIENT_NAME} to use Toolport?` }).waitFor();
    const { token } = await sessionOf(page);

    await page.getByRole("button", { name: "Deny" }).click();
    await page.waitForURL((u) => u.toString().startsWith(redirectUri));
    const landed = new URL(page.url());
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("state")).toBe("deny-state");
    expect(landed.searchParams.get("code")).toBeNull();
    expect((await api("/oauth/grants", token)).body).toEqual([]);

    // Back on the page of the answered request: a plain message, nothing to decide.
    await page.goto(consentUrl);
    await page.getByRole("heading", { level: 1, name: "This request is over" }).waitFor();
    expect(await page.getByRole("button", { name: "Allow" }).count()).toBe(0);
    expectOnlyRedirectLeft(c);
    await c.close();
  });
});
