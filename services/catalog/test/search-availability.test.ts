/**
 * Public search when it cannot run and when a client asks too often: a catalog whose search engine
 * (Meilisearch here, at an address where nothing listens) cannot answer starts anyway and answers
 * 503 with `Retry-After: 1`; the 31st public search from one IP within a minute is 429.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../deploy/local/infra.mjs";
import { type CatalogStack, call, expectError, startCatalogStack } from "./support.js";

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

    for (let i = 0; i < 28; i++) await call(s, "GET", "/tools/public/search?query=x");
    const limited = await call(s, "GET", "/tools/public/search?query=x");
    expectError(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
