import { create } from "@bufbuild/protobuf";
import { PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { describe, expect, it } from "vitest";
import { PrincipalCache } from "./principal-cache.js";

const principal = (accountId: string) => create(PrincipalSchema, { accountId, organizationId: "org", keyId: "key" });
const KEY = `tp_${"s3cret".repeat(7)}`;

describe("PrincipalCache", () => {
  it("serves an entry until its TTL passes, then forgets it", () => {
    let now = 1_000;
    const cache = new PrincipalCache({ ttlMs: 30_000, now: () => now });
    const key = PrincipalCache.keyOf(KEY, undefined);
    cache.set(key, principal("a"));
    now += 29_999;
    expect(cache.get(key)?.accountId).toBe("a");
    now += 1;
    expect(cache.get(key)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("never serves an entry past the credential's own expiry (an access token's), nor stores one already past it", () => {
    let now = 1_000;
    const cache = new PrincipalCache({ ttlMs: 30_000, now: () => now });
    const key = PrincipalCache.keyOf("tpat_token", undefined);
    cache.set(key, principal("a"), now + 5_000);
    now += 4_999;
    expect(cache.get(key)?.accountId).toBe("a");
    now += 1;
    expect(cache.get(key)).toBeUndefined();
    cache.set(key, principal("b"), now);
    expect(cache.size).toBe(0);
  });

  it("keeps at most maxEntries, evicting the oldest written", () => {
    const cache = new PrincipalCache({ ttlMs: 60_000, maxEntries: 3 });
    for (const id of ["a", "b", "c"]) cache.set(PrincipalCache.keyOf(`${KEY}${id}`, undefined), principal(id));
    // Rewriting "a" makes it the newest, so "b" goes first.
    cache.set(PrincipalCache.keyOf(`${KEY}a`, undefined), principal("a"));
    cache.set(PrincipalCache.keyOf(`${KEY}d`, undefined), principal("d"));
    expect(cache.size).toBe(3);
    expect(cache.get(PrincipalCache.keyOf(`${KEY}b`, undefined))).toBeUndefined();
    for (const id of ["a", "c", "d"]) expect(cache.get(PrincipalCache.keyOf(`${KEY}${id}`, undefined))?.accountId).toBe(id);
  });

  it("stores only a hash of the key, separately per svc-org-id value", () => {
    const cache = new PrincipalCache({ ttlMs: 60_000 });
    const personal = PrincipalCache.keyOf(KEY, undefined);
    const team = PrincipalCache.keyOf(KEY, "7f1c2d9e-0000-4000-8000-000000000001");
    expect(personal).not.toBe(team);
    cache.set(personal, principal("personal"));
    cache.set(team, principal("team"));
    expect(cache.get(team)?.accountId).toBe("team");
    for (const k of cache.keys()) {
      expect(k).not.toContain(KEY);
      expect(k).toMatch(/^[0-9a-f]{64}\n/);
    }
    cache.delete(team);
    expect(cache.get(team)).toBeUndefined();
    expect(cache.get(personal)?.accountId).toBe("personal");
  });

  it("stores nothing when the TTL is 0", () => {
    const cache = new PrincipalCache({ ttlMs: 0 });
    cache.set(PrincipalCache.keyOf(KEY, undefined), principal("a"));
    expect(cache.enabled).toBe(false);
    expect(cache.size).toBe(0);
  });
});
