import { describe, expect, it } from "vitest";
import { generateApiKeySecret, hashApiKey, hashesMatch, keyPrefix, looksLikeApiKey } from "./api-key-secret.js";

describe("API key secrets", () => {
  it("are tp_ plus 43 base62 characters, prefix = first 8 characters, stored as SHA-256", () => {
    const secret = generateApiKeySecret();
    expect(secret.plaintext).toMatch(/^tp_[0-9A-Za-z]{43}$/);
    expect(secret.prefix).toBe(secret.plaintext.slice(0, 8));
    expect(secret.hash).toEqual(hashApiKey(secret.plaintext));
    expect(secret.hash).toHaveLength(32);
    expect(looksLikeApiKey(secret.plaintext)).toBe(true);
  });

  it("differ from each other, including in the displayed prefix nearly always", () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKeySecret());
    expect(new Set(keys.map((k) => k.plaintext)).size).toBe(2000);
    // 5 random base62 characters in the prefix: collisions among 2000 keys are vanishingly rare.
    expect(new Set(keys.map((k) => k.prefix)).size).toBeGreaterThan(1990);
  });

  it("use every base62 character (no folded bias towards a subset)", () => {
    const chars = new Set(Array.from({ length: 300 }, () => generateApiKeySecret().plaintext.slice(3)).join(""));
    expect(chars.size).toBe(62);
  });

  it("compare hashes in constant time and refuse a different or truncated one", () => {
    const h = hashApiKey("tp_a");
    expect(hashesMatch(h, hashApiKey("tp_a"))).toBe(true);
    expect(hashesMatch(h, hashApiKey("tp_b"))).toBe(false);
    expect(hashesMatch(h, h.subarray(0, 16))).toBe(false);
    expect(keyPrefix("tp_abcdefgh")).toBe("tp_abcde");
    expect(looksLikeApiKey("tp_short")).toBe(false);
  });
});
