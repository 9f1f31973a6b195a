import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capJson, capResponse, cutText, findCursor, storageForm } from "./cap.js";
import type { Json } from "./json.js";

const len = (v: unknown) => JSON.stringify(v).length;

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

  it("names the root array $ and nested arrays by index", () => {
    const out = capJson([{ tags: Array.from({ length: 50 }, (_, i) => `tag-${i}`) }, { tags: ["later"] }], 200);
    expect(len(out.value)).toBeLessThanOrEqual(200);
    expect(out.droppedItems.$).toEqual({ kept: 1, total: 2 });
    expect(out.droppedItems["[0].tags"]?.total).toBe(50);
  });

  it("cuts a long text result on a character boundary, never splitting a surrogate pair", () => {
    const text = "😀".repeat(100);
    const out = capJson(text, 101);
    expect(len(out.value)).toBeLessThanOrEqual(101);
    const s = out.value as string;
    expect(s.length % 2).toBe(0);
    expect(s).toBe("😀".repeat(s.length / 2));
    expect(() => encodeURIComponent(s)).not.toThrow();
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

  it("keeps a prefix of keys when not even the scalars fit", () => {
    const value = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, "v".repeat(20)]));
    const out = capJson(value, 200);
    expect(len(out.value)).toBeLessThanOrEqual(200);
    expect(out.droppedKeys).toBeGreaterThan(0);
    expect(Object.keys(out.value as object)[0]).toBe("key0");
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
      }),
      { numRuns: 2000 },
    );
  });

  it("property: a capped array keeps a prefix (only the last kept entry may itself be shrunk)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.integer(), name: fc.string(), score: fc.double({ noNaN: true, noDefaultInfinity: true }) }), {
          maxLength: 200,
        }),
        fc.integer({ min: 24, max: 4000 }),
        (items, max) => {
          const out = capJson({ items }, max);
          const kept = (out.value as { items: unknown[] }).items;
          expect(JSON.stringify(kept.slice(0, -1))).toBe(JSON.stringify(items.slice(0, Math.max(0, kept.length - 1))));
          const last = kept.length - 1;
          if (last >= 0) expect(Object.keys(items[last]!)).toEqual(expect.arrayContaining(Object.keys(kept[last] as object)));
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
