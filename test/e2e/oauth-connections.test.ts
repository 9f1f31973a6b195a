/**
 * OAuth connections (issue 20) against a real OAuth 2.0 authorization server (oidc-provider, in
 * test/harness/oauth-server.ts) with a protected API behind it, and the whole stack:
 * - a publisher registers the service's OAuth client; a person connects on the `configuration_url` page in
 *   chromium (authorization code with PKCE and state, through the provider's login and consent pages), and
 *   the service's tools turn ready;
 * - calls send the access token and never show it; an expired token is refreshed once for 20 concurrent
 *   calls; a token the provider ended early (401) is refreshed and the call retried;
 * - revoking at the provider breaks the connection: readiness falls back to needs_credential, the page
 *   says so, and connecting again fixes it;
 * - state and PKCE mismatches are refused and store nothing; DELETE /connections/{id} revokes at the provider
 *   (RFC 7009); the client-credentials flow connects machine to machine and re-fetches its token;
 * - no token, code or client secret appears in any log line of the stack or in any answer.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type RequestOptions } from "../harness/http.js";
import { authorizeInBrowser, authorizeOverHttp, type OAuthServer, startOAuthServer } from "../harness/oauth-server.js";
import {
  type ConsoleStack,
  LAPTOP,
  launchBrowser,
  newPerson,
  openConsole,
  type Person,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
  signUp,
  signUpByApi,
  startConsoleStack,
} from "./console-support.js";

/** Short enough to wait out, long enough that a refreshed token outlives a burst of calls on a busy machine. */
const TOKEN_TTL_SECONDS = 6;

let oauth: OAuthServer;
let s: ConsoleStack;
let browser: Browser;
let call: ReturnType<typeof gatewayClient>;
/** Every answer's body as text, to check at the end that no secret reached one. */
const answers: string[] = [];
let service: { id: string; tools: Record<string, string> };
/** The person who connects, once signed up in the console. */
let person: { token: string; key: string; login: Person };

async function api(method: string, path: string, options: RequestOptions = {}) {
  const reply = await call(method, path, options);
  answers.push(JSON.stringify(reply.body));
  return reply;
}

/** The gateway's callback as a browser would hit it, without following the redirect. */
async function callback(query: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
  const res = await fetch(`${s.stack.gatewayUrl}/v1/oauth/callback?${new URLSearchParams(query)}`, { redirect: "manual" });
  const body = await res.text();
  answers.push(body);
  return { status: res.status, location: res.headers.get("location"), body };
}

async function tokenOf(page: Page): Promise<string> {
  return (await page.evaluate(`JSON.parse(localStorage.getItem("toolport.session") ?? "{}").token`)) as string;
}

/**
 * The console's errors, less the provider's: its login page asks for a web font on a public host, which
 * cannot load here (the harness refuses it, or the name does not resolve: no network leaves the machine).
 * The console itself loads nothing from elsewhere (test/e2e/console.test.ts checks that).
 */
const consoleErrors = (errors: string[]) => errors.filter((e) => !/net::ERR_(FAILED|NAME_NOT_RESOLVED)/.test(e));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const readinessOf = (page: Page, tool: string) => page.locator(".readiness-list li").filter({ hasText: tool });

/** Clicks the page's OAuth button, then goes through the provider's pages; resolves back on the connect page. */
async function connectInBrowser(page: Page): Promise<URL> {
  // The console sends the browser to the provider: that navigation's address is the authorization URL.
  const toProvider = page.waitForRequest((r) => r.isNavigationRequest() && r.url().startsWith(oauth.authorizationUrl));
  await page.getByRole("button", { name: "Connect with the provider" }).click();
  const authorizationUrl = new URL((await toProvider).url());
  await authorizeInBrowser(page, authorizationUrl.toString());
  await page
    .waitForURL((url) => url.pathname === `/console/services/${service.id}/connect`)
    .catch(async (error: Error) => {
      // Say where the browser stopped instead (a callback's error answer, the provider's page), naming the
      // address's parameters but not their values: a callback's carry the authorization code.
      const at = new URL(page.url());
      const text = await page.textContent("body", { timeout: 1000 }).catch(() => "");
      const where = `${at.origin}${at.pathname} (parameters: ${[...at.searchParams.keys()].join(", ") || "none"})`;
      throw new Error(`not back on the connect page: at ${where}: ${text?.trim().slice(0, 300)}`, { cause: error });
    });
  return authorizationUrl;
}

