import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { heapLimitGiven, heapLimitMb, memoryBudget } from "./memory.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function cgroup(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), "cgroup-"));
  dirs.push(root);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), text);
  }
  return root;
}

describe("memoryBudget", () => {
  it("reads a cgroup v2 limit, and v1's; 'max' or v1's huge value is no limit", async () => {
    expect(memoryBudget({}, await cgroup({ "memory.max": "536870912\n" }))).toEqual({ bytes: 536870912, source: "cgroup" });
    expect(memoryBudget({}, await cgroup({ "memory/memory.limit_in_bytes": "1073741824\n" }))).toEqual({
      bytes: 1073741824,
      source: "cgroup",
    });
    expect(memoryBudget({}, await cgroup({ "memory.max": "max\n" }))).toBeUndefined();
    expect(memoryBudget({}, await cgroup({ "memory/memory.limit_in_bytes": "9223372036854771712\n" }))).toBeUndefined();
    expect(memoryBudget({}, await cgroup({}))).toBeUndefined();
  });

  it("prefers TOOLPORT_MEMORY_MB, and refuses a value that is not a size", async () => {
    const root = await cgroup({ "memory.max": "536870912" });
    expect(memoryBudget({ TOOLPORT_MEMORY_MB: "2048" }, root)).toEqual({
      bytes: 2048 * 1024 * 1024,
      source: "TOOLPORT_MEMORY_MB",
    });
    expect(() => memoryBudget({ TOOLPORT_MEMORY_MB: "2g" }, root)).toThrow(/TOOLPORT_MEMORY_MB must be a whole number/);
    expect(() => memoryBudget({ TOOLPORT_MEMORY_MB: "16" }, root)).toThrow(/at least 64/);
  });

  it("gives the heap three quarters, and sees a limit already chosen", () => {
    expect(heapLimitMb({ bytes: 1024 * 1024 * 1024, source: "cgroup" })).toBe(768);
    expect(heapLimitGiven(["--max-old-space-size=512"], {})).toBe(true);
    expect(heapLimitGiven([], { NODE_OPTIONS: "--max_old_space_size=512" })).toBe(true);
    expect(heapLimitGiven(["--enable-source-maps"], {})).toBe(false);
  });
});
