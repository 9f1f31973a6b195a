/**
 * Small helpers over plain JSON values (what JSON.parse returns), shared by paths, projection, caps and
 * redaction. Nothing here recurses without a bound: results come from strangers.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isContainer(value: unknown): value is JsonObject | Json[] {
  return typeof value === "object" && value !== null;
}

/** Own-property lookup, so `__proto__` or `constructor` in a path never reaches the prototype. */
export function getOwn(obj: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets a key on a fresh output object; `__proto__` becomes an ordinary own property as JSON.parse makes it. */
export function setOwn(obj: JsonObject, key: string, value: Json): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Parses a string that holds a JSON document (object or array), or returns undefined. Strings that do
 * not start like one are not parsed at all, so scalars such as "123" stay text.
 */
export function parseEmbeddedJson(text: string): Json | undefined {
  let i = 0;
  while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  const first = text[i];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** Length of JSON.stringify(text) without building it: quotes plus each character's escaped form. */
export function serializedStringLength(text: string): number {
  let n = 2;
  for (let i = 0; i < text.length; i++) n += escapedCharLength(text, i);
  return n;
}

/**
 * Characters JSON.stringify spends on the UTF-16 unit at `i`: 2 for `"` `\` and the short control escapes,
 * 6 for other controls and lone surrogates (well-formed JSON.stringify), 1 otherwise. A valid surrogate
 * pair counts 1 + 1.
 */
export function escapedCharLength(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 1 : 6;
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const prev = text.charCodeAt(i - 1);
    return prev >= 0xd800 && prev <= 0xdbff ? 1 : 6;
  }
  return 1;
}

/**
 * JSON with object keys sorted, for hashing inputs: the same parameters in another key order are the
 * same call. Written without recursion (a work list of text and values), so no input is too deep for it.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Popped from the end: a string is text to emit, a box is a value still to render.
  const work: Array<string | { value: unknown }> = [{ value }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === "string") out.push(item);
    else renderCanonical(item.value, out, work);
  }
  return out.join("");
}

/** Emits a scalar, or opens a container and queues its parts, last first. */
function renderCanonical(value: unknown, out: string[], work: Array<string | { value: unknown }>): void {
  if (Array.isArray(value)) {
    out.push("[");
    work.push("]");
    for (let i = value.length - 1; i >= 0; i--) {
      work.push({ value: value[i] });
      if (i > 0) work.push(",");
    }
    return;
  }
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    out.push("{");
    work.push("}");
    for (let i = keys.length - 1; i >= 0; i--) {
      work.push({ value: value[keys[i]!] });
      work.push(`${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:`);
    }
    return;
  }
  out.push(JSON.stringify(value ?? null));
}
