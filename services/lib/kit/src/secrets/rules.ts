/**
 * The secret-finding rules: applied to upstream results by execution (besides exact-value masking of
 * the credentials the gateway injected) and to skill submissions by content:
 * - the secretlint recommended preset (@secretlint/secretlint-rule-preset-recommend 11.7.1, the newest
 *   release that runs on Node 20): AWS, GCP, GitHub, GitLab-style, Slack, npm, OpenAI, Anthropic, Linear,
 *   SendGrid, Shopify, 1Password, private keys, basic-auth URLs and database connection strings. Its
 *   patterns use bounded quantifiers; see secretlint.ts for how it is run;
 * - ours, for what the preset leaves out (JWTs, bearer and Basic credentials in text, environment
 *   assignments such as `DB_PASSWORD=...`, credentials in any URL scheme and in query strings, every
 *   PEM private key block, Azure connection string keys, and the provider formats in PROVIDER_TOKENS),
 *   written so each pattern's work per start position is bounded (bounded quantifiers, or a
 *   run-then-check scan for JWTs);
 * - key names: a string held by a key such as `password`, `api_key`, `client_secret` or `Authorization`
 *   is masked whole.
 */

export interface TextFinding {
  start: number;
  end: number;
  /** The `<FIELD>` of `[REDACTED:<FIELD>]`. */
  field: string;
  rule: string;
}

interface PatternRule {
  id: string;
  field: string | ((m: RegExpExecArray) => string);
  pattern: RegExp;
  /** Capture group to mask (0 = the whole match). */
  group: number;
  /** A further check of a match, for patterns that alone would also match ordinary text. */
  accept?: (m: RegExpExecArray) => boolean;
}

const ENV_SECRET_WORD = "(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH)";

/**
 * Settings about a secret rather than secrets: names that end in a word describing the setting
 * (`TOKEN_TTL`, `PASSWORD_MIN_LENGTH`, `TOKEN_URL`, `DB_PASSWORD_FILE`), and values that are counts,
 * durations or switches (`MAX_TOKENS=4096`, `AUTH_ENABLED=true`).
 */
const SETTING_NAME =
  /_(?:TTL|LENGTH|LEN|EXPIRY|EXPIRES|DAYS|SECONDS|ENABLED|DISABLED|PROVIDER|URL|URI|ENDPOINT|FILE|PATH|HEADER|TYPE|MODE|ALGORITHM|COUNT|LIMIT|SIZE|NAME|ISSUER|AUDIENCE|SCOPES?)$/;
const SETTING_VALUE = /^(?:-?\d+(?:\.\d+)?[smhdw]?|true|false|yes|no|on|off|enabled|disabled|none|null)$/i;

/**
 * Provider credentials with a format of their own that the preset does not know (or knows only in part),
 * masked whole wherever they appear. Each has a fixed prefix and a long random body, so ordinary text
 * does not match.
 */
const PROVIDER_TOKENS: { id: string; field: string; pattern: RegExp }[] = [
  {
    id: "gitlab",
    field: "GITLAB_TOKEN",
    pattern: /(?<![A-Za-z0-9_])gl(?:pat|dt|rt|ptt|ft|imt|oas|soat|cbt|agent)-[A-Za-z0-9_-]{20,300}/dg,
  },
  { id: "slack", field: "SLACK_TOKEN", pattern: /\bxox[se](?:\.xox[a-z])?-[A-Za-z0-9][A-Za-z0-9-]{9,300}/dg },
  { id: "stripe", field: "STRIPE_SECRET_KEY", pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,247}/dg },
  { id: "stripe_webhook", field: "STRIPE_WEBHOOK_SECRET", pattern: /\bwhsec_[A-Za-z0-9+/]{24,100}={0,2}/dg },
  { id: "anthropic", field: "ANTHROPIC_API_KEY", pattern: /(?<![A-Za-z0-9_-])sk-ant-[a-z]{3,8}\d{2}-[A-Za-z0-9_-]{80,200}/dg },
  { id: "google_api_key", field: "GOOGLE_API_KEY", pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/dg },
  {
    id: "sendgrid",
    field: "SENDGRID_API_KEY",
    pattern: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
  },
  { id: "mailgun", field: "MAILGUN_API_KEY", pattern: /\b(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b/dg },
  { id: "onepassword", field: "OP_SERVICE_ACCOUNT_TOKEN", pattern: /(?<![A-Za-z0-9_])ops_eyJ[A-Za-z0-9+/_-]{100,4096}={0,2}/dg },
];

