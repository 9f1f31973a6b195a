/**
 * Secret redaction of an upstream result, before it is stored or returned. Every credential value found is
 * replaced by `[REDACTED:<FIELD>]` (FIELD: the key that held it, the rule's kind, or the injected
 * credential's name) and reported as {path, key, rule}. Three sources, in this order of precedence:
 * 1. exact values of the credentials the gateway injected into this call, raw and base64-, URL- and
 *    JSON-encoded (always applied, also for passthrough tools: our own stored credentials never leak);
 * 2. sensitive key names (a string under `password`, `api_key`, `Authorization`...);
 * 3. text rules (the secretlint preset and ours, see @toolport/kit/secrets) over every string.
 * Strings holding a JSON document are redacted inside that document (report paths then carry a `<json>`
 * segment) and re-serialized only when something in them was masked.
 * A tool whose purpose is to return a new credential (passthrough_reason) skips 2 and 3.
 *
 * What is promised (measured on a labelled corpus by test/security/redaction.test.ts: every family
 * masked in full, at most 1% of lookalikes touched):
 * - anywhere in text, by format: AWS access key ids; GitHub (ghp_/gho_/ghu_/ghs_/ghr_/github_pat_),
 *   GitLab (glpat- and kin), Slack (xox?- tokens and webhook URLs), Stripe (sk_/rk_ live and test,
 *   whsec_), OpenAI, Anthropic, Google (AIza), SendGrid, Mailgun, npm, Shopify, Linear and 1Password
 *   tokens; JWTs; PEM private key blocks; `Bearer`/`Basic` credentials; passwords in URLs (any scheme,
 *   database URLs included); Azure connection string keys and SAS signatures;
 * - by label only, for values with no format of their own (an AWS secret key, a Twilio auth token, a
 *   password, a generic API key): under a sensitive key name in JSON (also JSON inside a string), a
 *   sensitive query parameter, an env-style assignment (`DB_PASSWORD=...`, `aws_secret_access_key = ...`).
 *   Bare, such a value cannot be told from a hash or an ID, so it is not looked for.
 */

import { formatLocation, type Location } from "@toolport/kit/json-path";
import { isObject, type Json, parseEmbeddedJson } from "@toolport/kit/json-values";
import { fieldLabel, findPatternSecrets, isSensitiveKey, secretlintFindings, type TextFinding } from "@toolport/kit/secrets";

export interface InjectedCredential {
  /** The secret as sent upstream. */
  value: string;
  /** Its name in the mask, e.g. API_KEY, BEARER_TOKEN, PASSWORD. */
  field: string;
}

export interface RedactedField {
  path: string;
  key: string;
  rule: string;
}

export interface RedactionReport {
  count: number;
  fields: RedactedField[];
  mode: "mask";
}

export interface RedactOptions {
  injected?: InjectedCredential[];
  /** Set for credential-returning tools: only injected credentials are masked. */
  passthrough?: boolean;
}

/** At most this many entries are listed in the report's fields (count has them all). */
export const MAX_REPORTED_FIELDS = 100;
/** Injected values shorter than this are not searched for (they would mask ordinary text). */
export const MIN_INJECTED_LENGTH = 4;
/** Embedded JSON documents are descended into this many levels deep. */
const MAX_EMBEDDED_LEVELS = 3;
/** Strings shorter than this are not given to the text rules (no rule matches them). */
const MIN_SCANNED_LENGTH = 8;

interface LocNode {
  parent: LocNode | undefined;
  part: Location;
}

interface Slot {
  text: string;
  loc: LocNode | undefined;
  key: string;
  set(value: string): void;
  embedded: Embedded | undefined;
}

/** A node still to visit, with where it sits and how to replace it. */
interface Visit {
  node: Json;
  loc: LocNode | undefined;
  /** The nearest object key above the node ("" at the root). */
  key: string;
  set(value: Json): void;
  embedded: Embedded | undefined;
  /** Embedded documents entered on the way down. */
  level: number;
}

interface Embedded {
  doc: Json;
  set(value: string): void;
  parent: Embedded | undefined;
  changed: boolean;
}

export const mask = (field: string) => `[REDACTED:${field}]`;

