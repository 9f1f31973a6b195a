/**
 * The non-secret half of the redaction corpus: strings an upstream returns every day that look close to a
 * credential (long, random-looking, prefixed, base64 or hex) but are not one: UUIDs, hashes, base64
 * images, object and message IDs, URLs, slugs, versions, paths, dates, phone numbers, emails, public keys,
 * and prose that talks about tokens, secrets and passwords without holding one. Each is placed in the
 * same kinds of contexts as the credentials (a JSON field, a sentence, a log line, a URL, a text
 * envelope), under keys and parameters that do not name a credential.
 */

import { crc32, deflateSync } from "node:zlib";
import type { Json } from "@toolport/kit/json-values";
import { ALNUM, BASE64URL, CROCKFORD, HEX, LOWER_ALNUM, Random, UPPER_ALNUM } from "./random.js";

export interface LookalikeSample {
  category: string;
  context: string;
  value: Json;
}

type Place = (text: string, key: string, r: Random) => Json;

const PLACES: Record<string, Place> = {
  json_field: (text, key, r) => ({ id: r.int(1, 99_999), [key]: text, status: "ok" }),
  sentence: (text, key) => `The ${key.replace(/_/g, " ")} is ${text}, see the dashboard for details.`,
  log_line: (text, key, r) =>
    `2025-06-0${r.int(1, 9)}T10:1${r.int(0, 9)}:00Z INFO handled request ${key}=${text} in ${r.int(2, 900)}ms`,
  url_query: (text, key, r) =>
    `https://app.example.com/${r.pick(["search", "items", "view"])}?${key}=${encodeURIComponent(text)}&lang=en`,
  mcp_text: (text, key) => ({ content: [{ type: "text", text: `${key}: ${text}` }], isError: false }),
};

interface Category {
  name: string;
  /** The JSON key or parameter it naturally sits under. */
  key: string;
  make(r: Random): string;
  /** Places it fits in (default: all). */
  places?: string[];
}

const hexBytes = (r: Random, n: number) => r.bytes(n).toString("hex");

function uuid(r: Random, version: 1 | 4 | 7): string {
  const b = r.bytes(16);
  if (version === 7) b.writeUIntBE(1_700_000_000_000 + r.int(0, 1e9), 0, 6);
  b[6] = (b[6]! & 0x0f) | (version << 4);
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A valid PNG of a few pixels (seeded colours), as a browser or an image API would return it. */
function tinyPng(r: Random): Buffer {
  const width = r.int(1, 8);
  const height = r.int(1, 8);
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), r.bytes(width * 3)])));
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const WORDS = [
  "release",
  "notes",
  "quarterly",
  "report",
  "invoice",
  "summer",
  "launch",
  "guide",
  "team",
  "update",
  "draft",
  "final",
];
const PROSE = [
  "Your password must be at least 12 characters long and include a number.",
  "The access token expires after 3600 seconds; request a new one with your refresh token.",
  "Rotate the client secret every 90 days from the settings page.",
  "Token usage: 1,234 input tokens and 567 output tokens.",
  "Bearer tokens are sent in the Authorization header of each request.",
  "Never share your API key or secret with anyone, including support staff.",
  "Forgot your password? Use the reset link we emailed you.",
  "The secret to a good sourdough is patience and a warm kitchen.",
  "Set the api_key parameter in your configuration file before running the tool.",
  "Password reset requested for your account; if this was not you, ignore this email.",
  "Secrets are stored encrypted at rest and never returned by the API.",
  "Each token is valid for one hour and can be revoked at any time.",
  "The password field is required.",
  "Use a personal access token with the repo scope to push.",
];

