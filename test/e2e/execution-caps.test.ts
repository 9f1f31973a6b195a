/**
 * Size caps end to end (spec Limits "result trimming", items 13-15, issue 10): a capped array keeps
 * whole entries only. A REST tool backed by an HTTP server started here answers the 5,000
 * objects; the single call, a batch element, the MCP-facing fields (`truncated`, `response_meta`,
 * `cursor`, `_meta.truncation_note`) and the read-back by handle must each hold a prefix of entries
 * exactly as the upstream sent them, with `dropped_items[...].kept` equal to the entries present. Runs
 * on real catalog, execution, billing and identity processes behind the gateway.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Reply } from "./execution-support.js";
import { type AgentKey, type ExecStack, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";

/** The result: 5,000 flat objects. */
const objects = Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item-${i}`, group: i % 7 }));
/** A paged list whose entries hold arrays of their own, beside a cursor. */
const page = {
  items: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item-${i}`, tags: [`g${i % 7}`, [i, i + 1]] })),
  next_cursor: "page-2",
};
/** A text result of surrogate pairs, so any cut lands next to one. */
const text = "\u{1F600}".repeat(3000);

const len = (value: unknown) => JSON.stringify(value).length;

let upstream: http.Server;
let s: ExecStack;
let agent: AgentKey;
let tools: Record<string, string>;

/** The upstream: GET /objects, /page (JSON) and /text (text/plain). */
async function startUpstream(): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url!, "http://x").pathname;
    if (path === "/text") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return res.end(text);
    }
    const body = path === "/objects" ? objects : path === "/page" ? page : undefined;
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: "not found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function capsApiDocument() {
  const get = (operationId: string) => ({ get: { operationId, responses: { "200": { description: operationId } } } });
  return {
    openapi: "3.0.3",
    info: { title: `Caps ${randomBytes(3).toString("hex")}`, version: "1.0.0" },
    paths: { "/objects": get("list_objects"), "/page": get("list_page"), "/text": get("read_text") },
  };
}

