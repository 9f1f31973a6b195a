/**
 * The shapes shared by every built-in tool. The catalog seeds its services/tools records from these
 * (names, slugs, descriptions, tags, input schema, declared output, tips, example); execution runs a tool
 * by its `handler` (stored as the tool's `internal_handler`).
 */

/** A JSON Schema object (draft-07 keywords only, so every common validator accepts it). */
export type JsonSchema = Record<string, unknown>;

/** What a tool may read besides its input. Time comes from here so tests can fix the clock. */
export interface BuiltinContext {
  now: () => Date;
}

export interface BuiltinTool {
  /** Stable key, e.g. "text.word_count"; stored as the tool's `internal_handler`. */
  handler: string;
  /** Stable, readable and unique across all built-ins, e.g. "text-word-count". */
  slug: string;
  /** The name agents call it by, e.g. "word_count". */
  name: string;
  description: string;
  tags: string[];
  tips?: string;
  /** `type: object`, described properties, `required`, defaults, enums, bounds, `additionalProperties: false`. */
  inputSchema: JsonSchema;
  /** Declared output fields (top level of the result object). */
  output?: Record<string, { type: string; description: string }>;
  /** A valid input that runs; the catalog shows it as the example call. */
  example: Record<string, unknown>;
  /**
   * Runs the tool. The caller validates `input` against `inputSchema`; `run` validates again (compiled once,
   * cheap) and fills defaults, so bounds hold even for a caller that forgot. Input that passes the schema but
   * is still unusable throws `BuiltinInputError`; anything else thrown is a bug (a platform failure).
   */
  run(input: Record<string, unknown>, ctx: BuiltinContext): Promise<unknown> | unknown;
}

export interface BuiltinService {
  slug: string;
  name: string;
  summary: string;
  description: string;
  category: string;
  /** True for the fake-data sandbox; search ranks such services behind real ones. */
  isDemo: boolean;
  version: string;
  tools: BuiltinTool[];
}

/**
 * The caller's input cannot be used (a malformed CSV, a division by zero, an unknown time zone...).
 * The message says what to change; execution maps it to a caller error (400), never a platform failure.
 */
export class BuiltinInputError extends Error {
  override readonly name = "BuiltinInputError";
}
