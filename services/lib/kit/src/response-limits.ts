/**
 * How much of a tool's result a call returns (`max_response_chars`, DESIGN.md "Single call"): the
 * execution service caps every call with these, and a workflow run caps its last step's result the same way.
 */
export const DEFAULT_RESPONSE_CHARS = 32_000;
export const MAX_RESPONSE_CHARS = 500_000;
export const MIN_RESPONSE_CHARS = 100;

/** A requested cap, clamped to MIN..MAX; absent (or not a number) gives the default. */
export function clampResponseChars(value: number | undefined): number {
  if (value === undefined || value === null || Number.isNaN(value)) return DEFAULT_RESPONSE_CHARS;
  return Math.min(MAX_RESPONSE_CHARS, Math.max(MIN_RESPONSE_CHARS, Math.trunc(value)));
}
