/**
 * The OAuth harness (test/harness/oauth-server.ts) against itself: a browser goes through oidc-provider's
 * login and consent to a redirect_uri served here, and plain fetch does what the gateway will do with the
 * code (PKCE exchange, API calls, refresh with rotation, RFC 7009 revocation, client credentials), so the
 * harness's promises (real expiry, rotation, revocation, scopes, counters) are checked before the product
 * relies on them. It needs no Postgres, NATS or stack.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium, type Page, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../../deploy/local/infra.mjs";
import {
  authorizeInBrowser,
  basicAuth,
  type OAuthClientCredentials,
  type OAuthServer,
  startOAuthServer,
} from "../harness/oauth-server.js";

const TTL = 2;

interface TokenResponse {
  access_token?: string;
  refresh_token?: string;
  token_type?: string;
  expires_in?: number;
  scope?: string;
  error?: string;
  error_description?: string;
}

let oauth: OAuthServer;
let callback: http.Server;
let redirectUri: string;
const received: URLSearchParams[] = [];
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // The OAuth server first, the redirect URI afterwards (as with a stack started later): setRedirectUris.
  oauth = await startOAuthServer({ accessTokenTtlSeconds: TTL });
  callback = http.createServer((req, res) => {
    // Only the callback itself: the browser also asks this origin for /favicon.ico.
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/oauth/callback") received.push(url.searchParams);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("callback received");
  });
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/callback`;
  oauth.setRedirectUris([redirectUri]);

  const executablePath = findChromium();
  if (!executablePath) throw new Error("no chromium: apt-get install chromium, or set CHROMIUM_PATH");
  browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await oauth?.close();
  if (callback) {
    callback.closeAllConnections();
    await new Promise((resolve) => callback.close(resolve));
  }
});

async function tokenRequest(client: OAuthClientCredentials, form: Record<string, string>) {
  const response = await fetch(oauth.tokenUrl, {
    method: "POST",
    headers: { authorization: basicAuth(client), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as TokenResponse };
}

/**
 * A whole authorization in the browser: returns the code, the verifier its challenge was made from and the
 * provider's pages the browser submitted on the way ("login", "consent").
 */
async function authorize(scope = "items:read items:write") {
  const submitted: string[] = [];
  const onRequest = (request: Request) => {
    if (request.method() === "POST" && request.url().startsWith(`${oauth.issuer}/interaction/`)) {
      submitted.push(new URLSearchParams(request.postData() ?? "").get("prompt") ?? "?");
    }
  };
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(12).toString("base64url");
  const url = new URL(oauth.authorizationUrl);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: oauth.client.clientId,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  page.on("request", onRequest);
  const landed = new URL(await authorizeInBrowser(page, url.toString()).finally(() => page.off("request", onRequest)));
  expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
  expect(landed.searchParams.get("state")).toBe(state);
  const params = received.at(-1);
  expect(params?.get("state")).toBe(state);
  const code = params?.get("code");
  expect(code).toBeTruthy();
  return { code: code!, verifier, submitted };
}

async function exchange(code: string, verifier: string) {
  return tokenRequest(oauth.client, {
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  });
}

const refresh = (refreshToken: string) =>
  tokenRequest(oauth.client, { grant_type: "refresh_token", refresh_token: refreshToken });

