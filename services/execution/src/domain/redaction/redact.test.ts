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
