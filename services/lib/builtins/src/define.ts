import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { type BuiltinContext, BuiltinInputError, type BuiltinTool, type JsonSchema } from "./types.js";

/** A tool as written in a service file: `run` receives input already validated with defaults filled. */
export interface ToolDefinition<I> extends Omit<BuiltinTool, "run"> {
  run(input: I, ctx: BuiltinContext): Promise<unknown> | unknown;
}

// One validator instance for our own (trusted, static) input schemas. `useDefaults` fills declared defaults,
// so an implementation never re-states them.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });

/**
 * Wraps a definition so `run` validates its input against the tool's own schema (compiled on first use)
 * before the implementation sees it. The caller's object is never mutated (defaults go on a shallow copy).
 */
export function defineTool<I>(definition: ToolDefinition<I>): BuiltinTool {
  let validate: ValidateFunction | undefined;
  return {
    ...definition,
    run(input, ctx) {
      validate ??= ajv.compile(definition.inputSchema);
      // Shallow: defaults are declared only on top-level properties, and a deep copy of a caller's document
      // would cost as much as the tool.
      const copy = { ...(input ?? {}) };
      if (!validate(copy)) throw new BuiltinInputError(describeErrors(validate.errors ?? []));
      return definition.run(copy as I, ctx);
    },
  };
}

/** "text: must NOT have more than 200000 characters; to: must be one of upper, lower" */
export function describeErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 10)
    .map((error) => {
      const field =
        error.keyword === "required"
          ? String(error.params.missingProperty)
          : error.keyword === "additionalProperties"
            ? String(error.params.additionalProperty)
            : error.instancePath.replace(/^\//, "").replaceAll("/", ".") || "input";
      if (error.keyword === "enum") return `${field}: must be one of ${(error.params.allowedValues as unknown[]).join(", ")}`;
      if (error.keyword === "additionalProperties") return `${field}: unknown field`;
      if (error.keyword === "required") return `${field}: required`;
      return `${field}: ${error.message ?? "invalid"}`;
    })
    .join("; ");
}

/** A schema for an object of named, described properties: the form every built-in's input takes. */
export function objectSchema(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: "object", properties, required, additionalProperties: false };
}
