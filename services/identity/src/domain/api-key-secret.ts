/**
 * API key secrets. A key is `tp_` followed by 43 base62 characters (256 random bits), so it is
 * recognisable to a secret scanner and still tells keys apart in its first 8 characters (the spec's
 * `key_prefix`), which a longer fixed prefix such as `tp_live_` would fill on its own. Only the SHA-256
 * of a key is stored: for a 256-bit random secret a fast hash is enough (nothing to brute-force), and it
 * lets a key be found by an index lookup instead of a scan.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const API_KEY_PREFIX = "tp_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_CHARS = 43; // 43 * log2(62) ≈ 256 bits
const KEY_SHAPE = /^tp_[0-9A-Za-z]{43}$/;

/** Unbiased base62: bytes >= 248 (= 4 * 62) are discarded rather than folded. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export interface NewApiKeySecret {
  plaintext: string;
  hash: Buffer;
  prefix: string;
}

export function generateApiKeySecret(): NewApiKeySecret {
  const plaintext = API_KEY_PREFIX + randomBase62(SECRET_CHARS);
  return { plaintext, hash: hashApiKey(plaintext), prefix: keyPrefix(plaintext) };
}

/**
 * A key derived from a server secret and a label instead of drawn at random: the same label always gives
 * the same key, so concurrent requests for one console key (one sign-in, one organization) agree without
 * storing a plaintext. HMAC-SHA256 gives 256 bits, written as 43 base62 characters like a random key.
 * Whoever could derive it needs the server secret, and the label's sign-in token already carries at
 * least the key's power.
 */
export function deriveApiKeySecret(serverSecret: string, label: string): NewApiKeySecret {
  let n = BigInt(`0x${createHmac("sha256", serverSecret).update(`toolport api key\0${label}`).digest("hex")}`);
  let body = "";
  while (n > 0n) {
    body = BASE62[Number(n % 62n)] + body;
    n /= 62n;
  }
  const plaintext = API_KEY_PREFIX + body.padStart(SECRET_CHARS, "0");
  return { plaintext, hash: hashApiKey(plaintext), prefix: keyPrefix(plaintext) };
}

export function hashApiKey(plaintext: string): Buffer {
  return createHash("sha256").update(plaintext, "utf8").digest();
}

/** The spec's key_prefix: the first 8 characters of the key. */
export function keyPrefix(plaintext: string): string {
  return plaintext.slice(0, 8);
}

/** Cheap shape check before any database work; says nothing about validity. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/** Constant-time comparison of a presented key's hash with a stored one. */
export function hashesMatch(presented: Buffer, stored: Buffer): boolean {
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
