/**
 * The signed tokens execution hands out and takes back (confirm tokens, consent.ts; MCP continuations,
 * continuation.ts): `<prefix>.<base64url JSON payload>.<base64url HMAC-SHA256 of prefix.payload>`.
 * Signed, not encrypted: the payload holds hashes and ids, nothing secret. Each kind checks its own
 * expiry and binding on the payload it opens.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

function signature(prefix: string, secret: string | Buffer, body: string): string {
  return createHmac("sha256", secret).update(`${prefix}.${body}`).digest("base64url");
}

export function sealToken(prefix: string, secret: string | Buffer, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${prefix}.${body}.${signature(prefix, secret, body)}`;
}

/** The payload of a token of this kind with a good signature; undefined for anything else. */
export function openToken<T>(prefix: string, secret: string | Buffer, token: string): T | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== prefix) return undefined;
  const [, body, given] = parts as [string, string, string];
  const expected = Buffer.from(signature(prefix, secret, body));
  const presented = Buffer.from(given);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as T;
  } catch {
    return undefined;
  }
}