beforeAll(async () => {
  const up = await startUpstream();
  upstream = up.server;
  s = await startExecStack([up.url.replace("http://", "")]);
  agent = await registerAgent(s);
  ({ tools } = await publishOpenApi(s, agent, capsApiDocument(), up.url));
});
afterAll(async () => {
  await s?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

const callTool = (toolId: string, body: unknown) => s.call("POST", `/tools/call/${toolId}`, { key: agent.key, body });
const readResult = (id: string, query = "") => s.call("GET", `/tools/executions/${id}/result${query}`, { key: agent.key });

/** The note the execution service writes for one cut array and nothing else. */
function arrayNote(original: unknown, kept: unknown, cap: number, path: string, entries: number, total: number): string {
  const dropped = total - entries;
  return `result trimmed from ${len(original)} to ${len(kept)} characters (cap ${cap}); ${path}: kept ${entries} of ${total} entries (each whole; ${dropped} dropped from the end)`;
}

/**
 * A body (single call, batch element or read-back) whose result is a capped prefix of `entries`: every
 * kept entry deep-equals its source entry, the prefix is the longest that fits, and `response_meta`,
 * `dropped_items` and the truncation note describe exactly that.
 */
function expectWholePrefix(
  body: Reply["body"],
  kept: unknown[],
  entries: unknown[],
  original: unknown,
  cap: number,
  path: string,
) {
  expect(body.truncated, JSON.stringify(body).slice(0, 500)).toBe(true);
  expect(kept.length).toBeGreaterThan(0);
  expect(kept.length).toBeLessThan(entries.length);
  kept.forEach((entry, i) => {
    expect(entry, `entry ${i}`).toEqual(entries[i]);
  });
  expect(len(body.result)).toBeLessThanOrEqual(cap);
  // The next entry, whole, would not have fitted.
  expect(len(body.result) + 1 + len(entries[kept.length])).toBeGreaterThan(cap);
  expect(body.response_meta).toMatchObject({
    truncated: true,
    original_response_chars: len(original),
    response_chars: len(body.result),
    dropped_items: { [path]: { kept: kept.length, total: entries.length } },
  });
  expect(Object.keys(body.response_meta.dropped_items)).toEqual([path]);
  expect(body._meta.truncation_note).toBe(arrayNote(original, body.result, cap, path, kept.length, entries.length));
  expect(body._meta.execution_id).toBe(body.execution_id);
}

describe("a capped array keeps whole entries only", () => {
  it("on a single call: the issue's 5,000 objects at max_response_chars 2000", async () => {
    const r = await callTool(tools.list_objects!, { max_response_chars: 2000 });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
    expect(r.body.success).toBe(true);
    expectWholePrefix(r.body, r.body.result, objects, objects, 2000, "$");
    expect(r.body.response_meta.cursor).toBeUndefined();
  });

  it("on a paged list: the cursor survives and entries keep their own arrays", async () => {
    const r = await callTool(tools.list_page!, { max_response_chars: 2000 });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.result)).toEqual(["items", "next_cursor"]);
    expect(r.body.result.next_cursor).toBe("page-2");
    expectWholePrefix(r.body, r.body.result.items, page.items, page, 2000, "items");
    expect(r.body.response_meta.cursor).toBe("page-2");
    expect(r.body.cursor).toBe("page-2");
  });

  it("in batch elements, projected or not", async () => {
    const r = await s.call("POST", "/tools/call/batch", {
      key: agent.key,
      body: {
        calls: [
          { tool_id: tools.list_objects, max_response_chars: 2000 },
          { tool_id: tools.list_page, max_response_chars: 700, fields: ["items[].tags", "next_cursor"] },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
    const [plain, projected] = r.body.results;
    expect(plain.success).toBe(true);
    expectWholePrefix(plain, plain.result, objects, objects, 2000, "$");
    // Projection comes first: the capped entries are the projected entries, each whole.
    const projectedPage = { items: page.items.map((item) => ({ tags: item.tags })), next_cursor: page.next_cursor };
    expect(projected.projection).toEqual({ kept: ["items[].tags", "next_cursor"], unmatched: [] });
    expect(projected.result.next_cursor).toBe("page-2");
    expectWholePrefix(projected, projected.result.items, projectedPage.items, projectedPage, 700, "items");
  });

  it("on the read-back, with the default max_chars and a small one", async () => {
    const call = await callTool(tools.list_objects!, {});
    const id = call.body.execution_id;
    // The default reply cap (32,000) cuts the same way.
    expectWholePrefix(call.body, call.body.result, objects, objects, 32_000, "$");

    const full = await readResult(id);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ execution_id: id, status: "success", path: null });
    // The stored result is the whole answer; only the read is capped.
    expect(full.body.stored_truncated).toBeUndefined();
    expectWholePrefix(full.body, full.body.result, objects, objects, 50_000, "$");

    for (const cap of [2000, 100]) {
      const small = await readResult(id, `?max_chars=${cap}`);
      expect(small.status).toBe(200);
      expectWholePrefix(small.body, small.body.result, objects, objects, cap, "$");
    }

    const pageCall = await callTool(tools.list_page!, { max_response_chars: 100 });
    const paged = await readResult(pageCall.body.execution_id, "?max_chars=1500");
    expect(paged.body.result.next_cursor).toBe("page-2");
    expect(paged.body.cursor).toBe("page-2");
    expectWholePrefix(paged.body, paged.body.result.items, page.items, page, 1500, "items");
    const items = await readResult(pageCall.body.execution_id, `?path=items&max_chars=1500`);
    expect(items.body.path_matched).toBe(true);
    expectWholePrefix(items.body, items.body.result, page.items, page.items, 1500, "$");
  });

  it("cuts only a text result, on a character boundary", async () => {
    const r = await callTool(tools.read_text!, { max_response_chars: 101 });
    expect(r.status).toBe(200);
    const cut = r.body.result as string;
    expect(len(cut)).toBeLessThanOrEqual(101);
    expect(text.startsWith(cut)).toBe(true);
    // No half of a surrogate pair is left at the edge.
    expect(cut.length % 2).toBe(0);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut)).toBe(false);
    expect(r.body.response_meta).toMatchObject({ truncated: true, dropped_items: {} });
    expect(r.body._meta.truncation_note).toBe(
      `result trimmed from ${len(text)} to ${len(cut)} characters (cap 101); text cut to its first ${cut.length} of ${text.length} characters`,
    );
  });
});
