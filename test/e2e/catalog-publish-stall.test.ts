/**
 * Publishing never stalls the others (issue 30): in the one-process default, while the largest corpus
 * documents import (Box's 1.7 MB OpenAPI 3.0, Slack's 1.2 MB Swagger 2.0: seconds of CPU each), another
 * caller's public search and tool read complete, and the imports ran on the catalog's worker pool, not
 * its event loop (the import metric says where). Ordering, not time: every other request answers
 * before either import does. A publish beyond the pool's bounds is refused with 503 import_busy and
 * Retry-After, in the error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  type Body,
  type CatalogStack,
  call,
  expectError,
  registerAgent,
  startCatalogStack,
} from "../harness/catalog-stack.js";
import { BOX, corpusText, countOperations, SLACK } from "../harness/corpus.js";
import { sample } from "../harness/prometheus.js";

let s: CatalogStack;
let agent: Agent;

/** The gateway's metrics: in one process, every role reports to the same registry. */
const metricsText = async () => (await fetch(`${s.stack.gatewayUrl}/metrics`)).text();
/** Documents importing or waiting for a thread (a gauge without labels, so not `sample`'s `name{...}`). */
const pendingImports = async () => Number(/^toolport_catalog_imports_pending (\S+)$/m.exec(await metricsText())?.[1] ?? 0);

beforeAll(async () => {
  // One import thread and one waiting document: two documents fill the pool.
  s = await startCatalogStack(["catalog", "identity", "billing", "gateway"], {
    CATALOG_IMPORT_THREADS: "1",
    CATALOG_IMPORT_QUEUE: "1",
  });
  agent = await registerAgent(s);
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

describe("publishing large documents", () => {
  it("lets other callers' search and reads through while they import, on the worker pool", async () => {
    const known = await call(s, "GET", "/tools/public/search?query=weather");
    expect(known.status).toBe(200);
    const toolId: string = known.body[0].id;

    const settled: string[] = [];
    const publish = (name: string) =>
      call(s, "POST", "/services", { agent, body: { api: { document_text: corpusText(name) } } }).finally(() =>
        settled.push(name),
      );
    const imports = [publish(BOX), publish(SLACK)];
    // Both documents are in the pool (one importing, one waiting) before anyone else asks.
    await expect.poll(pendingImports, { timeout: 30_000, interval: 20 }).toBe(2);

    const answered: string[] = [];
    for (let i = 0; i < 5; i++) {
      const search = await call(s, "GET", "/tools/public/search?query=weather");
      expect(search.status).toBe(200);
      const read = await call(s, "GET", `/tools/${toolId}`, { agent });
      expect(read.status).toBe(200);
      answered.push(`search ${i}`, `read ${i}`);
    }
    // Ten answers, and neither document done yet: nobody waited for an import.
    expect(answered).toHaveLength(10);
    expect(settled).toEqual([]);

    // A third document finds the pool full: refused at once, in the error shape, never a 500.
    const busy = await call(s, "POST", "/services", { agent, body: { api: { document_text: corpusText(SLACK) } } });
    expectError(busy, 503, "import_busy");
    expect(busy.headers.get("retry-after")).toBe("5");
    expect(busy.body.error.details).toMatchObject({ field: "api", retry_after_seconds: 5 });
    expect(settled).toEqual([]);

    const [box, slack] = (await Promise.all(imports)) as { status: number; body: Body }[];
    expect(box?.status, JSON.stringify(box?.body).slice(0, 500)).toBe(201);
    expect(slack?.status, JSON.stringify(slack?.body).slice(0, 500)).toBe(201);
    expect(box?.body.tools).toHaveLength(countOperations(corpusText(BOX)));
    expect(slack?.body.tools).toHaveLength(countOperations(corpusText(SLACK)));

    // Where they ran: the worker pool, never the event loop.
    const text = await metricsText();
    expect(
      sample(text, "toolport_catalog_import_duration_seconds_count", { where: "worker", outcome: "imported" }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(text, "toolport_catalog_import_duration_seconds_count", { where: "worker", outcome: "busy" })).toBe(1);
    expect(sample(text, "toolport_catalog_import_duration_seconds_count", { where: "event_loop" })).toBeUndefined();
    expect(await pendingImports()).toBe(0);
  }, 180_000);

  it("keeps a refusal from inside a thread as it was: a 400 naming the defect", async () => {
    const res = await call(s, "POST", "/services", {
      agent,
      body: { api: { document_text: JSON.stringify({ swagger: "1.2", info: {}, paths: {} }) } },
    });
    expectError(res, 400, "invalid_openapi_document");
    expect(res.body.error.message).toBe(
      "invalid OpenAPI document at #/swagger: Swagger 1.2 is not supported; only Swagger 2.0 is converted (to OpenAPI 3.0)",
    );
    expect(res.body.error.details).toEqual({ field: "api", location: "#/swagger" });
  }, 60_000);
});
