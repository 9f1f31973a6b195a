import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOLERANCE_SECONDS, sign, signatureHeader, verify, verifyOrThrow, WebhookVerificationError } from "./index.js";

const secret = "whsec_test_4f8b2c1d9e7a6b5c";
const oldSecret = "whsec_old_0a1b2c3d4e5f6a7b";
const newSecret = "whsec_new_7b6a5f4e3d2c1b0a";
const body = '{"id":"evt_1","type":"tool.execution.completed","data":{"ok":true,"text":"héllo ✓"}}';
const t = 1_700_000_000;

/** Independent of the package: the spec's recipe spelled out with createHmac. */
function reference(key: string, raw: string, timestamp: number): string {
  return createHmac("sha256", key).update(`${timestamp}.${raw}`).digest("hex");
}

describe("sign", () => {
  it("matches a vector computed independently", () => {
    const expected = reference(secret, body, t);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    expect(sign(secret, body, t)).toBe(expected);
  });

  it("keys with the whole secret string, whsec_ prefix included", () => {
    expect(sign(secret, body, t)).not.toBe(reference(secret.slice("whsec_".length), body, t));
  });

  it("gives the same digest for a Buffer and a string body", () => {
    expect(sign(secret, Buffer.from(body, "utf8"), t)).toBe(sign(secret, body, t));
  });

  it("refuses a timestamp that is not a non-negative integer", () => {
    expect(() => sign(secret, body, 1.5)).toThrow(RangeError);
    expect(() => sign(secret, body, -1)).toThrow(RangeError);
    expect(() => sign(secret, body, Number.NaN)).toThrow(RangeError);
  });
});

describe("signatureHeader", () => {
  it("lists one sha256 entry per secret, in order", () => {
    expect(signatureHeader([oldSecret, newSecret], body, t)).toBe(
      `t=${t},sha256=${reference(oldSecret, body, t)},sha256=${reference(newSecret, body, t)}`,
    );
    expect(signatureHeader([secret], body, t)).toBe(`t=${t},sha256=${reference(secret, body, t)}`);
  });

  it("needs at least one secret", () => {
    expect(() => signatureHeader([], body, t)).toThrow(RangeError);
  });
});

