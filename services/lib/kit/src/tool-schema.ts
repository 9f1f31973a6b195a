/**
 * How a tool's input JSON Schema is compiled (with ajv) to validate `tool_input` before a call: the
 * execution service compiles with exactly these options, and the catalog's import tests check that
 * every schema it stores compiles with them. One place, so the two cannot drift apart.
 * - strict off: publishers' schemas carry annotation keywords (discriminator, xml, x-*) ajv's strict
 *   mode refuses; unknown keywords are ignored, as JSON Schema says.
 * - no coercion or defaults: the input is validated as sent, never rewritten.
 * - validateSchema off: a publisher's schema is not checked against the meta-schema at every compile.
 * - inlineRefs off: imported schemas keep large shared sub-schemas as `$ref`s into `$defs` (catalog
 *   README, "Schemas"); inlining them again at compile time multiplied the generated code (a schema using
 *   the next level twice, 24 deep, took ~16 s to compile). Box's 296 tools: 490 -> 344 ms.
 */
export const TOOL_INPUT_AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  coerceTypes: false,
  useDefaults: false,
  validateSchema: false,
  inlineRefs: false,
} as const;
