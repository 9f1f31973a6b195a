import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConsentTokens, needsConsent, parametersHash } from "./consent.js";

const tokens = new ConsentTokens(randomBytes(32));
const subject = { subject: "key-1", toolId: "tool-1", parameters: { to: "a@b.c", amount: 5 } };

describe("consent tokens", () => {
  it("verify for the same key, tool and parameters (in any key order)", () => {
    const { token, expiresAt } = tokens.issue(subject);
    const check = tokens.verify(token, { ...subject, parameters: { amount: 5, to: "a@b.c" } });
    expect(check).toMatchObject({ ok: true });
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(599_000);
  });

  it("are bound to the exact parameters, the tool and the key", () => {
    const { token } = tokens.issue(subject);
    expect(tokens.verify(token, { ...subject, parameters: { to: "a@b.c", amount: 6 } })).toEqual({
      ok: false,
      problem: "parameters_changed",
    });
    expect(tokens.verify(token, { ...subject, toolId: "tool-2" })).toEqual({ ok: false, problem: "other_tool" });
    expect(tokens.verify(token, { ...subject, subject: "key-2" })).toEqual({ ok: false, problem: "other_key" });
  });

  it("expire after ten minutes", () => {
    const issued = new Date("2030-01-01T00:00:00Z");
    const { token } = tokens.issue(subject, issued);
    expect(tokens.verify(token, subject, new Date(issued.getTime() + 599_000)).ok).toBe(true);
    expect(tokens.verify(token, subject, new Date(issued.getTime() + 600_000))).toEqual({ ok: false, problem: "expired" });
  });

  it("refuse forged or tampered tokens", () => {
    const { token } = tokens.issue(subject);
    const [p, body, sig] = token.split(".");
    const forged = JSON.parse(Buffer.from(body!, "base64url").toString());
    forged.ph = parametersHash({ other: true });
    const tampered = `${p}.${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${sig}`;
    expect(tokens.verify(tampered, { ...subject, parameters: { other: true } })).toEqual({ ok: false, problem: "invalid" });
    expect(new ConsentTokens(randomBytes(32)).verify(token, subject)).toEqual({ ok: false, problem: "invalid" });
    expect(tokens.verify("garbage", subject)).toEqual({ ok: false, problem: "invalid" });
  });
});

describe("needsConsent", () => {
  it("applies to writing HTTP methods and side-effecting tools, only for keys that require confirmation", () => {
    expect(needsConsent({ serviceType: "api", method: "POST", sideEffecting: false }, true)).toBe(true);
    expect(needsConsent({ serviceType: "api", method: "DELETE", sideEffecting: false }, true)).toBe(true);
    expect(needsConsent({ serviceType: "api", method: "GET", sideEffecting: false }, true)).toBe(false);
    expect(needsConsent({ serviceType: "mcp_server", method: "", sideEffecting: true }, true)).toBe(true);
    expect(needsConsent({ serviceType: "mcp_server", method: "", sideEffecting: false }, true)).toBe(false);
    expect(needsConsent({ serviceType: "api", method: "POST", sideEffecting: true }, false)).toBe(false);
  });
});