async function api(path: string, token?: string, init: RequestInit = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${oauth.apiUrl}${path}`, { ...init, headers });
  return { status: response.status, wwwAuthenticate: response.headers.get("www-authenticate"), body: await response.json() };
}

describe("OAuth test server (oidc-provider)", () => {
  it("runs the authorization-code, refresh, revocation and client-credentials flows for real", async () => {
    // 1. Authorization code with PKCE, through the dev login and consent pages.
    const first = await authorize();
    expect(first.submitted).toEqual(["login", "consent"]);
    const tokens = await exchange(first.code, first.verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: TTL, scope: "items:read items:write" });
    const accessToken = tokens.body.access_token!;
    const refreshToken = tokens.body.refresh_token!;
    expect(refreshToken).toBeTruthy();
    expect(oauth.activeRefreshTokens()).toBe(1);

    // The API: scopes really granted, subject from the login, the header echoed verbatim.
    expect(await api("/items", accessToken)).toMatchObject({
      status: 200,
      body: { items: [{ id: 1, name: "first" }], subject: "alice" },
    });
    expect((await api("/me", accessToken)).body).toEqual({
      subject: "alice",
      scopes: ["items:read", "items:write"],
      client_id: oauth.client.clientId,
    });
    expect(await api("/items", accessToken, { method: "POST", body: JSON.stringify({ name: "second" }) })).toMatchObject({
      status: 201,
      body: { name: "second", id: 2 },
    });
    expect((await api("/echo-auth", accessToken)).body).toEqual({
      authorization: `Bearer ${accessToken}`,
      note: `the token I got is ${accessToken}, thanks`,
    });
    const missing = await api("/items");
    expect(missing.status).toBe(401);
    expect(missing.wwwAuthenticate).toMatch(/^Bearer/);
    const unknown = await api("/items", "not-a-token");
    expect(unknown.status).toBe(401);
    expect(unknown.wwwAuthenticate).toContain('error="invalid_token"');

    // 2. A second authorization (session and grant remembered: no pages), redeemed with the wrong verifier.
    const second = await authorize();
    expect(second.submitted).toEqual([]);
    const wrongVerifier = await exchange(second.code, randomBytes(32).toString("base64url"));
    expect(wrongVerifier).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    // 3. Expiry: the access token dies after TTL seconds (whole seconds at the provider).
    await new Promise((resolve) => setTimeout(resolve, (TTL + 1) * 1000));
    const expired = await api("/items", accessToken);
    expect(expired.status).toBe(401);
    expect(expired.wwwAuthenticate).toContain('error="invalid_token"');

    // 4. Refresh with rotation: a new access token and a new refresh token; the old one is spent.
    const refreshed = await refresh(refreshToken);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ token_type: "Bearer", expires_in: TTL, scope: "items:read items:write" });
    const rotated = refreshed.body.refresh_token!;
    expect(rotated).toBeTruthy();
    expect(rotated).not.toBe(refreshToken);
    expect((await api("/items", refreshed.body.access_token)).status).toBe(200);
    expect(await oauth.tokenActive(refreshToken)).toBe(false);
    expect(await oauth.tokenActive(rotated)).toBe(true);
    // Reusing the spent token is invalid_grant, and oidc-provider then revokes the whole grant (reuse
    // detection): the rotated refresh token and its access token die too.
    expect(await refresh(refreshToken)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await oauth.tokenActive(rotated)).toBe(false);
    expect((await api("/items", refreshed.body.access_token)).status).toBe(401);
    expect(oauth.activeRefreshTokens()).toBe(0);

    // 5. RFC 7009 revocation of a refresh token (a new grant: consent is asked again, the session stays).
    const third = await authorize();
    expect(third.submitted).toEqual(["consent"]);
    const thirdTokens = await exchange(third.code, third.verifier);
    expect(thirdTokens.status).toBe(200);
    const revocation = await fetch(oauth.revocationUrl, {
      method: "POST",
      headers: { authorization: basicAuth(oauth.client), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: thirdTokens.body.refresh_token!, token_type_hint: "refresh_token" }),
    });
    expect(revocation.status).toBe(200);
    expect(await refresh(thirdTokens.body.refresh_token!)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect((await api("/items", thirdTokens.body.access_token)).status).toBe(401);

    // 6. Client credentials: the machine client gets what it asks for within the API's scopes.
    const machine = await tokenRequest(oauth.machineClient, { grant_type: "client_credentials", scope: "items:read" });
    expect(machine.status).toBe(200);
    expect(machine.body).toMatchObject({ token_type: "Bearer", expires_in: TTL, scope: "items:read" });
    expect(machine.body.refresh_token).toBeUndefined();
    const machineToken = machine.body.access_token!;
    expect(await api("/items", machineToken)).toMatchObject({ status: 200, body: { subject: oauth.machineClient.clientId } });
    const cannotWrite = await api("/items", machineToken, { method: "POST", body: JSON.stringify({ name: "x" }) });
    expect(cannotWrite).toMatchObject({ status: 403, body: { error: "insufficient_scope" } });
    expect(cannotWrite.wwwAuthenticate).toContain('error="insufficient_scope"');
    // The web client may not use client_credentials (oidc-provider says invalid_request, not RFC 6749's
    // unauthorized_client).
    expect(await tokenRequest(oauth.client, { grant_type: "client_credentials" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request", error_description: "requested grant type is not allowed for this client" },
    });

    // 7. Revoking the access token kills the refresh token of its grant too, but keeps the grant (consent).
    const fifth = await authorize();
    expect(fifth.submitted).toEqual(["consent"]); // revoking the refresh token in step 5 deleted the grant
    const fifthTokens = await exchange(fifth.code, fifth.verifier);
    const accessRevocation = await fetch(oauth.revocationUrl, {
      method: "POST",
      headers: { authorization: basicAuth(oauth.client), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: fifthTokens.body.access_token! }),
    });
    expect(accessRevocation.status).toBe(200);
    expect(await oauth.tokenActive(fifthTokens.body.refresh_token!)).toBe(false);
    expect(await refresh(fifthTokens.body.refresh_token!)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    // 8. The user removes the app at the provider: every earlier token is dead.
    const fourth = await authorize();
    expect(fourth.submitted).toEqual([]); // the grant survived the access token's revocation
    const fourthTokens = await exchange(fourth.code, fourth.verifier);
    expect((await api("/items", fourthTokens.body.access_token)).status).toBe(200);
    expect(oauth.activeRefreshTokens()).toBe(1);
    oauth.revokeAllGrants();
    expect(oauth.activeRefreshTokens()).toBe(0);
    expect(await oauth.tokenActive(fourthTokens.body.access_token!)).toBe(false);
    expect((await api("/items", fourthTokens.body.access_token)).status).toBe(401);
    expect((await api("/items", machineToken)).status).toBe(401);
    expect(await refresh(fourthTokens.body.refresh_token!)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    // Counted: 5 code exchanges (one with the wrong verifier); refreshes: 1 good, 1 reuse, 1 after each
    // revocation, 1 after revokeAllGrants; 2 client-credentials requests (one refused); 2 revocation calls;
    // API calls: 6 in step 1, 1 in step 3, 2 in step 4, 1 in step 5, 2 in step 6, 3 in step 8, of which 401:
    // 2 (step 1) + 1 (3) + 1 (4) + 1 (5) + 2 (8).
    expect(oauth.counts).toEqual({
      authorizationCode: 5,
      refresh: 5,
      refreshFailed: 4,
      clientCredentials: 2,
      revocations: 2,
      apiCalls: 15,
      apiUnauthorized: 7,
    });
    oauth.reset();
    expect(Object.values(oauth.counts).every((n) => n === 0)).toBe(true);
  });

  it("describes the API in OpenAPI with the provider's real endpoints", () => {
    const doc = oauth.openapi();
    expect(doc.servers).toEqual([{ url: oauth.apiUrl }]);
    expect(doc.components.securitySchemes.oauth).toEqual({
      type: "oauth2",
      flows: {
        authorizationCode: {
          authorizationUrl: oauth.authorizationUrl,
          tokenUrl: oauth.tokenUrl,
          refreshUrl: oauth.tokenUrl,
          scopes: { "items:read": "Read items", "items:write": "Create items" },
        },
        clientCredentials: { tokenUrl: oauth.tokenUrl, scopes: { "items:read": "Read items", "items:write": "Create items" } },
      },
    });
    const operations = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops as Record<string, { operationId: string; security: unknown }>).map((op) => [op.operationId, op.security]),
    );
    expect(Object.fromEntries(operations)).toEqual({
      getMe: [{ oauth: [] }],
      listItems: [{ oauth: ["items:read"] }],
      createItem: [{ oauth: ["items:write"] }],
      echoAuth: [{ oauth: [] }],
    });
    expect(Object.keys(oauth.openapi({ flows: ["clientCredentials"] }).components.securitySchemes.oauth.flows)).toEqual([
      "clientCredentials",
    ]);
  });
});
