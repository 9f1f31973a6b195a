/**
 * Size caps that keep JSON valid (spec Limits "result trimming", item 15 "capped at element boundaries").
 * A result is measured as the length of its JSON text (UTF-16 units, JSON.stringify without spaces). When
 * it is over the cap it is cut only between elements, and whatever is kept is kept exactly as it was:
 * - an array keeps a prefix of whole entries: entries are dropped whole from the tail, never shrunk, so
 *   every entry in the output deep-equals its input entry, arrays and strings inside it included.
 *   `droppedItems` names each cut array (path language, `$` = the root) with the entries present and its
 *   total. Only arrays reached from the root through object keys can be cut; nothing inside an entry is.
 * - an object keeps or leaves out each key whole, never cutting the value of a scalar or string key. Its
 *   keys are first taken in order at their smallest form (a scalar or string whole, an object or array
 *   empty); a key whose smallest form no longer fits is left out (counted, and its path listed), and a
 *   later, smaller key may still be kept. What is left then grows the kept objects and arrays in key
 *   order, by these same rules. So the scalars beside a long list survive the cut:
 *   `{"items": [...], "next_cursor": "..."}` keeps its cursor and loses entries from the tail of items.
 * - a result that is a string as a whole (a text result) is cut on a character boundary, never between
 *   the two halves of a surrogate pair. A string inside a document is never cut.
 * Sizes are computed once per node, each node is visited a bounded number of times and nothing recurses
 * on the shape of the result, so capping is linear in its size and a result nested thousands of levels
 * deep cannot overflow the stack.
 */

import { formatLocation } from "@toolport/kit/json-path";
import {
  escapedCharLength,
  isContainer,
  isObject,
  type Json,
  type JsonObject,
  serializedStringLength,
  setOwn,
} from "@toolport/kit/json-values";

export interface DroppedItems {
  kept: number;
  total: number;
}

export interface CapOutcome {
  value: Json;
  truncated: boolean;
  originalChars: number;
  chars: number;
  /** Array path (path language, `$` = root) -> entries kept and total. */
  droppedItems: Record<string, DroppedItems>;
  /** Object keys left out. */
  droppedKeys: number;
  /** Paths of the first MAX_LISTED_KEYS keys left out, for the truncation note. */
  droppedKeyPaths: string[];
  /** Set when the result is a string that was cut: its length kept and its full length (UTF-16 units). */
  textCut?: DroppedItems;
}

/** Dropped keys named in a truncation note; the count covers them all. */
export const MAX_LISTED_KEYS = 10;

/** Caps `value` so that JSON.stringify(result).length <= maxChars (maxChars >= 2 keeps any container). */
export function capJson(value: Json, maxChars: number): CapOutcome {
  const capper = new Capper();
  const originalChars = capper.size(value);
  if (originalChars <= maxChars) {
    return {
      value,
      truncated: false,
      originalChars,
      chars: originalChars,
      droppedItems: {},
      droppedKeys: 0,
      droppedKeyPaths: [],
    };
  }
  const [out, chars] = capper.fitRoot(value, maxChars) ?? [null, 4];
  const outcome: CapOutcome = {
    value: out,
    truncated: true,
    originalChars,
    chars,
    droppedItems: capper.droppedItems,
    droppedKeys: capper.droppedKeys,
    droppedKeyPaths: capper.droppedKeyPaths,
  };
  if (capper.textCut) outcome.textCut = capper.textCut;
  return outcome;
}

type Fitted = [Json, number];

/** The object keys leading from the root to a node (arrays are never descended into). */
interface Trail {
  parent: Trail | undefined;
  key: string;
}

/** An object being capped: its kept keys are placed in order, each container growing into `spare`. */
interface ObjectFrame {
  source: JsonObject;
  trail: Trail | undefined;
  out: JsonObject;
  /** The keys whose smallest form fitted, in source order. */
  kept: string[];
  /** Index in `kept` of the next key to place. */
  next: number;
  /** Characters of the budget not yet spent. */
  spare: number;
  /** Characters of `out` once complete, with containers not yet placed counted as empty. */
  used: number;
}