export async function redact(value: Json, options: RedactOptions = {}): Promise<{ value: Json; report: RedactionReport }> {
  const report: RedactionReport = { count: 0, fields: [], mode: "mask" };
  const record = (loc: LocNode | undefined, key: string, rule: string) => {
    report.count++;
    if (report.fields.length < MAX_REPORTED_FIELDS) report.fields.push({ path: formatLocation(toLocation(loc)), key, rule });
  };
  const markChanged = (embedded: Embedded | undefined) => {
    for (let e = embedded; e; e = e.parent) e.changed = true;
  };

  const slots: Slot[] = [];
  const embeddedDocs: Embedded[] = [];
  let root = value;
  const passthrough = options.passthrough === true;

  // Depth first in document order, on an explicit stack: a result nested thousands of levels deep must
  // not overflow the call stack. Children are pushed last first so they are visited first to last.
  const pending: Visit[] = [{ node: value, loc: undefined, key: "", set: (v) => (root = v), embedded: undefined, level: 0 }];
  while (pending.length > 0) {
    const { node, loc, key, set, embedded, level } = pending.pop()!;
    if (typeof node === "string") {
      if (!passthrough && key !== "" && node.length > 0 && !node.startsWith("[REDACTED:") && isSensitiveKey(key)) {
        set(mask(fieldLabel(key)));
        record(loc, key, "sensitive_key");
        markChanged(embedded);
        continue;
      }
      const doc = level < MAX_EMBEDDED_LEVELS ? parseEmbeddedJson(node) : undefined;
      if (doc !== undefined && typeof doc === "object" && doc !== null) {
        const inner: Embedded = { doc, set: (v) => set(v), parent: embedded, changed: false };
        embeddedDocs.push(inner);
        const docLoc = { parent: loc, part: { json: true } as const };
        pending.push({ node: doc, loc: docLoc, key, set: (v) => (inner.doc = v), embedded: inner, level: level + 1 });
        continue;
      }
      slots.push({ text: node, loc, key, set: (v) => set(v), embedded });
      continue;
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        pending.push({ node: node[i]!, loc: { parent: loc, part: i }, key, set: (v) => (node[i] = v), embedded, level });
      }
      continue;
    }
    if (isObject(node)) {
      const keys = Object.keys(node);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        const setKey = (v: Json) =>
          Object.defineProperty(node, k, { value: v, enumerable: true, writable: true, configurable: true });
        pending.push({ node: node[k]!, loc: { parent: loc, part: k }, key: k, set: setKey, embedded, level });
      }
    }
  }

  const needles = injectedNeedles(options.injected ?? []);
  const ruleFindings = passthrough
    ? slots.map(() => [] as TextFinding[])
    : await secretlintFindings(slots.map((s) => (s.text.length >= MIN_SCANNED_LENGTH ? s.text : "")));

  slots.forEach((slot, i) => {
    const findings: TextFinding[] = [];
    for (const needle of needles) {
      for (let at = slot.text.indexOf(needle.value); at >= 0; at = slot.text.indexOf(needle.value, at + needle.value.length)) {
        findings.push({ start: at, end: at + needle.value.length, field: needle.field, rule: "injected_credential" });
      }
    }
    if (!passthrough && slot.text.length >= MIN_SCANNED_LENGTH) {
      findings.push(...ruleFindings[i]!, ...findPatternSecrets(slot.text));
    }
    if (findings.length === 0) return;
    const merged = mergeFindings(findings);
    let out = "";
    let last = 0;
    for (const f of merged) {
      out += slot.text.slice(last, f.start) + mask(f.field);
      last = f.end;
      record(slot.loc, slot.key, f.rule);
    }
    slot.set(out + slot.text.slice(last));
    markChanged(slot.embedded);
  });

  // Innermost documents were found last: serialize them first so their parents see the new text.
  for (let i = embeddedDocs.length - 1; i >= 0; i--) {
    const e = embeddedDocs[i]!;
    if (e.changed) e.set(JSON.stringify(e.doc));
  }
  return { value: root, report };
}

/** Overlapping findings become one mask; earlier sources win the label (injected first). */
function mergeFindings(findings: TextFinding[]): TextFinding[] {
  const sorted = findings.map((f, order) => ({ ...f, order })).sort((a, b) => a.start - b.start || a.order - b.order);
  const out: TextFinding[] = [];
  for (const f of sorted) {
    const prev = out[out.length - 1];
    if (prev && f.start < prev.end) {
      prev.end = Math.max(prev.end, f.end);
      continue;
    }
    out.push({ start: f.start, end: f.end, field: f.field, rule: f.rule });
  }
  return out;
}

/** The forms an injected credential can take in a response: raw, base64, URL-encoded, JSON-escaped. */
export function injectedNeedles(injected: InjectedCredential[]): InjectedCredential[] {
  const seen = new Set<string>();
  const out: InjectedCredential[] = [];
  const add = (value: string, field: string) => {
    if (value.length < MIN_INJECTED_LENGTH || seen.has(value)) return;
    seen.add(value);
    out.push({ value, field });
  };
  for (const { value, field } of injected) {
    add(value, field);
    add(Buffer.from(value, "utf8").toString("base64"), field);
    add(Buffer.from(value, "utf8").toString("base64").replace(/=+$/, ""), field);
    add(Buffer.from(value, "utf8").toString("base64url"), field);
    add(encodeURIComponent(value), field);
    add(encodeURIComponent(value).replace(/%20/g, "+"), field);
    add(JSON.stringify(value).slice(1, -1), field);
  }
  // Longest first, so a value is masked whole before a shorter form of it matches inside.
  return out.sort((a, b) => b.value.length - a.value.length);
}

function toLocation(loc: LocNode | undefined): Location[] {
  const parts: Location[] = [];
  for (let n = loc; n; n = n.parent) parts.push(n.part);
  return parts.reverse();
}
