import { describe, expect, it } from "vitest";
import { findJsonViolation, jsonDepth, replaceNul } from "./json-guard.js";

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

describe("findJsonViolation", () => {
  it("accepts a value at the depth limit and names the first container past it", () => {
    expect(findJsonViolation(nested(64), 64)).toBeNull();
    expect(findJsonViolation({ ok: [1, { x: "y" }], deep: nested(64) }, 64)).toEqual({
      kind: "depth",
      pointer: expect.stringMatching(/^\/deep(\/(a|0)){63}$/),
    });
    expect(jsonDepth(nested(64))).toBe(64);
  });

  it("walks 200,000 levels without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(200_000)}${"]".repeat(200_000)}`);
    expect(findJsonViolation(deep, 64)?.kind).toBe("depth");
    expect(jsonDepth(deep)).toBe(200_000);
  });

  it("finds U+0000 in a string or a key, with its JSON pointer", () => {
    expect(findJsonViolation({ a: ["ok", "b\u0000"] }, 64)).toEqual({ kind: "nul", pointer: "/a/1" });
    expect(findJsonViolation({ "a/b": { "k\u0000": 1 } }, 64)).toEqual({ kind: "nul", pointer: "/a~1b/k\u0000" });
    expect(findJsonViolation({ a: "\\u0000 is text here" }, 64)).toBeNull();
    // Array positions and escaped keys on the way down, the root's own string at "".
    expect(findJsonViolation([{ "~x": [0, { "a/": "\u0000" }] }], 64)).toEqual({ kind: "nul", pointer: "/0/~0x/1/a~1" });
    expect(findJsonViolation("\u0000", 64)).toEqual({ kind: "nul", pointer: "" });
  });
});

describe("replaceNul", () => {
  it("returns the same value when there is no NUL", () => {
    const v = { a: [1, "x"], b: null };
    expect(replaceNul(v)).toBe(v);
  });

  it("replaces NUL in strings and keys with U+FFFD, keeping order and everything else", () => {
    const out = replaceNul({ z: 1, "k\u0000": ["a\u0000b", 2, true, null], m: { n: "\u0000" } });
    expect(out).toEqual({ z: 1, "k\uFFFD": ["a\uFFFDb", 2, true, null], m: { n: "\uFFFD" } });
    expect(Object.keys(out)).toEqual(["z", "k\uFFFD", "m"]);
  });
});
