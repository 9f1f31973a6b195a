import { parsePath, selectPath } from "@toolport/kit/json-path";
import type { Json } from "@toolport/kit/json-values";
import { describe, expect, it } from "vitest";
import { redact } from "./redact.js";

const GITHUB = `ghp_${"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}`;
const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM = `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${"Q".repeat(200)}\n-----END RSA PRIVATE KEY-----`;

describe("redact", () => {
  it("masks credentials by rule, by key name and by exact injected value, and reports each", async () => {
    const input = {
      user: { name: "ada", password: "correct horse battery" },
      headers: { Authorization: "Bearer abc.def.ghi", "X-Api-Key": "k-123456" },
      note: `token ${GITHUB} was leaked`,
      db: "postgres://admin:s3cretPassw0rd@db.example.com:5432/prod",
      env: "HOME=/root\nSTRIPE_SECRET_KEY=sk_live_abcdefgh12345678\nPATH=/usr/bin",
      jwt: JWT,
      key: PEM,
      echoed: "your key is injected-secret-value and again injected-secret-value",
      encoded: Buffer.from("injected-secret-value").toString("base64"),
      aws: "AKIAZ7K3N5Q2R4T6V8XA",
      next_page_token: "page-2-token-abcdef",
      max_tokens: "1024",
    };
    const { value, report } = await redact(input as never, { injected: [{ value: "injected-secret-value", field: "API_KEY" }] });
    const out = value as typeof input;
    expect(out.user).toEqual({ name: "ada", password: "[REDACTED:PASSWORD]" });
    expect(out.headers).toEqual({ Authorization: "[REDACTED:AUTHORIZATION]", "X-Api-Key": "[REDACTED:X_API_KEY]" });
    expect(out.note).toBe("token [REDACTED:GITHUB_TOKEN] was leaked");
    expect(out.db).not.toContain("s3cretPassw0rd");
    expect(out.env).toBe("HOME=/root\nSTRIPE_SECRET_KEY=[REDACTED:STRIPE_SECRET_KEY]\nPATH=/usr/bin");
    expect(out.jwt).toBe("[REDACTED:JWT]");
    expect(out.key).not.toContain("MIIEow");
    expect(out.echoed).toBe("your key is [REDACTED:API_KEY] and again [REDACTED:API_KEY]");
    expect(out.encoded).toBe("[REDACTED:API_KEY]");
    expect(out.aws).toMatch(/^\[REDACTED:AWS/);
    // Pagination tokens and counters are not credentials.
    expect(out.next_page_token).toBe("page-2-token-abcdef");
    expect(out.max_tokens).toBe("1024");
    expect(report.mode).toBe("mask");
    expect(report.count).toBe(report.fields.length);
    expect(report.fields).toContainEqual({ path: "user.password", key: "password", rule: "sensitive_key" });
    expect(report.fields).toContainEqual({ path: "note", key: "note", rule: "secretlint/github" });
    expect(report.fields).toContainEqual({ path: "echoed", key: "echoed", rule: "injected_credential" });
    expect(report.fields).toContainEqual({ path: "jwt", key: "jwt", rule: "jwt" });
  });

  it("masks injected credentials in their URL-encoded and JSON-escaped forms", async () => {
    const secret = 'p@ss/wo rd"quoted"';
    const { value } = await redact(
      { url: `https://x?key=${encodeURIComponent(secret)}`, json: JSON.stringify({ s: secret }).replace(/[{}]/g, "") } as never,
      { injected: [{ value: secret, field: "PASSWORD" }] },
    );
    expect(JSON.stringify(value)).not.toContain("wo rd");
    expect(JSON.stringify(value)).not.toContain(encodeURIComponent(secret));
  });

  it("redacts inside strings holding JSON, reporting a <json> path that selects the masked value", async () => {
    const envelope = {
      content: [{ type: "text", text: JSON.stringify({ config: { api_key: "sk-live-0123456789" }, ok: true }, null, 2) }],
      isError: false,
    };
    const { value, report } = await redact(envelope as never);
    const text = (value as typeof envelope).content[0]!.text;
    expect(JSON.parse(text)).toEqual({ config: { api_key: "[REDACTED:API_KEY]" }, ok: true });
    expect(report.fields).toEqual([{ path: "content[0].text.<json>.config.api_key", key: "api_key", rule: "sensitive_key" }]);
    expect(selectPath(value, parsePath(report.fields[0]!.path))).toEqual({ matched: true, value: "[REDACTED:API_KEY]" });
  });

  it("leaves strings holding JSON untouched when nothing in them is masked", async () => {
    const text = '{ "a" : 1 }';
    const { value, report } = await redact({ text } as never);
    expect(value).toEqual({ text });
    expect(report.count).toBe(0);
  });

  it("for passthrough tools masks only the injected credential", async () => {
    const { value, report } = await redact({ new_token: GITHUB, password: "fresh-password", echo: "old-secret-1" } as never, {
      passthrough: true,
      injected: [{ value: "old-secret-1", field: "BEARER_TOKEN" }],
    });
    expect(value).toEqual({ new_token: GITHUB, password: "fresh-password", echo: "[REDACTED:BEARER_TOKEN]" });
    expect(report.count).toBe(1);
  });

  it("cannot be switched off by a secretlint-disable comment in the result", async () => {
    const { value } = await redact({ t: `// secretlint-disable\n${GITHUB}` } as never);
    expect(JSON.stringify(value)).not.toContain(GITHUB);
  });

  // The cases below were found by the labelled corpus in test/security/redaction.test.ts.
  it("masks provider credentials the secretlint preset misses, wherever they appear in text", async () => {
    const tokens = {
      gitlab: "glpat-x9Kd2_m4Qp7Lr8Tz3Wv1",
      slack: "xoxs-12796811278-53334800821-61608878058-998b0702316ad805458fb5ed8229b69f",
      stripe: `sk_live_${"4eC39HqLyjWDarjtT1zdp7dc"}`,
      stripeRestricted: `rk_test_${"Zx81aQ0pLm3nB7vC9dF2gH4j"}`,
      stripeWebhook: "whsec_l6A9Nu2tLuU1M4E1OR4uDtHmAm0lETjW",
      anthropicAdmin: `sk-ant-admin01-${"Ab3_x-".repeat(15)}abcAA`,
      google: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
      sendgrid: "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",
      mailgun: "key-f932507bd5fbed6f4e042e6fc550706e",
      mailgunNew: "737517bd19ed5b561b696bee545edd78-fb5c1415-0e61518e",
      onepassword: `ops_${Buffer.from(JSON.stringify({ signInAddress: "acme.1password.com", email: "x@1passwordserviceaccounts.com", srpX: "0".repeat(64) })).toString("base64")}`,
    };
    const input = Object.fromEntries(Object.entries(tokens).map(([name, token]) => [name, `Use ${token} for requests.`]));
    const { value, report } = await redact(input as never);
    for (const [name, text] of Object.entries(value as Record<string, string>)) {
      expect(text, name).toMatch(/^Use \[REDACTED:[A-Z_]+\] for requests\.$/);
    }
    expect(report.count).toBe(Object.keys(tokens).length);
  });

  it("masks Basic credentials in text but not prose that starts with Basic", async () => {
    const basic = Buffer.from("ops@acme.io:pVa0LGaWqdxPWW").toString("base64");
    const { value } = await redact({
      dump: `GET /v1/me HTTP/1.1\r\nAuthorization: Basic ${basic}\r\n`,
      prose: "Basic authentication is deprecated. Basic configuration includes 5 seats.",
    } as never);
    expect(value).toEqual({
      dump: "GET /v1/me HTTP/1.1\r\nAuthorization: Basic [REDACTED:BASIC_AUTH]\r\n",
      prose: "Basic authentication is deprecated. Basic configuration includes 5 seats.",
    });
  });

  it("masks every kind of PEM private key block: EC, PKCS#8, encrypted and short Ed25519 keys", async () => {
    const pem = (type: string, body: string) => `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----`;
    const keys = {
      ec: pem("EC PRIVATE KEY", `MHcCAQEEIKzb25KWQEWlom2ER2bGat4yykLdB65MaytY9pUVbjjVzGyVtLEVL7Zl\n${"k".repeat(100)}`),
      encrypted: pem(
        "ENCRYPTED PRIVATE KEY",
        `MIIFFjBAKHz0JDzQffbRC0Y9tF5vGEZXcyNaHhDfwSZCXan82UZqlqH1QpGysUrt\n${"U".repeat(300)}`,
      ),
      ed25519: pem("PRIVATE KEY", "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g"),
    };
    const { value } = await redact({ text: `Keys:\n${Object.values(keys).join("\n")}\nDone.` } as never);
    expect((value as { text: string }).text).toBe(
      "Keys:\n[REDACTED:PRIVATE_KEY]\n[REDACTED:PRIVATE_KEY]\n[REDACTED:PRIVATE_KEY]\nDone.",
    );
  });

  it("masks the key of an Azure connection string and keeps the rest", async () => {
    const key = "7uYeASUNAhWOxgVxe8tgWQDeUBYwpgEv8mr7pIaFa1g=";
    const { value } = await redact({
      storage: `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${key};EndpointSuffix=core.windows.net`,
      bus: `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${key}`,
    } as never);
    expect(value).toEqual({
      storage:
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:ACCOUNT_KEY];EndpointSuffix=core.windows.net",
      bus: "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:SHARED_ACCESS_KEY]",
    });
  });

  it("judges query parameters by the sensitive key names, so pagination tokens stay", async () => {
    const { value } = await redact({
      link: "https://x.example/export?format=csv&aws_secret_access_key=Fb6Z0D%2FCgqEB7LzOgIJOaF%2Fx%2BDOsroFR9UsmKY7n",
      pages: "https://x.example/v1/items?pageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA&next_token=abcd1234&key=report.csv",
    } as never);
    expect(value).toEqual({
      link: "https://x.example/export?format=csv&aws_secret_access_key=[REDACTED:AWS_SECRET_ACCESS_KEY]",
      pages: "https://x.example/v1/items?pageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA&next_token=abcd1234&key=report.csv",
    });
  });

  it("masks assignments to names that start with a secret word, but not settings about secrets", async () => {
    const settings =
      "MAX_TOKENS=4096\nTOKEN_TTL=3600\nAUTH_ENABLED=true\nTOKEN_URL=https://auth.example.com/oauth/token\nDB_PASSWORD_FILE=/run/secrets/db";
    const { value } = await redact({ env: `SECRET_KEY_BASE=fZAdhS96xL5qJzwLhhVo1ernegHbPzDP\n${settings}` } as never);
    expect((value as { env: string }).env).toBe(`SECRET_KEY_BASE=[REDACTED:SECRET_KEY_BASE]\n${settings}`);
  });

  it("reports masked fields in document order", async () => {
    const input = { a: { password: "p-123456" }, b: [{ token: "t-123456" }, { token: "u-123456" }], c: { secret: "s-123456" } };
    const { report } = await redact(input as never);
    expect(report.fields.map((f) => f.path)).toEqual(["a.password", "b[0].token", "b[1].token", "c.secret"]);
  });

  it("redacts results nested 3,000 levels deep (and far deeper), inside embedded documents too", async () => {
    const nest = (depth: number, leaf: Json, wrap: (inner: Json) => Json) => {
      let value = leaf;
      for (let i = 0; i < depth; i++) value = wrap(value);
      return value;
    };
    const down = (value: Json, depth: number, step: (node: Json) => Json) => {
      let node = value;
      for (let i = 0; i < depth; i++) node = step(node);
      return node;
    };
    const intoA = (node: Json) => (node as { a: Json }).a;
    for (const depth of [3000, 100_000]) {
      const objects = await redact(nest(depth, { password: "hunter2-hunter2", note: "ok" }, (v) => ({ a: v })));
      expect(down(objects.value, depth, intoA)).toEqual({ password: "[REDACTED:PASSWORD]", note: "ok" });
      expect(objects.report.fields).toEqual([
        { path: `${Array.from({ length: depth }, () => "a").join(".")}.password`, key: "password", rule: "sensitive_key" },
      ]);
      const arrays = await redact(nest(depth, [`token ${GITHUB}`], (v) => [v]));
      expect(down(arrays.value, depth, (node) => (node as Json[])[0]!)).toEqual(["token [REDACTED:GITHUB_TOKEN]"]);
      expect(arrays.report.count).toBe(1);
    }
    // A document 3,000 levels deep inside a string is redacted and serialized again.
    const embedded = await redact({ raw: JSON.stringify(nest(3000, { api_key: "sk-live-0123456789" }, (v) => ({ a: v }))) });
    const doc = JSON.parse((embedded.value as { raw: string }).raw) as Json;
    expect(down(doc, 3000, intoA)).toEqual({ api_key: "[REDACTED:API_KEY]" });
    expect(embedded.report.fields[0]!.path).toMatch(/^raw\.<json>\.(a\.){3000}api_key$/);
  });

  it("stays fast on hostile 1 MiB results aimed at each rule", async () => {
    const M = 1 << 20;
    const fill = (s: string) => s.repeat(Math.ceil(M / s.length)).slice(0, M);
    const hostile: Record<string, string> = {
      letters: "a".repeat(M),
      aws: fill("AKIA"),
      awsSecret: fill('aws_secret_access_key = "'),
      pem: fill(`-----BEGIN RSA PRIVATE KEY-----\n${"A".repeat(9000)}`),
      postgres: fill("postgres://u:"),
      mongo: fill("mongodb://a:b@"),
      basic: fill(`https://${"a".repeat(250)}:${"b".repeat(250)}@${"c".repeat(250)}`),
      slack: fill("xoxb-1-a-"),
      github: fill("ghp_"),
      npm: fill("npm_"),
      openai: fill("sk-proj-"),
      anthropic: fill("sk-ant-api03-"),
      sendgrid: fill("SG.a.b"),
      linear: fill("lin_api_"),
      onepassword: fill("ops_eyJ"),
      jwt: fill("eyJ-eyJ-eyJ."),
      jwtDots: fill("eyJaaaaaaaaaaaa.eyJbbbbbbbbbbbb."),
      env: fill(`${"A".repeat(70)}SECRET${"B".repeat(30)} `),
      envEq: fill("DB_PASSWORD= "),
      bearer: fill("Bearer "),
      bearerLong: fill(`Bearer ${"t".repeat(5000)} `),
      url: fill("xx://u:"),
      query: fill("?token="),
      newlines: "\n".repeat(M),
      quotes: fill('"'),
      unicode: fill("é😀"),
      pemDashes: fill(`-----BEGIN PRIVATE KEY-----\n${"-".repeat(30)}`),
      basicLong: fill(`Basic ${"QUJD".repeat(1100)} `),
      basicShort: fill("Basic YWJjZGVmZ2g= "),
      hexDashes: fill(`${"a".repeat(32)}-`),
      queryNames: fill(`&${"a".repeat(70)}=bbbb`),
      providers: fill("glpat-sk_live_whsec_AIzaSG.key-ops_eyJAccountKey=xoxs-"),
    };
    const timings: Record<string, number> = {};
    for (const [name, text] of Object.entries(hostile)) {
      const t = performance.now();
      await redact({ text } as Json, { injected: [{ value: "needle-value", field: "API_KEY" }] });
      timings[name] = Math.round(performance.now() - t);
    }
    const slowest = Math.max(...Object.values(timings));
    // Generous for a loaded CI machine; typical figures are 20-200 ms each.
    expect(slowest, JSON.stringify(timings)).toBeLessThan(3000);
    const all = Object.values(hostile)
      .join("")
      .slice(0, 4 * M);
    const t = performance.now();
    await redact({ text: all } as Json);
    expect(performance.now() - t).toBeLessThan(6000);
  }, 120_000);
});
