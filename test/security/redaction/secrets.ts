/**
 * The credential half of the redaction corpus: every family the redaction promises (see the header of
 * services/execution/src/domain/redaction/redact.ts), each generated from a seed with its provider's
 * prefix, alphabet and length, and placed in the contexts a tool result carries it in (a JSON field, a
 * sentence, a URL, a header dump, a log line, an env file, a JSON document inside a text field).
 * Families without a format of their own (an AWS secret key, a Twilio auth token, a password, a generic
 * API key) are only ever placed under a label that names them: bare, they are indistinguishable from a
 * hash or an ID, and no rule could find them without masking those too.
 * The rule set's own examples (redact.test.ts) are a family of their own.
 */

import type { Json } from "@toolport/kit/json-values";
import { ALNUM, BASE64, BASE64URL, HEX, LOWER_ALNUM, Random, UPPER_ALNUM } from "./random.js";

export interface SecretSample {
  family: string;
  context: string;
  /** The result as the upstream returned it. */
  value: Json;
  /** Every piece of credential text that must be gone from the redacted result. */
  vanish: string[];
}

/** A generated credential and the names it naturally goes by. */
interface Credential {
  value: string;
  /** What must vanish (defaults to the value). */
  vanish?: string[];
  /** Its name in an env file or a JSON document, e.g. GITHUB_TOKEN. */
  label: string;
  /** The query parameter an API takes it in. */
  param?: string;
  /** The header it travels in (the value is then the whole header value). */
  header?: string;
}

type Context = (c: Credential, r: Random) => Json;

const HOSTS = ["api.example.com", "hooks.acme.io", "internal.corp.example", "eu.service.example.org"];
const TIMES = ["2025-03-04T12:00:00.123Z", "2025-11-30T23:59:59Z", "2026-01-15T08:30:12.004Z"];

/** Contexts that work for any credential with a recognisable format of its own. */
const ANYWHERE: Record<string, Context> = {
  json_field: (c, r) => ({ data: { id: r.int(1, 9999), [r.pick(["value", "result", "output", "text", "detail"])]: c.value } }),
  sentence: (c, r) =>
    r.pick([
      `Your new credential is ${c.value} - store it somewhere safe.`,
      `Created successfully. Use ${c.value} for subsequent requests.`,
      `Found in the repository history: "${c.value}" (commit 4f2a9c1).`,
    ]),
  mcp_text: (c, r) => ({
    content: [{ type: "text", text: `Here it is: ${c.value}\nIt expires in ${r.int(1, 90)} days.` }],
    isError: false,
  }),
  log_line: (c, r) => `${r.pick(TIMES)} WARN [http] request to ${r.pick(HOSTS)} failed with credential ${c.value} status=401`,
  url_query: (c, r) => `https://${r.pick(HOSTS)}/v1/items?${c.param ?? "key"}=${c.value}&page=${r.int(1, 9)}`,
  header_dump: (c, r) =>
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${c.header ?? "X-Debug-Credential"}: ${c.value}\r\nX-Request-Id: ${r.chars(HEX, 16)}\r\n`,
  env_file: (c) => `NODE_ENV=production\n${c.label}=${c.value}\nPORT=8080\n`,
  embedded_json: (c) => ({ body: JSON.stringify({ ok: true, config: { [c.label.toLowerCase()]: c.value } }) }),
};

/** Contexts where a label names the credential (for values that have no format of their own). */
const LABELLED: Record<string, Context> = {
  env_file: ANYWHERE.env_file!,
  export_line: (c) => `export ${c.label}="${c.value}"`,
  json_key: (c, r) => ({ account: `acct-${r.int(100, 999)}`, [camel(c.label)]: c.value }),
  embedded_json: ANYWHERE.embedded_json!,
  url_query: (c, r) => `https://${r.pick(HOSTS)}/v2/export?format=csv&${c.param ?? "api_key"}=${encodeURIComponent(c.value)}`,
};

interface Family {
  name: string;
  make(r: Random, i: number): Credential;
  contexts: Record<string, Context>;
}

const n = (r: Random, min: number, max: number) => r.chars("0123456789", r.int(min, max));

