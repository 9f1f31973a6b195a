import { formatLocation } from "@toolport/kit/json-path";
import { isContainer, isObject, type Json, type JsonObject } from "@toolport/kit/json-values";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CapOutcome, capJson, capResponse, cutText, type DroppedItems, findCursor, storageForm } from "./cap.js";

const len = (v: unknown) => JSON.stringify(v).length;

/** The issue's REST result: 5,000 objects. */
const issueItems = () => Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item-${i}`, group: i % 7 }));

/**
 * The rule of every cut (cap.ts header), checked against the input: an array keeps a prefix of entries
 * that deep-equal their input entries and is reported with the entries present; an object keeps a
 * subsequence of its keys, scalar and string values unchanged; only a result that is a string as a whole
 * may be cut, to a prefix. What is reported (dropped_items, dropped keys) is exactly what is missing.
 */
function expectKeptWhole(input: Json, outcome: CapOutcome): void {
  const cut: Record<string, DroppedItems> = {};
  let missingKeys = 0;
  const walk = (source: Json, kept: Json, keys: string[]) => {
    if (Array.isArray(kept)) {
      expect(Array.isArray(source)).toBe(true);
      const entries = source as Json[];
      expect(kept).toEqual(entries.slice(0, kept.length));
      if (kept.length < entries.length) cut[formatLocation(keys)] = { kept: kept.length, total: entries.length };
      return;
    }
    if (!isObject(kept)) {
      expect(kept).toBe(source);
      return;
    }
    expect(isObject(source)).toBe(true);
    const sourceKeys = Object.keys(source as JsonObject);
    const keptKeys = Object.keys(kept);
    expect(keptKeys).toEqual(sourceKeys.filter((k) => Object.hasOwn(kept, k)));
    missingKeys += sourceKeys.length - keptKeys.length;
    for (const key of keptKeys) {
      const value = (source as JsonObject)[key]!;
      if (isContainer(value)) walk(value, kept[key]!, [...keys, key]);
      else expect(kept[key]).toBe(value);
    }
  };
  if (typeof input === "string" && typeof outcome.value === "string") expect(input.startsWith(outcome.value)).toBe(true);
  else if (outcome.value !== null || input === null) walk(input, outcome.value, []);
  expect(outcome.droppedItems).toEqual(cut);
  expect(outcome.droppedKeys).toBe(missingKeys);
}

/** {"a":{"a":...leaf}} `depth` levels deep, built without recursion. */
function deepObject(depth: number, leaf: Json = "x"): Json {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** [[[...]]] `depth` levels deep. */
function deepArray(depth: number): Json {
  let value: Json = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** How many {"a": ...} levels a value has before its leaf, and that leaf. */
function descend(value: Json): { levels: number; leaf: Json } {
  let levels = 0;
  let node = value;
  while (isObject(node) && Object.hasOwn(node, "a")) {
    node = node.a!;
    levels++;
  }
  return { levels, leaf: node };
}

describe("capJson", () => {
  it("returns a result that fits unchanged", () => {
    const value = { a: [1, 2, 3], b: "text" };
    const out = capJson(value, 1000);
    expect(out.truncated).toBe(false);
    expect(out.value).toBe(value);
    expect(out.chars).toBe(len(value));
  });

  it("drops whole array entries from the tail and reports kept/total per array path", () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item-${i}` }));
    const out = capJson({ data: { items }, count: 100 }, 500);
    expect(out.truncated).toBe(true);
    expect(len(out.value)).toBeLessThanOrEqual(500);
    const kept = (out.value as { data: { items: unknown[] } }).data.items;
    expect(kept).toEqual(items.slice(0, kept.length));
    expect(kept.length).toBeGreaterThan(5);
    expect(out.droppedItems).toEqual({ "data.items": { kept: kept.length, total: 100 } });
    expect((out.value as { count: number }).count).toBe(100);
    expect(out.originalChars).toBe(len({ data: { items }, count: 100 }));
    expect(out.chars).toBe(len(out.value));
  });

  it("names the root array $ and never cuts an array inside an entry", () => {
    // The first entry holds a long array: it is kept whole or not at all, never shrunk to fit.
    const value = [{ tags: Array.from({ length: 50 }, (_, i) => `tag-${i}`) }, { tags: ["later"] }];
    const out = capJson(value, 200);
    expect(out.value).toEqual([]);
    expect(out.droppedItems).toEqual({ $: { kept: 0, total: 2 } });
    const roomy = capJson(value, len(value) - 1);
    expect(roomy.value).toEqual([value[0]]);
    expect(roomy.droppedItems).toEqual({ $: { kept: 1, total: 2 } });
  });

  it("keeps whole entries only: the issue's 5,000 objects capped at 2,000", () => {
    const items = issueItems();
    const out = capJson(items, 2000);
    const kept = out.value as typeof items;
    expect(kept.length).toBeGreaterThan(40);
    for (const [i, entry] of kept.entries()) expect(entry).toEqual(items[i]);
    expect(out.droppedItems).toEqual({ $: { kept: kept.length, total: 5000 } });
    expect(len(kept)).toBeLessThanOrEqual(2000);
    expect(out.chars).toBe(len(kept));
    // The next entry did not fit whole, so it is not there at all.
    expect(len(items.slice(0, kept.length + 1))).toBeGreaterThan(2000);
    expect(out.droppedKeys).toBe(0);
    expect(out.textCut).toBeUndefined();
    expectKeptWhole(items, out);
  });

  it("drops an entry that alone is over the cap instead of shrinking it", () => {
    expect(capJson(["x".repeat(500)], 100).value).toEqual([]);
    expect(capJson({ rows: [{ id: 1, body: "y".repeat(500) }] }, 100).value).toEqual({ rows: [] });
    expect(capJson(["short", "x".repeat(500), "later"], 100).value).toEqual(["short"]);
  });

  it("cuts a paged list inside an object: the cursor survives, entries and their nested arrays stay whole", () => {
    const entries = Array.from({ length: 300 }, (_, i) => ({
      id: i,
      tags: [`t${i}`, `u${i}`, [i, { deep: [i] }]],
      owner: { name: `o${i}` },
    }));
    const value = { data: { items: entries, total: 300 }, next_cursor: "cursor-after-299" };
    const out = capJson(value, 3000);
    const data = (out.value as { data: { items: typeof entries; total: number } }).data;
    expect((out.value as { next_cursor: string }).next_cursor).toBe("cursor-after-299");
    expect(data.total).toBe(300);
    expect(data.items.length).toBeGreaterThan(10);
    for (const [i, entry] of data.items.entries()) expect(entry).toEqual(entries[i]);
    expect(out.droppedItems).toEqual({ "data.items": { kept: data.items.length, total: 300 } });
    expect(len(out.value)).toBeLessThanOrEqual(3000);
    expectKeptWhole(value, out);
    expect(capResponse(value, 3000).note).toBe(
      `result trimmed from ${len(value)} to ${out.chars} characters (cap 3000); data.items: kept ${data.items.length} of 300 entries (each whole; ${300 - data.items.length} dropped from the end)`,
    );
  });

  it("cuts a long text result on a character boundary, never splitting a surrogate pair", () => {
    const text = "😀".repeat(100);
    const out = capJson(text, 101);
    expect(len(out.value)).toBeLessThanOrEqual(101);
    const s = out.value as string;
    expect(s.length % 2).toBe(0);
    expect(s).toBe("😀".repeat(s.length / 2));
    expect(() => encodeURIComponent(s)).not.toThrow();
    expect(out.textCut).toEqual({ kept: s.length, total: 200 });
  });

  it("cuts a text result before a surrogate pair that straddles the cap, and only a text result", () => {
    // `"ab` is 3 characters; the pair would make it 5 plus the closing quote: it does not fit in 5.
    const text = "ab\u{1F600}cd";
    expect(capJson(text, 5).value).toBe("ab");
    expect(capJson(text, 6).value).toBe("ab\u{1F600}");
    expect(capJson(text, 5).chars).toBe(4);
    const note = capResponse("\u{1F600}".repeat(60), 101).note;
    expect(note).toBe("result trimmed from 122 to 100 characters (cap 101); text cut to its first 98 of 120 characters");
    // Inside a document a string is kept whole or its key is left out.
    const doc = { id: 7, body: "\u{1F600}".repeat(60), next_cursor: "c2" };
    const out = capJson(doc, 60);
    expect(out.value).toEqual({ id: 7, next_cursor: "c2" });
    expect(out).toMatchObject({ droppedKeys: 1, droppedKeyPaths: ["body"] });
    expect(out.textCut).toBeUndefined();
  });

  it("counts escapes when cutting", () => {
    const [cut, size] = cutText('a"b\nc\u0001d', 9);
    expect(size).toBe(JSON.stringify(cut).length);
    expect(size).toBeLessThanOrEqual(9);
  });

  it("keeps every key of an object whose scalars fit and shares the rest between its arrays", () => {
    const value = {
      id: "x",
      first: Array.from({ length: 40 }, (_, i) => i),
      second: Array.from({ length: 40 }, (_, i) => i),
      done: true,
    };
    const out = capJson(value, 120);
    expect(len(out.value)).toBeLessThanOrEqual(120);
    expect(Object.keys(out.value as object)).toEqual(["id", "first", "second", "done"]);
  });

  it("keeps keys from the start while their whole values fit, and names the keys left out", () => {
    const value = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, "v".repeat(20)]));
    const out = capJson(value, 200);
    expect(len(out.value)).toBeLessThanOrEqual(200);
    const keys = Object.keys(out.value as object);
    expect(keys).toEqual(Object.keys(value).slice(0, keys.length));
    for (const key of keys) expect((out.value as JsonObject)[key]).toBe("v".repeat(20));
    expect(out.droppedKeys).toBe(50 - keys.length);
    expect(out.droppedKeyPaths).toEqual(Object.keys(value).slice(keys.length, keys.length + 10));
    expect(capResponse(value, 200).note).toMatch(
      new RegExp(`; ${50 - keys.length} object keys left out: key${keys.length}, .*, and ${40 - keys.length} more$`),
    );
  });

  it("leaves out a key too big to fit and keeps later keys that fit, nested objects by the same rule", () => {
    const value = { id: 1, meta: { title: "t", blob: "z".repeat(400), page: 2 }, body: "y".repeat(400), next: "n" };
    const out = capJson(value, 100);
    expect(out.value).toEqual({ id: 1, meta: { title: "t", page: 2 }, next: "n" });
    expect(out.droppedKeyPaths).toEqual(["body", "meta.blob"]);
    expectKeptWhole(value, out);
  });

  it("keeps __proto__ keys as ordinary keys", () => {
    const value = JSON.parse('{"__proto__": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30]}');
    const out = capJson(value, 40);
    expect(Object.hasOwn(out.value as object, "__proto__")).toBe(true);
    expect(JSON.parse(JSON.stringify(out.value))).toEqual(out.value);
  });

  it("property: capped output is valid JSON within the cap, for arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 24, max: 3000 }), (value, max) => {
        const out = capJson(value as Json, max);
        const text = JSON.stringify(out.value);
        expect(text.length).toBeLessThanOrEqual(max);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(out.value)));
        expect(out.chars).toBe(text.length);
        if (len(value) <= max) {
          expect(out.truncated).toBe(false);
          expect(out.value).toBe(value);
        } else expect(out.truncated).toBe(true);
        expectKeptWhole(value as Json, out);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: every kept entry of a capped array deep-equals its input entry, and kept counts them", () => {
    const entry = fc.record({
      id: fc.integer(),
      name: fc.string({ unit: "grapheme" }),
      score: fc.double({ noNaN: true, noDefaultInfinity: true }),
      tags: fc.array(fc.string(), { maxLength: 5 }),
      nested: fc.jsonValue({ maxDepth: 3 }),
    });
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 200 }),
        fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
        fc.integer({ min: 24, max: 4000 }),
        (items, cursor, max) => {
          const value = (cursor === undefined ? { items } : { items, next_cursor: cursor }) as Json;
          const out = capJson(value, max);
          expect(len(out.value)).toBeLessThanOrEqual(max);
          expectKeptWhole(value, out);
          const kept = (out.value as { items?: Json[] }).items;
          if (kept && kept.length < items.length)
            expect(out.droppedItems.items).toEqual({ kept: kept.length, total: items.length });
          // A short cursor beside the list is never the part that is dropped.
          if (cursor !== undefined && max >= len({ items: [], next_cursor: cursor }))
            expect((out.value as { next_cursor?: string }).next_cursor).toBe(cursor);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("is linear: capping 2 MB to 32,000 characters takes milliseconds, and 4x the input takes about 4x", () => {
    const make = (n: number) => ({
      results: Array.from({ length: n }, (_, i) => ({ id: i, title: `Result number ${i}`, body: "lorem ipsum ".repeat(10) })),
    });
    const small = make(12_000);
    const large = make(48_000);
    expect(len(small)).toBeGreaterThan(2_000_000);
    const time = (v: Json) => {
      const t = performance.now();
      capJson(v, 32_000);
      return performance.now() - t;
    };
    time(small);
    const a = Math.min(time(small), time(small));
    const b = Math.min(time(large), time(large));
    expect(a).toBeLessThan(500);
    expect(b / a).toBeLessThan(10);
  });
  it("caps results nested 3,000 levels deep (and far deeper) without recursion", () => {
    for (const value of [deepObject(3000), deepArray(3000), deepObject(100_000), deepArray(100_000)]) {
      const whole = capJson(value, 1_000_000);
      expect(whole.value).toBe(value);
      expect(whole.truncated).toBe(false);
    }
    expect(capJson(deepObject(3000), 1_000_000).chars).toBe(len(deepObject(3000)));
    // The chain of keys is kept while it fits; the leaf string, too long, is left out whole.
    for (const depth of [3000, 100_000]) {
      const value = deepObject(depth, "y".repeat(1000));
      const out = capJson(value, 5000);
      const { levels, leaf } = descend(out.value);
      expect(out.chars).toBeLessThanOrEqual(5000);
      expect(out.chars).toBe(6 * levels + 2);
      expect(leaf).toEqual({});
      expect(out.droppedKeys).toBe(1);
      expect(len(out.value)).toBe(out.chars);
    }
    const arrays = capJson(deepArray(3000), 100);
    expect(arrays.value).toEqual([]);
    expect(arrays.droppedItems).toEqual({ $: { kept: 0, total: 1 } });
  });
});

