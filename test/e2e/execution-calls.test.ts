/**
 * Execution end to end through the gateway, on real catalog, execution, billing and identity processes,
 * against real upstreams started here: a REST API imported from its OpenAPI document (parameters in every
 * location, each auth scheme), an MCP server from the SDK and the built-in tools. Covers the order of
 * checks, bad inputs, the consent round trip, batches, idempotency, priced calls settling once, SSRF
 * refusals, every path form on stored results, redaction, and the events written through the outbox.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { fromBinary } from "@bufbuild/protobuf";
import { createPool, type Pool } from "@toolport/kit/pg";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../harness/http.js";
import { expectTimeOrderedUuidOfNow } from "../harness/ids.js";
import { type McpUpstream, startEchoApi, startMcpUpstream, type Upstream } from "../harness/upstreams.js";
import {
  type AgentKey,
  balanceAtomic,
  connectCredential,
  createKey,
  type ExecStack,
  echoApiDocument,
  expectError,
  fund,
  publishMcp,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

let api: Upstream;
let mcp: McpUpstream;
let s: ExecStack;
let agent: AgentKey;
let other: AgentKey;
let echo: { serviceId: string; tools: Record<string, string> };
let executionDb: Pool;

beforeAll(async () => {
  api = await startEchoApi();
  mcp = await startMcpUpstream();
  s = await startExecStack([`127.0.0.1:${api.port}`, `127.0.0.1:${mcp.port}`], {
    TOOLPORT_SECRET_ECHO_TOKEN: "env-bearer-secret-123",
    // The catalog lists the MCP server's tools at import; the echo API's document is sent inline.
    CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${mcp.port}`,
  });
  executionDb = createPool(s.stack.env.EXECUTION_DATABASE_URL!, 2);
  agent = await registerAgent(s);
  other = await registerAgent(s);
  echo = await publishOpenApi(s, agent, echoApiDocument(), api.url);
});
afterAll(async () => {
  await executionDb?.end();
  await s?.stop();
  await api?.close();
  await mcp?.close();
});

const callTool = (key: string, toolId: string, body: unknown, headers?: Record<string, string>) =>
  s.call("POST", `/tools/call/${toolId}`, { key, body, headers });
const readResult = (key: string, id: string, query = "") => s.call("GET", `/tools/executions/${id}/result${query}`, { key });

/** A POST to a gateway on `port` whose JSON body is sent `lateMs` after its headers. */
function postWithLateBody(
  port: number,
  path: string,
  body: unknown,
  lateMs: number,
  headers: Record<string, string>,
  // biome-ignore lint/suspicious/noExplicitAny: the test reads arbitrary JSON replies
): Promise<{ status: number; body: any }> {
  const bytes = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": bytes.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || "null") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.flushHeaders();
    setTimeout(() => req.end(bytes), lateMs);
  });
}

