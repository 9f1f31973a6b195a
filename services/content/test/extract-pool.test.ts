/**
 * The page-extraction pool (sites/extract-pool.ts) on real threads: a crawl whose pages are read there
 * gives the same exact record as one read on the event loop (URLs survive the trip as strings), a full
 * pool refuses at once, and pages are read on another thread than the caller's.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { threadId } from "node:worker_threads";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterAll, describe, expect, it } from "vitest";
import { crawlSite } from "../src/sites/crawl.js";
import { ExtractBusy, ExtractPool } from "../src/sites/extract-pool.js";
import { expectedFixtureFacts, fixtureSiteRoutes } from "./site-fixture.js";

// Room for a crawl's wave of pages (crawl.ts reads 4 at once), as CONTENT_EXTRACT_QUEUE's default gives.
const pool = new ExtractPool({ threads: 1, queue: 4, heapMb: 512 });
const small = new ExtractPool({ threads: 1, queue: 1, heapMb: 512 });
const cleanups: (() => Promise<void>)[] = [() => pool.close(), () => small.close()];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("ExtractPool", () => {
  it("reads a crawl's pages on a worker thread into the same exact record", async () => {
    const routes = fixtureSiteRoutes();
    const server = createServer((req, res) => {
      const handler = routes[new URL(req.url ?? "/", "http://x").pathname];
      if (handler) handler(req, res);
      else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const outbound = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${port}`, "TEST_ALLOW") });
    cleanups.push(() => outbound.close());

    const readOn: number[] = [];
    const facts = await crawlSite(`http://127.0.0.1:${port}/start#intro`, {
      outbound,
      catalogServices: async () => [{ id: "svc_acme_weather", name: "Acme Weather" }],
      extract: async (body, url, charset, signal) => {
        const read = await pool.extract(body, url, charset, signal);
        readOn.push(pool.lastThreadId ?? threadId);
        return read;
      },
    });
    expect(facts).toEqual(expectedFixtureFacts(`http://127.0.0.1:${port}`, { id: "svc_acme_weather", name: "Acme Weather" }));
    expect(readOn.length).toBeGreaterThan(1);
    expect(readOn.every((id) => id !== threadId)).toBe(true);
  });

  it("refuses a page at once when every thread and queue place is taken", async () => {
    // A large page keeps the one thread busy while the queue's one place fills.
    const big = Buffer.from(`<html><body>${"<p>word <a href='/x'>link</a></p>".repeat(20_000)}</body></html>`);
    const url = new URL("http://example.com/");
    const first = small.extract(big, url, undefined);
    const second = small.extract(big, url, undefined);
    await expect(small.extract(big, url, undefined)).rejects.toBeInstanceOf(ExtractBusy);
    expect(small.load).toBe(2);
    const read = await Promise.all([first, second]);
    expect(read.map((facts) => facts.links.length)).toEqual([1000, 1000]);
    expect(small.load).toBe(0);
  });
});
