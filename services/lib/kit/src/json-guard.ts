/**
 * Checks on JSON values that come from outside (request bodies, fetched documents, upstream answers),
 * written without recursion so that a hostile value thousands of levels deep cannot overflow the stack.
 *
 * Why NUL matters: Postgres text and jsonb cannot hold U+0000 ("invalid byte sequence for encoding
 * UTF8: 0x00", "unsupported Unicode escape sequence"), so a NUL that reaches a write fails it.
 */

/** Replacement for U+0000 in text we store but did not receive from the caller (U+FFFD, the replacement character). */
export const NUL_REPLACEMENT = "\uFFFD";

/**
 * A value still to be walked, with the way back to the root: its pointer is only built when a violation
 * is found there. Building every value's pointer as the walk went (two escaping regexps per key) made the
 * check about four times as slow on a 2 MB answer (test/bench/execution-gateway.mjs, section 2).
 */
type Frame = { value: unknown; depth: number; parent: Frame | undefined; key: string | number };

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** Whether a value can hold a violation: a string, an object or an array (a number, boolean or null cannot). */
const mayViolate = (value: unknown) => typeof value === "string" || (typeof value === "object" && value !== null);

/** The JSON Pointer (RFC 6901) of a frame: "" for the root. */
function pointerOf(frame: Frame): string {
  let pointer = "";
  for (let f: Frame = frame; f.parent !== undefined; f = f.parent) {
    pointer = `/${typeof f.key === "number" ? f.key : escapePointer(f.key)}${pointer}`;
  }
  return pointer;
}

/**
 * The first place in `value` that breaks a limit: nesting deeper than `maxDepth` containers, or a
 * string or key holding U+0000. Pointers are JSON Pointers (RFC 6901), "" for the root.
 */
export function findJsonViolation(
  value: unknown,
  maxDepth: number,
): { kind: "depth"; pointer: string } | { kind: "nul"; pointer: string } | null {
  const stack: Frame[] = [{ value, depth: 0, parent: undefined, key: "" }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const v = frame.value;
    if (typeof v === "string") {
      if (v.includes("\u0000")) return { kind: "nul", pointer: pointerOf(frame) };
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) return { kind: "depth", pointer: pointerOf(frame) };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (mayViolate(v[i])) stack.push({ value: v[i], depth, parent: frame, key: i });
      }
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const item = (v as Record<string, unknown>)[key];
      if (key.includes("\u0000")) return { kind: "nul", pointer: pointerOf({ value: item, depth, parent: frame, key }) };
      if (mayViolate(item)) stack.push({ value: item, depth, parent: frame, key });
    }
  }
  return null;
}

/** The nesting depth of a value (a scalar is 0, `{}` and `[]` are 1). */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop() as { value: unknown; depth: number };
    if (typeof v !== "object" || v === null) continue;
    const d = depth + 1;
    if (d > max) max = d;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: d });
    }
  }
  return max;
}

/**
 * A copy of `value` with U+0000 in every string and key replaced by U+FFFD; `value` itself when it
 * holds none (the common case costs one walk and no copy).
 */
export function replaceNul<T>(value: T): T {
  if (!findNul(value)) return value;
  const fix = (s: string) => s.replaceAll("\u0000", NUL_REPLACEMENT);
  const root: { v: unknown } = { v: undefined };
  const work: { from: unknown; set: (copy: unknown) => void }[] = [{ from: value, set: (c) => (root.v = c) }];
  while (work.length > 0) {
    const { from, set } = work.pop() as (typeof work)[number];
    if (typeof from === "string") {
      set(fix(from));
    } else if (Array.isArray(from)) {
      const copy: unknown[] = new Array(from.length);
      set(copy);
      from.forEach((item, i) => {
        work.push({ from: item, set: (c) => (copy[i] = c) });
      });
    } else if (typeof from === "object" && from !== null && !(from instanceof Date)) {
      const copy: Record<string, unknown> = {};
      set(copy);
      for (const [k, item] of Object.entries(from)) {
        const key = fix(k);
        copy[key] = undefined; // keeps the key order: the stack fills values last-first
        work.push({ from: item, set: (c) => (copy[key] = c) });
      }
    } else set(from);
  }
  return root.v as T;
}

function findNul(value: unknown): boolean {
  return findJsonViolation(value, Number.POSITIVE_INFINITY)?.kind === "nul";
}
