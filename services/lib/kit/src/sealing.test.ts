import { describe, expect, it } from "vitest";
import { parseKey, Sealer } from "./sealing.js";

describe("Sealer", () => {
  const sealer = Sealer.fromSecret("a".repeat(64));

  it("opens what it sealed, and the sealed bytes do not contain the secret", () => {
    const sealed = sealer.seal('{"token":"sk-live-123"}', "svc:caller:acct");
    expect(sealed.toString("utf8")).not.toContain("sk-live-123");
    expect(sealer.open(sealed, "svc:caller:acct")).toBe('{"token":"sk-live-123"}');
  });

  it("refuses a value moved to another row (associated data differs) or tampered with", () => {
    const sealed = sealer.seal("secret", "svc-1:caller:a");
    expect(() => sealer.open(sealed, "svc-2:caller:a")).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1;
    expect(() => sealer.open(tampered, "svc-1:caller:a")).toThrow();
  });

  it("refuses to open with another key", () => {
    const other = Sealer.fromSecret(Buffer.alloc(32, 7).toString("base64"));
    expect(() => other.open(sealer.seal("x", "ad"), "ad")).toThrow();
  });

  it("accepts 32-byte keys in hex or base64 only", () => {
    expect(parseKey("0".repeat(64))).toHaveLength(32);
    expect(parseKey(Buffer.alloc(32, 1).toString("base64"))).toHaveLength(32);
    expect(() => parseKey("short")).toThrow(/CATALOG_SECRET_KEY/);
  });
});
