import { describe, expect, it } from "vitest";
import { InputValidator } from "./input-validator.js";

const schema = {
  type: "object",
  properties: {
    q: { type: "string", minLength: 1 },
    limit: { type: "integer", minimum: 1, maximum: 50 },
    sort: { type: "string", enum: ["asc", "desc"] },
    email: { type: "string", format: "email" },
    filter: { type: "object", properties: { tag: { type: "string" } }, required: ["tag"] },
  },
  required: ["q"],
  additionalProperties: false,
  example: "OpenAPI keywords are tolerated",
};

describe("InputValidator", () => {
  const v = new InputValidator();

  it("accepts valid input", () => {
    expect(v.problems("t:1", schema, { q: "x", limit: 5, sort: "asc", email: "a@b.co", filter: { tag: "t" } })).toEqual([]);
  });

  it("lists every bad field", () => {
    const problems = v.problems("t:1", schema, { limit: 99, sort: "up", email: "nope", filter: {}, extra: 1 });
    const byField = Object.fromEntries(problems.map((p) => [p.field, p.message]));
    expect(byField).toMatchObject({
      q: "is required",
      limit: expect.stringMatching(/<= 50/),
      sort: 'must be one of "asc", "desc"',
      email: expect.stringMatching(/format "email"/),
      "filter.tag": "is required",
      extra: "is not a known parameter",
    });
  });

  it("throws a 400 invalid_parameters naming the fields", () => {
    expect(() => v.check("t:1", schema, { q: 3 })).toThrow(/q: must be string/);
    try {
      v.check("t:1", schema, {});
    } catch (err) {
      expect(err).toMatchObject({ reason: "invalid_parameters", details: { fields: [{ field: "q", message: "is required" }] } });
    }
  });

  it("does not validate against a schema that does not compile", () => {
    expect(v.problems("bad:1", { type: "object", properties: { a: { $ref: "#/nowhere" } } }, { a: 1 })).toEqual([]);
  });
});
