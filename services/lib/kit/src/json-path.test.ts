import { describe, expect, it } from "vitest";
import { formatLocation, parsePath, selectInMcpEnvelope, selectPath } from "./json-path.js";
import type { Json } from "./json-values.js";

const doc = {
  a: { b: { c: 42 } },
  items: [
    { name: "first", tags: ["x", "y"] },
    { name: "second", tags: [] },
    { name: "third", tags: ["z"] },
  ],
  empty: [],
  "dotted.key": { inner: "yes" },
  nested_json: '{"deep": {"value": [1, 2, 3]}, "list": [{"id": "j1"}]}',
  plain_text: "not json",
  nil: null,
};
const select = (path: string) => selectPath(doc as never, parsePath(path));

describe("path language", () => {
  it("reads nested keys with a.b.c", () => {
    expect(select("a.b.c")).toEqual({ matched: true, value: 42 });
    expect(select("a.b")).toEqual({ matched: true, value: { c: 42 } });
  });

  it("collects every element with items[].name", () => {
    expect(select("items[].name")).toEqual({ matched: true, value: ["first", "second", "third"] });
    expect(select("items[*].name")).toEqual({ matched: true, value: ["first", "second", "third"] });
  });

  it("reads one element with items[0].name, negative indexes from the end", () => {
    expect(select("items[0].name")).toEqual({ matched: true, value: "first" });
    expect(select("items[-1].name")).toEqual({ matched: true, value: "third" });
    expect(select("items.1.name")).toEqual({ matched: true, value: "second" });
    expect(select("items[9].name").matched).toBe(false);
  });

  it("fans out with * over keys and elements, flattening nested fan-outs", () => {
    expect(select("a.*")).toEqual({ matched: true, value: [{ c: 42 }] });
    expect(select("items[].tags[]")).toEqual({ matched: true, value: ["x", "y", "z"] });
    expect(select("items.*.name")).toEqual({ matched: true, value: ["first", "second", "third"] });
  });

  it("quotes keys containing dots in backticks", () => {
    expect(select("`dotted.key`.inner")).toEqual({ matched: true, value: "yes" });
    expect(select("dotted.key.inner").matched).toBe(false);
    expect(selectPath({ "a`b": 1 }, parsePath("`a``b`"))).toEqual({ matched: true, value: 1 });
  });

  it("descends into a string holding JSON, with or without a <json> segment", () => {
    expect(select("nested_json.deep.value[1]")).toEqual({ matched: true, value: 2 });
    expect(select("nested_json.<json>.deep.value[1]")).toEqual({ matched: true, value: 2 });
    expect(select("nested_json.list[].id")).toEqual({ matched: true, value: ["j1"] });
    expect(select("plain_text.x").matched).toBe(false);
    // <json> on a value that is already structured is accepted and skipped.
    expect(select("a.<json>.b.c")).toEqual({ matched: true, value: 42 });
  });

  it("reports path_matched false when nothing matched, also across an empty collection", () => {
    expect(select("missing")).toEqual({ matched: false, value: null });
    expect(select("empty[]")).toEqual({ matched: false, value: null });
    expect(select("empty[].name")).toEqual({ matched: false, value: null });
    expect(select("items[1].tags[]")).toEqual({ matched: false, value: null });
  });

  it("matches a key holding null (matched, value null)", () => {
    expect(select("nil")).toEqual({ matched: true, value: null });
  });

  it("treats the empty path and $ as the root", () => {
    expect(select("").value).toEqual(doc);
    expect(select("$").value).toEqual(doc);
    expect(select("$.a.b.c").value).toBe(42);
    expect(selectPath([1, 2], parsePath("$[1]")).value).toBe(2);
  });

  it("never reaches the prototype", () => {
    expect(select("__proto__").matched).toBe(false);
    expect(select("a.constructor").matched).toBe(false);
    expect(selectPath(JSON.parse('{"__proto__": {"x": 1}}'), parsePath("__proto__.x"))).toEqual({ matched: true, value: 1 });
  });

  it("refuses malformed paths with a 400 naming the field", () => {
    for (const bad of ["a..b", "a.", ".a", "a[", "a[x]", "`open", "a]b[0]c"]) {
      expect(() => parsePath(bad, "fields[2]"), bad).toThrow(/fields\[2\]/);
    }
  });

  it("tries an MCP envelope's structured content before its text-block JSON", () => {
    const envelope = {
      content: [{ type: "text", text: '{"temperature": "21 C", "city": "Oslo"}' }],
      structuredContent: { temperature: 21, unit: "C" },
    };
    // Both say `temperature`: the structured result (the tool's declared output) wins.
    expect(selectInMcpEnvelope(envelope, parsePath("temperature"))).toEqual({ matched: true, value: 21 });
    // Only the text says `city`: found there.
    expect(selectInMcpEnvelope(envelope, parsePath("city"))).toEqual({ matched: true, value: "Oslo" });
  });

  it("tries an MCP envelope's text-block JSON first, then the envelope", () => {
    const envelope = {
      content: [{ type: "text", text: '{"results": [{"id": 7}], "content": "inner"}' }],
      isError: false,
    };
    expect(selectInMcpEnvelope(envelope, parsePath("results[0].id"))).toEqual({ matched: true, value: 7 });
    // `content` exists in both: the inner document wins.
    expect(selectInMcpEnvelope(envelope, parsePath("content"))).toEqual({ matched: true, value: "inner" });
    expect(selectInMcpEnvelope(envelope, parsePath("isError"))).toEqual({ matched: true, value: false });
    expect(selectInMcpEnvelope(envelope, parsePath("content[0].type"))).toEqual({ matched: true, value: "text" });
    expect(selectInMcpEnvelope({ content: [{ type: "text", text: "plain" }] }, parsePath("content[0].text")).value).toBe("plain");
  });

  it("formats concrete locations so they parse back to the same place", () => {
    const loc = ["data", "dotted.key", 3, { json: true as const }, "x y", "<json>"];
    const text = formatLocation(loc);
    expect(text).toBe("data.`dotted.key`[3].<json>.`x y`.`<json>`");
    expect(parsePath(text)).toEqual([
      { kind: "key", name: "data" },
      { kind: "key", name: "dotted.key" },
      { kind: "index", index: 3 },
      { kind: "json" },
      { kind: "key", name: "x y" },
      { kind: "key", name: "<json>" },
    ]);
    expect(formatLocation([])).toBe("$");
  });

  it("selects in results nested 3,000 levels deep, with paths up to the length limit", () => {
    let deepObject: Json = "leaf";
    let deepArray: Json = [];
    const objects: Json[] = [];
    const arrays: Json[] = [];
    for (let i = 0; i < 3000; i++) {
      deepObject = { a: deepObject };
      deepArray = [deepArray];
      objects.push(deepObject);
      arrays.push(deepArray);
    }
    // objects[k] sits 2999 - k levels down from the root.
    const keys = Array.from({ length: 999 }, () => "a").join(".");
    expect(selectPath(deepObject, parsePath(keys))).toEqual({ matched: true, value: objects[2999 - 999] });
    expect(selectPath(deepObject, parsePath("*.*.*")).value).toEqual([objects[2999 - 3]]);
    const indexes = "[0]".repeat(666);
    expect(selectPath(deepArray, parsePath(indexes)).value).toBe(arrays[2999 - 666]);
    const envelope = { content: [{ type: "text", text: JSON.stringify(deepObject) }] };
    expect(selectInMcpEnvelope(envelope, parsePath("a.a")).matched).toBe(true);
    expect(formatLocation(Array.from({ length: 3000 }, () => "a"))).toBe(Array.from({ length: 3000 }, () => "a").join("."));
  });
});