describe("REST tools imported from OpenAPI", () => {
  it("places parameters in path, query, header, cookie and body (root or tool_input), with defaults", async () => {
    const r = await callTool(agent.key, echo.tools.echo_item!, {
      tool_input: {
        item_id: "a/b c",
        verbose: true,
        tags: ["x", "y"],
        "X-Trace": "trace-1",
        session: "s-1",
        title: "hello",
        count: 3,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      tool_id: echo.tools.echo_item,
      success: true,
      error: null,
      truncated: false,
      response_meta: null,
    });
    // A version 7 UUID (kit/ids.ts): its first 48 bits are when the call ran, so executions and their events
    // are written in index order.
    expectTimeOrderedUuidOfNow(r.body.execution_id);
    const seen = r.body.result;
    expect(seen.raw_path).toBe("/echo/items/a%2Fb%20c");
    expect(seen.query).toEqual({ verbose: ["true"], tags: ["x", "y"], sort: ["asc"] });
    expect(seen.headers["x-trace"]).toBe("trace-1");
    expect(seen.cookies).toEqual({ session: "s-1" });
    expect(seen.body).toEqual({ title: "hello", count: 3 });
    // Parameters at the root of the body work the same.
    const root = await callTool(agent.key, echo.tools.echo_item!, { item_id: "z", title: "root" });
    expect(root.body.result.body).toEqual({ title: "root" });
    // encode_slashes false keeps slashes in a path parameter.
    const file = await callTool(agent.key, echo.tools.read_file!, { file_path: "dir/sub/f.txt" });
    expect(file.body.result.raw_path).toBe("/echo/files/dir/sub/f.txt");
  });

  it("attaches each kind of credential per the service's scheme and masks it in results", async () => {
    const schemes = [
      {
        scheme: { type: "apiKey", in: "header", name: "X-Api-Key" },
        credential: { api_key: "header-key-123456" },
        sent: "header-key-123456",
      },
      {
        scheme: { type: "apiKey", in: "query", name: "api_key" },
        credential: { api_key: "query-key-123456" },
        sent: "query-key-123456",
      },
      {
        scheme: { type: "http", scheme: "bearer" },
        credential: { bearer: "env://TOOLPORT_SECRET_ECHO_TOKEN" },
        sent: "Bearer env-bearer-secret-123",
      },
      {
        scheme: { type: "http", scheme: "basic" },
        credential: { basic: { username: "ann", password: "basic-pass-999" } },
        sent: `Basic ${Buffer.from("ann:basic-pass-999").toString("base64")}`,
      },
    ];
    for (const { scheme, credential, sent } of schemes) {
      const svc = await publishOpenApi(s, agent, echoApiDocument({ scheme }), api.url);
      // Without a connected credential the call fails as an auth failure, and nothing is sent upstream.
      const before = api.requests.length;
      const missing = await callTool(agent.key, svc.tools.show_secret!, {});
      expect(missing.body).toMatchObject({ success: false, result: null });
      expect(missing.body.error).toMatch(/credential/);
      expect(api.requests.length).toBe(before);
      await connectCredential(s, agent, svc.serviceId, credential);
      const r = await callTool(agent.key, svc.tools.show_secret!, {});
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.success, JSON.stringify(r.body)).toBe(true);
      const last = api.requests.at(-1)!;
      const received =
        last.headers.authorization ?? last.headers["x-api-key"] ?? new URL(last.url, "http://x").searchParams.get("api_key");
      expect(received).toBe(sent);
      // The upstream echoed the credential back: it is masked, and the report says where.
      expect(JSON.stringify(r.body.result)).not.toContain(sent.replace(/^(Bearer|Basic) /, ""));
      expect(r.body.result.you_sent).toMatch(/\[REDACTED:/);
      expect(r.body._meta.redaction.count).toBeGreaterThan(0);
      expect(r.body._meta.redaction.fields[0]).toMatchObject({ path: "you_sent", key: "you_sent" });
      const stored = await readResult(agent.key, r.body.execution_id);
      expect(JSON.stringify(stored.body)).not.toContain(sent.replace(/^(Bearer|Basic) /, ""));
    }
  });
});

describe("resolved tools are cached briefly; a catalog change is seen on the next call", () => {
  const patchTool = async (owner: AgentKey, toolId: string, body: Record<string, unknown>) => {
    const patched = await s.call("PATCH", `/tools/${toolId}`, { key: owner.key, body });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  };

  it("refuses a tool on the call right after it is sunset, deactivated, deleted or priced, though it was just resolved", async () => {
    const owner = await registerAgent(s); // unfunded
    const svc = await publishOpenApi(s, owner, echoApiDocument(), api.url);
    const warm = async (toolId: string, input: Record<string, unknown>) => {
      for (let i = 0; i < 3; i++) {
        const r = await callTool(owner.key, toolId, input);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
    };
    await warm(svc.tools.list_items!, { n: 1 });
    await patchTool(owner, svc.tools.list_items!, { deprecated: true, sunset_date: new Date(Date.now() - 1000).toISOString() });
    expectError(await callTool(owner.key, svc.tools.list_items!, { n: 1 }), 404, "tool_not_found");

    await warm(svc.tools.slow!, { ms: 1 });
    await patchTool(owner, svc.tools.slow!, { status: "inactive" });
    expectError(await callTool(owner.key, svc.tools.slow!, { ms: 1 }), 404, "tool_not_found");
    await patchTool(owner, svc.tools.slow!, { status: "active" });
    expect((await callTool(owner.key, svc.tools.slow!, { ms: 1 })).status).toBe(200);

    await warm(svc.tools.read_file!, { file_path: "a" });
    const deleted = await s.call("DELETE", `/tools/${svc.tools.read_file}`, { key: owner.key });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expectError(await callTool(owner.key, svc.tools.read_file!, { file_path: "a" }), 404, "tool_not_found");

    await warm(svc.tools.status!, { code: 200 });
    await patchTool(owner, svc.tools.status!, { price_per_call_cents: 7 });
    expectError(await callTool(owner.key, svc.tools.status!, { code: 200 }), 402, "insufficient_balance");
  });

  it("refuses a cached tool once its sunset date passes, without any catalog change in between", async () => {
    const svc = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    const sunset = Date.now() + 1500;
    await patchTool(agent, svc.tools.list_items!, { deprecated: true, sunset_date: new Date(sunset).toISOString() });
    await new Promise((r) => setTimeout(r, 100)); // the change event has emptied every cache by now
    expect((await callTool(agent.key, svc.tools.list_items!, { n: 1 })).status).toBe(200);
    expect((await callTool(agent.key, svc.tools.list_items!, { n: 1 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, sunset - Date.now()) + 50));
    expectError(await callTool(agent.key, svc.tools.list_items!, { n: 1 }), 404, "tool_not_found");
  });
});

describe("order of checks and bad input", () => {
  it("404 for an unknown tool, a tool past its sunset date", async () => {
    expectError(await callTool(agent.key, randomUUID(), {}), 404, "tool_not_found");
    expectError(await callTool(agent.key, "no-such-slug", {}), 404, "tool_not_found");
    const svc = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    const patched = await s.call("PATCH", `/tools/${svc.tools.list_items}`, {
      key: agent.key,
      body: { deprecated: true, deprecation_message: "gone", sunset_date: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expectError(await callTool(agent.key, svc.tools.list_items!, {}), 404, "tool_not_found");
  });

  it("accepts a slug in place of the id", async () => {
    const listItems = (await s.call("GET", `/tools/${echo.tools.list_items}`, { key: agent.key })).body;
    const r = await callTool(agent.key, listItems.slug, { n: 2 });
    expect(r.body).toMatchObject({ success: true, tool_id: echo.tools.list_items });
  });

  it("403 tool_not_permitted outside the key's allow-lists, checked before input validation", async () => {
    const limited = await createKey(s, agent, { allowed_tools: [echo.tools.list_items] });
    expect((await callTool(limited, echo.tools.list_items!, { n: 1 })).status).toBe(200);
    expectError(await callTool(limited, echo.tools.echo_item!, { nonsense: true }), 403, "tool_not_permitted");
    const elsewhere = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    const services = await createKey(s, agent, { allowed_services: [elsewhere.serviceId] });
    expect((await callTool(services, elsewhere.tools.list_items!, { n: 1 })).status).toBe(200);
    expectError(await callTool(services, echo.tools.list_items!, {}), 403, "tool_not_permitted");
  });

  it("400 listing each bad field, before consent, rate limit or any upstream call", async () => {
    const before = api.requests.length;
    const r = await callTool(agent.key, echo.tools.echo_item!, { tool_input: { count: 99, sort: "sideways", verbose: "yes" } });
    expectError(r, 400, "invalid_parameters");
    const fields = r.body.error.details.fields.map((f: any) => f.field).sort();
    expect(fields).toEqual(["count", "item_id", "sort", "title", "verbose"]);
    expect(api.requests.length).toBe(before);
    expectError(await callTool(agent.key, echo.tools.echo_item!, { tool_input: "not an object" }), 400, "invalid_parameters");
    expectError(await callTool(agent.key, echo.tools.list_items!, { fields: "items" }), 400, "invalid_parameters");
    expectError(await callTool(agent.key, echo.tools.list_items!, { fields: ["items..id"] }), 400, "invalid_path");
    expectError(await callTool(agent.key, echo.tools.list_items!, { max_response_chars: -5 }), 400, "invalid_parameters");
    expectError(
      await s.call("POST", `/tools/call/${echo.tools.list_items}`, { key: agent.key, body: "[1,2]" }),
      400,
      "invalid_body",
    );
    expectError(await s.call("POST", `/tools/call/${echo.tools.list_items}`, { body: {} }), 401, "unauthenticated");
  });
});

describe("consent handshake", () => {
  let confirming: string;
  beforeAll(async () => {
    confirming = await createKey(s, agent, { require_confirmation: true });
  });

  it("runs reading calls without consent and asks for it on writing calls", async () => {
    expect((await callTool(confirming, echo.tools.list_items!, { n: 1 })).status).toBe(200);
    const before = api.requests.length;
    const r = await callTool(confirming, echo.tools.echo_item!, { item_id: "1", title: "write" });
    expectError(r, 409, "confirmation_required");
    expect(r.body.confirm_token).toMatch(/^ct1\./);
    expect(r.body.consent).toMatchObject({ tool_id: echo.tools.echo_item, parameters: { item_id: "1", title: "write" } });
    expect(new Date(r.body.consent.expires_at).getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(api.requests.length).toBe(before);
  });

  it("runs the call with the token, once, and only for the exact parameters", async () => {
    const ask = await callTool(confirming, echo.tools.echo_item!, { item_id: "2", title: "exact" });
    const token = ask.body.confirm_token;
    const changed = await callTool(confirming, echo.tools.echo_item!, { item_id: "2", title: "other", confirm_token: token });
    expectError(changed, 409, "confirmation_required");
    expect(changed.body.error.details.token_problem).toBe("parameters_changed");
    const other = await createKey(s, agent, { require_confirmation: true });
    expect(
      (await callTool(other, echo.tools.echo_item!, { item_id: "2", title: "exact", confirm_token: token })).body.error.details
        .token_problem,
    ).toBe("other_key");
    const ok = await callTool(confirming, echo.tools.echo_item!, { item_id: "2", title: "exact", confirm_token: token });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.result.body).toEqual({ title: "exact" });
    const again = await callTool(confirming, echo.tools.echo_item!, { item_id: "2", title: "exact", confirm_token: token });
    expectError(again, 409, "confirmation_required");
    expect(again.body.error.details.token_problem).toBe("used");
    const forged = await callTool(confirming, echo.tools.echo_item!, {
      item_id: "2",
      title: "exact",
      confirm_token: `${token.slice(0, -4)}AAAA`,
    });
    expect(forged.body.error.details.token_problem).toBe("invalid");
  });
});

describe("batch", () => {
  it("runs 1..10 calls concurrently and independently: success, failure, consent and refusal in one batch", async () => {
    const confirming = await createKey(s, agent, { require_confirmation: true });
    const r = await s.call("POST", "/tools/call/batch", {
      key: confirming,
      body: {
        calls: [
          { tool_id: echo.tools.list_items, tool_input: { n: 3 }, fields: ["items[].id", "missing"] },
          { tool_id: echo.tools.status, tool_input: { code: 502 } },
          { tool_id: echo.tools.echo_item, tool_input: { item_id: "b", title: "needs consent" } },
          { tool_id: randomUUID() },
          { tool_id: echo.tools.echo_item, tool_input: { item_id: "c" } },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [ok, failed, consent, unknown, invalid] = r.body.results;
    expect(ok).toMatchObject({
      success: true,
      result: { items: [{ id: 0 }, { id: 1 }, { id: 2 }] },
      projection: { kept: ["items[].id"], unmatched: ["missing"] },
    });
    expect(failed).toMatchObject({ success: false, result: null });
    expect(failed.error).toMatch(/HTTP 502/);
    expect(failed.execution_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(consent).toMatchObject({ success: false, execution_id: null, error_code: "confirmation_required" });
    expect(consent.consent.confirm_token).toMatch(/^ct1\./);
    expect(consent.consent.parameters).toEqual({ item_id: "b", title: "needs consent" });
    expect(unknown).toMatchObject({ success: false, error_code: "tool_not_found", execution_id: null });
    expect(invalid).toMatchObject({ success: false, error_code: "invalid_parameters" });
    // The consent token from the element completes that call.
    const done = await s.call("POST", "/tools/call/batch", {
      key: confirming,
      body: {
        calls: [
          {
            tool_id: echo.tools.echo_item,
            tool_input: { item_id: "b", title: "needs consent" },
            confirm_token: consent.consent.confirm_token,
          },
        ],
      },
    });
    expect(done.body.results[0]).toMatchObject({ success: true, result: { body: { title: "needs consent" } } });
  });

  it("takes the latency of the slowest call, not the sum", async () => {
    const calls = Array.from({ length: 10 }, () => ({ tool_id: echo.tools.slow, tool_input: { ms: 300 } }));
    const r = await s.call("POST", "/tools/call/batch", { key: agent.key, body: { calls } });
    expect(r.body.results.every((e: any) => e.success)).toBe(true);
    expect(r.ms).toBeLessThan(1500);
  });

  it("refuses 0 or 11 calls and malformed elements", async () => {
    expectError(await s.call("POST", "/tools/call/batch", { key: agent.key, body: { calls: [] } }), 400, "invalid_batch");
    const eleven = Array.from({ length: 11 }, () => ({ tool_id: echo.tools.list_items }));
    expectError(await s.call("POST", "/tools/call/batch", { key: agent.key, body: { calls: eleven } }), 400, "invalid_batch");
    expectError(await s.call("POST", "/tools/call/batch", { key: agent.key, body: {} }), 400, "invalid_parameters");
    const bad = await s.call("POST", "/tools/call/batch", { key: agent.key, body: { calls: [{ tool_input: {} }] } });
    expectError(bad, 400, "invalid_parameters");
    expect(bad.body.error.details.field).toBe("calls[0].tool_id");
  });
});

describe("idempotency", () => {
  it("replays the same key and input with the same execution_id and no second upstream call", async () => {
    const key = randomUUID();
    const before = api.requests.length;
    const first = await callTool(agent.key, echo.tools.echo_item!, { item_id: "i", title: "once" }, { "Idempotency-Key": key });
    const second = await callTool(agent.key, echo.tools.echo_item!, { title: "once", item_id: "i" }, { "Idempotency-Key": key });
    expect(second.body.execution_id).toBe(first.body.execution_id);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.result).toEqual(first.body.result);
    expect(api.requests.length - before).toBe(1);
    expectError(
      await callTool(agent.key, echo.tools.echo_item!, { item_id: "i", title: "different" }, { "Idempotency-Key": key }),
      422,
      "idempotency_key_reused",
    );
    // Keys are per account: another account's same key is a new call.
    const theirs = await callTool(other.key, "text-word-count", { text: "a b" }, { "Idempotency-Key": key });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    expect(theirs.body.execution_id).not.toBe(first.body.execution_id);
  });

  it("lets concurrent duplicates wait for the first and replay it", async () => {
    const key = randomUUID();
    const before = api.requests.filter((r) => r.url.startsWith("/slow/")).length;
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => callTool(agent.key, echo.tools.slow!, { ms: 400 }, { "Idempotency-Key": key })),
    );
    expect(new Set(replies.map((r) => r.body.execution_id)).size).toBe(1);
    expect(replies.every((r) => r.body.success)).toBe(true);
    expect(api.requests.filter((r) => r.url.startsWith("/slow/")).length - before).toBe(1);
  });

  it("answers a duplicate of a call whose process died by the gateway's deadline, counted from the request's arrival", async () => {
    // A gateway whose requests may wait on the services 8 s in all (RPC_TIMEOUT_MS).
    const port = await s.stack.startExtra("gateway", { RPC_TIMEOUT_MS: "8000" });
    const key = randomUUID();
    const input = { item_id: "died", title: "once" };
    const first = await callTool(agent.key, echo.tools.echo_item!, input, { "Idempotency-Key": key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The claim as a process killed mid-call leaves it: running, its lease (upstream timeout + 30 s) not over.
    await executionDb.query("UPDATE idempotency_keys SET state = 'running', updated_at = now() WHERE idempotency_key = $1", [
      key,
    ]);
    // The duplicate's body comes 3 s after its headers: time the request spends in the gateway before
    // it calls execution, as a slow authentication would.
    const started = Date.now();
    const duplicate = await postWithLateBody(port, `/v1/tools/call/${echo.tools.echo_item}`, input, 3_000, {
      "svc-api-key": agent.key,
      "idempotency-key": key,
    });
    const answeredAfter = Date.now() - started;
    expect(duplicate.status, JSON.stringify(duplicate.body)).toBe(412);
    expect(duplicate.body.error.code).toBe("idempotency_key_in_flight");
    // It waited for the first attempt, and answered before the 8 s from its arrival were over (with a
    // deadline counted from the call to execution it answered at 9 s).
    expect(answeredAfter).toBeGreaterThanOrEqual(5_000);
    expect(answeredAfter).toBeLessThan(8_000);
    // Once the first attempt ends, the same key replays it there.
    await executionDb.query("UPDATE idempotency_keys SET state = 'done' WHERE idempotency_key = $1", [key]);
    const replay = await gatewayClient(`http://127.0.0.1:${port}`)("POST", `/tools/call/${echo.tools.echo_item}`, {
      key: agent.key,
      body: input,
      headers: { "Idempotency-Key": key },
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body.execution_id).toBe(first.body.execution_id);
  });

  it("replays a failed outcome too, and applies per batch element", async () => {
    const key = randomUUID();
    const a = await s.call("POST", "/tools/call/batch", {
      key: agent.key,
      body: { calls: [{ tool_id: echo.tools.status, tool_input: { code: 500 }, idempotency_key: key }] },
    });
    const b = await s.call("POST", "/tools/call/batch", {
      key: agent.key,
      body: { calls: [{ tool_id: echo.tools.status, tool_input: { code: 500 }, idempotency_key: key }] },
    });
    expect(a.body.results[0].success).toBe(false);
    expect(b.body.results[0].execution_id).toBe(a.body.results[0].execution_id);
  });
});

describe("priced calls", () => {
  it("hold, capture once on success, release on failure, never charge a replay; 402 without balance", async () => {
    const payer = await registerAgent(s);
    const svc = await publishOpenApi(s, payer, echoApiDocument(), api.url);
    for (const tool of [svc.tools.list_items, svc.tools.status]) {
      const priced = await s.call("PATCH", `/tools/${tool}`, { key: payer.key, body: { price_per_call_cents: 7 } });
      expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    }
    const broke = await callTool(payer.key, svc.tools.list_items!, { n: 1 });
    expect(broke.status, JSON.stringify(broke.body)).toBe(402);
    expect(broke.body.error.code).toBe("insufficient_balance");

    await fund(s, payer, 100);
    const start = await balanceAtomic(s, payer);
    const key = randomUUID();
    const paid = await callTool(payer.key, svc.tools.list_items!, { n: 1 }, { "Idempotency-Key": key });
    expect(paid.body.success, JSON.stringify(paid.body)).toBe(true);
    await callTool(payer.key, svc.tools.list_items!, { n: 1 }, { "Idempotency-Key": key });
    expect(await balanceAtomic(s, payer)).toBe(start - 70_000n);
    const failed = await callTool(payer.key, svc.tools.status!, { code: 503 });
    expect(failed.body.success).toBe(false);
    expect(await balanceAtomic(s, payer)).toBe(start - 70_000n);
    const wallet = await s.call("GET", "/agents/wallet", { key: payer.key });
    expect(wallet.body.held_atomic).toBe(0);
    // A key cap below the price refuses before anything runs.
    const capped = await createKey(s, payer, { max_cost_per_call_cents: 5 });
    expectError(await callTool(capped, svc.tools.list_items!, { n: 1 }), 403, "spend_limit_exceeded");
  });
});

describe("SSRF refusals", () => {
  it("refuses upstreams on loopback, private, link-local and metadata addresses, and names resolving to them", async () => {
    const closed = api.port === 65535 ? 1 : api.port + 1;
    for (const base of [
      `http://127.0.0.1:${closed}`,
      `http://[::1]:${api.port}`,
      "http://10.0.0.1",
      "http://169.254.169.254/latest",
      `http://localhost:${closed}`,
      `http://2130706433:${closed}`,
    ]) {
      const svc = await publishOpenApi(s, agent, echoApiDocument(), base).catch(() => undefined);
      if (!svc) continue; // the catalog may itself refuse such a base URL
      const r = await callTool(agent.key, svc.tools.list_items!, { n: 1 });
      expect(r.status, base).toBe(200);
      expect(r.body.success, base).toBe(false);
      expect(r.body.error, base).toMatch(/not allowed/);
    }
  });
});

describe("MCP server tools", () => {
  let tools: Record<string, string>;
  beforeAll(async () => {
    tools = (await publishMcp(s, agent, mcp.url)).tools;
  });

  it("calls tools/call on a reused session and unwraps the envelope", async () => {
    const r = await callTool(agent.key, tools.search_docs!, { query: "cats", limit: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.result).toEqual({
      results: [
        { id: "doc-0", title: "cats #0" },
        { id: "doc-1", title: "cats #1" },
      ],
      next_cursor: "page-2",
    });
    expect(r.body.cursor).toBe("page-2");
    const initializations = mcp.initializations;
    await callTool(agent.key, tools.search_docs!, { query: "dogs" });
    expect(mcp.initializations).toBe(initializations);
  });

  it("stores the envelope; paths try the text block's JSON first, then the envelope", async () => {
    const r = await callTool(agent.key, tools.search_docs!, { query: "q", limit: 3 });
    const id = r.body.execution_id;
    expect((await readResult(agent.key, id, "?path=results[1].id")).body).toMatchObject({ result: "doc-1", path_matched: true });
    expect((await readResult(agent.key, id, "?path=content[0].type")).body).toMatchObject({ result: "text", path_matched: true });
    expect((await readResult(agent.key, id, "?path=content[0].text.results[].id")).body.result).toEqual([
      "doc-0",
      "doc-1",
      "doc-2",
    ]);
    const whole = await readResult(agent.key, id);
    expect(whole.body.result.content[0].type).toBe("text");
  });

  it("masks secrets inside the envelope's JSON and reports a <json> path", async () => {
    const r = await callTool(agent.key, tools.leak_env!, {});
    expect(r.body.result.env.GITHUB_TOKEN).toBe("[REDACTED:GITHUB_TOKEN]");
    expect(r.body._meta.redaction.fields).toContainEqual({
      path: "content[0].text.<json>.env.GITHUB_TOKEN",
      key: "GITHUB_TOKEN",
      rule: "sensitive_key",
    });
    const path = encodeURIComponent(r.body._meta.redaction.fields[0].path);
    expect((await readResult(agent.key, r.body.execution_id, `?path=${path}`)).body).toMatchObject({
      result: "[REDACTED:GITHUB_TOKEN]",
      path_matched: true,
    });
  });

  it("reports a tool error (isError) as a failed execution", async () => {
    const r = await callTool(agent.key, tools.fail!, {});
    expect(r.body).toMatchObject({ success: false, result: null, error: "this tool failed on purpose" });
    expect((await readResult(agent.key, r.body.execution_id)).body).toMatchObject({
      status: "error",
      result: null,
      error: "this tool failed on purpose",
    });
  });
});

describe("built-in tools", () => {
  it("runs built-in tools by slug, and maps their input errors to failures", async () => {
    const r = await callTool(agent.key, "text-base64", { tool_input: { text: "hello", mode: "encode" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.success, JSON.stringify(r.body)).toBe(true);
    expect(JSON.stringify(r.body.result)).toContain("aGVsbG8=");
    const count = await callTool(agent.key, "text-word-count", { text: "one two three" });
    expect(count.body.result.words).toBe(3);
    // Input the schema accepts but the tool cannot use is the caller's failure.
    const bad = await callTool(agent.key, "data-math-evaluate", { tool_input: { expression: "1/0" } });
    expect(bad.status).toBe(200);
    expect(bad.body.success).toBe(false);
    expect(bad.body.error).toBeTruthy();
  });
});

describe("stored results", () => {
  let id: string;
  beforeAll(async () => {
    const r = await callTool(agent.key, echo.tools.list_items!, { n: 2000 });
    id = r.body.execution_id;
    expect(r.body.truncated).toBe(true);
    expect(r.body.response_meta).toMatchObject({
      truncated: true,
      cursor: "cursor-2",
      dropped_items: { items: { total: 2000 } },
    });
    expect(r.body.response_meta.response_chars).toBeLessThanOrEqual(32_000);
  });

  it("serves every path form with path_matched", async () => {
    const cases: Array<[string, unknown, boolean]> = [
      ["items[0].name", "item 0", true],
      ["items[-1].id", 1999, true],
      ["next_cursor", "cursor-2", true],
      ["items[].id", Array.from({ length: 2000 }, (_, i) => i), true],
      ["nope", null, false],
      ["items[5000].id", null, false],
      ["`next_cursor`", "cursor-2", true],
      ["<json>.next_cursor", "cursor-2", true],
    ];
    for (const [path, expected, matched] of cases) {
      const r = await readResult(agent.key, id, `?path=${encodeURIComponent(path)}&max_chars=2000000`);
      expect(r.status, path).toBe(200);
      expect(r.body.path, path).toBe(path);
      expect(r.body.path_matched, path).toBe(matched);
      expect(r.body.result, path).toEqual(expected);
    }
    const star = await readResult(agent.key, id, `?path=${encodeURIComponent("items[0].*")}`);
    expect(star.body.result).toEqual([0, "item 0"]);
  });

  it("caps reads at max_chars (default 50,000, clamped to 100..2,000,000), keeping JSON valid", async () => {
    const full = await readResult(agent.key, id);
    expect(full.body).toMatchObject({ execution_id: id, status: "success", error: null, path: null, truncated: true });
    expect(JSON.stringify(full.body.result).length).toBeLessThanOrEqual(50_000);
    expect(full.body.path_matched).toBeUndefined();
    const tiny = await readResult(agent.key, id, "?max_chars=1");
    expect(JSON.stringify(tiny.body.result).length).toBeLessThanOrEqual(100);
    expect(tiny.body.response_meta.original_response_chars).toBeGreaterThan(50_000);
    const huge = await readResult(agent.key, id, "?max_chars=99999999");
    expect(huge.body.truncated).toBe(false);
    expectError(await readResult(agent.key, id, "?max_chars=lots"), 400, "invalid_parameters");
    expectError(await readResult(agent.key, id, "?path=a..b"), 400, "invalid_path");
  });

  it("is readable only by the caller who ran it; other handles and non-UUIDs are 404", async () => {
    expectError(await readResult(other.key, id), 404, "execution_not_found");
    expectError(await readResult(agent.key, "not-a-uuid"), 404, "execution_not_found");
    expectError(await readResult(agent.key, randomUUID()), 404, "execution_not_found");
  });

  it("reads a failed execution back as status error with a null result", async () => {
    const failed = await callTool(agent.key, echo.tools.status!, { code: 404 });
    const r = await readResult(agent.key, failed.body.execution_id, "?path=x");
    expect(r.body).toMatchObject({ status: "error", result: null, path_matched: false });
    expect(r.body.error).toMatch(/HTTP 404/);
  });
});

describe("events", () => {
  it("writes toolport.execution.completed and .failed through the outbox with what consumers need", async () => {
    const ok = await callTool(agent.key, echo.tools.list_items!, { n: 1 });
    const bad = await callTool(agent.key, echo.tools.status!, { code: 401 });
    const rows = await executionDb.query<{ subject: string; payload: Buffer }>(
      "SELECT subject, payload FROM outbox WHERE id = ANY($1::uuid[])",
      [[ok.body.execution_id, bad.body.execution_id]],
    );
    const bySubject = Object.fromEntries(rows.rows.map((r) => [r.subject, fromBinary(ExecutionEventSchema, r.payload)]));
    expect(bySubject["toolport.execution.completed"]).toMatchObject({
      executionId: ok.body.execution_id,
      toolId: echo.tools.list_items,
      toolName: "list_items",
      serviceId: echo.serviceId,
      accountId: agent.id,
      status: ExecutionStatus.SUCCESS,
      costCents: 0n,
    });
    expect(bySubject["toolport.execution.completed"]!.seconds).toBeGreaterThan(0);
    expect(bySubject["toolport.execution.completed"]!.keyId).toBeTruthy();
    expect(bySubject["toolport.execution.failed"]).toMatchObject({
      executionId: bad.body.execution_id,
      status: ExecutionStatus.ERROR,
      errorClass: ErrorClass.AUTH,
      errorType: "http_401",
    });
  });
});
