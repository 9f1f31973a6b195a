/**
 * JWT authentication through the gateway: Toolport-issued ES256 tokens (JWKS, pinned algorithm, a
 * signing key that survives restarts and is stored encrypted) and a trusted external OIDC issuer,
 * played by a real HTTP server in this test that publishes its JWKS.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createPool } from "@toolport/kit/pg";
import { createLocalJWKSet, exportJWK, type GenerateKeyPairResult, generateKeyPair, type JWK, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Call, expectError, gatewayClient, signupHuman } from "../../../test/harness/identity-http.js";
import { type Stack, startStack } from "../../../test/harness/stack.js";

const OIDC_ISSUER = "https://login.example.test/";
const OIDC_AUDIENCE = "toolport-api";

describe("JWT authentication", () => {
  let stack: Stack;
  let call: Call;
  let idp: http.Server;
  let es256: GenerateKeyPairResult;
  let rs256: GenerateKeyPairResult;

  beforeAll(async () => {
    es256 = await generateKeyPair("ES256");
    rs256 = await generateKeyPair("RS256");
    const keys = [
      { ...(await exportJWK(es256.publicKey)), kid: "idp-es", alg: "ES256", use: "sig" },
      { ...(await exportJWK(rs256.publicKey)), kid: "idp-rs", alg: "RS256", use: "sig" },
    ];
    idp = http.createServer((req, res) => {
      res.writeHead(req.url === "/jwks.json" ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(req.url === "/jwks.json" ? { keys } : {}));
    });
    await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
    stack = await startStack(
      ["identity", "gateway"],
      {
        IDENTITY_SECRET_KEY: "test-secret-key-0123456789-abcdefghijklmnop",
        OIDC_JWKS_URL: `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json`,
        OIDC_ISSUER,
        OIDC_AUDIENCE,
        OIDC_ALGORITHMS: "ES256",
      },
      // The test restarts identity alone.
      { layout: "per-role" },
    );
    call = gatewayClient(stack.gatewayUrl);
  });
  afterAll(async () => {
    await stack?.stopAll();
    idp?.close();
  });

  const jwks = async () => (await call("GET", "/auth/jwks.json")).body as { keys: JWK[] };

  it("issues ES256 tokens verifiable with the published JWKS, with issuer, audience and expiry", async () => {
    const human = await signupHuman(call);
    const { keys } = await jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      kty: "EC",
      crv: "P-256",
      x: expect.any(String),
      y: expect.any(String),
      kid: expect.any(String),
      alg: "ES256",
      use: "sig",
    });
    const { payload, protectedHeader } = await jwtVerify(human.token, createLocalJWKSet({ keys }), {
      issuer: "toolport",
      audience: "toolport",
      algorithms: ["ES256"],
    });
    expect(protectedHeader.kid).toBe(keys[0]!.kid);
    expect(payload.sub).toBe(human.accountId);
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect((await call("GET", "/api-keys", { token: human.token })).status).toBe(200);
  });

  it("refuses a token with a wrong algorithm, no signature or an altered payload", async () => {
    const human = await signupHuman(call);
    const { keys } = await jwks();
    const [header, payload] = human.token.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    // HS256 "signed" with the public key: the classic algorithm-confusion forgery.
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: keys[0]!.kid })
      .sign(new TextEncoder().encode(JSON.stringify(keys[0])));
    expectError(await call("GET", "/api-keys", { token: hs }), 401, "invalid_token");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    expectError(await call("GET", "/api-keys", { token: none }), 401, "invalid_token");
    const other = await signupHuman(call);
    const altered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: other.accountId })).toString("base64url")}.${human.token.split(".")[2]}`;
    expectError(await call("GET", "/api-keys", { token: altered }), 401, "invalid_token");
  });

  const external = (
    claims: Record<string, unknown> = {},
    options: { key?: GenerateKeyPairResult["privateKey"]; alg?: string; kid?: string; exp?: string | number } = {},
  ) =>
    new SignJWT({ email: "ada@example.com", name: "Ada", ...claims })
      .setProtectedHeader({ alg: options.alg ?? "ES256", kid: options.kid ?? "idp-es" })
      .setIssuer((claims.iss as string) ?? OIDC_ISSUER)
      .setAudience((claims.aud as string) ?? OIDC_AUDIENCE)
      .setSubject("user-ada")
      .setIssuedAt()
      .setExpirationTime(options.exp ?? "5m")
      .sign(options.key ?? es256.privateKey);

  it("accepts the external issuer's tokens and maps each subject to one account with a personal organization", async () => {
    const first = await call("GET", "/organizations", { token: await external() });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toHaveLength(1);
    expect(first.body[0]).toMatchObject({ is_personal: true, role: "owner" });
    const again = await call("GET", "/organizations", { token: await external() });
    expect(again.body[0].id).toBe(first.body[0].id);
    // Such an account manages keys like any other.
    expect((await call("POST", "/api-keys", { token: await external(), body: { name: "sso" } })).status).toBe(200);
  });

  it("refuses external tokens with a wrong audience, expired, from another issuer, or with an algorithm not allowed", async () => {
    const wrongAudience = await call("GET", "/api-keys", { token: await external({ aud: "someone-else" }) });
    expectError(wrongAudience, 401, "invalid_token");
    expect(wrongAudience.body.error.message).toContain("aud");
    const expired = await call("GET", "/api-keys", { token: await external({}, { exp: Math.floor(Date.now() / 1000) - 60 }) });
    expectError(expired, 401, "invalid_token");
    expect(expired.body.error.message).toContain("expired");
    expectError(
      await call("GET", "/api-keys", { token: await external({ iss: "https://evil.example/" }) }),
      401,
      "invalid_token",
    );
    const rs = await call("GET", "/api-keys", {
      token: await external({}, { key: rs256.privateKey, alg: "RS256", kid: "idp-rs" }),
    });
    expectError(rs, 401, "invalid_token");
    expect(rs.body.error.message).toContain("algorithm");
  });

  it("keeps the signing key across restarts, encrypted at rest, and refuses to start with another secret", async () => {
    const human = await signupHuman(call);
    const before = await jwks();
    const db = createPool(stack.env.IDENTITY_DATABASE_URL!, 1);
    try {
      const { rows } = await db.query<{ kid: string; private_jwk_encrypted: Buffer }>(
        "SELECT kid, private_jwk_encrypted FROM signing_keys",
      );
      expect(rows.map((r) => r.kid)).toEqual([before.keys[0]!.kid]);
      const sealed = rows[0]!.private_jwk_encrypted.toString("latin1");
      expect(sealed).not.toContain('"d"');
      expect(sealed).not.toContain("P-256");
    } finally {
      await db.end();
    }

    await stack.stop("identity");
    await stack.start("identity");
    expect(await jwks()).toEqual(before);
    expect((await call("GET", "/api-keys", { token: human.token })).status).toBe(200);

    await stack.stop("identity");
    const secret = stack.env.IDENTITY_SECRET_KEY;
    stack.env.IDENTITY_SECRET_KEY = `another-secret-${randomUUID()}`;
    try {
      await expect(stack.start("identity")).rejects.toThrow(/cannot decrypt JWT signing key/);
    } finally {
      stack.env.IDENTITY_SECRET_KEY = secret!;
      await stack.start("identity");
    }
    expect((await call("GET", "/api-keys", { token: human.token })).status).toBe(200);
  });
});
