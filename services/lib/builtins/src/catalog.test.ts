import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { BuiltinInputError, builtinServices, findBuiltin } from "./index.js";

const tools = builtinServices.flatMap((service) => service.tools);
const ctx = { now: () => new Date("2024-05-01T12:00:00Z") };

describe("the built-in catalog", () => {
  it("ships at least three services and fifteen tools, with exactly one demo service", () => {
    expect(builtinServices.length).toBeGreaterThanOrEqual(3);
    expect(tools.length).toBeGreaterThanOrEqual(15);
    expect(builtinServices.filter((s) => s.isDemo).map((s) => s.slug)).toEqual(["sample-data"]);
    expect(builtinServices.map((s) => s.slug)).toEqual(["sample-data", "text-tools", "data-tools"]);
  });

  it("gives every tool a unique, well-formed handler, slug and name", () => {
    const handlers = tools.map((t) => t.handler);
    const slugs = tools.map((t) => t.slug);
    const names = tools.map((t) => t.name);
    expect(new Set(handlers).size).toBe(tools.length);
    expect(new Set(slugs).size).toBe(tools.length);
    expect(new Set(names).size).toBe(tools.length);
    for (const tool of tools) {
      expect(tool.handler).toMatch(/^[a-z]+\.[a-z0-9_]+$/);
      expect(tool.slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
      expect(tool.description.length).toBeGreaterThan(60);
      expect(tool.tags.length).toBeGreaterThan(0);
    }
  });

  it("finds every tool by its handler, and nothing for an unknown one", () => {
    for (const tool of tools) expect(findBuiltin(tool.handler)).toBe(tool);
    expect(findBuiltin("text.nope")).toBeUndefined();
    expect(findBuiltin("")).toBeUndefined();
  });

  // Strict Ajv refuses unknown keywords, union types without allowance, and other schema mistakes.
  const strict = new Ajv({ strict: true, allErrors: true });

  it.each(tools.map((t) => [t.slug, t] as const))("%s: has a strict, valid, fully described input schema", (_, tool) => {
    const schema = tool.inputSchema as {
      type: string;
      properties: Record<string, { description?: string }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(() => strict.compile(schema)).not.toThrow();
    expect(schema.type).toBe("object");
    expect(schema.additionalProperties).toBe(false);
    for (const [name, property] of Object.entries(schema.properties)) expect(property.description, name).toMatch(/\w/);
    for (const name of schema.required) expect(Object.keys(schema.properties)).toContain(name);
    expect(Object.keys(tool.output ?? {}).length).toBeGreaterThan(0);
  });

  it.each(tools.map((t) => [t.slug, t] as const))("%s: its example validates and runs", async (_, tool) => {
    const validate = strict.compile(tool.inputSchema);
    expect(validate(tool.example), JSON.stringify(validate.errors)).toBe(true);
    const result = await tool.run(tool.example, ctx);
    expect(result).toBeTypeOf("object");
    // Every declared output field is present in the example's answer.
    for (const field of Object.keys(tool.output ?? {})) expect(result, field).toHaveProperty(field);
  });
});

describe("run validates its own input", () => {
  const wordCount = findBuiltin("text.word_count")!;

  it("refuses a missing required field, naming it", async () => {
    await expect(async () => wordCount.run({}, ctx)).rejects.toThrow(new BuiltinInputError("text: required"));
  });

  it("refuses unknown fields and wrong types", async () => {
    await expect(async () => wordCount.run({ text: "a", extra: 1 }, ctx)).rejects.toThrow("extra: unknown field");
    await expect(async () => wordCount.run({ text: 42 }, ctx)).rejects.toThrow("text: must be string");
  });

  it("refuses a string over its bound before doing any work", async () => {
    await expect(async () => wordCount.run({ text: "a".repeat(200_001) }, ctx)).rejects.toThrow(
      "text: must NOT have more than 200000 characters",
    );
  });

  it("fills defaults without touching the caller's object", async () => {
    const input = { text: "Hello" };
    expect(await findBuiltin("text.hash")!.run(input, ctx)).toEqual({
      algorithm: "sha256",
      hex: "185f8db32271fe25f561a6fc938b2e264306ec304eda518007d1764826381969",
    });
    expect(input).toEqual({ text: "Hello" });
  });

  it("lists every enum value when one is wrong", async () => {
    await expect(async () => findBuiltin("text.change_case")!.run({ text: "a", to: "shout" }, ctx)).rejects.toThrow(
      "to: must be one of upper, lower, title, sentence, snake, camel, kebab, constant, pascal",
    );
  });
});
