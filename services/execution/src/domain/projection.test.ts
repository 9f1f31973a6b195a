import type { Json } from "@toolport/kit/json-values";
import { describe, expect, it } from "vitest";
import { project } from "./projection.js";

const result = {
  matches: [
    { id: 1, title: "one", meta: { score: 0.9 } },
    { id: 2, title: "two", meta: { score: 0.5 } },
  ],
  total: 2,
  raw: '{"inner": {"a": 1, "b": 2}}',
};

describe("projection", () => {
  it("keeps the listed paths in the result's own shape", () => {
    const { value, report } = project(result as never, ["matches[].id", "total"]);
    expect(value).toEqual({ matches: [{ id: 1 }, { id: 2 }], total: 2 });
    expect(report).toEqual({ kept: ["matches[].id", "total"], unmatched: [] });
  });

  it("reports paths that matched nothing", () => {
    const { value, report } = project(result as never, ["matches[0].title", "nope", "matches[].missing"]);
    expect(value).toEqual({ matches: [{ title: "one" }] });
    expect(report).toEqual({ kept: ["matches[0].title"], unmatched: ["nope", "matches[].missing"] });
  });

  it("merges paths into the same elements and lets a whole value win over its parts", () => {
    expect(project(result as never, ["matches[].id", "matches[].meta.score"]).value).toEqual({
      matches: [
        { id: 1, meta: { score: 0.9 } },
        { id: 2, meta: { score: 0.5 } },
      ],
    });
    expect(project(result as never, ["matches[1]", "matches[1].id"]).value).toEqual({ matches: [result.matches[1]] });
  });

  it("keeps the selected part of a JSON document held in a string", () => {
    expect(project(result as never, ["raw.inner.b"]).value).toEqual({ raw: { inner: { b: 2 } } });
  });

  it("returns an empty container when nothing matched", () => {
    expect(project(result as never, ["x"]).value).toEqual({});
    expect(project([1, 2] as never, ["x"]).value).toEqual([]);
  });

  it("refuses a malformed field naming its index", () => {
    expect(() => project(result as never, ["ok", "bad..path"])).toThrow(/fields\[1\]/);
  });

  it("projects results nested 3,000 levels deep, with paths up to the length limit", () => {
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
    // A selected subtree is kept as it is (the same value), however deep it goes.
    expect(project(deepObject, ["a.a"]).value).toEqual({ a: { a: objects[2999 - 2] } });
    // The skeleton above a match is as deep as the path, which the path length limit bounds.
    const keys = Array.from({ length: 999 }, () => "a").join(".");
    let node = project(deepObject, [keys]).value;
    for (let i = 0; i < 999; i++) node = (node as { a: Json }).a;
    expect(node).toBe(objects[2999 - 999]);
    let entry = project(deepArray, ["[0]".repeat(666), "*"]).value;
    expect(entry).toEqual([arrays[2999 - 1]]);
    entry = project(deepArray, ["[0]".repeat(666)]).value;
    for (let i = 0; i < 666; i++) entry = (entry as Json[])[0]!;
    expect(entry).toBe(arrays[2999 - 666]);
  });
});
