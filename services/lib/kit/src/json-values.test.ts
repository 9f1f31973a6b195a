import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, type Json, parseEmbeddedJson } from "./json-values.js";

/** {"a":{"a":...leaf}} `depth` levels deep, built without recursion. */
function deepObject(depth: number, leaf: Json = "x"): Json {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** [[[...]]] `depth` levels deep. */
function deepArray(depth: number): Json {
  let value: Json = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** The same value with every object's keys in reverse order. */
function reversedKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((k) => [k, reversedKeys(value[k]!)]),
  );
}

describe("canonicalJson", () => {
  it("sorts keys at every level and is otherwise JSON", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: null, e: "x" }], c: true } })).toBe(
      '{"a":{"c":true,"d":[3,{"e":"x","f":null}]},"b":1}',
    );
    expect(canonicalJson([undefined, 1])).toBe("[null,1]");
  });

  it("property: parses back to the same value, whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reversedKeys(value as Json))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("renders inputs nested 3,000 levels deep", () => {
    // The expected text is built without JSON.stringify, whose recursion can overflow a test worker's
    // stack at this depth (it did, once, under a full run).
    expect(canonicalJson(deepObject(3000))).toBe(`${'{"a":'.repeat(3000)}"x"${"}".repeat(3000)}`);
    expect(canonicalJson(deepArray(3000))).toBe(`${"[".repeat(3000)}[]${"]".repeat(3000)}`);
  });
});

describe("deep values", () => {
  it("parses an embedded document 3,000 levels down", () => {
    const text = JSON.stringify(deepObject(3000));
    // (vitest's toEqual recurses; the JSON text compares the whole value.)
    expect(JSON.stringify(parseEmbeddedJson(text))).toBe(text);
  });
});
