/**
 * A small path language into JSON documents: `a.b.c`, `items[0].name`, `items[-1]` (from the end),
 * `items[].name` (every element; results flattened one level per `[]`), `["key.with.dots"]`.
 * A string that holds a JSON object or array is descended into, as the stored-result paths do.
 */
import { BuiltinInputError } from "../types.js";

export type Segment = { kind: "key"; key: string } | { kind: "index"; index: number } | { kind: "each" };

export const MAX_PATH = 500;
export const MAX_SEGMENTS = 64;

export function parsePath(path: string): Segment[] {
  const segments: Segment[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new BuiltinInputError(`path: ${why} at character ${i + 1} of "${path}"`);
  };
  while (i < path.length) {
    const c = path[i]!;
    if (c === ".") {
      if (i === 0 || i === path.length - 1 || path[i + 1] === "." || path[i + 1] === "[") fail("empty key");
      i++;
    } else if (c === "[") {
      // A quoted key may itself hold "]": find the closing quote first, honouring backslash escapes.
      let from = i + 1;
      if (path[from] === '"') for (from++; from < path.length && path[from] !== '"'; from++) if (path[from] === "\\") from++;
      const close = path.indexOf("]", from);
      if (close === -1) fail("unclosed [");
      const inner = path.slice(i + 1, close);
      if (inner === "") segments.push({ kind: "each" });
      else if (/^-?\d{1,9}$/.test(inner)) segments.push({ kind: "index", index: Number(inner) });
      else if (/^"(?:[^"\\]|\\.)*"$/.test(inner)) segments.push({ kind: "key", key: JSON.parse(inner) as string });
      else fail(`[${inner}] is not [n], [] or ["key"]`);
      i = close + 1;
      if (i < path.length && path[i] !== "." && path[i] !== "[") fail("expected . or [ after ]");
    } else {
      let end = i;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      segments.push({ kind: "key", key: path.slice(i, end) });
      i = end;
    }
    if (segments.length > MAX_SEGMENTS) fail(`more than ${MAX_SEGMENTS} segments`);
  }
  return segments;
}

/** A string holding a JSON object or array is read as that value; anything else stays as it is. */
function unwrap(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (!(text.startsWith("{") || text.startsWith("["))) return value;
  try {
    return JSON.parse(text);
  } catch {
    return value;
  }
}

const NOTHING = Symbol("nothing");

/**
 * Every value the path reaches. `[]` fans out, so the answer is a list: one entry without `[]` (or none),
 * any number with it. `matched` is false when nothing was reached.
 */
export function queryPath(document: unknown, segments: Segment[]): { matched: boolean; result: unknown } {
  const fansOut = segments.some((s) => s.kind === "each");
  let current: unknown[] = [document];
  for (const segment of segments) {
    const next: unknown[] = [];
    for (const raw of current) {
      const value = unwrap(raw);
      if (segment.kind === "each") {
        // A loop, not push(...spread): an array of 200,000 items would overflow the argument stack.
        if (value !== null && typeof value === "object")
          for (const item of Array.isArray(value) ? value : Object.values(value)) next.push(item);
        continue;
      }
      const found = step(value, segment);
      if (found !== NOTHING) next.push(found);
    }
    current = next;
  }
  if (fansOut) return { matched: current.length > 0, result: current };
  return current.length === 0 ? { matched: false, result: null } : { matched: true, result: current[0] };
}

function step(value: unknown, segment: Segment): unknown {
  if (segment.kind === "index") {
    if (!Array.isArray(value)) return NOTHING;
    const index = segment.index < 0 ? value.length + segment.index : segment.index;
    return index >= 0 && index < value.length ? value[index] : NOTHING;
  }
  if (segment.kind !== "key") return NOTHING;
  if (Array.isArray(value) && /^\d+$/.test(segment.key)) return step(value, { kind: "index", index: Number(segment.key) });
  if (value === null || typeof value !== "object" || Array.isArray(value)) return NOTHING;
  return Object.hasOwn(value, segment.key) ? (value as Record<string, unknown>)[segment.key] : NOTHING;
}