class Capper {
  private readonly sizes = new Map<object, number>();
  readonly droppedItems: Record<string, DroppedItems> = {};
  droppedKeys = 0;
  readonly droppedKeyPaths: string[] = [];
  textCut: DroppedItems | undefined;

  /** Length of JSON.stringify(value); containers are sized children first, without recursion. */
  size(value: Json): number {
    if (!isContainer(value)) return scalarSize(value);
    const known = this.sizes.get(value);
    if (known !== undefined) return known;
    const pending: Array<JsonObject | Json[]> = [value];
    while (pending.length > 0) {
      const node = pending[pending.length - 1]!;
      if (!this.sizes.has(node) && !this.pushUnsized(node, pending)) this.sizes.set(node, this.sum(node));
      if (pending[pending.length - 1] === node) pending.pop();
    }
    return this.sizes.get(value)!;
  }

  /** Pushes the child containers of `node` not sized yet; false when there are none. */
  private pushUnsized(node: JsonObject | Json[], pending: Array<JsonObject | Json[]>): boolean {
    const before = pending.length;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (isContainer(child) && !this.sizes.has(child)) pending.push(child);
    }
    return pending.length > before;
  }

  /** JSON length of a container whose child containers are all sized. */
  private sum(node: JsonObject | Json[]): number {
    let total = 2;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) total += this.size(node[i]!) + (i > 0 ? 1 : 0);
      return total;
    }
    let first = true;
    for (const key of Object.keys(node)) {
      total += serializedStringLength(key) + 1 + this.size(node[key]!) + (first ? 0 : 1);
      first = false;
    }
    return total;
  }

  /** The kept form of a result over `budget` characters, or undefined when not even an empty one fits. */
  fitRoot(value: Json, budget: number): Fitted | undefined {
    if (typeof value === "string") return this.cutRootText(value, budget);
    // A number, boolean or null longer than the cap cannot be cut.
    if (!isContainer(value) || budget < 2) return undefined;
    return Array.isArray(value) ? this.fitArray(value, budget, undefined) : this.fitObject(value, budget);
  }

  /** A prefix of whole entries (the caller has checked the array is over `budget`). */
  private fitArray(source: Json[], budget: number, trail: Trail | undefined): Fitted {
    const out: Json[] = [];
    let used = 2;
    for (const entry of source) {
      const cost = (out.length > 0 ? 1 : 0) + this.size(entry);
      if (used + cost > budget) break;
      out.push(entry);
      used += cost;
    }
    this.droppedItems[pathOf(trail)] = { kept: out.length, total: source.length };
    return [out, used];
  }

  /**
   * An object over `budget`: see the header. Nested objects that must be cut are frames on an explicit
   * stack, so the depth of the result never reaches the call stack.
   */
  private fitObject(root: JsonObject, budget: number): Fitted {
    const stack: ObjectFrame[] = [this.openObject(root, budget, undefined)];
    for (;;) {
      const frame = stack[stack.length - 1]!;
      if (frame.next === frame.kept.length) {
        stack.pop();
        const parent = stack[stack.length - 1];
        if (!parent) return [frame.out, frame.used];
        place(parent, frame.trail!.key, frame.out, frame.used);
        continue;
      }
      const key = frame.kept[frame.next++]!;
      const child = frame.source[key]!;
      if (!isContainer(child)) {
        setOwn(frame.out, key, child);
        continue;
      }
      const size = this.size(child);
      if (size - 2 <= frame.spare) {
        place(frame, key, child, size);
        continue;
      }
      // The child was counted empty; it may grow by what is spare.
      const trail = { parent: frame.trail, key };
      if (Array.isArray(child)) place(frame, key, ...this.fitArray(child, 2 + frame.spare, trail));
      else stack.push(this.openObject(child, 2 + frame.spare, trail));
    }
  }

  /** Chooses the keys of `source` that fit `budget` at their smallest form; the others are left out. */
  private openObject(source: JsonObject, budget: number, trail: Trail | undefined): ObjectFrame {
    const kept: string[] = [];
    let used = 2;
    for (const key of Object.keys(source)) {
      const child = source[key]!;
      const cost = (kept.length > 0 ? 1 : 0) + serializedStringLength(key) + 1 + (isContainer(child) ? 2 : this.size(child));
      if (used + cost <= budget) {
        kept.push(key);
        used += cost;
      } else this.dropKey(trail, key);
    }
    return { source, trail, out: {}, kept, next: 0, spare: budget - used, used };
  }

  private dropKey(trail: Trail | undefined, key: string): void {
    this.droppedKeys++;
    if (this.droppedKeyPaths.length < MAX_LISTED_KEYS) this.droppedKeyPaths.push(pathOf({ parent: trail, key }));
  }

  private cutRootText(value: string, budget: number): Fitted | undefined {
    if (budget < 2) return undefined;
    const [text, size] = cutText(value, budget);
    this.textCut = { kept: text.length, total: value.length };
    return [text, size];
  }
}

