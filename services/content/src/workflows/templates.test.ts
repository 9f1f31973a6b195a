import { selectPath } from "@toolport/kit/json-path";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import { describe, expect, it } from "vitest";
import { checkMapping, parseTemplate, resolveMapping, TemplateError, type TemplateRef } from "./templates.js";

const inputs: JsonObject = { name: "Ada", n: 3, tags: ["x", "y"], "a.b": "dotted" };
const results: Record<number, Json> = {
  1: {
    user: { id: 7, name: "Ada" },
    orders: [
      { id: "o-1", total: 12.5 },
      { id: "o-2", total: 30 },
    ],
    empty: null,
  },
  2: "plain text",
};
const lookup = async (ref: TemplateRef) =>
  ref.kind === "inputs" ? selectPath(inputs, ref.path) : selectPath(results[ref.step] ?? null, ref.path);

describe("parseTemplate", () => {
  it("reads inputs and step references with a path in the result path language", () => {
    expect(parseTemplate("{{inputs.name}}")).toMatchObject({ kind: "inputs", pathText: "name" });
    expect(parseTemplate("{{ inputs }}")).toMatchObject({ kind: "inputs", pathText: "" });
    expect(parseTemplate("{{inputs.`a.b`}}")).toMatchObject({ kind: "inputs", pathText: "`a.b`" });
    expect(parseTemplate("{{steps.12.result.orders[0].id}}")).toMatchObject({ kind: "step", step: 12, pathText: "orders[0].id" });
    expect(parseTemplate("{{steps.1.result}}")).toMatchObject({ kind: "step", step: 1, pathText: "" });
    expect(parseTemplate("{{steps.1.result[0]}}")).toMatchObject({ kind: "step", step: 1, pathText: "[0]" });
  });

  it("explains what is wrong with anything else", () => {
    expect(parseTemplate("{{input.name}}")).toMatch(/^a template is/);
    expect(parseTemplate("{{steps.one.result}}")).toMatch(/^a template is/);
    expect(parseTemplate("{{steps.1.results.x}}")).toMatch(/^a template is/);
    expect(parseTemplate("{{inputsx}}")).toMatch(/^a template is/);
    expect(parseTemplate("{{inputs.$.x}}")).toBe("a path here does not start with $");
    expect(parseTemplate("{{inputs.a..b}}")).toMatch(/^its path is not valid: empty segment/);
  });
});

describe("checkMapping", () => {
  it("finds every template, nested in objects and arrays, and whether it is a whole value", () => {
    const found = checkMapping({ a: "{{inputs.name}}", b: { c: ["x {{steps.1.result.user}} y", 5] } }, 2);
    expect(found.map((f) => [f.field, f.ref.text, f.exact])).toEqual([
      ["a", "{{inputs.name}}", true],
      ["b.c[0]", "{{steps.1.result.user}}", false],
    ]);
  });

  it("refuses references to the same or a later step, and unclosed braces", () => {
    expect(() => checkMapping({ a: "{{steps.2.result}}" }, 2)).toThrow(/refers to step 2, which does not run before step 2/);
    expect(() => checkMapping({ a: "{{steps.0.result}}" }, 2)).toThrow(/steps are numbered from 1/);
    expect(() => checkMapping({ a: "{{inputs.x}} and {{inputs.y" }, 1)).toThrow(/never closed/);
  });
});

describe("resolveMapping", () => {
  it("keeps the JSON type of a whole-value template and writes text inside a longer string", async () => {
    const out = await resolveMapping(
      {
        user: "{{steps.1.result.user}}",
        id: "{{steps.1.result.user.id}}",
        totals: "{{steps.1.result.orders[].total}}",
        last: "{{steps.1.result.orders[-1].id}}",
        nothing: "{{steps.1.result.empty}}",
        text: "{{ steps.2.result }}",
        note: "Hi {{inputs.name}}: {{inputs.n}} of {{inputs.tags}}, {{steps.1.result.user}}",
        dotted: "{{inputs.`a.b`}}",
        nested: [{ deep: "{{inputs.n}}" }, "literal", 4, true, null],
      },
      lookup,
    );
    expect(out).toEqual({
      user: { id: 7, name: "Ada" },
      id: 7,
      totals: [12.5, 30],
      last: "o-2",
      nothing: null,
      text: "plain text",
      note: 'Hi Ada: 3 of ["x","y"], {"id":7,"name":"Ada"}',
      dotted: "dotted",
      nested: [{ deep: 3 }, "literal", 4, true, null],
    });
  });

  it("leaves out a parameter whose whole value is an input that was not given", async () => {
    expect(await resolveMapping({ a: "{{inputs.missing}}", b: "{{inputs.name}}" }, lookup)).toEqual({ b: "Ada" });
    expect(await resolveMapping({ list: ["{{inputs.missing}}"] }, lookup)).toEqual({ list: [null] });
  });

  it("fails on a step path that matches nothing, whole or inside a string", async () => {
    await expect(resolveMapping({ a: "{{steps.1.result.nope}}" }, lookup)).rejects.toThrow(TemplateError);
    await expect(resolveMapping({ a: "x {{steps.1.result.nope}}" }, lookup)).rejects.toThrow(
      "a: {{steps.1.result.nope}} matched nothing in step 1's result",
    );
    await expect(resolveMapping({ a: "x {{inputs.nope}}" }, lookup)).rejects.toThrow("matched nothing in the run's inputs");
  });

  it("does not let a mapping key set an object's prototype", async () => {
    const out = await resolveMapping(JSON.parse('{"__proto__": "{{inputs.name}}"}'), lookup);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__"]);
  });
});
