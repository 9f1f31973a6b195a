/**
 * A single call may carry the tool's parameters in `tool_input` or directly at the root of the body (the
 * spec allows both). A caller used to another API often sends `input`, `params` or `arguments` instead
 * of `tool_input`: read as root parameters, that object becomes one parameter of that name and the tool
 * answers about whatever it misses ("csv: is required"), which hides the real mistake. So when the
 * parameters came at the root and one of those names is not a parameter the tool declares, the call is
 * refused with a 400 that names the mistake. A tool that does declare such a parameter gets it as usual.
 */
import { invalidArgument } from "@toolport/kit/errors";
import type { JsonObject } from "@toolport/kit/json-values";
import type { ToolForCall } from "./model.js";

/** Names other tool-calling APIs give the parameters object, in the order they are reported. */
export const TOOL_INPUT_LOOKALIKES = ["input", "params", "arguments"] as const;

/** The keys the tool takes: its parameters and the properties of its input schema. */
function declaredKeys(tool: Pick<ToolForCall, "parameters" | "inputSchema">): Set<string> {
  const keys = new Set(tool.parameters.map((p) => p.key));
  const properties = tool.inputSchema?.properties;
  if (properties && typeof properties === "object" && !Array.isArray(properties)) {
    for (const name of Object.keys(properties)) keys.add(name);
  }
  return keys;
}

/** The first root key that looks like a misplaced `tool_input` for this tool, or undefined. */
export function misplacedToolInput(tool: Pick<ToolForCall, "parameters" | "inputSchema">, input: JsonObject): string | undefined {
  const declared = declaredKeys(tool);
  return TOOL_INPUT_LOOKALIKES.find((name) => Object.hasOwn(input, name) && !declared.has(name));
}

/** Throws INVALID_ARGUMENT misplaced_tool_input when `input` (root parameters) carries a lookalike. */
export function checkRootParameters(tool: Pick<ToolForCall, "name" | "parameters" | "inputSchema">, input: JsonObject): void {
  const field = misplacedToolInput(tool, input);
  if (field === undefined) return;
  throw invalidArgument(
    "misplaced_tool_input",
    `the body has "${field}" but no "tool_input": send the tool's parameters as "tool_input" (or each one at the ` +
      `root of the body); ${tool.name} has no parameter named "${field}"`,
    { details: { field, expected: "tool_input" } },
  );
}