/** Sets a kept key's value and spends its growth beyond the empty form counted for it. */
function place(frame: ObjectFrame, key: string, value: Json, size: number): void {
  setOwn(frame.out, key, value);
  frame.spare -= size - 2;
  frame.used += size - 2;
}

function scalarSize(value: Json): number {
  return typeof value === "string" ? serializedStringLength(value) : JSON.stringify(value).length;
}

function pathOf(trail: Trail | undefined): string {
  const keys: string[] = [];
  for (let t = trail; t; t = t.parent) keys.push(t.key);
  return formatLocation(keys.reverse());
}

/**
 * The longest prefix of `text` whose JSON form fits `budget` characters, and that form's length. The cut
 * never separates a surrogate pair.
 */
export function cutText(text: string, budget: number): [string, number] {
  let used = 2;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const cost = pair ? 2 : escapedCharLength(text, i);
    if (used + cost > budget) break;
    used += cost;
    i += pair ? 2 : 1;
  }
  return [text.slice(0, i), used];
}

/** Keys that carry a pagination cursor, most specific first. */
const CURSOR_KEYS = [
  "next_cursor",
  "nextCursor",
  "next_page_token",
  "nextPageToken",
  "continuation_token",
  "continuationToken",
  "@odata.nextLink",
  "nextLink",
  "next_url",
  "next_page",
  "nextPage",
  "endCursor",
  "cursor",
  "next",
];
/** Objects that hold paging facts. */
const PAGING_CONTAINERS = [
  "links",
  "_links",
  "pagination",
  "paging",
  "page_info",
  "pageInfo",
  "meta",
  "response_metadata",
  "metadata",
];

/**
 * The pagination cursor a payload carries: a cursor key at the top level, or in a paging object up to
 * three levels down (links.next, response_metadata.next_cursor, pageInfo.endCursor...). A sibling
 * `has_more`/`hasNextPage` that is false means there is no next page.
 */
export function findCursor(value: Json): string | undefined {
  let level: JsonObject[] = isObject(value) ? [value] : [];
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: JsonObject[] = [];
    for (const node of level) {
      if (node.has_more === false || node.hasMore === false || node.hasNextPage === false || node.has_next_page === false)
        continue;
      for (const key of CURSOR_KEYS) {
        if (!Object.hasOwn(node, key)) continue;
        const found = cursorValue(node[key]!);
        if (found !== undefined) return found;
      }
      for (const key of PAGING_CONTAINERS) {
        const child = Object.hasOwn(node, key) ? node[key] : undefined;
        if (isObject(child)) next.push(child);
      }
    }
    level = next;
  }
  return undefined;
}

