import { describe, expect, it } from "vitest";
import { BuiltinInputError, findBuiltin } from "./index.js";
import { MAX_TEXT } from "./text-tools.js";

const ctx = { now: () => new Date("2024-05-01T12:00:00Z") };
// biome-ignore lint/suspicious/noExplicitAny: results are checked field by field
const call = async (handler: string, input: Record<string, unknown>): Promise<any> => findBuiltin(handler)!.run(input, ctx);

/** Runs `work` and returns its duration in ms: the hostile-input tests assert linear-time behaviour. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work().catch(() => undefined);
  return performance.now() - start;
}

describe("text.word_count", () => {
  it("counts words, characters, lines, sentences and paragraphs", async () => {
    expect(await call("text.word_count", { text: "The quick brown fox jumps over the lazy dog. It barked!" })).toEqual({
      words: 11,
      characters: 55,
      characters_no_spaces: 45,
      lines: 1,
      sentences: 2,
      paragraphs: 1,
      reading_time_seconds: 3,
    });
    expect(await call("text.word_count", { text: "One.\n\nTwo lines\nhere?" })).toMatchObject({
      words: 4,
      lines: 4,
      sentences: 2,
      paragraphs: 2,
    });
  });

  it("counts an emoji with a skin tone as two code points, and an empty text as nothing", async () => {
    expect(await call("text.word_count", { text: "👍🏽 ok" })).toMatchObject({
      words: 1,
      characters: 5,
      characters_no_spaces: 4,
    });
    expect(await call("text.word_count", { text: "" })).toEqual({
      words: 0,
      characters: 0,
      characters_no_spaces: 0,
      lines: 0,
      sentences: 0,
      paragraphs: 0,
      reading_time_seconds: 0,
    });
  });

  it("counts long text exactly (it is segmented in chunks that end on whitespace)", async () => {
    expect((await call("text.word_count", { text: "word, ".repeat(33_000) })).words).toBe(33_000);
  });

  it("segments text written without spaces", async () => {
    expect((await call("text.word_count", { text: "我爱北京天安门" })).words).toBeGreaterThan(1);
  });
});

describe("text.slugify", () => {
  it("folds accents and drops punctuation", async () => {
    expect(await call("text.slugify", { text: "Crème Brûlée: 10 Easy Steps!" })).toEqual({ slug: "creme-brulee-10-easy-steps" });
    expect(await call("text.slugify", { text: "Straße über Øresund" })).toEqual({ slug: "strasse-uber-oresund" });
  });

  it("cuts on a word boundary, or inside a first word longer than the limit", async () => {
    expect(await call("text.slugify", { text: "Crème Brûlée: 10 Easy Steps!", max_length: 12 })).toEqual({
      slug: "creme-brulee",
    });
    expect(await call("text.slugify", { text: "Crème Brûlée: 10 Easy Steps!", max_length: 11 })).toEqual({ slug: "creme" });
    expect(await call("text.slugify", { text: "Supercalifragilistic", max_length: 5 })).toEqual({ slug: "super" });
  });

  it("uses the separator and case asked for", async () => {
    expect(await call("text.slugify", { text: "Hello World", separator: "_", lowercase: false })).toEqual({
      slug: "Hello_World",
    });
  });

  it("refuses text with nothing to make a slug from", async () => {
    await expect(call("text.slugify", { text: "日本語 !!" })).rejects.toThrow(BuiltinInputError);
    await expect(call("text.slugify", { text: "a", separator: "/" })).rejects.toThrow(/separator: must be one of/);
  });
});

describe("text.change_case", () => {
  it.each([
    ["user account ID", "camel", "userAccountId"],
    ["helloWorld HTTPServer", "snake", "hello_world_http_server"],
    ["Hello, World!", "kebab", "hello-world"],
    ["hello world", "constant", "HELLO_WORLD"],
    ["hello-world", "pascal", "HelloWorld"],
    ["the lord of the rings", "title", "The Lord Of The Rings"],
    ["HELLO THERE. HOW ARE YOU?", "sentence", "Hello there. How are you?"],
    ["straße", "upper", "STRASSE"],
    ["ÀB", "lower", "àb"],
  ])("%s -> %s", async (text, to, result) => {
    expect(await call("text.change_case", { text, to })).toEqual({ result });
  });
});

describe("text.extract", () => {
  const text =
    "Contact Ana <ana.b@example.co.uk>, or bob@mail.example.com. Docs: https://example.org/a_(b)?x=1, " +
    "(see http://foo.test/path). Tags: #AI #ml_ops #2024 c#sharp #AI. Not mail: a@b, x@y.z1";

  it("finds emails, URLs and hashtags with their punctuation trimmed", async () => {
    expect(await call("text.extract", { text, kinds: ["emails", "urls", "hashtags"] })).toEqual({
      emails: ["ana.b@example.co.uk", "bob@mail.example.com"],
      urls: ["https://example.org/a_(b)?x=1", "http://foo.test/path"],
      hashtags: ["#AI", "#ml_ops"],
    });
  });

  it("finds numbers, with thousands separators, signs and exponents, not digits inside words", async () => {
    expect(
      await call("text.extract", { text: "Costs 1,250.50 or -3, maybe 4.5e3 (v2 and x86 skipped), .5 too.", kinds: ["numbers"] }),
    ).toEqual({
      numbers: [1250.5, -3, 4500, 0.5],
    });
  });

  it("keeps repeats when asked, and caps each kind", async () => {
    expect(await call("text.extract", { text: "#a #b #a", kinds: ["hashtags"], unique: false })).toEqual({
      hashtags: ["#a", "#b", "#a"],
    });
    expect(await call("text.extract", { text: "1 2 3 4 5", kinds: ["numbers"], max_per_kind: 2 })).toEqual({ numbers: [1, 2] });
  });

  it("refuses a kind it does not know (no custom patterns)", async () => {
    await expect(call("text.extract", { text: "x", kinds: ["regex"] })).rejects.toThrow(
      /kinds.0: must be one of emails, urls, hashtags, numbers/,
    );
    await expect(call("text.extract", { text: "x", pattern: "(a+)+$" })).rejects.toThrow("pattern: unknown field");
  });

  it.each([
    ["letters without @", "a".repeat(MAX_TEXT)],
    ["@ between long runs", `${"a".repeat(MAX_TEXT / 2 - 1)}@${"b.".repeat(MAX_TEXT / 4)}`],
    ["alternating a@", "a@".repeat(MAX_TEXT / 2)],
    ["repeated http", "http:/".repeat(MAX_TEXT / 6)],
    ["one giant URL", `https://${"a(".repeat(MAX_TEXT / 2 - 4)}`],
    ["hashes", "#".repeat(MAX_TEXT)],
    ["digit run", "9".repeat(MAX_TEXT)],
    ["thousands groups", "1,000".repeat(MAX_TEXT / 5)],
    ["dots and digits", "1.".repeat(MAX_TEXT / 2)],
  ])("stays linear on hostile input: %s", async (_, hostile) => {
    expect(hostile.length).toBeLessThanOrEqual(MAX_TEXT);
    expect(await timed(() => call("text.extract", { text: hostile }))).toBeLessThan(1_000);
  });
});

describe("text.base64", () => {
  it("encodes and decodes UTF-8, standard and URL-safe", async () => {
    expect(await call("text.base64", { mode: "encode", text: "Man" })).toEqual({ result: "TWFu", bytes: 3 });
    expect(await call("text.base64", { mode: "encode", text: "ÿ?>" })).toEqual({ result: "w78/Pg==", bytes: 4 });
    expect(await call("text.base64", { mode: "encode", text: "ÿ?>", variant: "url" })).toEqual({ result: "w78_Pg", bytes: 4 });
    expect(await call("text.base64", { mode: "decode", text: "w78/Pg==" })).toEqual({ result: "ÿ?>", bytes: 4 });
    expect(await call("text.base64", { mode: "decode", text: "w78_Pg", variant: "url" })).toEqual({ result: "ÿ?>", bytes: 4 });
    expect(await call("text.base64", { mode: "decode", text: "aGVs\nbG8=" })).toEqual({ result: "hello", bytes: 5 });
  });

  it("refuses input outside the alphabet, saying when it looks URL-safe", async () => {
    await expect(call("text.base64", { mode: "decode", text: "abc$" })).rejects.toThrow("text: not valid standard Base64");
    await expect(call("text.base64", { mode: "decode", text: "w78_Pg" })).rejects.toThrow(/looks URL-safe/);
    await expect(call("text.base64", { mode: "decode", text: "abcde" })).rejects.toThrow(BuiltinInputError);
  });

  it("refuses to return bytes that are not UTF-8 text", async () => {
    await expect(call("text.base64", { mode: "decode", text: "//8=" })).rejects.toThrow(
      "text: decodes to 2 bytes that are not UTF-8 text",
    );
  });
});

describe("text.hash", () => {
  it.each([
    ["sha256", "hello", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"],
    ["sha1", "hello", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"],
    ["md5", "hello", "5d41402abc4b2a76b9719d911017c592"],
    [
      "sha512",
      "abc",
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    ],
  ])("%s of %s", async (algorithm, text, hex) => {
    expect(await call("text.hash", { text, algorithm })).toEqual({ algorithm, hex });
  });

  it("refuses an algorithm it does not offer", async () => {
    await expect(call("text.hash", { text: "a", algorithm: "crc32" })).rejects.toThrow(
      /algorithm: must be one of sha256, sha1, md5, sha512/,
    );
  });
});

describe("text.diff_lines", () => {
  it("lists changed lines and prints a unified diff", async () => {
    expect(
      await call("text.diff_lines", { old_text: "apples\nbananas\ncherries\n", new_text: "apples\nblueberries\ncherries\n" }),
    ).toEqual({
      identical: false,
      added: 1,
      removed: 1,
      unchanged: 2,
      changes: [
        { op: "remove", text: "bananas", old_line: 2, new_line: null },
        { op: "add", text: "blueberries", old_line: null, new_line: 2 },
      ],
      unified: "--- old\n+++ new\n@@ -1,3 +1,3 @@\n apples\n-bananas\n+blueberries\n cherries\n",
    });
  });

  it("splits distant changes into separate hunks with the context asked for", async () => {
    const old = Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join("\n");
    const changed = old.replace("l2", "X").replace("l9", "Y");
    const result = await call("text.diff_lines", { old_text: old, new_text: changed, context: 1 });
    expect(result.unified).toBe("--- old\n+++ new\n@@ -1,3 +1,3 @@\n l1\n-l2\n+X\n l3\n@@ -8,3 +8,3 @@\n l8\n-l9\n+Y\n l10\n");
    expect(result).toMatchObject({ added: 2, removed: 2, unchanged: 8 });
  });

  it("reports identical texts (CRLF and LF alike), and pure additions", async () => {
    expect(await call("text.diff_lines", { old_text: "a\r\nb", new_text: "a\nb\n" })).toMatchObject({
      identical: true,
      unchanged: 2,
      unified: "",
    });
    expect(await call("text.diff_lines", { old_text: "b\n", new_text: "a\nb\n", context: 0 })).toMatchObject({
      changes: [{ op: "add", text: "a", old_line: null, new_line: 1 }],
      unified: "--- old\n+++ new\n@@ -0,0 +1,1 @@\n+a\n",
    });
  });

  it("compares large, similar texts quickly (common start and end are skipped)", async () => {
    const lines = Array.from({ length: 15_000 }, (_, i) => `line ${i}`);
    const old = lines.join("\n");
    const changed = [...lines.slice(0, 7_500), "inserted", ...lines.slice(7_500)].join("\n");
    const start = performance.now();
    expect(await call("text.diff_lines", { old_text: old, new_text: changed })).toMatchObject({
      added: 1,
      removed: 0,
      unchanged: 15_000,
    });
    expect(performance.now() - start).toBeLessThan(500);
  });

  it("does the largest allowed comparison in bounded time and refuses a larger one", async () => {
    const side = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join("\n");
    expect(await timed(() => call("text.diff_lines", { old_text: side("a", 1_990), new_text: side("b", 1_990) }))).toBeLessThan(
      1_000,
    );
    await expect(call("text.diff_lines", { old_text: side("a", 3_000), new_text: side("b", 3_000) })).rejects.toThrow(
      /differ in 3000 and 3000 lines, more than this tool compares at once/,
    );
  });
});

describe("text.truncate", () => {
  it("cuts to the limit including the ellipsis, at a word boundary when asked", async () => {
    const text = "Toolport lets agents find and call tools safely.";
    expect(await call("text.truncate", { text, max_chars: 20 })).toEqual({
      text: "Toolport lets agent…",
      truncated: true,
      original_chars: 48,
      chars: 20,
    });
    expect(await call("text.truncate", { text, max_chars: 20, at_word_boundary: true })).toEqual({
      text: "Toolport lets…",
      truncated: true,
      original_chars: 48,
      chars: 14,
    });
    expect(await call("text.truncate", { text, max_chars: 100 })).toEqual({
      text,
      truncated: false,
      original_chars: 48,
      chars: 48,
    });
  });

  it("never splits a surrogate pair", async () => {
    const result = await call("text.truncate", { text: "a😀😀😀", max_chars: 2, ellipsis: "" });
    expect(result).toEqual({ text: "a😀", truncated: true, original_chars: 4, chars: 2 });
    expect(result.text.length).toBe(3); // UTF-16 units: the emoji is whole
    expect((await call("text.truncate", { text: "😀😀😀😀", max_chars: 3 })).text).toBe("😀😀…");
  });

  it("refuses an ellipsis longer than the limit", async () => {
    await expect(call("text.truncate", { text: "abcdef", max_chars: 2, ellipsis: "..." })).rejects.toThrow(
      /ellipsis: is longer than max_chars/,
    );
    await expect(call("text.truncate", { text: "abc", max_chars: 0 })).rejects.toThrow("max_chars: must be >= 1");
  });
});

describe("every text tool at its size limit", () => {
  const big = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(Math.floor(MAX_TEXT / 57));
  it.each([
    ["text.word_count", { text: big }],
    ["text.change_case", { text: big, to: "camel" }],
    ["text.change_case", { text: big, to: "sentence" }],
    ["text.change_case", { text: big, to: "title" }],
    ["text.extract", { text: big }],
    ["text.base64", { mode: "encode", text: big }],
    ["text.hash", { text: big, algorithm: "sha512" }],
    ["text.truncate", { text: big, max_chars: MAX_TEXT - 1, at_word_boundary: true }],
    ["text.change_case", { text: `.${" ".repeat(MAX_TEXT - 2)}A`, to: "sentence" }],
    ["text.word_count", { text: `\n${"\t".repeat(MAX_TEXT - 2)}x` }],
  ])("%s finishes fast", async (handler, input) => {
    expect(await timed(() => call(handler, input))).toBeLessThan(1_000);
  });
});
