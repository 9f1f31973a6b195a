import { DomainError } from "@toolport/kit/errors";
import { OutboundRefused } from "@toolport/kit/outbound";
import { describe, expect, it } from "vitest";
import { addressNotAllowed } from "./refusal.js";

/** A refusal as undici's fetch reports it: wrapped in a TypeError. */
const wrapped = (refusal: OutboundRefused) => new TypeError("fetch failed", { cause: refusal });

describe("addressNotAllowed", () => {
  it("names the field and the kind of address, and the host only when the caller wrote it", () => {
    const literal = addressNotAllowed(
      wrapped(new OutboundRefused("169.254.169.254", "169.254.169.254", "linkLocal")),
      "api.document_url",
      new URL("http://169.254.169.254/latest"),
    );
    expect(literal).toBeInstanceOf(DomainError);
    expect(literal).toMatchObject({
      reason: "address_not_allowed",
      details: { field: "api.document_url", range: "linkLocal" },
    });
    expect(literal?.message).toMatch(/^api\.document_url host 169\.254\.169\.254 is a link-local address/);

    const name = addressNotAllowed(
      new OutboundRefused("internal.example", "10.1.2.3", "private"),
      "mcp_server.url",
      new URL("http://Internal.Example:8080/mcp"),
    );
    expect(name?.message).toMatch(/^mcp_server\.url host internal\.example resolves to a private \(RFC 1918\) address/);
    expect(name?.message).not.toContain("10.1.2.3");

    const redirect = addressNotAllowed(
      wrapped(new OutboundRefused("db.internal", "192.168.0.9", "private")),
      "api.document_url",
      new URL("https://public.example/openapi.json"),
    );
    expect(redirect?.message).toMatch(/^api\.document_url redirects to a private/);
    expect(redirect?.message).not.toMatch(/db\.internal|192\.168/);

    const v6 = addressNotAllowed(new OutboundRefused("::1", "::1", "loopback"), "mcp_server.url", new URL("http://[::1]:9/"));
    expect(v6?.message).toMatch(/host ::1 is a loopback address/);
  });

  it("leaves every other error alone", () => {
    expect(addressNotAllowed(new Error("ECONNREFUSED"), "api.document_url", new URL("http://x"))).toBeUndefined();
    expect(addressNotAllowed(new TypeError("fetch failed"), "api.document_url", new URL("http://x"))).toBeUndefined();
  });
});
