/**
 * The import pool's bounds (import-pool.ts): at most threads + queue documents accepted at once, the
 * next refused at once as 503 import_busy with a Retry-After; refusals from a thread the same as on
 * the event loop; the work done on another thread; nothing accepted once closed. The threads run
 * import-worker.ts from source (tsx), as the pool does whenever the catalog runs from source.
 */
import { threadId } from "node:worker_threads";
import { Code, DomainError } from "@toolport/kit/errors";
import { afterAll, describe, expect, it } from "vitest";
import { ImportPool } from "./import-pool.js";
import { importDocument } from "./import-worker.js";

const document = (title: string) =>
  JSON.stringify({
    openapi: "3.0.3",
    info: { title, version: "1" },
    paths: { "/pets": { get: { operationId: "listPets", responses: { "200": { description: "ok" } } } } },
  });

/** What a rejected promise rejected with, as a value. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a refusal");
    },
    (err: unknown) => err as DomainError,
  );

const pools: ImportPool[] = [];
const pool = (threads: number, queue: number) => {
  const p = new ImportPool({ threads, queue, heapMb: 256 });
  pools.push(p);
  return p;
};
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe("import pool", () => {
  it("accepts threads + queue documents at once and refuses the next with import_busy and a retry delay", async () => {
    const p = pool(1, 2);
    const accepted = [1, 2, 3].map((n) => p.import({ text: document(`api ${n}`) }));
    expect(p.load).toBe(3);
    const busy = await refusal(p.import({ text: document("one too many") }));
    expect(busy).toBeInstanceOf(DomainError);
    expect(busy).toMatchObject({ code: Code.Unavailable, reason: "import_busy", details: { retry_after_seconds: 5 } });
    expect(busy.message).toMatch(/publish again in a few seconds/);

    const imported = await Promise.all(accepted);
    expect(imported.map((api) => api.title)).toEqual(["api 1", "api 2", "api 3"]);
    expect(p.load).toBe(0);
    // Room again once they are done.
    expect((await p.import({ text: document("later") })).tools).toHaveLength(1);
  }, 60_000);

  it("drops a waiting document whose caller stopped waiting, and keeps importing the others", async () => {
    const p = pool(1, 1);
    const first = p.import({ text: document("kept") });
    const caller = new AbortController();
    const second = refusal(p.import({ text: document("abandoned") }, caller.signal));
    caller.abort();
    expect(await second).toMatchObject({ code: Code.DeadlineExceeded, reason: "import_abandoned" });
    expect((await first).title).toBe("kept");
    expect(p.load).toBe(0);
  }, 60_000);

  it("imports on another thread than the caller's", async () => {
    const p = pool(1, 0);
    const api = await p.import({ text: document("elsewhere") });
    expect(api.tools.map((t) => t.sourceKey)).toEqual(["GET /pets"]);
    expect(p.lastThreadId).toBeDefined();
    expect(p.lastThreadId).not.toBe(threadId);
  }, 60_000);

  it("gives a document's refusal exactly as the event loop does: code, reason, message and details", async () => {
    const p = pool(1, 4);
    const bad = [
      "",
      "{ openapi: [",
      JSON.stringify({ swagger: "1.2", info: {}, paths: {} }),
      JSON.stringify({ openapi: "3.0.3", info: { title: "t", version: "1" }, paths: { "/a": { get: { responses: {} } } } }),
      JSON.stringify({
        openapi: "3.0.3",
        info: { title: "t", version: "1" },
        paths: {
          "/a": {
            get: {
              responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/nowhere" } } } } },
            },
          },
        },
      }),
    ];
    for (const text of bad) {
      const inline = await refusal(importDocument({ text }));
      const pooled = await refusal(p.import({ text }));
      expect(inline).toBeInstanceOf(DomainError);
      expect(pooled).toBeInstanceOf(DomainError);
      const fields = (e: DomainError) => ({
        code: e.code,
        reason: e.reason,
        message: e.message,
        details: e.details,
        detail: e.detail,
      });
      expect(fields(pooled)).toEqual(fields(inline));
    }
  }, 60_000);

  it("refuses a document whose tools would store more schema JSON than its bound, on a thread and on the event loop", async () => {
    // 40 operations, each answering a 40 KB object: about 1.6 MB of outputs, over a 1 MiB bound.
    const big = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 400 }, (_, i) => [`f${i}`, { type: "string", description: "d".repeat(80) }]),
      ),
    };
    const paths = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `/r${i}`,
        {
          get: {
            operationId: `r${i}`,
            responses: { "200": { description: "ok", content: { "application/json": { schema: big } } } },
          },
        },
      ]),
    );
    const text = JSON.stringify({ openapi: "3.0.3", info: { title: "Heavy", version: "1" }, paths });
    for (const threads of [1, 0]) {
      const bounded = new ImportPool({ threads, queue: 1, heapMb: 256, maxStoredMb: 1 });
      pools.push(bounded);
      const err = await refusal(bounded.import({ text }));
      expect(err).toBeInstanceOf(DomainError);
      expect([err.code, err.reason]).toEqual([Code.InvalidArgument, "document_too_large"]);
      expect(err.message).toContain("40 operations would store more than 1 MiB");
      expect(err.details).toMatchObject({ field: "api", limit_mb: 1, operations: 40 });
    }
    const roomy = pool(1, 1);
    expect((await roomy.import({ text })).tools).toHaveLength(40);
  });

  it("imports on the event loop when it has no threads, and takes nothing once closed", async () => {
    const inline = pool(0, 0);
    expect((await inline.import({ text: document("inline") })).title).toBe("inline");
    expect(inline.lastThreadId).toBeUndefined();

    const p = pool(1, 1);
    await p.close();
    expect(await refusal(p.import({ text: document("late") }))).toMatchObject({ reason: "import_busy" });
  }, 60_000);

  it("closes a warming pool only once its first thread has loaded (ended while loading, it aborted the process)", async () => {
    const p = pool(1, 1);
    p.warm();
    await p.close();
    // The thread answered the warm-up, so it had finished loading the importer when it was ended.
    expect(p.lastThreadId).toBeGreaterThan(0);
  }, 60_000);
});