const FAMILIES: Family[] = [
  {
    name: "aws_access_key_id",
    make: (r) => ({ value: `${r.pick(["AKIA", "ASIA"])}${r.chars(UPPER_ALNUM, 16)}`, label: "AWS_ACCESS_KEY_ID" }),
    contexts: ANYWHERE,
  },
  {
    name: "aws_secret_access_key",
    make: (r) => ({ value: r.chars(BASE64, 40), label: "AWS_SECRET_ACCESS_KEY", param: "aws_secret_access_key" }),
    contexts: {
      ...LABELLED,
      credentials_ini: (c, r) =>
        `[default]\naws_access_key_id = AKIA${r.chars(UPPER_ALNUM, 16)}\naws_secret_access_key = ${c.value}\n`,
      sts_json: (c, r) => ({
        Credentials: { AccessKeyId: `ASIA${r.chars(UPPER_ALNUM, 16)}`, SecretAccessKey: c.value, Expiration: r.pick(TIMES) },
      }),
    },
  },
  {
    name: "github_token",
    make: (r) => ({
      value: `${r.pick(["ghp", "gho", "ghu", "ghs", "ghr"])}_${r.chars(ALNUM, 36)}`,
      label: "GITHUB_TOKEN",
      param: "access_token",
    }),
    contexts: { ...ANYWHERE, git_remote: (c) => `https://x-access-token:${c.value}@github.com/acme/tools.git` },
  },
  {
    name: "github_fine_grained_pat",
    make: (r) => ({ value: `github_pat_${r.chars(ALNUM, 22)}_${r.chars(ALNUM, 59)}`, label: "GH_TOKEN" }),
    contexts: ANYWHERE,
  },
  {
    name: "gitlab_token",
    make: (r) => ({
      value: `${r.pick(["glpat", "glpat", "gldt", "glrt", "glptt"])}-${r.chars(`${ALNUM}_-`, 20)}`,
      label: "GITLAB_TOKEN",
      param: "private_token",
      header: "PRIVATE-TOKEN",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "slack_token",
    make: (r) => {
      const kind = r.pick(["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"]);
      const tail = kind === "xoxb" ? r.chars(ALNUM, 24) : `${n(r, 10, 13)}-${r.chars(HEX, 32)}`;
      return { value: `${kind}-${n(r, 10, 13)}-${n(r, 10, 13)}-${tail}`, label: "SLACK_BOT_TOKEN", param: "token" };
    },
    contexts: ANYWHERE,
  },
  {
    name: "slack_webhook",
    make: (r) => {
      const secret = r.chars(ALNUM, 24);
      return {
        value: `https://hooks.slack.com/services/T${r.chars(UPPER_ALNUM, 10)}/B${r.chars(UPPER_ALNUM, 10)}/${secret}`,
        vanish: [secret],
        label: "SLACK_WEBHOOK_URL",
      };
    },
    contexts: {
      json_field: ANYWHERE.json_field!,
      sentence: ANYWHERE.sentence!,
      log_line: ANYWHERE.log_line!,
      env_file: ANYWHERE.env_file!,
    },
  },
  {
    name: "stripe_secret_key",
    make: (r) => ({
      value: `${r.pick(["sk_live", "rk_live", "sk_test", "rk_test"])}_${r.chars(ALNUM, r.pick([24, 99]))}`,
      label: "STRIPE_API_KEY",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "stripe_webhook_secret",
    make: (r) => ({ value: `whsec_${r.chars(ALNUM, 32)}`, label: "STRIPE_WEBHOOK_SIGNING" }),
    contexts: ANYWHERE,
  },
  {
    name: "openai_key",
    make: (r) => {
      const body = r.chars(`${ALNUM}_-`, 74);
      const value =
        r.int(0, 2) === 0
          ? `sk-${r.chars(ALNUM, 20)}T3BlbkFJ${r.chars(ALNUM, 20)}`
          : `sk-${r.pick(["proj", "svcacct", "admin"])}-${body}T3BlbkFJ${r.chars(`${ALNUM}_-`, 74)}`;
      return { value, label: "OPENAI_API_KEY", header: "Authorization-Key" };
    },
    contexts: ANYWHERE,
  },
  {
    name: "anthropic_key",
    make: (r) => ({
      value: `sk-ant-${r.pick(["api03", "admin01"])}-${r.chars(`${ALNUM}_-`, 93)}AA`,
      label: "ANTHROPIC_API_KEY",
      header: "x-api-key",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "google_api_key",
    make: (r) => ({
      value: `AIza${r.chars(`${ALNUM}_-`, 35)}`,
      label: "GOOGLE_MAPS_KEY",
      param: "key",
      header: "X-Goog-Api-Key",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "jwt",
    make: (r) => {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      const alg = r.pick(["HS256", "RS256", "ES256"]);
      const header = b64({ alg, typ: "JWT", ...(alg === "HS256" ? {} : { kid: r.chars(HEX, 8) }) });
      const payload = b64({ sub: r.chars(LOWER_ALNUM, 12), iat: 1_700_000_000 + r.int(0, 1e7), scope: "read write" });
      const signature = r.bytes(alg === "RS256" ? 256 : alg === "ES256" ? 64 : 32).toString("base64url");
      return { value: `${header}.${payload}.${signature}`, label: "ID_TOKEN", param: "id_token" };
    },
    contexts: ANYWHERE,
  },
  {
    name: "private_key",
    make: (r, i) => privateKey(r, i),
    contexts: {
      json_field: ANYWHERE.json_field!,
      mcp_text: ANYWHERE.mcp_text!,
      sentence: (c) => `Generated key pair. Private part follows:\n${c.value}\nKeep it secret.`,
      embedded_json: ANYWHERE.embedded_json!,
      gcp_service_account: (c, r) => ({
        text: JSON.stringify({
          type: "service_account",
          project_id: "acme-prod",
          private_key_id: r.chars(HEX, 40),
          private_key: c.value,
          client_email: "svc@acme-prod.iam.gserviceaccount.com",
        }),
      }),
    },
  },
  {
    name: "authorization_header",
    make: (r) => {
      const value =
        r.int(0, 1) === 0
          ? `Bearer ${r.chars(`${ALNUM}-._~`, r.int(20, 64))}`
          : `Basic ${Buffer.from(`${r.pick(["admin", "api", "svc-deploy", "ops@acme.io"])}:${r.chars(ALNUM, r.int(8, 24))}`).toString("base64")}`;
      return { value, vanish: [value.split(" ")[1]!], label: "AUTHORIZATION", header: "Authorization" };
    },
    contexts: {
      header_dump: (c, r) => `GET /v1/me HTTP/1.1\r\nHost: ${r.pick(HOSTS)}\r\nAuthorization: ${c.value}\r\nAccept: */*\r\n`,
      curl: (c, r) => `curl -sS -H 'Authorization: ${c.value}' https://${r.pick(HOSTS)}/v1/me`,
      log_line: (c, r) => `${r.pick(TIMES)} DEBUG outgoing headers={"authorization": "${c.value}", "accept": "*/*"}`,
      json_headers: (c) => ({ request: { headers: { Authorization: c.value, Accept: "application/json" } } }),
      sentence: (c) => `Retry the call with the header Authorization: ${c.value} set.`,
    },
  },
  {
    name: "url_password",
    make: (r) => {
      const password = r.chars(`${ALNUM}-._~!$*`, r.int(8, 24));
      const scheme = r.pick(["https", "http", "ftp", "redis", "amqp", "smtps", "sftp"]);
      return {
        value: `${scheme}://${r.pick(["admin", "deploy", "u"])}:${password}@${r.pick(HOSTS)}/`,
        vanish: [password],
        label: "SERVICE_URL",
      };
    },
    contexts: {
      json_field: ANYWHERE.json_field!,
      sentence: ANYWHERE.sentence!,
      log_line: ANYWHERE.log_line!,
      mcp_text: ANYWHERE.mcp_text!,
    },
  },
  {
    name: "database_url",
    make: (r) => {
      const password = r.chars(ALNUM, r.int(10, 30));
      const scheme = r.pick(["postgres", "postgresql", "mysql", "mongodb+srv", "mongodb"]);
      return {
        value: `${scheme}://app:${password}@db-${r.int(1, 9)}.internal:5432/prod`,
        vanish: [password],
        label: "DATABASE_URL",
      };
    },
    contexts: {
      json_field: ANYWHERE.json_field!,
      sentence: ANYWHERE.sentence!,
      env_file: ANYWHERE.env_file!,
      log_line: ANYWHERE.log_line!,
    },
  },
  {
    name: "npm_token",
    make: (r) => ({ value: `npm_${r.chars(ALNUM, 36)}`, label: "NPM_TOKEN" }),
    contexts: {
      ...ANYWHERE,
      npmrc: (c) => `registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${c.value}\n`,
    },
  },
  {
    name: "twilio_secret",
    make: (r) => ({ value: r.chars(HEX, 32), label: r.pick(["TWILIO_AUTH_TOKEN", "TWILIO_API_SECRET"]) }),
    contexts: {
      ...LABELLED,
      basic_url: (c, r) => `https://AC${r.chars(HEX, 32)}:${c.value}@api.twilio.com/2010-04-01/Accounts.json`,
    },
  },
  {
    name: "sendgrid_key",
    make: (r) => ({ value: `SG.${r.chars(BASE64URL, 22)}.${r.chars(BASE64URL, 43)}`, label: "SENDGRID_API_KEY" }),
    contexts: ANYWHERE,
  },
  {
    name: "mailgun_key",
    make: (r) => ({
      value: r.int(0, 1) === 0 ? `key-${r.chars(HEX, 32)}` : `${r.chars(HEX, 32)}-${r.chars(HEX, 8)}-${r.chars(HEX, 8)}`,
      label: "MAILGUN_API_KEY",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "azure_connection_string",
    make: (r) => {
      const key = r.base64(r.pick([32, 64]));
      const value = r.pick([
        `DefaultEndpointsProtocol=https;AccountName=acme${r.int(1, 99)};AccountKey=${key};EndpointSuffix=core.windows.net`,
        `Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${key}`,
        `HostName=acme-hub.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey=${key}`,
      ]);
      return { value, vanish: [key], label: "AZURE_STORAGE_CONNECTION" };
    },
    contexts: {
      json_field: ANYWHERE.json_field!,
      sentence: ANYWHERE.sentence!,
      log_line: ANYWHERE.log_line!,
      mcp_text: ANYWHERE.mcp_text!,
    },
  },
  {
    name: "azure_sas_url",
    make: (r) => {
      const sig = encodeURIComponent(r.base64(32));
      return {
        value: `https://acme.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=${sig}`,
        vanish: [sig],
        label: "EXPORT_URL",
      };
    },
    contexts: { json_field: ANYWHERE.json_field!, sentence: ANYWHERE.sentence!, log_line: ANYWHERE.log_line! },
  },
  {
    name: "shopify_token",
    make: (r) => ({
      value: `${r.pick(["shpat", "shpss", "shpca", "shppa"])}_${r.chars(HEX, 32)}`,
      label: "SHOPIFY_TOKEN",
      header: "X-Shopify-Access-Token",
    }),
    contexts: ANYWHERE,
  },
  {
    name: "linear_key",
    make: (r) => ({ value: `lin_api_${r.chars(ALNUM, 40)}`, label: "LINEAR_API_KEY" }),
    contexts: ANYWHERE,
  },
  {
    name: "onepassword_service_token",
    make: (r) => {
      const doc = {
        signInAddress: "acme.1password.com",
        userAuth: { method: "SRPg-4096", alg: "PBES2g-HS256", iterations: 650000, salt: r.chars(BASE64URL, 22) },
        email: `${r.chars(LOWER_ALNUM, 13)}@1passwordserviceaccounts.com`,
        srpX: r.chars(HEX, 64),
        muk: { alg: "A256GCM", ext: false, k: r.chars(BASE64URL, 43), key_ops: ["decrypt", "encrypt"], kty: "oct", kid: "mp" },
        secretKey: `A3-${r.chars(UPPER_ALNUM, 6)}-${r.chars(UPPER_ALNUM, 6)}-${r.chars(UPPER_ALNUM, 5)}`,
        throttleSecret: { seed: r.chars(HEX, 64), deviceUuid: r.chars(LOWER_ALNUM, 26) },
        deviceUuid: r.chars(LOWER_ALNUM, 26),
      };
      return { value: `ops_${Buffer.from(JSON.stringify(doc)).toString("base64")}`, label: "OP_SERVICE_ACCOUNT_TOKEN" };
    },
    contexts: ANYWHERE,
  },
  {
    name: "env_assignment",
    make: (r) => ({
      value: r.chars(`${ALNUM}-_`, r.int(12, 40)),
      label: r.pick([
        "DB_PASSWORD",
        "SECRET_KEY_BASE",
        "API_TOKEN",
        "JWT_SECRET",
        "REDIS_PASSWORD",
        "SMTP_PASSWORD",
        "CLIENT_SECRET",
        "SESSION_SECRET",
      ]),
    }),
    contexts: {
      env_file: LABELLED.env_file!,
      export_line: LABELLED.export_line!,
      docker_log: (c, r) => `${r.pick(TIMES)} container started with env ${c.label}=${c.value} HOME=/app`,
      yaml: (c) => `env:\n  - ${c.label}: "${c.value}"\n  - LOG_LEVEL: info\n`,
    },
  },
  {
    name: "generic_key_value",
    make: (r) => ({
      value: r.chars(`${ALNUM}-_`, r.int(12, 48)),
      label: r.pick(["api_key", "apiKey", "client_secret", "secret", "password", "access_token", "auth_token", "x-api-key"]),
      param: r.pick(["api_key", "apikey", "access_token", "client_secret", "token", "password", "secret"]),
    }),
    contexts: {
      json_key: (c, r) => ({ id: r.int(1, 999), [c.label]: c.value }),
      nested_json_key: (c) => ({ settings: { integration: { name: "crm", [c.label]: c.value } } }),
      embedded_json: (c) => ({
        content: [{ type: "text", text: JSON.stringify({ [c.label]: c.value, region: "eu" }, null, 2) }],
      }),
      url_query: (c, r) => `https://${r.pick(HOSTS)}/v1/report?${c.param}=${c.value}&format=json`,
      form_body: (c) => `grant_type=client_credentials&client_id=app-42&${c.param}=${c.value}`,
    },
  },
];

/** PEM private keys with real DER prefixes (so the body starts as a real key's does) and seeded bytes. */
function privateKey(r: Random, i: number): Credential {
  const kinds = [
    { type: "RSA PRIVATE KEY", der: "308204a40201000282010100", bytes: 1180 },
    { type: "EC PRIVATE KEY", der: "30770201010420", bytes: 112 },
    { type: "PRIVATE KEY", der: "308204be020100300d06092a864886f70d0101010500", bytes: 1200 },
    { type: "PRIVATE KEY", der: "302e020100300506032b657004220420", bytes: 32 },
    { type: "ENCRYPTED PRIVATE KEY", der: "308205163040", bytes: 1290 },
    { type: "OPENSSH PRIVATE KEY", der: Buffer.from("openssh-key-v1\0").toString("hex"), bytes: 380 },
  ];
  const kind = kinds[i % kinds.length]!;
  const body = Buffer.concat([Buffer.from(kind.der, "hex"), r.bytes(kind.bytes)]).toString("base64");
  const lines = body.match(/.{1,64}/g)!;
  return {
    value: `-----BEGIN ${kind.type}-----\n${lines.join("\n")}\n-----END ${kind.type}-----`,
    vanish: lines.filter((line) => line.length >= 16),
    label: "PRIVATE_KEY",
  };
}

/** The rule set's own examples (services/execution/src/domain/redaction/redact.test.ts), in their contexts. */
const EXAMPLES: { value: Json; vanish: string[] }[] = [
  { value: { user: { name: "ada", password: "correct horse battery" } }, vanish: ["correct horse battery"] },
  { value: { headers: { Authorization: "Bearer abc.def.ghi" } }, vanish: ["abc.def.ghi"] },
  { value: { headers: { "X-Api-Key": "k-123456" } }, vanish: ["k-123456"] },
  {
    value: { note: "token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 was leaked" },
    vanish: ["ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"],
  },
  { value: { db: "postgres://admin:s3cretPassw0rd@db.example.com:5432/prod" }, vanish: ["s3cretPassw0rd"] },
  {
    value: { env: "HOME=/root\nSTRIPE_SECRET_KEY=sk_live_abcdefgh12345678\nPATH=/usr/bin" },
    vanish: ["sk_live_abcdefgh12345678"],
  },
  {
    value: {
      jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    },
    vanish: ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
  },
  {
    value: { key: `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${"Q".repeat(200)}\n-----END RSA PRIVATE KEY-----` },
    vanish: ["MIIEowIBAAKCAQEA"],
  },
  { value: { aws: "AKIAZ7K3N5Q2R4T6V8XA" }, vanish: ["AKIAZ7K3N5Q2R4T6V8XA"] },
  {
    value: { text: JSON.stringify({ config: { api_key: "sk-live-0123456789" }, ok: true }, null, 2) },
    vanish: ["sk-live-0123456789"],
  },
  {
    value: { a: { password: "p-123456" }, b: [{ token: "t-123456" }], c: { secret: "s-123456" } },
    vanish: ["p-123456", "t-123456", "s-123456"],
  },
  { value: { password: "hunter2-hunter2", note: "ok" }, vanish: ["hunter2-hunter2"] },
];

/** At least `perFamily` samples of every family, cycling through the family's contexts. */
export function secretCorpus(seed: number, perFamily: number): SecretSample[] {
  const r = new Random(seed);
  const samples: SecretSample[] = EXAMPLES.map((e) => ({ family: "rule_set_examples", context: "as_in_unit_test", ...e }));
  for (const family of FAMILIES) {
    const contexts = Object.entries(family.contexts);
    for (let i = 0; i < perFamily; i++) {
      const credential = family.make(r, i);
      const [context, place] = contexts[i % contexts.length]!;
      samples.push({
        family: family.name,
        context,
        value: place(credential, r),
        vanish: credential.vanish ?? [credential.value],
      });
    }
  }
  return samples;
}

function camel(label: string): string {
  return label.toLowerCase().replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
}
