/**
 * The secret-finding rules: applied to upstream results by execution (besides exact-value masking of
 * the credentials the gateway injected) and to skill submissions by content:
 * - the secretlint recommended preset (@secretlint/secretlint-rule-preset-recommend 11.7.1, the newest
 *   release that runs on Node 20): AWS, GCP, GitHub, GitLab-style, Slack, npm, OpenAI, Anthropic, Linear,
 *   SendGrid, Shopify, 1Password, private keys, basic-auth URLs and database connection strings. Its
 *   patterns use bounded quantifiers; see secretlint.ts for how it is run;
 * - ours, for what the preset leaves out (JWTs, bearer tokens in text, environment assignments such as
 *   `DB_PASSWORD=...`, credentials in any URL scheme and in query strings), written so each pattern's
 *   work per start position is bounded (bounded quantifiers, or a run-then-check scan for JWTs);
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
}

const ENV_SECRET_WORD = "(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH)";

const PATTERN_RULES: PatternRule[] = [
  {
    id: "env_assignment",
    field: (m) => m[1]!,
    // NAME=value / NAME: value / export NAME="value", NAME containing a secret word.
    pattern: new RegExp(
      String.raw`\b([A-Z][A-Z0-9_]{0,80}${ENV_SECRET_WORD}[A-Z0-9_]{0,40})[ \t]{0,4}[=:][ \t]{0,4}["']?([^\s"'\`]{4,1000})`,
      "dg",
    ),
    group: 2,
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
    pattern:
      /[?&](api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password|passwd|signature|sig)=([^&#\s"']{4,2000})/dgi,
    group: 2,
  },
];

export function findPatternSecrets(text: string): TextFinding[] {
  const found: TextFinding[] = [];
  for (const rule of PATTERN_RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      const value = m[rule.group];
      if (value === undefined || value.length === 0 || value.startsWith("[REDACTED")) continue;
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
