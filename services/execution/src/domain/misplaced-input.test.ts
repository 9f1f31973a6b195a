import { describe, expect, it } from "vitest";
import { checkRootParameters, misplacedToolInput } from "./misplaced-input.js";

const csvTool = {
  name: "csv_to_json",
  parameters: [],
  inputSchema: { type: "object", required: ["csv"], properties: { csv: { type: "string" } } },
};

describe("a misplaced tool_input", () => {
  it("is each lookalike name the tool does not declare", () => {
    expect(misplacedToolInput(csvTool, { input: { csv: "a,b" } })).toBe("input");
    expect(misplacedToolInput(csvTool, { params: { csv: "a,b" } })).toBe("params");
    expect(misplacedToolInput(csvTool, { arguments: { csv: "a,b" } })).toBe("arguments");
    expect(misplacedToolInput(csvTool, { csv: "a,b" })).toBeUndefined();
    expect(misplacedToolInput({ parameters: [], inputSchema: undefined }, { input: 1 })).toBe("input");
  });

  it("is none when the tool has a parameter of that name, in its schema or its parameter list", () => {
    const bySchema = { parameters: [], inputSchema: { type: "object", properties: { input: { type: "string" } } } };
    expect(misplacedToolInput(bySchema, { input: "hello" })).toBeUndefined();
    expect(misplacedToolInput(bySchema, { input: "hello", params: {} })).toBe("params");
    const byList = { parameters: [{ key: "arguments" }] as never, inputSchema: undefined };
    expect(misplacedToolInput(byList, { arguments: "x" })).toBeUndefined();
  });

  it("is refused as INVALID_ARGUMENT misplaced_tool_input naming the field", () => {
    expect(() => checkRootParameters(csvTool, { input: { csv: "a,b" } })).toThrow(
      expect.objectContaining({ reason: "misplaced_tool_input", details: { field: "input", expected: "tool_input" } }),
    );
    expect(() => checkRootParameters(csvTool, { csv: "a,b" })).not.toThrow();
  });
});
