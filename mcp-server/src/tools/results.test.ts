import { describe, expect, it } from "vitest";
import { describeError, fromReply, requireKey } from "./results.js";

const errorBody = (code: string, message: string, details: Record<string, unknown> = {}) => ({
  detail: message,
  error: { code, message, details },
});

describe("gateway errors as tool results", () => {
  it("gives the code, the message and what to do next", () => {
    const consent = describeError({
      status: 409,
      body: errorBody("confirmation_required", "this call needs confirmation", { confirm_token: "tok-1" }),
    });
    expect(consent).toMatch(/^confirmation_required: this call needs confirmation\n/);
    expect(consent).toContain("confirm_token: tok-1");
    expect(describeError({ status: 402, body: errorBody("insufficient_balance", "balance too low") })).toContain(
      "fund_agent_wallet",
    );
    expect(describeError({ status: 429, body: errorBody("rate_limited", "slow down"), retryAfter: "7" })).toContain(
      "wait 7 seconds",
    );
    expect(describeError({ status: 401, body: errorBody("unauthenticated", "invalid API key") })).toContain("svc-api-key");
    expect(describeError({ status: 501, body: errorBody("not_implemented", "not built") })).toContain(
      "not available on this Toolport server yet",
    );
    expect(describeError({ status: 503, body: errorBody("card_payments_not_configured", "no cards") })).toContain(
      "retrying will not help",
    );
  });

  it("reads a reply that is not the error shape", () => {
    expect(describeError({ status: 502, body: "Bad Gateway" })).toMatch(/^http_502: Bad Gateway\n/);
    expect(describeError({ status: 500, body: null })).toMatch(/^http_500: the gateway answered HTTP 500\n/);
  });

  it("returns structured content and the same JSON as text on success, isError otherwise", () => {
    const ok = fromReply({ status: 200, body: [1, 2] }, (b) => ({ items: b }));
    expect(ok.structuredContent).toEqual({ items: [1, 2] });
    expect(ok.content).toEqual([{ type: "text", text: '{"items":[1,2]}' }]);
    expect(ok.isError).toBeUndefined();
    const bad = fromReply({ status: 404, body: errorBody("tool_not_found", "no such tool") }, () => ({}));
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
  });

  it("names the header when no key was sent", () => {
    expect(requireKey({})?.content).toEqual([{ type: "text", text: expect.stringContaining("`svc-api-key` header") }]);
    expect(requireKey({ apiKey: "k" })).toBeNull();
    expect(requireKey({ bearer: "tpat_x" })).toBeNull();
  });
});
