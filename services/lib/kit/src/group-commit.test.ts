import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit.js";

/** A write that takes `ms`, records each batch, and fails any batch holding "bad". */
function recorder(ms = 5) {
  const batches: string[][] = [];
  const write = async (items: string[]) => {
    batches.push([...items]);
    await new Promise((r) => setTimeout(r, ms));
    if (items.includes("bad")) throw new Error(`bad in ${items.join(",")}`);
  };
  return { batches, write };
}

describe("GroupCommit", () => {
  it("writes a lone item at once, alone", async () => {
    const { batches, write } = recorder();
    const group = new GroupCommit(write);
    await group.submit("a");
    expect(batches).toEqual([["a"]]);
  });

  it("puts what arrives during a write into the next write, and settles each caller after its write", async () => {
    const { batches, write } = recorder(20);
    const group = new GroupCommit(write);
    const settled: string[] = [];
    const all = ["a", "b", "c", "d", "e"].map((item) => group.submit(item).then(() => settled.push(item)));
    await Promise.all(all);
    expect(batches).toEqual([["a"], ["b", "c", "d", "e"]]);
    expect(settled).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("caps a write at maxBatch items", async () => {
    const { batches, write } = recorder(10);
    const group = new GroupCommit(write, 2);
    await Promise.all(["a", "b", "c", "d", "e"].map((item) => group.submit(item)));
    expect(batches).toEqual([["a"], ["b", "c"], ["d", "e"]]);
  });

  it("retries a failed batch item by item, so only the bad item's caller fails", async () => {
    const { batches, write } = recorder(10);
    const group = new GroupCommit(write);
    const results = await Promise.allSettled(["a", "b", "bad", "c"].map((item) => group.submit(item)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((results[2] as PromiseRejectedResult).reason.message).toBe("bad in bad");
    expect(batches).toEqual([["a"], ["b", "bad", "c"], ["b"], ["bad"], ["c"]]);
    // And it keeps working afterwards.
    await group.submit("d");
    expect(batches.at(-1)).toEqual(["d"]);
  });

  it("answers each caller with its own item's result, in a batch and when retried alone", async () => {
    const batches: string[][] = [];
    const group = new GroupCommit<string, string>(async (items) => {
      batches.push([...items]);
      await new Promise((r) => setTimeout(r, 10));
      if (items.length > 1 && items.includes("bad")) throw new Error("bad batch");
      return items.map((i) => i.toUpperCase());
    });
    const answers = await Promise.all(["a", "b", "bad", "c"].map((item) => group.submit(item)));
    expect(answers).toEqual(["A", "B", "BAD", "C"]);
    expect(batches).toEqual([["a"], ["b", "bad", "c"], ["b"], ["bad"], ["c"]]);
  });
});