function cursorValue(value: Json): string | undefined {
  if (typeof value === "string" && value.length > 0 && value.length <= 4096) return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (isObject(value) && typeof value.href === "string" && value.href.length > 0) return value.href;
  return undefined;
}

export interface ResponseMeta {
  truncated: boolean;
  original_response_chars: number;
  response_chars: number;
  dropped_items: Record<string, DroppedItems>;
  cursor?: string;
}

export interface CappedResponse {
  value: Json;
  truncated: boolean;
  /** Null unless truncated. */
  meta: ResponseMeta | null;
  cursor: string | undefined;
  /** What was dropped, for `_meta.truncation_note`. */
  note: string | undefined;
}

/** Caps a result on its way to the caller and describes the cut (spec `response_meta`). */
export function capResponse(value: Json, maxChars: number, cursorSource: Json = value): CappedResponse {
  const outcome = capJson(value, maxChars);
  const cursor = findCursor(cursorSource);
  if (!outcome.truncated) return { value, truncated: false, meta: null, cursor, note: undefined };
  const meta: ResponseMeta = {
    truncated: true,
    original_response_chars: outcome.originalChars,
    response_chars: outcome.chars,
    dropped_items: outcome.droppedItems,
  };
  if (cursor !== undefined) meta.cursor = cursor;
  return { value: outcome.value, truncated: true, meta, cursor, note: truncationNote(outcome, maxChars) };
}

/**
 * `_meta.truncation_note`: what the cap dropped, in the terms of the header (kept entries and keys are
 * whole; only a text result is cut inside).
 */
export function truncationNote(outcome: CapOutcome, maxChars: number): string {
  const parts = Object.entries(outcome.droppedItems).map(
    ([path, d]) => `${path}: kept ${d.kept} of ${d.total} entries (each whole; ${d.total - d.kept} dropped from the end)`,
  );
  if (outcome.droppedKeys > 0) parts.push(droppedKeysNote(outcome));
  if (outcome.textCut) parts.push(`text cut to its first ${outcome.textCut.kept} of ${outcome.textCut.total} characters`);
  return `result trimmed from ${outcome.originalChars} to ${outcome.chars} characters (cap ${maxChars})${parts.length ? `; ${parts.join("; ")}` : ""}`;
}

function droppedKeysNote({ droppedKeys, droppedKeyPaths }: CapOutcome): string {
  const more = droppedKeys - droppedKeyPaths.length;
  const listed = droppedKeyPaths.join(", ") + (more > 0 ? `, and ${more} more` : "");
  return `${droppedKeys} object ${droppedKeys === 1 ? "key" : "keys"} left out: ${listed}`;
}

/**
 * Default storage cap: 5,000,000 characters of JSON text per stored result (EXECUTION_STORE_MAX_CHARS).
 * Upstream bodies are limited to 10 MiB before parsing, so this only bites on huge results; above it the
 * stored form is itself capped as above and `stored_meta` says so.
 */
export const DEFAULT_STORE_MAX_CHARS = 5_000_000;

export interface StoredMeta {
  truncated: true;
  original_chars: number;
  stored_chars: number;
  limit: number;
  kind: "json" | "text";
  dropped_items?: Record<string, DroppedItems>;
  partial_json_only?: boolean;
}

/** The form of a result that is stored: itself, or its capped form with the facts of the cut. */
export function storageForm(value: Json, limit: number): { value: Json; meta: StoredMeta | null } {
  const outcome = capJson(value, limit);
  if (!outcome.truncated) return { value, meta: null };
  const meta: StoredMeta = {
    truncated: true,
    original_chars: outcome.originalChars,
    stored_chars: outcome.chars,
    limit,
    kind: typeof value === "string" ? "text" : "json",
  };
  if (Object.keys(outcome.droppedItems).length > 0) meta.dropped_items = outcome.droppedItems;
  // Keys left out of a document: what is stored is not only a prefix of its arrays.
  if (outcome.droppedKeys > 0) meta.partial_json_only = true;
  return { value: outcome.value, meta };
}