const PATTERN_RULES: PatternRule[] = [
  {
    id: "env_assignment",
    field: (m) => m[1]!,
    // NAME=value / NAME: value / export NAME="value", NAME containing a secret word.
    pattern: new RegExp(
      String.raw`\b((?:[A-Z][A-Z0-9_]{0,80})?${ENV_SECRET_WORD}[A-Z0-9_]{0,40})[ \t]{0,4}[=:][ \t]{0,4}["']?([^\s"'\`]{4,1000})`,
      "dg",
    ),
    group: 2,
    accept: (m) => !SETTING_NAME.test(m[1]!) && !SETTING_VALUE.test(m[2]!),
  },
  {
    id: "bearer_token",
    field: "BEARER_TOKEN",
    pattern: /\b[Bb]earer[ \t]{1,4}([A-Za-z0-9\-._~+/]{16,4096}=*)/dg,
    group: 1,
  },
  {
    id: "url_credentials",
    field: "PASSWORD",
    pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s:@/]{1,256}:([^\s@/]{1,256})@/dg,
    group: 1,
  },
  {
    id: "query_credential",
    field: (m) => m[1]!.toUpperCase().replace(/-/g, "_"),
    // A parameter whose name is a sensitive key (the same vocabulary as JSON keys, e.g.
    // `aws_secret_access_key`, but not `page_token`), or a URL signature.
    pattern: /[?&]([A-Za-z][A-Za-z0-9_.-]{0,63})=([^&#\s"']{4,2000})/dg,
    group: 2,
    accept: (m) => /^(?:signature|sig)$/i.test(m[1]!) || isSensitiveKey(m[1]!),
  },
  {
    id: "basic_auth",
    field: "BASIC_AUTH",
    // `Basic <base64 of user:password>` (a header value in text); the decoding check keeps out prose
    // such as "Basic configuration".
    pattern: /\b[Bb]asic[ \t]{1,4}([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])/dg,
    group: 1,
    accept: (m) => /^[\x20-\x7e]{1,256}:[\x20-\x7e]{1,1024}$/.test(Buffer.from(m[1]!, "base64").toString("latin1")),
  },
  {
    id: "private_key",
    field: "PRIVATE_KEY",
    // Any PEM private key block (EC, PKCS#8, encrypted, short Ed25519 ones the preset misses), to its
    // END line or, cut short, to the end of its body.
    pattern:
      /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----END)){1,20000}(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?/dg,
    group: 0,
  },
  {
    id: "azure_key",
    field: (m) => fieldLabel(m[1]!),
    // The key of an Azure Storage, Service Bus or IoT Hub connection string.
    pattern: /\b(AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,200}={0,2})/dg,
    group: 2,
  },
  ...PROVIDER_TOKENS.map(({ id, field, pattern }) => ({ id, field, pattern, group: 0 })),
];

export function findPatternSecrets(text: string): TextFinding[] {
  const found: TextFinding[] = [];
  for (const rule of PATTERN_RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      const value = m[rule.group];
      if (value === undefined || value.length === 0 || value.startsWith("[REDACTED")) continue;
      if (rule.accept && !rule.accept(m)) continue;
      const [start, end] = m.indices![rule.group]!;
      found.push({ start, end, field: typeof rule.field === "string" ? rule.field : rule.field(m), rule: rule.id });
    }
  }
  found.push(...findJwts(text));
  return found;
}

/**
 * JWTs (`eyJ<header>.eyJ<payload>.<signature>`), found without backtracking: take each maximal run of
 * base64url characters and dots once (a linear scan), then check the run's dot-separated parts.
 */
export function findJwts(text: string): TextFinding[] {
  const found: TextFinding[] = [];
  const run = /[A-Za-z0-9_\-.]{30,}/g;
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    const parts = m[0].split(".");
    let offset = m.index;
    for (let i = 0; i + 2 < parts.length; i++) {
      const header = parts[i]!;
      const at = header.indexOf("eyJ");
      if (at >= 0 && parts[i + 1]!.startsWith("eyJ") && header.length - at >= 10 && parts[i + 1]!.length >= 10) {
        const start = offset + at;
        const end = offset + header.length + 1 + parts[i + 1]!.length + 1 + parts[i + 2]!.length;
        found.push({ start, end, field: "JWT", rule: "jwt" });
        offset = end + 1;
        i += 2;
        continue;
      }
      offset += header.length + 1;
    }
  }
  return found;
}

/** Keys whose string value is a credential whatever it looks like. */
const SENSITIVE_KEY =
  /(?:^|_)(?:password|passwd|passphrase|pwd|secret|secret_key|client_secret|api_key|apikey|access_key|secret_access_key|private_key|token|access_token|refresh_token|id_token|auth_token|session_token|bearer_token|authorization|proxy_authorization|credential|credentials|connection_string|conn_str|dsn|cookie|set_cookie)$/;
/** Pagination and bookkeeping keys that end like a credential but are not one. */
const NOT_SENSITIVE_KEY = /(?:page|next|cursor|continuation|sync|pagination)|^(?:token_type|tokens|token_count|max_tokens)$/;

/** Normalises `clientSecret`, `Client-Secret`, `CLIENT_SECRET` to `client_secret`. */
export function normalizeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[-\s.]+/g, "_")
    .toLowerCase();
}

export function isSensitiveKey(key: string): boolean {
  if (key.length > 100) return false;
  const normalized = normalizeKey(key);
  return SENSITIVE_KEY.test(normalized) && !NOT_SENSITIVE_KEY.test(normalized);
}

/** `[REDACTED:<FIELD>]` label of a key or rule name: upper snake case. */
export function fieldLabel(name: string): string {
  const label = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
  return label.slice(0, 64) || "SECRET";
}