const CATEGORIES: Category[] = [
  { name: "uuid_v1", key: "request_id", make: (r) => uuid(r, 1) },
  { name: "uuid_v4", key: "id", make: (r) => uuid(r, 4) },
  { name: "uuid_v7", key: "event_id", make: (r) => uuid(r, 7) },
  { name: "md5", key: "checksum", make: (r) => hexBytes(r, 16) },
  { name: "sha1", key: "etag", make: (r) => hexBytes(r, 20) },
  { name: "sha256", key: "sha256", make: (r) => hexBytes(r, 32) },
  { name: "git_sha", key: "commit", make: (r) => (r.int(0, 1) ? hexBytes(r, 20) : hexBytes(r, 6).slice(0, r.int(7, 12))) },
  { name: "image_digest", key: "digest", make: (r) => `sha256:${hexBytes(r, 32)}` },
  {
    name: "base64_png",
    key: "image",
    make: (r) => `data:image/png;base64,${tinyPng(r).toString("base64")}`,
    places: ["json_field", "sentence", "mcp_text"],
  },
  { name: "base64_random", key: "content", make: (r) => r.base64(r.int(12, 300)) },
  {
    name: "stripe_object_id",
    key: "object",
    make: (r) =>
      `${r.pick(["cus", "ch", "pi", "pm", "price", "prod", "sub", "in", "evt", "txn", "re", "seti"])}_${r.chars(ALNUM, r.pick([14, 24]))}`,
  },
  {
    name: "stripe_publishable_key",
    key: "publishable_key",
    make: (r) => `pk_${r.pick(["live", "test"])}_${r.chars(ALNUM, r.pick([24, 99]))}`,
  },
  {
    name: "slack_id",
    key: "channel",
    make: (r) =>
      r.int(0, 3) === 0
        ? `${1_700_000_000 + r.int(0, 1e8)}.${r.chars("0123456789", 6)}`
        : `${r.pick(["C", "U", "T", "W", "G", "D"])}${r.chars(UPPER_ALNUM, r.int(8, 10))}`,
  },
  { name: "ulid", key: "ulid", make: (r) => r.chars(CROCKFORD, 26) },
  { name: "snowflake", key: "message_id", make: (r) => `${r.int(1, 9)}${r.chars("0123456789", r.int(17, 18))}` },
  { name: "nanoid", key: "short_id", make: (r) => r.chars(BASE64URL, 21) },
  {
    name: "url",
    key: "link",
    make: (r) =>
      `https://${r.pick(["shop", "docs", "cdn", "www"])}.example.${r.pick(["com", "org", "io"])}/${r.pick(WORDS)}/${r.chars(LOWER_ALNUM, 8)}?utm_source=newsletter&page=${r.int(1, 40)}&q=${r.pick(WORDS)}&ref=${r.chars(ALNUM, 12)}`,
    places: ["json_field", "sentence", "log_line", "mcp_text"],
  },
  {
    name: "slug",
    key: "slug",
    make: (r) => `${r.pick(WORDS)}-${r.pick(WORDS)}-${r.pick(WORDS)}-${r.chars(LOWER_ALNUM, r.int(8, 24))}`,
  },
  {
    name: "version",
    key: "version",
    make: (r) =>
      `${r.pick(["", "v"])}${r.int(0, 30)}.${r.int(0, 99)}.${r.int(0, 999)}${r.pick(["", `-beta.${r.int(1, 9)}`, `+build.${r.chars(HEX, 12)}`, `-rc.${r.int(1, 5)}+sha.${r.chars(HEX, 7)}`])}`,
  },
  {
    name: "file_path",
    key: "path",
    make: (r) =>
      r.pick([
        `/usr/local/lib/node_modules/${r.pick(WORDS)}/dist/${r.chars(LOWER_ALNUM, 10)}.js`,
        `C:\\Users\\${r.pick(["ada", "grace"])}\\AppData\\Local\\Temp\\${r.chars(UPPER_ALNUM, 12)}.tmp`,
        `s3://acme-exports/${r.int(2020, 2026)}/${r.chars(HEX, 16)}/part-${r.int(0, 9999)}.parquet`,
        `./src/secrets/${r.pick(WORDS)}.ts`,
      ]),
  },
  { name: "iso_date", key: "created_at", make: (r) => new Date(1_600_000_000_000 + r.int(0, 2e9) * 100).toISOString() },
  {
    name: "phone",
    key: "phone",
    make: (r) => r.pick([`+1 ${r.int(200, 999)}-${r.int(200, 999)}-${r.int(1000, 9999)}`, `+44${r.chars("0123456789", 10)}`]),
  },
  {
    name: "email",
    key: "email",
    make: (r) =>
      `${r.pick(["ada", "token.admin", "secret.santa", "pass.word"])}${r.int(1, 999)}@${r.pick(["example.com", "acme.io"])}`,
  },
  { name: "prose", key: "message", make: (r) => r.pick(PROSE), places: ["json_field", "mcp_text", "log_line"] },
  {
    name: "aws_resource_id",
    key: "resource",
    make: (r) =>
      r.pick([
        `i-0${hexBytes(r, 8).slice(0, 16)}`,
        `arn:aws:iam::${r.chars("0123456789", 12)}:role/${r.pick(WORDS)}-role`,
        `ami-${hexBytes(r, 8).slice(0, 17)}`,
        `arn:aws:s3:::acme-${r.pick(WORDS)}/${r.chars(LOWER_ALNUM, 10)}`,
      ]),
  },
  {
    name: "public_key_or_cert",
    key: "public_key",
    make: (r) => {
      const type = r.pick(["PUBLIC KEY", "CERTIFICATE", "RSA PUBLIC KEY"]);
      const body = Buffer.concat([Buffer.from("30820122300d06092a864886f70d01010105000382010f00", "hex"), r.bytes(270)]).toString(
        "base64",
      );
      return `-----BEGIN ${type}-----\n${body.match(/.{1,64}/g)!.join("\n")}\n-----END ${type}-----`;
    },
    places: ["json_field", "mcp_text"],
  },
  {
    name: "ssh_public_key",
    key: "authorized_key",
    make: (r) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${r.base64(32).slice(0, 43)} ada@laptop`,
  },
  {
    name: "env_setting",
    key: "env",
    // Settings whose names hold a secret word but whose values are not secrets.
    make: (r) =>
      r.pick([
        `MAX_TOKENS=${r.int(256, 32_000)}`,
        `TOKEN_TTL=${r.int(60, 86_400)}`,
        `AUTH_ENABLED=${r.pick(["true", "false"])}`,
        `PASSWORD_MIN_LENGTH=${r.int(8, 64)}`,
        `SESSION_TOKEN_EXPIRY=${r.int(5, 90)}m`,
        `SECRET_ROTATION_DAYS=${r.int(30, 365)}`,
        `OAUTH_PROVIDER=${r.pick(["github", "google", "okta"])}`,
        `TOKEN_URL=https://auth.example.com/oauth/${r.pick(["token", "authorize"])}`,
        `DB_PASSWORD_FILE=/run/secrets/${r.pick(["db_password", "pg_pass"])}`,
        `API_KEY_HEADER=${r.pick(["X-Api-Key", "Authorization"])}`,
      ]),
    places: ["json_field", "log_line", "mcp_text"],
  },
  {
    name: "pagination_url",
    key: "next",
    make: (r) =>
      `https://api.example.com/v1/${r.pick(WORDS)}?${r.pick(["pageToken", "next_token", "cursor", "continuation_token", "key", "state", "sync_token"])}=${r.chars(BASE64URL, r.int(12, 60))}&limit=${r.int(10, 100)}`,
    places: ["json_field", "sentence", "log_line", "mcp_text"],
  },
  {
    name: "oauth_metadata",
    key: "token_type",
    make: (r) =>
      JSON.stringify({
        token_type: "Bearer",
        expires_in: r.int(300, 86_400),
        scope: r.pick(["read", "read write", "repo"]),
        max_tokens: r.int(1, 9999),
      }),
    places: ["json_field", "mcp_text"],
  },
  {
    name: "prose_basic_and_keys",
    key: "text",
    make: (r) =>
      r.pick([
        `Basic authentication is deprecated; move to OAuth before ${r.int(2026, 2030)}.`,
        `Basic ${r.pick(["plan", "tier", "configuration", "usage", "Information"])} includes ${r.int(1, 50)} seats.`,
        `The primary key is (tenant_id, ${r.pick(["order_id", "sku"])}) and the sort key is created_at.`,
        `Desk test results: ${r.int(1, 99)} passed, task-runner ${r.pick(WORDS)} finished.`,
      ]),
    places: ["json_field", "sentence", "log_line", "mcp_text"],
  },
  {
    name: "hex_color_and_css",
    key: "style",
    make: (r) => `color: #${r.chars(HEX, 6)}; background: #${r.chars(HEX, 6)}; font-family: Inter`,
  },
];

/** `perCategory` samples of every category, cycling through the places each fits in. */
export function lookalikeCorpus(seed: number, perCategory: number): LookalikeSample[] {
  const r = new Random(seed);
  const samples: LookalikeSample[] = [];
  for (const category of CATEGORIES) {
    const places = category.places ?? Object.keys(PLACES);
    for (let i = 0; i < perCategory; i++) {
      const context = places[i % places.length]!;
      samples.push({ category: category.name, context, value: PLACES[context]!(category.make(r), category.key, r) });
    }
  }
  return samples;
}
