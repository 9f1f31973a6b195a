import { describe, expect, it } from "vitest";
import type { ServiceRecord, ToolRecord } from "../domain/model.js";
import { PageCache } from "./page-cache.js";

const tool = (id: string, schemaBytes: number): ToolRecord =>
  ({ id, description: "d", rawJson: { output: null, schemas: { q: "x".repeat(schemaBytes) } } }) as unknown as ToolRecord;
const service = (id: string): ServiceRecord => ({ id, summary: "s" }) as unknown as ServiceRecord;

describe("PageCache", () => {
  it("answers a row only at the version it was kept at", () => {
    const cache = new PageCache(1 << 20);
    const t = tool("a", 10);
    cache.putTool({ id: "a", version: "100" }, t);
    expect(cache.tool({ id: "a", version: "100" })).toBe(t);
    expect(cache.tool({ id: "a", version: "101" })).toBeUndefined();
    const newer = tool("a", 10);
    cache.putTool({ id: "a", version: "101" }, newer);
    expect(cache.tool({ id: "a", version: "101" })).toBe(newer);
    expect(cache.tool({ id: "a", version: "100" })).toBeUndefined();
    cache.putService({ id: "s", version: "7" }, service("s"));
    expect(cache.service({ id: "s", version: "7" })?.id).toBe("s");
    expect(cache.service({ id: "s", version: "8" })).toBeUndefined();
  });

  it("stays within its bytes, dropping the least recently used rows first", () => {
    // Each row is estimated at 2048 + 2 x 1,001 characters = 4,050 bytes: 64 KiB holds 16 of them.
    const cache = new PageCache(64 * 1024);
    for (let i = 0; i < 100; i++) cache.putTool({ id: `t${i}`, version: "1" }, tool(`t${i}`, 1000));
    expect(cache.bytes).toBe(16 * 4050);
    expect(cache.tool({ id: "t83", version: "1" })).toBeUndefined();
    expect(cache.tool({ id: "t84", version: "1" })).toBeDefined(); // the oldest kept, now the most recent
    cache.putTool({ id: "t100", version: "1" }, tool("t100", 1000));
    expect(cache.tool({ id: "t85", version: "1" })).toBeUndefined();
    expect(cache.tool({ id: "t84", version: "1" })).toBeDefined();
    expect(cache.bytes).toBe(16 * 4050);
  });

  it("keeps nothing with no bytes, and never a row larger than a sixteenth of them", () => {
    const none = new PageCache(0);
    none.putTool({ id: "a", version: "1" }, tool("a", 1));
    expect(none.tool({ id: "a", version: "1" })).toBeUndefined();
    expect(none.bytes).toBe(0);
    const small = new PageCache(64 * 1024);
    small.putTool({ id: "big", version: "1" }, tool("big", 4096));
    expect(small.tool({ id: "big", version: "1" })).toBeUndefined();
  });
});
