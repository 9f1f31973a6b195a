/**
 * Public search when it cannot run and when a client asks too often: a catalog whose search engine
 * (Meilisearch here, at an address where nothing listens) cannot answer starts anyway and answers
 * 503 with `Retry-After: 1`; the 31st public search from one IP within a minute is 429.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { type CatalogStack, call, expectError, startCatalogStack } from "../harness/catalog-stack.js";

let s: CatalogStack;

beforeAll(async () => {
  s = await startCatalogStack(["catalog", "identity", "gateway"], { MEILI_URL: `http://127.0.0.1:${await freePort()}` });
});
afterAll(() => s?.stop());

describe("public search availability", () => {
  it("answers 503 with Retry-After: 1 when the engine cannot answer, then 429 after 30 requests a minute", async () => {
    const first = await call(s, "GET", "/tools/public/search?query=word%20count");
    expectError(first, 503, "search_unavailable");
    expect(first.headers.get("retry-after")).toBe("1");
    // The rest of the catalog does not depend on the engine.
    expect((await call(s, "GET", "/services/public")).status).toBe(200);
    // An empty query needs no engine.
    expect((await call(s, "GET", "/tools/public/search?query=")).body).toEqual([]);

    // Counted in fixed one-minute windows: when one ends during the run (a slow machine), counting starts
    // again, so the run follows the RateLimit headers: 30 a window, and the 429 comes right after the 30th.
    expect(first.headers.get("ratelimit-limit")).toBe("30");
    let remaining = Number(first.headers.get("ratelimit-remaining"));
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 62 && !limited; i++) {
      const res = await call(s, "GET", "/tools/public/search?query=x");
      if (res.status === 429) limited = res;
      else {
        expect(res.status).toBe(503);
        remaining = Number(res.headers.get("ratelimit-remaining"));
      }
    }
    expect(limited, "no 429 in two windows' worth of searches").toBeDefined();
    expectError(limited as Awaited<ReturnType<typeof call>>, 429, "rate_limited");
    expect(remaining).toBe(0);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
