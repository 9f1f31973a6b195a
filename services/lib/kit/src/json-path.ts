/**
 * The result path language (spec item 15):
 *   a.b.c          nested keys
 *   items[].name   every element of items ([*] is the same)
 *   items[0].name  one element (negative indexes count from the end: items[-1])
 *   *              every key or element at that level
 *   `a.b`          a key containing dots (a backtick inside is doubled: `a``b`)
 *   <json>         accepted and skipped (copied from a redaction report); a string holding a JSON document
 *                  is descended into whenever the path continues, with or without it
 *   $              the root, optionally leading ($.a.b); an empty path is the root too
 * A path with `[]`, `[*]` or `*` fans out: its result is the list of every match (nested fan-outs flatten).
 */
import { invalidArgument } from "./errors.js";
import { getOwn, isObject, type Json, parseEmbeddedJson } from "./json-values.js";

export type Step =
  | { kind: "key"; name: string }
  | { kind: "index"; index: number }
  | { kind: "each" }
  | { kind: "wildcard" }
  | { kind: "json" };

const MAX_PATH_LENGTH = 2000;

/** Parses a path; throws InvalidArgument naming `field` when it is malformed. */
export function parsePath(path: string, field = "path"): Step[] {
  const fail = (why: string) =>
    invalidArgument("invalid_path", `${field} ${JSON.stringify(path)} is not a valid path: ${why}`, {
      details: { field, path },
    });
  if (path.length > MAX_PATH_LENGTH) throw fail(`longer than ${MAX_PATH_LENGTH} characters`);
  const steps: Step[] = [];
  let i = 0;
  const text = path.trim();
  if (text === "$" || text === "") return steps;
  if (text.startsWith("$.")) i = 2;
  else if (text.startsWith("$[")) i = 1;
  let expectSegment = true;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "[") {
      const close = text.indexOf("]", i);
      if (close < 0) throw fail("unclosed [");
      const inner = text.slice(i + 1, close).trim();
      if (inner === "" || inner === "*") steps.push({ kind: "each" });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: "index", index: Number(inner) });
      else if (/^(["']).*\1$/.test(inner)) steps.push({ kind: "key", name: inner.slice(1, -1) });
      else throw fail(`[${inner}] is neither [], [*], [<number>] nor a quoted key`);
      i = close + 1;
      expectSegment = false;
      continue;
    }
    if (c === ".") {
      if (expectSegment) throw fail("empty segment");
      i++;
      expectSegment = true;
      if (i >= text.length) throw fail("ends with a dot");
      continue;
    }
    if (!expectSegment) throw fail(`expected . or [ at position ${i}`);
    if (c === "`") {
      let name = "";
      let j = i + 1;
      for (;;) {
        const close = text.indexOf("`", j);
        if (close < 0) throw fail("unclosed backtick");
        name += text.slice(j, close);
        if (text[close + 1] === "`") {
          name += "`";
          j = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      steps.push({ kind: "key", name });
    } else {
      let j = i;
      while (j < text.length && text[j] !== "." && text[j] !== "[") j++;
      const name = text.slice(i, j);
      if (name === "*") steps.push({ kind: "wildcard" });
      else if (name === "<json>") steps.push({ kind: "json" });
      else steps.push({ kind: "key", name });
      i = j;
    }
    expectSegment = false;
  }
  return steps;
}

export interface PathMatch {
  matched: boolean;
  /** The single match, or the list of matches when the path fans out; null when nothing matched. */
  value: Json;
}

/** A match with the concrete location it was found at (keys, indexes and `<json>` descents). */
export interface LocatedMatch {
  value: Json;
  location: Location[];
}
export type Location = string | number | { json: true };

/** Applies parsed steps to a value, returning each match with its concrete location. */
export function locate(root: Json, steps: Step[]): { matches: LocatedMatch[]; fansOut: boolean } {
  let current: LocatedMatch[] = [{ value: root, location: [] }];
  let fansOut = false;
  for (const step of steps) {
    const next: LocatedMatch[] = [];
    if (step.kind === "each" || step.kind === "wildcard") fansOut = true;
    for (const node of current) {
      if (step.kind === "json") {
        if (typeof node.value === "string") {
          const parsed = parseEmbeddedJson(node.value);
          if (parsed !== undefined) next.push({ value: parsed, location: [...node.location, { json: true }] });
        } else next.push(node);
        continue;
      }
      let value = node.value;
      let location = node.location;
      if (typeof value === "string") {
        // The path continues into a string: resolve it inside the JSON document the string holds.
        const parsed = parseEmbeddedJson(value);
        if (parsed === undefined) continue;
        value = parsed;
        location = [...location, { json: true }];
      }
      applyStep(step, value, location, next);
    }
    current = next;
    if (current.length === 0) break;
  }
  return { matches: current, fansOut };
}

function applyStep(step: Step, value: Json, location: Location[], out: LocatedMatch[]): void {
  switch (step.kind) {
    case "key": {
      if (isObject(value)) {
        const child = getOwn(value, step.name);
        if (child !== undefined) out.push({ value: child, location: [...location, step.name] });
      } else if (Array.isArray(value) && /^-?\d+$/.test(step.name)) {
        applyStep({ kind: "index", index: Number(step.name) }, value, location, out);
      }
      return;
    }
    case "index": {
      if (!Array.isArray(value)) return;
      const index = step.index < 0 ? value.length + step.index : step.index;
      if (index >= 0 && index < value.length) out.push({ value: value[index]!, location: [...location, index] });
      return;
    }
    case "each":
    case "wildcard": {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) out.push({ value: value[i]!, location: [...location, i] });
      } else if (isObject(value))
        for (const key of Object.keys(value)) out.push({ value: value[key]!, location: [...location, key] });
      return;
    }
    case "json":
      return;
  }
}