async function callTool(name: string, input: Record<string, unknown> = {}) {
  return api("POST", `/tools/call/${service.tools[name]}`, { key: person.key, body: { tool_input: input } });
}

beforeAll(async () => {
  [oauth, s, browser] = await Promise.all([
    startOAuthServer({ accessTokenTtlSeconds: TOKEN_TTL_SECONDS }),
    startConsoleStack({
      // The provider and its API listen on loopback: allowed explicitly, as an operator would.
      CATALOG_OUTBOUND_ALLOW: "127.0.0.1",
      EXECUTION_OUTBOUND_ALLOW: "127.0.0.1",
      // Tokens live 6 s here; refresh only once one has (almost) expired.
      EXECUTION_OAUTH_REFRESH_BEFORE_SECONDS: "1",
      // Every line there is: the secrets must be in none of them.
      LOG_LEVEL: "debug",
    }),
    launchBrowser(),
  ]);
  call = gatewayClient(s.stack.gatewayUrl);
  oauth.setRedirectUris([`${s.stack.gatewayUrl}/v1/oauth/callback`]);

  const publisher = await signUpByApi(s, newPerson("publisher"));
  const published = await api("POST", "/services", {
    token: publisher.token,
    body: { api: { document: oauth.openapi({ title: "Items API" }) }, visibility: "public" },
  });
  expect(published.status, JSON.stringify(published.body)).toBe(201);
  expect(published.body.warnings.join("\n")).not.toContain("OAuth");
  service = {
    id: published.body.service.id,
    tools: Object.fromEntries(published.body.tools.map((t: { name: string; id: string }) => [t.name, t.id])),
  };

  // Not the publisher: 403 for another person, 404 for an unknown service.
  const stranger = await signUpByApi(s, newPerson("stranger"));
  const refused = await api("PUT", `/services/${service.id}/oauth-client`, {
    token: stranger.token,
    body: { client_id: "x", client_secret: "y" },
  });
  expect(refused.status).toBe(403);

  const registered = await api("PUT", `/services/${service.id}/oauth-client`, {
    token: publisher.token,
    body: { client_id: oauth.client.clientId, client_secret: oauth.client.clientSecret, revocation_url: oauth.revocationUrl },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(200);
  expect(registered.body).toMatchObject({
    scheme_name: "oauth",
    flow: "authorization_code",
    client_id: oauth.client.clientId,
    has_client_secret: true,
    authorization_url: oauth.authorizationUrl,
    token_url: oauth.tokenUrl,
    redirect_uri: `${s.stack.gatewayUrl}/v1/oauth/callback`,
    shared: false,
  });
  // The scopes the operations' requirements name.
  expect([...registered.body.scopes].sort()).toEqual(["items:read", "items:write"]);
  expect(JSON.stringify(registered.body)).not.toContain(oauth.client.clientSecret);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await oauth?.close();
});

describe("OAuth connections", () => {
  it("connects through the provider from the configuration_url page; the tools turn ready and calls send the token", async () => {
    const c = await openConsole(browser, s);
    const { page } = c;
    const login = newPerson("ada");
    await signUp(page, s, login);
    const token = await tokenOf(page);
    const key = await api("POST", "/api-keys", { token, body: { name: "oauth calls" } });
    expect(key.status).toBe(200);
    person = { token, key: key.body.key, login };

    const described = await api("GET", `/tools/${service.tools.listItems}/describe`, { key: person.key });
    expect(described.body.readiness).toBe("needs_credential");
    expect(described.body.security_schemes).toMatchObject([
      { name: "oauth", type: "oauth2", connect_flow: "authorization_code" },
    ]);
    const before = await callTool("listItems");
    expect(before.body.success).toBe(false);
    expect(before.body.error).toContain("no credential is connected");

    await page.goto(described.body.configuration_url);
    await page.getByRole("heading", { level: 1, name: "Connect Items API" }).waitFor();
    await readinessOf(page, "listItems").getByText("needs credential").waitFor();
    const authorizationUrl = await connectInBrowser(page);
    // PKCE (S256) and a state, the scopes the tools need, the gateway's callback.
    const q = authorizationUrl.searchParams;
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("scope")?.split(" ").sort()).toEqual(["items:read", "items:write"]);
    expect(q.get("redirect_uri")).toBe(`${s.stack.gatewayUrl}/v1/oauth/callback`);

    await page.getByText("Connected through the provider").waitFor();
    await readinessOf(page, "listItems").getByText("ready").waitFor();
    const table = page.getByRole("region", { name: "OAuth connections of this service" });
    await table.getByText(/items:read/).waitFor();
    expect(await table.textContent()).toContain("active");
    expect(oauth.counts.authorizationCode).toBe(1);
    for (const viewport of [LAPTOP, PHONE]) {
      await page.setViewportSize(viewport);
      expect(await seriousViolations(page), `connect-oauth at ${viewport.width}px`).toEqual([]);
      await screenshot(page, "connect-oauth");
    }
    await page.setViewportSize(LAPTOP);

    const connections = await api("GET", "/connections", { token });
    expect(connections.body).toEqual([
      expect.objectContaining({
        service_id: service.id,
        service_name: "Items API",
        scope: "caller",
        status: "active",
        flow: "authorization_code",
        broken_reason: null,
      }),
    ]);
    expect([...connections.body[0].scopes].sort()).toEqual(["items:read", "items:write"]);
    const credentials = await api("GET", `/services/${service.id}/credentials`, { token });
    expect(credentials.body).toEqual([expect.objectContaining({ type: "oauth2", scope: "caller", hint: null })]);

    const listed = await callTool("listItems");
    expect(listed.body, JSON.stringify(listed.body)).toMatchObject({
      success: true,
      result: { items: [{ id: 1, name: "first" }] },
    });
    const created = await callTool("createItem", { name: "second" });
    expect(created.body).toMatchObject({ success: true, result: { name: "second" } });

    // An upstream that echoes the header it received: the token is masked in the result.
    const echoed = await callTool("echoAuth");
    expect(echoed.body.success).toBe(true);
    expect(echoed.body.result.authorization).toMatch(/REDACTED/);
    // In plain words the token has no shape a pattern knows: only the exact value the call sent finds it.
    expect(echoed.body.result.note).toMatch(/^the token I got is \[REDACTED:OAUTH_ACCESS_TOKEN\], thanks$/);
    const stored = await api("GET", `/tools/executions/${echoed.body.execution_id}/result`, { key: person.key });
    expect(stored.body.result).toEqual(echoed.body.result);

    expect(consoleErrors(c.errors)).toEqual([]);
    await c.close();
  });

  it("refreshes an expired token once for 20 concurrent calls, and once more when the provider ends a token early", async () => {
    await sleep((TOKEN_TTL_SECONDS + 1) * 1000);
    oauth.reset();
    const replies = await Promise.all(Array.from({ length: 20 }, () => callTool("listItems")));
    for (const r of replies) expect(r.body, JSON.stringify(r.body)).toMatchObject({ success: true });
    expect(oauth.counts.refresh).toBe(1);
    expect(oauth.counts.refreshFailed).toBe(0);
    expect(oauth.counts.apiUnauthorized).toBe(0);
    const [connection] = (await api("GET", "/connections", { token: person.token })).body;
    expect(connection.refreshed_at).not.toBeNull();
    expect(Date.parse(connection.expires_at)).toBeGreaterThan(Date.now());

    // The provider ends every access token (keys rotated): the upstream answers 401, the token is refreshed
    // once and each call retried.
    oauth.reset();
    oauth.endAccessTokens();
    const retried = await Promise.all(Array.from({ length: 5 }, () => callTool("listItems")));
    for (const r of retried) expect(r.body, JSON.stringify(r.body)).toMatchObject({ success: true });
    expect(oauth.counts.refresh).toBe(1);
    // At least the first call sent the ended token; a call that looked its token up after the refresh sent the new one.
    expect(oauth.counts.apiUnauthorized).toBeGreaterThanOrEqual(1);
    expect(oauth.counts.apiUnauthorized).toBeLessThanOrEqual(5);
  });

  it("falls back to needs_credential when the grant is revoked at the provider, and connects again", async () => {
    oauth.reset();
    oauth.revokeAllGrants();
    const refused = await callTool("listItems");
    expect(refused.body.success).toBe(false);
    expect(refused.body.error).toContain("reconnect");
    expect(oauth.counts.refreshFailed).toBe(1);

    const [broken] = (await api("GET", "/connections", { token: person.token })).body;
    expect(broken).toMatchObject({ status: "broken", broken_reason: expect.stringContaining("invalid_grant") });
    const described = await api("GET", `/tools/${service.tools.listItems}/describe`, { key: person.key });
    expect(described.body.readiness).toBe("needs_credential");
    const again = await callTool("listItems");
    expect(again.body.error).toContain("broken");
    expect(oauth.counts.refresh).toBe(1); // a broken connection is not refreshed again

    const c = await openConsole(browser, s);
    const { page } = c;
    await signIn(page, s, person.login, `/services/${service.id}/connect`);
    await page.getByRole("heading", { level: 1, name: "Connect Items API" }).waitFor();
    await readinessOf(page, "listItems").getByText("needs credential").waitFor();
    await page.getByText("invalid_grant").first().waitFor();
    await connectInBrowser(page);
    await page.getByText("Connected through the provider").waitFor();
    await readinessOf(page, "listItems").getByText("ready").waitFor();
    const [fixed] = (await api("GET", "/connections", { token: person.token })).body;
    expect(fixed).toMatchObject({ id: broken.id, status: "active", broken_reason: null });
    expect((await callTool("listItems")).body.success).toBe(true);
    expect(consoleErrors(c.errors)).toEqual([]);
    await c.close();
  });

  it("refuses an unknown, missing or replayed state and a code exchanged with another authorization's PKCE verifier", async () => {
    const before = (await api("GET", "/connections", { token: person.token })).body;
    const unknown = await callback({ state: "not-a-state", code: "x" });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).error.code).toBe("invalid_oauth_state");
    expect((await callback({ code: "x" })).status).toBe(400);

    // Two authorizations; the browser completes the first, whose code then arrives with the second's state.
    const start = () => api("POST", `/services/${service.id}/oauth/connect`, { token: person.token, body: {} });
    const [a, b] = [await start(), await start()];
    expect(a.body).toMatchObject({ flow: "authorization_code", connection: null, readiness: null });
    // Over HTTP, not in a browser: a browser follows the provider's redirect to the callback at once, and the
    // code must be held back for the test to hand to the gateway itself.
    const returned = await authorizeOverHttp(a.body.authorization_url);
    expect(returned.pathname).toBe("/v1/oauth/callback");
    const codeA = returned.searchParams.get("code")!;
    const stateA = returned.searchParams.get("state")!;
    expect(stateA).toBe(new URL(a.body.authorization_url).searchParams.get("state"));
    const stateB = new URL(b.body.authorization_url).searchParams.get("state")!;

    oauth.reset();
    const mismatched = await callback({ state: stateB, code: codeA });
    expect(mismatched.status).toBe(302);
    const to = new URL(mismatched.location!);
    expect(to.pathname).toBe(`/console/services/${service.id}/connect`);
    expect(to.searchParams.get("oauth_error")).toBe("exchange_failed");
    expect(to.searchParams.get("reason")).toBe("invalid_grant");
    expect(oauth.counts.authorizationCode).toBe(1);
    // The second state is spent; the first is refused by the person (access_denied) and spent too.
    expect((await callback({ state: stateB, code: codeA })).status).toBe(400);
    const denied = await callback({ state: stateA, error: "access_denied" });
    expect(denied.status, denied.body).toBe(302);
    expect(new URL(denied.location!).searchParams.get("oauth_error")).toBe("access_denied");
    expect((await callback({ state: stateA, code: codeA })).status).toBe(400);
    expect(oauth.counts.authorizationCode).toBe(1);
    // Nothing changed.
    expect((await api("GET", "/connections", { token: person.token })).body).toEqual(before);

    // return_to must stay on the gateway.
    const offsite = await api("POST", `/services/${service.id}/oauth/connect`, {
      token: person.token,
      body: { return_to: "https://evil.example/steal" },
    });
    expect(offsite.status).toBe(400);
    expect(offsite.body.error.code).toBe("invalid_return_to");
  });

  it("deletes a connection, revoking its tokens at the provider", async () => {
    const [connection] = (await api("GET", "/connections", { token: person.token })).body;
    const stranger = await signUpByApi(s, newPerson("other"));
    expect((await api("DELETE", `/connections/${connection.id}`, { token: stranger.token })).status).toBe(404);
    expect(oauth.activeRefreshTokens()).toBeGreaterThan(0);
    oauth.reset();
    const deleted = await api("DELETE", `/connections/${connection.id}`, { token: person.token });
    expect(deleted.body).toEqual({ deleted: true, revoked_at_provider: true });
    expect(oauth.counts.revocations).toBeGreaterThanOrEqual(1);
    expect(oauth.activeRefreshTokens()).toBe(0);
    expect((await api("GET", "/connections", { token: person.token })).body).toEqual([]);
    const described = await api("GET", `/tools/${service.tools.listItems}/describe`, { key: person.key });
    expect(described.body.readiness).toBe("needs_credential");
    expect((await api("DELETE", `/connections/${connection.id}`, { token: person.token })).status).toBe(404);
  });

  it("connects machine to machine with the client-credentials flow and fetches a new token when it expires", async () => {
    const publisher = await signUpByApi(s, newPerson("machines"));
    const published = await api("POST", "/services", {
      token: publisher.token,
      body: {
        api: { document: oauth.openapi({ title: "Items machine API", flows: ["clientCredentials"] }) },
        visibility: "public",
      },
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const id = published.body.service.id;
    const listItems = published.body.tools.find((t: { name: string }) => t.name === "listItems").id;
    const noSecret = await api("PUT", `/services/${id}/oauth-client`, {
      token: publisher.token,
      body: { client_id: oauth.machineClient.clientId },
    });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.code).toBe("missing_client_secret");
    const registered = await api("PUT", `/services/${id}/oauth-client`, {
      token: publisher.token,
      body: {
        client_id: oauth.machineClient.clientId,
        client_secret: oauth.machineClient.clientSecret,
        client_auth: "client_secret_post",
        scopes: ["items:read"],
      },
    });
    expect(registered.body).toMatchObject({ flow: "client_credentials", shared: true, authorization_url: null });

    // The person owns their organization, so they may connect it for everyone there.
    oauth.reset();
    const connected = await api("POST", `/services/${id}/oauth/connect`, { token: person.token, body: {} });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body).toMatchObject({
      flow: "client_credentials",
      authorization_url: null,
      readiness: "ready",
      connection: { service_id: id, scope: "organization", status: "active", flow: "client_credentials" },
    });
    expect(oauth.counts.clientCredentials).toBe(1);
    const first = await api("POST", `/tools/call/${listItems}`, { key: person.key, body: { tool_input: {} } });
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ success: true });

    await sleep((TOKEN_TTL_SECONDS + 1) * 1000);
    const later = await Promise.all(
      Array.from({ length: 5 }, () => api("POST", `/tools/call/${listItems}`, { key: person.key, body: { tool_input: {} } })),
    );
    for (const r of later) expect(r.body, JSON.stringify(r.body)).toMatchObject({ success: true });
    expect(oauth.counts.clientCredentials).toBe(2);
  });

  it("never writes a token, a code or a client secret to a log line or an answer", async () => {
    const secrets = [...oauth.issuedSecrets(), oauth.client.clientSecret, oauth.machineClient.clientSecret];
    expect(secrets.length).toBeGreaterThan(10);
    let logs = "";
    for (const file of readdirSync(s.stack.logDir)) logs += readFileSync(path.join(s.stack.logDir, file), "utf8");
    // The logs are there and speak of the work done (so an empty or unrelated log cannot pass).
    expect(logs).toContain("OAuth token refreshed");
    expect(logs).toContain("OAuth connection made");
    const leaks = secrets.filter((secret) => logs.includes(secret) || answers.some((a) => a.includes(secret)));
    expect(leaks).toEqual([]);
  });
});
