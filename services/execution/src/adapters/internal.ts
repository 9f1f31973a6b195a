/**
 * The `internal` adapter: built-in and demo tools from @toolport/builtins, run in-process by their
 * handler name. A BuiltinInputError is the caller's mistake; anything else thrown is our bug.
 */
import { BuiltinInputError, findBuiltin } from "@toolport/builtins/index";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import { ExecutionFailure } from "../domain/failure.js";

export async function callInternal(handler: string, input: JsonObject, now: () => Date = () => new Date()): Promise<Json> {
  const tool = findBuiltin(handler);
  if (!tool)
    throw new ExecutionFailure("platform", "unknown_builtin", `built-in tool ${handler} is not available in this version`);
  try {
    const result = await tool.run(input as Record<string, unknown>, { now });
    return (result === undefined ? null : JSON.parse(JSON.stringify(result))) as Json;
  } catch (err) {
    if (err instanceof BuiltinInputError) throw new ExecutionFailure("caller", "invalid_input", err.message, { cause: err });
    throw new ExecutionFailure("platform", "builtin_failed", "the built-in tool failed", { cause: err });
  }
}