describe("verify", () => {
  const header = signatureHeader([secret], body, t);

  it("accepts what sign produced (round trip)", () => {
    expect(verify({ secret, body, header, now: t })).toEqual({ ok: true, timestamp: t });
    expect(verify({ secret, body: Buffer.from(body), header, now: t })).toEqual({ ok: true, timestamp: t });
  });

  it("accepts a header written by hand from the reference vector", () => {
    expect(verify({ secret, body, header: `t=${t},sha256=${reference(secret, body, t)}`, now: t }).ok).toBe(true);
  });

  it("accepts either signature while the sender rotates (old and new both sign)", () => {
    const rotating = signatureHeader([oldSecret, newSecret], body, t);
    expect(verify({ secret: oldSecret, body, header: rotating, now: t })).toEqual({ ok: true, timestamp: t });
    expect(verify({ secret: newSecret, body, header: rotating, now: t })).toEqual({ ok: true, timestamp: t });
    expect(verify({ secret, body, header: rotating, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
  });

  it("accepts a receiver holding two secrets when either one signed", () => {
    const both = [oldSecret, newSecret];
    expect(verify({ secret: both, body, header: signatureHeader([oldSecret], body, t), now: t }).ok).toBe(true);
    expect(verify({ secret: both, body, header: signatureHeader([newSecret], body, t), now: t }).ok).toBe(true);
    expect(verify({ secret: both, body, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
  });

  it("rejects a tampered body", () => {
    const tampered = body.replace('"ok":true', '"ok":false');
    expect(verify({ secret, body: tampered, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
    expect(verify({ secret, body: `${body} `, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
  });

  it("rejects a wrong secret, and ignores empty ones", () => {
    expect(verify({ secret: "whsec_wrong", body, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
    expect(verify({ secret: "", body, header: signatureHeader([""], body, t), now: t })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
    expect(verify({ secret: [], body, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
  });

  it("rejects a signature moved to another timestamp", () => {
    const digest = sign(secret, body, t);
    expect(verify({ secret, body, header: `t=${t + 1},sha256=${digest}`, now: t })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
  });

  it("enforces the 300 s tolerance both ways", () => {
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    const at = (now: number) => verify({ secret, body, header, now });
    expect(at(t + 301)).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
    expect(at(t - 301)).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
    expect(at(t + 299)).toEqual({ ok: true, timestamp: t });
    expect(at(t - 299)).toEqual({ ok: true, timestamp: t });
    expect(at(t + 300)).toEqual({ ok: true, timestamp: t });
  });

  it("takes a configurable tolerance", () => {
    expect(verify({ secret, body, header, now: t + 30, toleranceSeconds: 10 })).toEqual({
      ok: false,
      reason: "timestamp_out_of_tolerance",
    });
    expect(verify({ secret, body, header, now: t + 1000, toleranceSeconds: 3600 }).ok).toBe(true);
    // An invalid tolerance falls back to the default rather than throwing.
    expect(verify({ secret, body, header, now: t + 301, toleranceSeconds: Number.NaN }).ok).toBe(false);
    expect(verify({ secret, body, header, now: t + 299, toleranceSeconds: -5 }).ok).toBe(true);
  });

  it("uses the clock when now is not given", () => {
    const fresh = Math.floor(Date.now() / 1000);
    expect(verify({ secret, body, header: signatureHeader([secret], body, fresh) })).toEqual({ ok: true, timestamp: fresh });
    expect(verify({ secret, body, header })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
  });

  it("reports a missing or empty header", () => {
    for (const missing of [undefined, "", "   ", ",", [], [""]]) {
      expect(verify({ secret, body, header: missing, now: t })).toEqual({ ok: false, reason: "missing_header" });
    }
  });

  it("reports a malformed header and never throws", () => {
    const digest = sign(secret, body, t);
    const malformed = [
      `sha256=${digest}`, // no t
      `t=abc,sha256=${digest}`, // t not an integer
      `t=1.5,sha256=${digest}`,
      `t=-1,sha256=${digest}`,
      `t=,sha256=${digest}`,
      `t=${t}`, // no sha256 entry
      `t=${t},v1=${digest}`, // only unknown schemes
      `t=${t},sha256=nothex`, // digest not hex
      `t=${t},sha256=`,
      `t=${t},sha256=${digest},sha256=zz`,
      `t=${t},garbage,sha256=${digest}`,
      `t=${t},t=${t + 1},sha256=${digest}`, // two different timestamps
      "complete nonsense",
    ];
    for (const bad of malformed) {
      expect(() => verify({ secret, body, header: bad, now: t })).not.toThrow();
      expect(verify({ secret, body, header: bad, now: t }), bad).toEqual({ ok: false, reason: "malformed_header" });
    }
  });

  it("reads a header given as an array, as Node may give it", () => {
    const digest = sign(secret, body, t);
    expect(verify({ secret, body, header: [header], now: t })).toEqual({ ok: true, timestamp: t });
    expect(verify({ secret, body, header: [`t=${t}`, `sha256=${digest}`], now: t })).toEqual({ ok: true, timestamp: t });
    // A repeated header joined by Node: "t=..,sha256=.., t=..,sha256=.."
    expect(verify({ secret, body, header: `t=${t},sha256=${"0".repeat(64)}, t=${t},sha256=${digest}`, now: t }).ok).toBe(true);
    expect(verify({ secret, body, header: ["nonsense"], now: t })).toEqual({ ok: false, reason: "malformed_header" });
    expect(verify({ secret, body, header: [`t=${t}`, `t=${t + 1},sha256=${digest}`], now: t })).toEqual({
      ok: false,
      reason: "malformed_header",
    });
    expect(verify({ secret, body, header: [`sha256=${digest}`], now: t })).toEqual({ ok: false, reason: "malformed_header" });
  });

  it("accepts upper-case hex and ignores unknown entries next to a valid one", () => {
    const digest = sign(secret, body, t);
    expect(verify({ secret, body, header: `t=${t},sha256=${digest.toUpperCase()}`, now: t }).ok).toBe(true);
    expect(verify({ secret, body, header: `t=${t}, v1=whatever, sha256=${digest}`, now: t }).ok).toBe(true);
  });

  it("does not throw on a digest of a different length", () => {
    const digest = sign(secret, body, t);
    for (const odd of ["ab", "abc", digest.slice(0, 62), `${digest}00`, `${digest}0`, "0".repeat(128)]) {
      const result = () => verify({ secret, body, header: `t=${t},sha256=${odd}`, now: t });
      expect(result).not.toThrow();
      expect(result(), odd).toEqual({ ok: false, reason: "no_matching_signature" });
    }
  });

  it("does not throw on a body that is not raw (a parsed object)", () => {
    const parsed = JSON.parse(body) as unknown as string;
    expect(verify({ secret, body: parsed, header, now: t })).toEqual({ ok: false, reason: "no_matching_signature" });
  });
});

describe("verifyOrThrow", () => {
  const header = signatureHeader([secret], body, t);

  it("returns the timestamp", () => {
    expect(verifyOrThrow({ secret, body, header, now: t })).toBe(t);
  });

  it("throws a WebhookVerificationError carrying the reason", () => {
    const cases: [Parameters<typeof verifyOrThrow>[0], string][] = [
      [{ secret, body, header: undefined, now: t }, "missing_header"],
      [{ secret, body, header: "t=abc", now: t }, "malformed_header"],
      [{ secret, body, header, now: t + 301 }, "timestamp_out_of_tolerance"],
      [{ secret: "whsec_wrong", body, header, now: t }, "no_matching_signature"],
    ];
    for (const [options, reason] of cases) {
      let caught: unknown;
      try {
        verifyOrThrow(options);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(WebhookVerificationError);
      expect(caught).toBeInstanceOf(Error);
      expect((caught as WebhookVerificationError).reason).toBe(reason);
      expect((caught as WebhookVerificationError).name).toBe("WebhookVerificationError");
    }
  });
});