/** Selects a path in a value (spec item 15). */
export function selectPath(root: Json, steps: Step[]): PathMatch {
  const { matches, fansOut } = locate(root, steps);
  if (matches.length === 0) return { matched: false, value: null };
  if (fansOut) return { matched: true, value: matches.map((m) => m.value) };
  return { matched: true, value: matches[0]!.value };
}

/**
 * Selects a path in a stored MCP envelope: first against its structured content, then against the JSON
 * inside its text block, then against the envelope itself.
 */
export function selectInMcpEnvelope(envelope: Json, steps: Step[]): PathMatch {
  for (const inner of [mcpStructured(envelope), mcpTextJson(envelope)]) {
    if (inner === undefined) continue;
    const found = selectPath(inner, steps);
    if (found.matched) return found;
  }
  return selectPath(envelope, steps);
}

/** The structured content of an MCP tools/call result (the tool's declared output), if any. */
export function mcpStructured(envelope: Json): Json | undefined {
  if (!isObject(envelope)) return undefined;
  const structured = getOwn(envelope, "structuredContent");
  return structured === undefined || structured === null ? undefined : structured;
}

/** The JSON document held by the first text block of an MCP tools/call result, if any. */
export function mcpTextJson(envelope: Json): Json | undefined {
  if (!isObject(envelope)) return undefined;
  const content = getOwn(envelope, "content");
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    if (isObject(block) && block.type === "text" && typeof block.text === "string") {
      return parseEmbeddedJson(block.text);
    }
  }
  return undefined;
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Renders a concrete location in the path language (`$` for the root). */
export function formatLocation(location: Location[]): string {
  let out = "";
  for (const part of location) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string") {
      const key = PLAIN_KEY.test(part) && part !== "<json>" && part !== "$" ? part : `\`${part.replace(/`/g, "``")}\``;
      out += out === "" ? key : `.${key}`;
    } else out += out === "" ? "<json>" : ".<json>";
  }
  return out === "" ? "$" : out;
}
