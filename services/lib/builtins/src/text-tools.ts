/** Text Utilities: counting, slugs, case, extraction, base64, hashes, line diffs and safe truncation. */
import { createHash } from "node:crypto";
import { defineTool, objectSchema } from "./define.js";
import { diffLines, unifiedDiff } from "./lib/diff.js";
import { extractEmails, extractHashtags, extractNumbers, extractUrls } from "./lib/extract.js";
import { CASES, type Case, changeCase, codePointLength, countText, slugify, takeCodePoints } from "./lib/text.js";
import { BuiltinInputError, type BuiltinService } from "./types.js";

/** The longest text most tools accept: linear work on it takes milliseconds. */
export const MAX_TEXT = 200_000;

const textSchema = (description: string, maxLength = MAX_TEXT) => ({
  type: "string",
  maxLength,
  description: `${description} (at most ${maxLength.toLocaleString("en-US")} characters).`,
});

const wordCount = defineTool<{ text: string }>({
  handler: "text.word_count",
  slug: "text-word-count",
  name: "word_count",
  description:
    "Count the words, characters (with and without spaces), lines, sentences and paragraphs of a text, and estimate its reading time. Works for any language, including ones written without spaces.",
  tags: ["text", "count", "words", "characters", "statistics"],
  tips: "characters counts Unicode code points, so an emoji counts once.",
  inputSchema: objectSchema({ text: textSchema("The text to count") }, ["text"]),
  output: {
    words: { type: "integer", description: "Words (Unicode word segmentation)." },
    characters: { type: "integer", description: "Characters (code points), spaces included." },
    characters_no_spaces: { type: "integer", description: "Characters that are not whitespace." },
    lines: { type: "integer", description: "Lines (0 for an empty text)." },
    sentences: { type: "integer", description: "Sentences, ended by . ! or ?." },
    paragraphs: { type: "integer", description: "Blocks separated by blank lines." },
    reading_time_seconds: { type: "integer", description: "At 238 words per minute." },
  },
  example: { text: "The quick brown fox jumps over the lazy dog. It barked!" },
  run: ({ text }) => countText(text),
});

const slugifyTool = defineTool<{ text: string; separator: string; max_length: number; lowercase: boolean }>({
  handler: "text.slugify",
  slug: "text-slugify",
  name: "slugify",
  description:
    "Turn a title or phrase into a URL-safe slug: accents folded to ASCII (Crème Brûlée -> creme-brulee), punctuation dropped, words joined by a separator, cut on a word boundary to a maximum length.",
  tags: ["text", "slug", "url", "seo", "normalize"],
  inputSchema: objectSchema(
    {
      text: textSchema("The phrase to turn into a slug", 10_000),
      separator: { type: "string", enum: ["-", "_", "."], default: "-", description: "Joins the words (default -)." },
      max_length: { type: "integer", minimum: 1, maximum: 200, default: 80, description: "Longest slug (1 to 200, default 80)." },
      lowercase: { type: "boolean", default: true, description: "Lower-case the slug (default true)." },
    },
    ["text"],
  ),
  output: { slug: { type: "string", description: "The slug." } },
  example: { text: "Crème Brûlée: 10 Easy Steps!" },
  run({ text, separator, max_length, lowercase }) {
    const slug = slugify(text, separator, max_length, lowercase);
    if (slug === "") throw new BuiltinInputError("text: has no Latin letters or digits to build a slug from");
    return { slug };
  },
});

const changeCaseTool = defineTool<{ text: string; to: Case }>({
  handler: "text.change_case",
  slug: "text-change-case",
  name: "change_case",
  description:
    "Convert text between cases: UPPER, lower, Title Case, Sentence case, snake_case, camelCase, kebab-case, CONSTANT_CASE and PascalCase. Identifier cases split words on spaces, punctuation and camelCase humps.",
  tags: ["text", "case", "capitalize", "snake_case", "camelCase", "format"],
  inputSchema: objectSchema(
    {
      text: textSchema("The text to convert"),
      to: {
        type: "string",
        enum: [...CASES],
        description: "Target case: upper, lower, title, sentence, snake, camel, kebab, constant or pascal.",
      },
    },
    ["text", "to"],
  ),
  output: { result: { type: "string", description: "The converted text." } },
  example: { text: "user account ID", to: "camel" },
  run: ({ text, to }) => ({ result: changeCase(text, to) }),
});

const EXTRACT_KINDS = ["emails", "urls", "hashtags", "numbers"] as const;
type ExtractKind = (typeof EXTRACT_KINDS)[number];
const EXTRACTORS: Record<ExtractKind, (text: string) => Array<string | number>> = {
  emails: extractEmails,
  urls: extractUrls,
  hashtags: extractHashtags,
  numbers: extractNumbers,
};

