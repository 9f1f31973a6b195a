import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSnapshot, serviceVersion, toolVersion, writeSnapshot } from "./index-snapshot.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "toolport-index-snapshot-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("index snapshot file", () => {
  it("reads back what was written, typed arrays and Maps included, under the same key only", async () => {
    const file = path.join(dir, "nested", "index.snapshot");
    const engine = { postings: new Uint32Array([1, 2, 3]), vocabulary: new Map([["weather", 0]]) };
    const versions = new Map([["tool-1", toolVersion(3n, false, "abc")]]);
    expect(await writeSnapshot(file, "key-1", engine, versions)).toBeGreaterThan(0);
    const loaded = await readSnapshot(file, "key-1");
    if ("unusable" in loaded) throw new Error(loaded.unusable);
    expect(loaded.engine).toEqual(engine);
    expect((loaded.engine as typeof engine).postings).toBeInstanceOf(Uint32Array);
    expect(loaded.versions).toEqual(versions);
    expect(await readSnapshot(file, "key-2")).toEqual({ unusable: "written by other search code or settings" });
    // Written through a temporary file that is renamed: nothing else is left in the folder.
    expect(await readdir(path.dirname(file))).toEqual(["index.snapshot"]);
  });

  it("says why a missing, foreign or older file cannot be used", async () => {
    expect(await readSnapshot(path.join(dir, "none"), "k")).toEqual({ unusable: "no snapshot yet" });
    await writeFile(path.join(dir, "garbage"), "not a snapshot at all");
    expect(((await readSnapshot(path.join(dir, "garbage"), "k")) as { unusable: string }).unusable).toMatch(/^not a snapshot/);
    await writeFile(path.join(dir, "old"), v8.serialize({ format: 0, key: "k" }));
    expect(await readSnapshot(path.join(dir, "old"), "k")).toEqual({ unusable: "written in format 0, this build reads 1" });
  });

  it("versions a tool by its revision, its sunset and every service field its document carries", () => {
    const service = {
      id: "s1",
      name: "Weather",
      slug: "weather",
      summary: "",
      description: "Forecasts",
      isDemo: false,
      status: "active" as const,
      visibility: "public" as const,
      organizationId: null,
    };
    const base = serviceVersion(service);
    for (const change of [
      { name: "Weather 2" },
      { slug: "weather-2" },
      { summary: "x" },
      { description: "y" },
      { isDemo: true },
      { status: "retired" as const },
      { visibility: "private" as const },
      { organizationId: "org" },
    ]) {
      expect(serviceVersion({ ...service, ...change }), JSON.stringify(change)).not.toBe(base);
    }
    expect(toolVersion(2n, false, base)).not.toBe(toolVersion(3n, false, base));
    expect(toolVersion(2n, false, base)).not.toBe(toolVersion(2n, true, base));
  });
});
