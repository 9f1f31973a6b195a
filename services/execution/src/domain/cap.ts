/**
 * Size caps that keep JSON valid. A result is measured as the length of its JSON text (UTF-16 units,
 * JSON.stringify without spaces). When it is over the cap:
 * - arrays keep a prefix: whole entries are dropped from the tail (one entry that straddles the cap may be
 *   shrunk itself when it is an object or array, or when nothing else would be kept);
 * - objects keep every key when their scalars fit, sharing what is left between their objects and arrays in
 *   order; when even that does not fit, keys are kept from the start while they fit;
 * - strings (a text result, or a string too long to keep whole) are cut on a character boundary, never
 *   between the two halves of a surrogate pair.
 * Sizes are computed once per node and every node is visited at most twice, so capping is linear in the
 * size of the result.
 */
import { escapedCharLength, isContainer, isObject, type Json, type JsonObject, serializedStringLength, setOwn } from "./json.js";
import { formatLocation, type Location } from "./path.js";

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
  /** Strings cut short. */
  cutStrings: number;
  /** Object keys left out because not even the object's scalars fitted. */
  droppedKeys: number;
}

/** Caps `value` so that JSON.stringify(result).length <= maxChars (maxChars >= 2 keeps any container). */
export function capJson(value: Json, maxChars: number): CapOutcome {
  const capper = new Capper();
  const originalChars = capper.size(value);
  if (originalChars <= maxChars) {
    return { value, truncated: false, originalChars, chars: originalChars, droppedItems: {}, cutStrings: 0, droppedKeys: 0 };
  }
  const fitted = capper.fit(value, maxChars, []);
  const [out, chars] = fitted ?? [null, 4];
  return {
    value: out,
    truncated: true,
    originalChars,
    chars,
    droppedItems: capper.dropped,
    cutStrings: capper.cutStrings,
    droppedKeys: capper.droppedKeys,
  };
}

type Fitted = [Json, number];

class Capper {
  private readonly sizes = new Map<object, number>();
  readonly dropped: Record<string, DroppedItems> = {};
  cutStrings = 0;
  droppedKeys = 0;

  size(value: Json): number {
    if (typeof value === "string") return serializedStringLength(value);
    if (value === null || typeof value !== "object") return JSON.stringify(value).length;
    const known = this.sizes.get(value);
    if (known !== undefined) return known;
    let total = 2;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) total += this.size(value[i]!) + (i > 0 ? 1 : 0);
    } else {
      let first = true;
      for (const key of Object.keys(value)) {
        total += serializedStringLength(key) + 1 + this.size(value[key]!) + (first ? 0 : 1);
        first = false;
      }
    }
    this.sizes.set(value, total);
    return total;
  }

  /** The largest kept form of `value` within `budget` characters, or undefined when nothing fits. */
  fit(value: Json, budget: number, location: Location[]): Fitted | undefined {
    const size = this.size(value);
    if (size <= budget) return [value, size];
    if (typeof value === "string") return this.cutString(value, budget);
    if (!isContainer(value) || budget < 2) return undefined;
    return Array.isArray(value) ? this.fitArray(value, budget, location) : this.fitObject(value, budget, location);
  }

  private fitArray(value: Json[], budget: number, location: Location[]): Fitted {
    const out: Json[] = [];
    let used = 2;
    for (let i = 0; i < value.length; i++) {
      const element = value[i]!;
      const comma = out.length > 0 ? 1 : 0;
      const size = this.size(element);
      if (used + comma + size <= budget) {
        out.push(element);
        used += comma + size;
        continue;
      }
      // The first entry that does not fit: shrink it when it is a container (or when nothing would be
      // kept otherwise), then stop; everything after it is dropped.
      if (isContainer(element) || out.length === 0) {
        const shrunk = this.fit(element, budget - used - comma, [...location, i]);
        if (shrunk) {
          out.push(shrunk[0]);
          used += comma + shrunk[1];
        }
      }
      break;
    }
    this.dropped[formatLocation(location)] = { kept: out.length, total: value.length };
    return [out, used];
  }

  private fitObject(value: JsonObject, budget: number, location: Location[]): Fitted {
    const keys = Object.keys(value);
    let fixed = 2 + Math.max(0, keys.length - 1);
    for (const key of keys) {
      const child = value[key]!;
      fixed += serializedStringLength(key) + 1 + (isContainer(child) ? 2 : this.size(child));
    }
    const out: JsonObject = {};
    if (fixed <= budget) {
      // Every key stays; objects and arrays share what the scalars leave, in order.
      let spare = budget - fixed;
      let used = fixed;
      for (const key of keys) {
        const child = value[key]!;
        if (!isContainer(child)) {
          setOwn(out, key, child);
          continue;
        }
        const size = this.size(child);
        if (size - 2 <= spare) {
          setOwn(out, key, child);
          spare -= size - 2;
          used += size - 2;
        } else {
          const [shrunk, shrunkSize] = this.fit(child, 2 + spare, [...location, key]) ?? [Array.isArray(child) ? [] : {}, 2];
          setOwn(out, key, shrunk);
          spare -= shrunkSize - 2;
          used += shrunkSize - 2;
        }
      }
      return [out, used];
    }
    // Not even the scalars fit: keep keys from the start while they fit, shrinking the one that straddles.
    let used = 2;
    let kept = 0;
    for (const key of keys) {
      const cost = (kept > 0 ? 1 : 0) + serializedStringLength(key) + 1;
      const child = value[key]!;
      const room = budget - used - cost;
      if (room <= 0) break;
      const fitted = this.fit(child, room, [...location, key]);
      if (!fitted) break;
      setOwn(out, key, fitted[0]);
      used += cost + fitted[1];
      kept++;
      if (fitted[0] !== child) break;
    }
    this.droppedKeys += keys.length - kept;
    return [out, used];
  }

  private cutString(value: string, budget: number): Fitted | undefined {
    if (budget < 2) return undefined;
    const [text, size] = cutText(value, budget);
    this.cutStrings++;
    return [text, size];
  }
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

export function truncationNote(outcome: CapOutcome, maxChars: number): string {
  const parts = Object.entries(outcome.droppedItems).map(([path, d]) => `${path}: kept ${d.kept} of ${d.total} entries`);
  if (outcome.droppedKeys > 0) parts.push(`${outcome.droppedKeys} object keys left out`);
  if (outcome.cutStrings > 0) parts.push(`${outcome.cutStrings} string(s) cut short`);
  return `result trimmed from ${outcome.originalChars} to ${outcome.chars} characters (cap ${maxChars})${parts.length ? `; ${parts.join("; ")}` : ""}`;
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
  // Keys left out or strings cut inside a document: what is stored is only part of the JSON.
  if (typeof value !== "string" && (outcome.droppedKeys > 0 || outcome.cutStrings > 0)) meta.partial_json_only = true;
  return { value: outcome.value, meta };
}