const extract = defineTool<{ text: string; kinds: ExtractKind[]; unique: boolean; max_per_kind: number }>({
  handler: "text.extract",
  slug: "text-extract",
  name: "extract",
  description:
    "Extract email addresses, web links (http/https URLs), #hashtags and numbers from free text, in order of appearance. Fixed, linear-time patterns: safe on any input.",
  tags: ["text", "extract", "email", "url", "links", "hashtags", "numbers", "parse"],
  tips: "Custom regular expressions are not accepted. Numbers with thousands separators (1,234.5) come back as plain numbers.",
  inputSchema: objectSchema(
    {
      text: textSchema("The text to search"),
      kinds: {
        type: "array",
        items: { type: "string", enum: [...EXTRACT_KINDS] },
        minItems: 1,
        maxItems: 4,
        uniqueItems: true,
        default: [...EXTRACT_KINDS],
        description: "What to extract: any of emails, urls, hashtags, numbers (default all).",
      },
      unique: { type: "boolean", default: true, description: "Drop repeats, keeping the first occurrence (default true)." },
      max_per_kind: {
        type: "integer",
        minimum: 1,
        maximum: 1000,
        default: 100,
        description: "Most items returned per kind (default 100).",
      },
    },
    ["text"],
  ),
  output: {
    emails: { type: "array", description: "Email addresses, when asked for." },
    urls: { type: "array", description: "http and https URLs, trailing punctuation removed, when asked for." },
    hashtags: { type: "array", description: "Hashtags with their #, when asked for." },
    numbers: { type: "array", description: "Numbers as JSON numbers, when asked for." },
  },
  example: { text: "Mail ana@example.com or see https://example.org/docs. #launch in May: 1,250 seats at $49.99 each." },
  run({ text, kinds, unique, max_per_kind }) {
    const result: Partial<Record<ExtractKind, Array<string | number>>> = {};
    for (const kind of kinds) {
      const found = EXTRACTORS[kind](text);
      result[kind] = (unique ? [...new Set(found)] : found).slice(0, max_per_kind);
    }
    return result;
  },
});

const BASE64 = { standard: /^[A-Za-z0-9+/]*={0,2}$/, url: /^[A-Za-z0-9_-]*={0,2}$/ };

const base64 = defineTool<{ mode: "encode" | "decode"; text: string; variant: "standard" | "url" }>({
  handler: "text.base64",
  slug: "text-base64",
  name: "base64",
  description:
    "Encode UTF-8 text to Base64, or decode Base64 back to UTF-8 text. Supports the standard alphabet (+/ with = padding) and the URL-safe one (-_ without padding).",
  tags: ["text", "base64", "encode", "decode", "encoding"],
  tips: "Decoding refuses input outside the chosen alphabet and bytes that are not UTF-8 text, saying which.",
  inputSchema: objectSchema(
    {
      mode: { type: "string", enum: ["encode", "decode"], description: "encode: text -> Base64; decode: Base64 -> text." },
      text: textSchema("Text to encode, or Base64 to decode (whitespace ignored when decoding)"),
      variant: {
        type: "string",
        enum: ["standard", "url"],
        default: "standard",
        description: "Alphabet: standard (default) or url.",
      },
    },
    ["mode", "text"],
  ),
  output: {
    result: { type: "string", description: "The encoded or decoded text." },
    bytes: { type: "integer", description: "Size of the raw (decoded) data in bytes." },
  },
  example: { mode: "encode", text: "hello, world" },
  run({ mode, text, variant }) {
    if (mode === "encode") {
      const raw = Buffer.from(text, "utf8");
      return { result: raw.toString(variant === "url" ? "base64url" : "base64"), bytes: raw.length };
    }
    const compact = text.replace(/\s+/g, "");
    if (!BASE64[variant].test(compact) || compact.replace(/=+$/, "").length % 4 === 1) {
      throw new BuiltinInputError(
        `text: not valid ${variant} Base64${variant === "standard" && /[-_]/.test(compact) ? ' (it looks URL-safe: use variant "url")' : ""}`,
      );
    }
    const raw = Buffer.from(compact, variant === "url" ? "base64url" : "base64");
    try {
      return { result: new TextDecoder("utf-8", { fatal: true }).decode(raw), bytes: raw.length };
    } catch {
      throw new BuiltinInputError(
        `text: decodes to ${raw.length} bytes that are not UTF-8 text (binary data cannot be returned as text)`,
      );
    }
  },
});

const HASHES = ["sha256", "sha1", "md5", "sha512"] as const;

const hash = defineTool<{ text: string; algorithm: (typeof HASHES)[number] }>({
  handler: "text.hash",
  slug: "text-hash",
  name: "hash",
  description:
    "Compute the SHA-256, SHA-1, MD5 or SHA-512 digest of UTF-8 text, as lowercase hex. For checksums and fingerprints.",
  tags: ["text", "hash", "checksum", "sha256", "md5", "digest", "crypto"],
  tips: "MD5 and SHA-1 are for checksums only, not for security.",
  inputSchema: objectSchema(
    {
      text: textSchema("The text to hash (as UTF-8 bytes)"),
      algorithm: { type: "string", enum: [...HASHES], default: "sha256", description: "sha256 (default), sha1, md5 or sha512." },
    },
    ["text"],
  ),
  output: {
    algorithm: { type: "string", description: "The algorithm used." },
    hex: { type: "string", description: "The digest in lowercase hex." },
  },
  example: { text: "hello", algorithm: "sha256" },
  run: ({ text, algorithm }) => ({ algorithm, hex: createHash(algorithm).update(text, "utf8").digest("hex") }),
});

