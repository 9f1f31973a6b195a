/**
 * The YAML frontmatter of a SKILL.md: finding the block, parsing it with the `yaml` library, and turning
 * values into JSON. Parsing uses the library's default YAML 1.2 core schema, so `no`, `on` or `y` stay
 * text and a plain `2024-01-02` stays the text the author wrote (as the Agent Skills reference validator,
 * which keeps every value as text, reads it); only an explicit `!!timestamp` tag makes a date, which is
 * stored as its ISO string.
 */
import { parseDocument } from "yaml";

/** A frontmatter problem; `path` is under the frontmatter (`description`, `metadata.tags[0]`), empty for the block. */
export class FrontmatterInvalid extends Error {
  override name = "FrontmatterInvalid";
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface Frontmatter {
  /** The top-level mapping; an empty block reads as an empty map. Keys are kept as the library gives them. */
  fields: Map<unknown, unknown>;
}

// `---` alone on a line (trailing blanks tolerated), as the assistants and gray-matter read it.
const FENCE = /^---[ \t]*$/;
// Aliases may multiply a small text into a huge value; the library counts alias expansions against this.
const MAX_ALIAS_COUNT = 100;
// Deeper values are refused: nothing real needs them, and JSON columns and encoders have depth limits of their own.
export const MAX_DEPTH = 32;

/** A leading byte-order mark dropped: editors on Windows add one, and loaders that expect `---` first stumble on it. */
export const withoutBom = (text: string): string => (text.startsWith("\uFEFF") ? text.slice(1) : text);

/**
 * The frontmatter of a SKILL.md (BOM already removed): the lines between an opening `---` on the first line
 * and the next `---` line, CRLF or LF.
 */
export function readFrontmatter(skillMd: string): Frontmatter {
  const lines = skillMd.split("\n");
  const line = (i: number) => (lines[i] ?? "").replace(/\r$/, "");
  if (!FENCE.test(line(0))) {
    throw new FrontmatterInvalid(
      "",
      "must start with a YAML frontmatter block: a first line `---`, YAML lines such as `description: ...`, then a line `---`",
    );
  }
  let close = -1;
  for (let i = 1; i < lines.length; i++) {
    if (FENCE.test(line(i))) {
      close = i;
      break;
    }
  }
  if (close === -1) throw new FrontmatterInvalid("", "the frontmatter opened by `---` on line 1 is never closed by a `---` line");

  const yamlText = lines.slice(1, close).join("\n");
  const doc = parseDocument(yamlText, { prettyErrors: false });
  const error = doc.errors[0];
  if (error) {
    // The library's offset is within the YAML text, which starts on line 2 of SKILL.md.
    const { lineNo, column } = position(yamlText, error.pos[0]);
    throw new FrontmatterInvalid("", `invalid YAML in the frontmatter at line ${lineNo + 1}, column ${column}: ${error.message}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ mapAsMap: true, maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // An alias to an anchor defined later, or too many alias expansions.
    throw new FrontmatterInvalid("", `invalid YAML in the frontmatter: ${(err as Error).message}`);
  }
  if (value === null || value === undefined) return { fields: new Map() };
  if (!(value instanceof Map)) {
    throw new FrontmatterInvalid("", "the frontmatter must be a YAML mapping of `key: value` lines, such as `description: ...`");
  }
  return { fields: value };
}

/** 1-based line and column of an offset. */
function position(text: string, offset: number): { lineNo: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { lineNo: before.split("\n").length, column: offset - lineStart + 1 };
}

/**
 * A parsed YAML value as JSON: maps become objects with text keys (numbers and booleans as keys are written
 * out), an explicit date its ISO string. Values JSON cannot carry are refused, naming their path.
 */
export function toJson(value: unknown, path: string, ancestors: readonly object[] = []): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw new FrontmatterInvalid(path, "must be a finite number (put `.inf` or `.nan` in quotes to keep it as text)");
    return value;
  }
  if (typeof value === "object") {
    // An anchor whose alias sits inside it (`a: &x [*x]`) makes a value that contains itself.
    if (ancestors.includes(value)) throw new FrontmatterInvalid(path, "refers to itself through a YAML alias");
    if (ancestors.length >= MAX_DEPTH) throw new FrontmatterInvalid(path, `is nested more than ${MAX_DEPTH} levels deep`);
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item, i) => toJson(item, `${path}[${i}]`, [...ancestors, value]));
  if (value instanceof Map) {
    const entries: [string, JsonValue][] = [];
    const seen = new Set<string>();
    for (const [rawKey, item] of value) {
      if (typeof rawKey !== "string" && typeof rawKey !== "number" && typeof rawKey !== "boolean") {
        throw new FrontmatterInvalid(path, "keys must be plain text, not lists, mappings or null");
      }
      const key = String(rawKey);
      if (seen.has(key)) throw new FrontmatterInvalid(path, `has the key "${key}" twice`);
      seen.add(key);
      entries.push([key, toJson(item, `${path}.${key}`, [...ancestors, value])]);
    }
    // fromEntries defines own properties, so a key such as `__proto__` stays an ordinary key.
    return Object.fromEntries(entries);
  }
  // `!!binary`, `!!set` and the like: nothing JSON can hold as written.
  throw new FrontmatterInvalid(path, "holds a YAML value JSON cannot carry (binary data, a set, ...); write it as text");
}
