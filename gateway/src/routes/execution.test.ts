/** The `Prefer` header reading of the batch route (RFC 7240 section 2). */
import { describe, expect, it } from "vitest";
import { prefersAsync } from "./execution.js";

describe("prefersAsync", () => {
  it.each([
    ["respond-async", true],
    ["Respond-Async", true],
    ["return=minimal, respond-async", true],
    ["respond-async; foo=bar", true],
    ["wait=10,respond-async", true],
    ["respond-async=true", true],
    ["", false],
    ["return=representation", false],
    ["respond-asynchronously", false],
    ["wait=respond-async", false],
  ])("%j -> %s", (header, want) => {
    expect(prefersAsync(header)).toBe(want);
  });
});