const diff = defineTool<{ old_text: string; new_text: string; context: number }>({
  handler: "text.diff_lines",
  slug: "text-diff-lines",
  name: "diff_lines",
  description:
    "Compare two texts line by line: the lines added and removed with their line numbers, counts, and a unified diff (like `diff -u`) with context lines.",
  tags: ["text", "diff", "compare", "changes", "patch"],
  tips: "Up to about 2,000 differing lines per side after the common start and end; diff smaller sections beyond that.",
  inputSchema: objectSchema(
    {
      old_text: textSchema("The original text"),
      new_text: textSchema("The changed text"),
      context: {
        type: "integer",
        minimum: 0,
        maximum: 20,
        default: 3,
        description: "Unchanged lines around each change in the unified diff (default 3).",
      },
    },
    ["old_text", "new_text"],
  ),
  output: {
    identical: { type: "boolean", description: "True when no line differs." },
    added: { type: "integer", description: "Lines only in new_text." },
    removed: { type: "integer", description: "Lines only in old_text." },
    unchanged: { type: "integer", description: "Lines in both." },
    changes: {
      type: "array",
      description: "Each changed line: op (add or remove), text, old_line, new_line (1-based; null on the other side).",
    },
    unified: { type: "string", description: "Unified diff text; empty when identical." },
  },
  example: { old_text: "apples\nbananas\ncherries\n", new_text: "apples\nblueberries\ncherries\n" },
  run({ old_text, new_text, context }) {
    const { steps, changes, added, removed, unchanged } = diffLines(old_text, new_text);
    return { identical: changes.length === 0, added, removed, unchanged, changes, unified: unifiedDiff(steps, context) };
  },
});

const truncate = defineTool<{ text: string; max_chars: number; ellipsis: string; at_word_boundary: boolean }>({
  handler: "text.truncate",
  slug: "text-truncate",
  name: "truncate",
  description:
    "Shorten text to at most N characters without splitting a character (emoji and other surrogate pairs stay whole), optionally at a word boundary, ending with an ellipsis.",
  tags: ["text", "truncate", "shorten", "summary", "limit"],
  tips: "max_chars counts Unicode code points and includes the ellipsis. Text already short enough comes back unchanged.",
  inputSchema: objectSchema(
    {
      text: textSchema("The text to shorten"),
      max_chars: {
        type: "integer",
        minimum: 1,
        maximum: MAX_TEXT,
        description: "Longest result in characters, ellipsis included.",
      },
      ellipsis: {
        type: "string",
        maxLength: 10,
        default: "…",
        description: 'Appended when text is cut (default "…"; "" for none).',
      },
      at_word_boundary: {
        type: "boolean",
        default: false,
        description: "Cut at the last whitespace before the limit, when there is one (default false).",
      },
    },
    ["text", "max_chars"],
  ),
  output: {
    text: { type: "string", description: "The (possibly) shortened text." },
    truncated: { type: "boolean", description: "Whether anything was cut." },
    original_chars: { type: "integer", description: "Length of the input in characters." },
    chars: { type: "integer", description: "Length of the result in characters." },
  },
  example: { text: "Toolport lets agents find and call tools safely.", max_chars: 20, at_word_boundary: true },
  run({ text, max_chars, ellipsis, at_word_boundary }) {
    const original = codePointLength(text);
    if (original <= max_chars) return { text, truncated: false, original_chars: original, chars: original };
    const room = max_chars - codePointLength(ellipsis);
    if (room < 0) throw new BuiltinInputError(`ellipsis: is longer than max_chars (${max_chars}); shorten it or raise max_chars`);
    let kept = takeCodePoints(text, room);
    if (at_word_boundary) {
      const cut = kept.search(/\s\S*$/);
      // Only when the next character is not already a space (then the cut is on a boundary anyway).
      if (cut > 0 && !/\s/.test(text.charAt(kept.length))) kept = kept.slice(0, cut);
    }
    const result = kept.trimEnd() + ellipsis;
    return { text: result, truncated: true, original_chars: original, chars: codePointLength(result) };
  },
});

export const textToolsService: BuiltinService = {
  slug: "text-tools",
  name: "Text Utilities",
  summary: "Count, slugify, change case, extract, encode, hash, diff and truncate text",
  description:
    "Everyday text processing without a network call: word and character counts, URL slugs, case conversion, extraction of emails, links, hashtags and numbers, Base64, SHA and MD5 hashes, line diffs and truncation that never splits a character.",
  category: "developer-tools",
  isDemo: false,
  version: "1.0.0",
  tools: [wordCount, slugifyTool, changeCaseTool, extract, base64, hash, diff, truncate],
};
