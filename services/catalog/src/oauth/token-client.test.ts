/**
 * The token endpoint requests against a real HTTP server that records what it received and answers as a
 * provider would: how the client authenticates (RFC 6749 §2.3.1), the form it sends per grant, how
 * answers and OAuth errors are read, and that the guard still refuses an address it does not allow.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientCredentials, exchangeCode, OAuthProviderError, refreshTokens, revokeToken } from "./token-client.js";

interface Seen {
  path: string;
  authorization: string | undefined;
  form: Record<string, string>;
}

let server: http.Server;
let base: string;
let outbound: Outbound;
const seen: Seen[] = [];
/** What the next request is answered with. */
let next: { status: number; body: string; type?: string } = { status: 200, body: "{}" };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => {
      seen.push({
        path: req.url ?? "",
        authorization: req.headers.authorization,
        form: Object.fromEntries(new URLSearchParams(text)),
      });
      res.writeHead(next.status, { "content-type": next.type ?? "application/json" });
      res.end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  outbound = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${port}`) });
});

afterAll(async () => {
  await outbound.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const basicClient = { clientId: "web app", clientSecret: "s3cr:et+/=", clientAuth: "client_secret_basic" as const };

describe("the OAuth token client", () => {
  it("exchanges a code with the PKCE verifier, authenticating with HTTP basic of the form-encoded id and secret", async () => {
    next = {
      status: 200,
      body: JSON.stringify({
        access_token: "at-1",
        refresh_token: "rt-1",
        token_type: "bearer",
        expires_in: 3600,
        scope: "items:read items:write",
      }),
    };
    const tokens = await exchangeCode(outbound, `${base}/token`, basicClient, {
      code: "the-code",
      redirectUri: "https://gw.example/v1/oauth/callback",
      codeVerifier: "v".repeat(43),
    });
    expect(tokens).toEqual({
      accessToken: "at-1",
      refreshToken: "rt-1",
      tokenType: "bearer",
      expiresIn: 3600,
      scope: ["items:read", "items:write"],
    });
    const got = seen.at(-1)!;
    expect(got.path).toBe("/token");
    expect(got.form).toEqual({
      grant_type: "authorization_code",
      code: "the-code",
      redirect_uri: "https://gw.example/v1/oauth/callback",
      code_verifier: "v".repeat(43),
    });
    // RFC 6749 §2.3.1: each part form-encoded (space as +, reserved characters escaped) before base64.
    expect(Buffer.from(got.authorization!.replace(/^Basic /, ""), "base64").toString()).toBe("web+app:s3cr%3Aet%2B%2F%3D");
  });

  it("sends the client in the form for client_secret_post and a public client, and asks client credentials for scopes", async () => {
    next = { status: 200, body: JSON.stringify({ access_token: "at-2", token_type: "Bearer" }) };
    const tokens = await clientCredentials(
      outbound,
      `${base}/token`,
      { clientId: "machine", clientSecret: "m-secret", clientAuth: "client_secret_post" },
      ["items:read", "items:write"],
    );
    expect(tokens).toEqual({
      accessToken: "at-2",
      refreshToken: undefined,
      tokenType: "Bearer",
      expiresIn: undefined,
      scope: undefined,
    });
    expect(seen.at(-1)).toMatchObject({
      authorization: undefined,
      form: {
        grant_type: "client_credentials",
        scope: "items:read items:write",
        client_id: "machine",
        client_secret: "m-secret",
      },
    });

    await refreshTokens(
      outbound,
      `${base}/token`,
      { clientId: "spa", clientSecret: null, clientAuth: "client_secret_basic" },
      "rt-1",
    );
    expect(seen.at(-1)).toMatchObject({
      authorization: undefined,
      form: { grant_type: "refresh_token", refresh_token: "rt-1", client_id: "spa" },
    });
    expect(seen.at(-1)!.form.client_secret).toBeUndefined();
  });

  it("reads the provider's error code, and refuses an answer without an access token", async () => {
    next = { status: 400, body: JSON.stringify({ error: "invalid_grant", error_description: "grant request is invalid" }) };
    const refused = await refreshTokens(outbound, `${base}/token`, basicClient, "rt-old").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OAuthProviderError);
    expect(refused).toMatchObject({ code: "invalid_grant", status: 400 });
    expect((refused as Error).message).toContain("grant request is invalid");
    // The refresh token is in no message.
    expect((refused as Error).message).not.toContain("rt-old");

    next = { status: 502, body: "<html>bad gateway</html>", type: "text/html" };
    expect(await refreshTokens(outbound, `${base}/token`, basicClient, "rt").catch((e: unknown) => e)).toMatchObject({
      code: "http_502",
      status: 502,
    });
    next = { status: 200, body: JSON.stringify({ token_type: "Bearer" }) };
    expect(await refreshTokens(outbound, `${base}/token`, basicClient, "rt").catch((e: unknown) => e)).toMatchObject({
      code: "invalid_token_response",
    });
  });

  it("revokes with the token type hint (RFC 7009): true only when the provider confirms", async () => {
    next = { status: 200, body: "" };
    expect(await revokeToken(outbound, `${base}/revoke`, basicClient, "rt-9", "refresh_token")).toBe(true);
    expect(seen.at(-1)).toMatchObject({ path: "/revoke", form: { token: "rt-9", token_type_hint: "refresh_token" } });
    next = { status: 503, body: "" };
    expect(await revokeToken(outbound, `${base}/revoke`, basicClient, "rt-9", "refresh_token")).toBe(false);
  });

  it("goes through the outbound guard: an address it does not allow is never dialled", async () => {
    const before = seen.length;
    const guarded = new Outbound({ policy: new AddressPolicy("") });
    try {
      const refused = await exchangeCode(guarded, `${base}/token`, basicClient, {
        code: "c",
        redirectUri: "https://gw.example/cb",
        codeVerifier: "v",
      }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "unreachable", status: 0 });
      expect(seen.length).toBe(before);
    } finally {
      await guarded.close();
    }
  });
});
