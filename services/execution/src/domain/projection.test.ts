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
});