describe("capResponse", () => {
  it("is null-meta below the cap and describes the cut above it, with the cursor", () => {
    expect(capResponse({ a: 1 }, 100).meta).toBeNull();
    const value = { data: Array.from({ length: 100 }, (_, i) => i * 1000), next_cursor: "abc123" };
    const capped = capResponse(value, 120);
    expect(capped.truncated).toBe(true);
    expect(capped.meta).toMatchObject({
      truncated: true,
      original_response_chars: len(value),
      cursor: "abc123",
      dropped_items: { data: { total: 100 } },
    });
    expect(capped.meta!.response_chars).toBe(len(capped.value));
    expect(capped.note).toMatch(/data: kept \d+ of 100 entries/);
  });
});

describe("findCursor", () => {
  it("finds the common pagination cursors", () => {
    expect(findCursor({ next_cursor: "a" })).toBe("a");
    expect(findCursor({ nextPageToken: "b" })).toBe("b");
    expect(findCursor({ response_metadata: { next_cursor: "c" } })).toBe("c");
    expect(findCursor({ links: { next: "https://x/page/2" } })).toBe("https://x/page/2");
    expect(findCursor({ _links: { next: { href: "/p/3" } } })).toBe("/p/3");
    expect(findCursor({ data: { pageInfo: { endCursor: "e", hasNextPage: true } } })).toBeUndefined();
    expect(findCursor({ pageInfo: { endCursor: "e", hasNextPage: true } })).toBe("e");
    expect(findCursor({ pageInfo: { endCursor: "e", hasNextPage: false } })).toBeUndefined();
    expect(findCursor({ cursor: "", items: [] })).toBeUndefined();
    expect(findCursor([{ next_cursor: "in array" }])).toBeUndefined();
  });
});

describe("storageForm", () => {
  it("stores small results as they are", () => {
    expect(storageForm({ a: 1 }, 100)).toEqual({ value: { a: 1 }, meta: null });
  });

  it("caps results above the storage cap and says what was kept", () => {
    const value = { rows: Array.from({ length: 1000 }, (_, i) => i) };
    const { value: stored, meta } = storageForm(value, 300);
    expect(len(stored)).toBeLessThanOrEqual(300);
    expect(meta).toMatchObject({
      truncated: true,
      original_chars: len(value),
      stored_chars: len(stored),
      limit: 300,
      kind: "json",
    });
    expect(meta!.dropped_items!.rows!.total).toBe(1000);
    expect(meta!.partial_json_only).toBeUndefined();
    expect(storageForm("x".repeat(500), 100).meta).toMatchObject({ kind: "text", stored_chars: 100 });
    expect(storageForm({ text: "y".repeat(500) }, 100).meta?.partial_json_only).toBe(true);
  });
});
