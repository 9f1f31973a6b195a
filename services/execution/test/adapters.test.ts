/**
 * The upstream adapters against real servers: the REST adapter (every parameter location, each auth
 * scheme, failure classes, redirects, size limit, keep-alive), the SSRF guard on real connections, the MCP
 * adapter (Streamable HTTP sessions reused, SSE fallback, reconnect; servers speaking only protocol
 * revision 2026-07-28 or only 2025-11-25, structured output, tools that ask a person a question and the
 * answers that finish them) and
 * secret references (env, Vault).
 */

import type { Json } from "@toolport/kit/json-values";
import { createLogger } from "@toolport/kit/logger";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BOOKING_QUESTION,
  type McpUpstream,
  type ModernMcpUpstream,
  startEchoApi,
  startMcpUpstream,
  startModernSdkUpstream,
  startSseMcpUpstream,
  startVault,
  type Upstream,
} from "../../../test/harness/upstreams.js";
import { DEFAULT_MCP_SESSION_LIMITS, McpSessions } from "../src/adapters/mcp.js";
import { buildRequest, callRest } from "../src/adapters/rest.js";
import { SecretRefs } from "../src/adapters/secret-refs.js";
import type { Answer, UpstreamResume } from "../src/domain/continuation.js";
import { ExecutionFailure } from "../src/domain/failure.js";
import type { Credential, ToolForCall, ToolParameter } from "../src/domain/model.js";

const log = createLogger("execution-test", "silent");
const limits = { timeoutMs: 2000, maxBytes: 1 << 20 };

function tool(over: Partial<ToolForCall>): ToolForCall {
  return {
    id: "t1",
    name: "t",
    serviceId: "s1",
    serviceName: "svc",
    serviceType: "api",
    method: "GET",
    path: "/echo",
    baseUrl: "",
    mcpServerUrl: "",
    mcpToolName: "",
    internalHandler: "",
    parameters: [],
    requestBodyContentType: "",
    securitySchemes: [],
    sideEffecting: false,
    isPaid: false,
    priceCents: 0n,
    revision: 1n,
    active: true,
    ...over,
  };
}
const param = (key: string, location: ToolParameter["location"], extra: Partial<ToolParameter> = {}): ToolParameter => ({
  key,
  name: key,
  location,
  type: "string",
  required: false,
  ...extra,
});

let api: Upstream;
let outbound: Outbound;

async function call(t: ToolForCall, input: Record<string, Json>, credential?: Credential, o: Outbound = outbound) {
  return (await callRest(o, buildRequest(t, input, credential), limits)) as Record<string, any>;
}
async function failure(p: Promise<unknown>): Promise<ExecutionFailure> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ExecutionFailure);
  return err as ExecutionFailure;
}

beforeAll(async () => {
  api = await startEchoApi();
  outbound = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${api.port}`) });
});
afterAll(async () => {
  await outbound.close();
  await api.close();
});

describe("REST adapter", () => {
  it("places parameters in path, query, header, cookie and a JSON body, with defaults", async () => {
    const t = tool({
      method: "POST",
      path: "/echo/items/{item_id}/files/{file_path}",
      baseUrl: `${api.url}/`,
      requestBodyContentType: "application/json",
      requestBodySchema: { type: "object", properties: { title: { type: "string" }, count: { type: "integer" } } },
      parameters: [
        param("item_id", "path", { required: true }),
        param("file_path", "path", { encodeSlashes: false }),
        param("query_id", "query", { name: "id" }),
        param("tags", "query", { type: "array" }),
        param("sort", "query", { default: "asc", enum: ["asc", "desc"] }),
        param("X-Trace", "header"),
        param("session", "cookie"),
        param("title", "body"),
        param("count", "body"),
      ],
    });
    const out = await call(t, {
      item_id: "a/b c",
      file_path: "dir/sub/file.txt",
      query_id: 7,
      tags: ["x", "y"],
      "X-Trace": "trace-1",
      session: "s=1;2",
      title: "hello",
      count: 3,
    });
    expect(out.raw_path).toBe("/echo/items/a%2Fb%20c/files/dir/sub/file.txt");
    expect(out.query).toEqual({ id: ["7"], tags: ["x", "y"], sort: ["asc"] });
    expect(out.headers["x-trace"]).toBe("trace-1");
    expect(out.cookies).toEqual({ session: "s=1;2" });
    expect(out.body).toEqual({ title: "hello", count: 3 });
    expect(out.content_type).toBe("application/json");
  });

  it("sends a non-object body whole, and form bodies form-encoded", async () => {
    const whole = tool({
      method: "PUT",
      baseUrl: api.url,
      parameters: [param("body", "body", { type: "array" })],
      requestBodySchema: { type: "array" },
    });
    expect((await call(whole, { body: [1, 2, 3] })).body).toEqual([1, 2, 3]);
    const form = tool({
      method: "POST",
      baseUrl: api.url,
      requestBodyContentType: "application/x-www-form-urlencoded",
      requestBodySchema: { type: "object", properties: { a: {}, b: {} } },
      parameters: [param("a", "body"), param("b", "body")],
    });
    const out = await call(form, { a: "1 2", b: "x&y" });
    expect(out.body).toBe("a=1+2&b=x%26y");
    expect(out.content_type).toBe("application/x-www-form-urlencoded");
  });

  it("refuses values outside an enum and missing path parameters as caller errors", async () => {
    const t = tool({
      baseUrl: api.url,
      path: "/echo/{id}",
      parameters: [param("id", "path"), param("sort", "query", { enum: ["asc"] })],
    });
    expect(() => buildRequest(t, { id: "1", sort: "up" })).toThrow(/sort must be one of "asc"/);
    expect(() => buildRequest(t, {})).toThrow(/missing path parameter id/);
  });

  it("attaches credentials per scheme: API key in header, query or cookie, bearer, basic", async () => {
    const headerKey = tool({
      baseUrl: api.url,
      securitySchemes: [{ name: "k", type: "apiKey", location: "header", parameterName: "X-Api-Key" }],
    });
    expect((await call(headerKey, {}, { kind: "api_key", value: "key-123" })).headers["x-api-key"]).toBe("key-123");
    const queryKey = tool({
      baseUrl: api.url,
      securitySchemes: [{ name: "k", type: "apiKey", location: "query", parameterName: "api_key" }],
    });
    expect((await call(queryKey, {}, { kind: "api_key", value: "key-456" })).query).toEqual({ api_key: ["key-456"] });
    const cookieKey = tool({
      baseUrl: api.url,
      securitySchemes: [{ name: "k", type: "apiKey", location: "cookie", parameterName: "sid" }],
    });
    expect((await call(cookieKey, {}, { kind: "api_key", value: "key-789" })).cookies).toEqual({ sid: "key-789" });
    const bearer = tool({ baseUrl: api.url, securitySchemes: [{ name: "b", type: "http", scheme: "bearer" }] });
    expect((await call(bearer, {}, { kind: "bearer", token: "tok-1" })).headers.authorization).toBe("Bearer tok-1");
    const basic = tool({ baseUrl: api.url, securitySchemes: [{ name: "b", type: "http", scheme: "basic" }] });
    const built = buildRequest(basic, {}, { kind: "basic", username: "ann", password: "pw-secret" });
    expect(built.request.headers.authorization).toBe(`Basic ${Buffer.from("ann:pw-secret").toString("base64")}`);
    expect(built.injected.map((i) => i.value)).toEqual(["pw-secret", "ann:pw-secret"]);
  });

  it("parses JSON and text answers", async () => {
    expect(await callRest(outbound, buildRequest(tool({ baseUrl: api.url, path: "/text" }), {}), limits)).toBe(
      "plain text answer",
    );
  });

  it("classifies failures: auth, caller, upstream, timeout, bad JSON, too large, unreachable", async () => {
    const at = (path: string) => callRest(outbound, buildRequest(tool({ baseUrl: api.url, path }), {}), limits);
    expect(await failure(at("/status/401"))).toMatchObject({ errorClass: "auth", errorType: "http_401" });
    expect(await failure(at("/status/403"))).toMatchObject({ errorClass: "auth", errorType: "http_403" });
    expect(await failure(at("/status/404"))).toMatchObject({ errorClass: "caller", errorType: "http_404" });
    expect(await failure(at("/status/422"))).toMatchObject({ errorClass: "caller" });
    expect(await failure(at("/status/429"))).toMatchObject({ errorClass: "upstream" });
    expect(await failure(at("/status/502"))).toMatchObject({ errorClass: "upstream", errorType: "http_502" });
    expect((await failure(at("/status/500"))).message).toMatch(/HTTP 500: .*the upstream says no/);
    const slow = callRest(outbound, buildRequest(tool({ baseUrl: api.url, path: "/slow/1500" }), {}), {
      ...limits,
      timeoutMs: 300,
    });
    expect(await failure(slow)).toMatchObject({ errorClass: "upstream", errorType: "timeout" });
    expect(await failure(at("/badjson"))).toMatchObject({ errorClass: "upstream", errorType: "invalid_json" });
    const big = callRest(outbound, buildRequest(tool({ baseUrl: api.url, path: "/big/200000" }), {}), {
      ...limits,
      maxBytes: 100_000,
    });
    expect(await failure(big)).toMatchObject({ errorClass: "upstream", errorType: "response_too_large" });
    const closedPort = `127.0.0.1:${api.port === 65535 ? 1 : api.port + 1}`;
    const o = new Outbound({ policy: new AddressPolicy(closedPort) });
    const refused = callRest(o, buildRequest(tool({ baseUrl: `http://${closedPort}` }), {}), limits);
    expect(await failure(refused)).toMatchObject({ errorClass: "upstream", errorType: "connection_failed" });
    await o.close();
  });

  it("reuses keep-alive connections to the same upstream", async () => {
    const before = api.connections;
    for (let i = 0; i < 10; i++) await call(tool({ baseUrl: api.url }), {});
    expect(api.connections - before).toBeLessThanOrEqual(1);
  });
});

describe("SSRF guard on real connections", () => {
  const strict = () => new Outbound({ policy: new AddressPolicy() });

  it("refuses loopback by IP, by IPv6, by decimal/hex forms and by a name resolving to it", async () => {
    const o = strict();
    for (const base of [
      api.url,
      `http://[::1]:${api.port}`,
      `http://2130706433:${api.port}`,
      `http://0x7f.1:${api.port}`,
      `http://localhost:${api.port}`,
      `http://[::ffff:127.0.0.1]:${api.port}`,
    ]) {
      const f = await failure(callRest(o, buildRequest(tool({ baseUrl: base }), {}), limits));
      expect(f, base).toMatchObject({ errorClass: "upstream", errorType: "address_not_allowed" });
    }
    for (const base of [
      "http://10.0.0.1",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1",
      "http://[fd00:ec2::254]",
    ]) {
      const f = await failure(callRest(o, buildRequest(tool({ baseUrl: base }), {}), limits));
      expect(f, base).toMatchObject({ errorType: "address_not_allowed" });
    }
    expect(api.requests.some((r) => r.headers.host?.includes("2130706433"))).toBe(false);
    await o.close();
  });

  it("checks every redirect hop and drops credentials when leaving the origin", async () => {
    const other = await startEchoApi();
    try {
      // Only the first server is allowed: a redirect to the second is refused on the hop.
      const to = encodeURIComponent(`${other.url}/echo`);
      const t = tool({ baseUrl: api.url, path: "/redirect", parameters: [param("to", "query")] });
      const f = await failure(callRest(outbound, buildRequest(t, { to: decodeURIComponent(to) }), limits));
      expect(f.errorType).toBe("address_not_allowed");
      expect(other.requests).toHaveLength(0);
      // Both allowed: the hop happens without the Authorization header.
      const both = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${api.port},127.0.0.1:${other.port}`) });
      const out = (await callRest(
        both,
        buildRequest(t, { to: `${other.url}/echo` }, { kind: "bearer", token: "tok-x" }),
        limits,
      )) as Record<string, any>;
      expect(out.path).toBe("/echo");
      expect(out.headers.authorization).toBeUndefined();
      await both.close();
    } finally {
      await other.close();
    }
  });
});

describe("MCP adapter", () => {
  let mcp: McpUpstream;
  let sse: McpUpstream;
  let sessions: McpSessions;
  let mcpOutbound: Outbound;

  beforeAll(async () => {
    mcp = await startMcpUpstream();
    sse = await startSseMcpUpstream();
    mcpOutbound = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${mcp.port},127.0.0.1:${sse.port}`) });
    sessions = new McpSessions(mcpOutbound, log);
  });
  afterAll(async () => {
    await sessions.close();
    await mcpOutbound.close();
    await mcp.close();
    await sse.close();
  });

  it("calls a tool over Streamable HTTP, reusing one session across calls", async () => {
    for (let i = 0; i < 3; i++) {
      const envelope = (await sessions.call({
        url: mcp.url,
        toolName: "search_docs",
        input: { query: "q", limit: 2 },
        headers: {},
        timeoutMs: 5000,
      })) as any;
      expect(JSON.parse(envelope.content[0].text).results).toHaveLength(2);
    }
    expect(mcp.initializations).toBe(1);
    expect(mcp.toolCalls).toBe(3);
  });

  it("returns the envelope of a tool error (isError) for the caller to classify", async () => {
    const envelope = (await sessions.call({ url: mcp.url, toolName: "fail", input: {}, headers: {}, timeoutMs: 5000 })) as any;
    expect(envelope.isError).toBe(true);
  });

  it("falls back to the HTTP+SSE transport", async () => {
    const envelope = (await sessions.call({ url: sse.url, toolName: "plain", input: {}, headers: {}, timeoutMs: 5000 })) as any;
    expect(envelope.content[0].text).toBe("just words");
    await sessions.call({ url: sse.url, toolName: "plain", input: {}, headers: {}, timeoutMs: 5000 });
    expect(sse.initializations).toBe(1);
  });

  it("keeps at most maxSessions sessions (least recently used closed first) and closes idle ones", async () => {
    let clock = 1_000_000;
    const limited = new McpSessions(mcpOutbound, log, { maxSessions: 2, idleMs: 60_000 }, () => clock);
    const callAs = (who: string) =>
      limited.call({ url: mcp.url, toolName: "plain", input: {}, headers: { "x-caller": who }, timeoutMs: 5000 });
    try {
      const before = mcp.initializations;
      await callAs("a");
      await callAs("b");
      await callAs("a"); // reused; "b" is now the least recently used
      await callAs("c"); // a third credential: "b" is closed
      expect(limited.size).toBe(2);
      expect(mcp.initializations - before).toBe(3);
      await callAs("a");
      await callAs("c");
      expect(mcp.initializations - before).toBe(3);
      await callAs("b"); // was evicted: a new session
      expect(mcp.initializations - before).toBe(4);

      clock += 30_000;
      await callAs("b");
      clock += 45_000; // "a" and "c" unused for 75 s, "b" for 45 s
      limited.closeIdle();
      expect(limited.size).toBe(1);
      await callAs("b");
      expect(mcp.initializations - before).toBe(4);
      await callAs("a");
      expect(mcp.initializations - before).toBe(5);
    } finally {
      await limited.close();
    }
  });

  it("refuses MCP servers at disallowed addresses", async () => {
    const strict = new McpSessions(new Outbound({ policy: new AddressPolicy() }), log);
    const err = await strict.call({ url: mcp.url, toolName: "plain", input: {}, headers: {}, timeoutMs: 2000 }).catch((e) => e);
    expect(err).toMatchObject({ errorType: "address_not_allowed" });
  });
});

describe("MCP adapter with servers of either protocol revision (v2 SDK)", () => {
  let modern: ModernMcpUpstream;
  let legacy: ModernMcpUpstream;
  let loose: ModernMcpUpstream;
  let sessions: McpSessions;
  let mcpOutbound: Outbound;
  /** A tools/call envelope as the adapter returns it. */
  interface Envelope {
    content: Array<{ type: string; text?: string }>;
    structuredContent?: Json;
    isError?: boolean;
  }
  const callOn = async (up: ModernMcpUpstream, toolName: string, input: Record<string, Json>) =>
    (await sessions.call({ url: up.url, toolName, input, headers: {}, timeoutMs: 5000 })) as unknown as Envelope;

  beforeAll(async () => {
    modern = await startModernSdkUpstream({ speaks: "2026-07-28" });
    legacy = await startModernSdkUpstream({ speaks: "2025-11-25" });
    loose = await startModernSdkUpstream({ speaks: "2026-07-28", ignoresClientCapabilities: true });
    mcpOutbound = new Outbound({
      policy: new AddressPolicy([modern, legacy, loose].map((u) => `127.0.0.1:${u.port}`).join(",")),
    });
    sessions = new McpSessions(mcpOutbound, log);
  });
  afterAll(async () => {
    await sessions.close();
    await mcpOutbound.close();
    for (const up of [modern, legacy, loose]) await up?.close();
  });

  it("speaks 2026-07-28 to a server that only speaks it: one probe, then every call stateless", async () => {
    for (const query of ["a", "b"]) {
      const envelope = await callOn(modern, "search_docs", { query, limit: 2 });
      expect(JSON.parse(envelope.content[0]!.text!).results).toEqual([
        { id: "doc-0", title: `${query} #0` },
        { id: "doc-1", title: `${query} #1` },
      ]);
    }
    expect(modern.rpc).toEqual([
      { method: "server/discover", era: "modern" },
      { method: "tools/call", era: "modern" },
      { method: "tools/call", era: "modern" },
    ]);
  });

  it("speaks 2025-11-25 to a server that only speaks that, in one session", async () => {
    for (const query of ["a", "b"]) {
      const envelope = await callOn(legacy, "search_docs", { query });
      expect(JSON.parse(envelope.content[0]!.text!).results).toHaveLength(3);
    }
    expect(legacy.rpc).toEqual([
      { method: "server/discover", era: "modern" },
      { method: "initialize", era: "legacy" },
      { method: "notifications/initialized", era: "legacy" },
      { method: "tools/call", era: "legacy" },
      { method: "tools/call", era: "legacy" },
    ]);
  });

  it("keeps a tool's structuredContent in the envelope, beside its text", async () => {
    for (const up of [modern, legacy]) {
      const envelope = await callOn(up, "get_forecast", { city: "Lyon" });
      expect(envelope.structuredContent).toEqual({ city: "Lyon", temperature_c: 21, conditions: "sunny" });
      expect(envelope.content).toEqual([{ type: "text", text: "Sunny and 21 °C in Lyon" }]);
      expect(envelope.isError).toBeUndefined();
    }
  });

  it("fails a tool that needs a person's input with mcp_input_required and its question, at once and without retrying", async () => {
    // 2026-07-28: the server answers input_required (the client declares form elicitation and does not fulfil it).
    // 2025-11-25: the server sends elicitation/create; the question is kept waiting and the call answers at once.
    for (const up of [modern, legacy, loose]) {
      const started = Date.now();
      const err = await callOn(up, "book_table", { restaurant: "Chez Nous" }).catch((e) => e);
      expect(err, up.url).toBeInstanceOf(ExecutionFailure);
      expect(err).toMatchObject({ errorClass: "upstream", errorType: "mcp_input_required" });
      expect(err.message).toMatch(/^the MCP tool needs a person's input before it can finish/);
      expect(err.message).toContain(`(it asks: ${JSON.stringify(BOOKING_QUESTION)})`);
      const ask = (err as ExecutionFailure).ask!;
      expect(ask.questions).toEqual([
        {
          key: up === legacy ? "elicitation" : "confirm",
          message: BOOKING_QUESTION,
          requested_schema: expect.objectContaining({ type: "object", properties: { confirm: expect.any(Object) } }),
        },
      ]);
      expect(ask.resume.kind).toBe(up === legacy ? "pending" : "state");
      expect(Date.now() - started).toBeLessThan(2000);
      expect(up.toolCalls.book_table).toBe(1);
    }
    expect(loose.rpc.filter((r) => r.method === "tools/call")).toHaveLength(1);
    // The session is still good for the next call.
    expect((await callOn(loose, "search_docs", { query: "x", limit: 1 })).content[0]?.type).toBe("text");
    expect(loose.rpc.filter((r) => r.method === "server/discover")).toHaveLength(1);
  });

  const ask = async (up: ModernMcpUpstream, restaurant: string) => {
    const err = await callOn(up, "book_table", { restaurant }).catch((e) => e);
    expect(err, String(err)).toBeInstanceOf(ExecutionFailure);
    return (err as ExecutionFailure).ask!;
  };
  const answer = async (up: ModernMcpUpstream, restaurant: string, resume: UpstreamResume, answers: Record<string, Answer>) =>
    (await sessions.call({
      url: up.url,
      toolName: "book_table",
      input: { restaurant },
      headers: {},
      timeoutMs: 5000,
      resumption: { resume, answers },
    })) as unknown as Envelope;

  it("2026-07-28: the repeated call sends the answers with the server's requestState, and returns the tool's answer", async () => {
    const asked = await ask(modern, "Le Bistro");
    expect(asked.resume).toEqual({ kind: "state", requestState: "booking:Le Bistro", keys: ["confirm"] });
    const accepted = await answer(modern, "Le Bistro", asked.resume, {
      confirm: { action: "accept", content: { confirm: true } },
    });
    expect(accepted.content).toEqual([{ type: "text", text: "accept: Le Bistro (booked)" }]);
    expect(modern.echoedStates.at(-1)).toBe("booking:Le Bistro");
    const declined = await answer(modern, "Le Bistro", asked.resume, { confirm: { action: "decline" } });
    expect(declined.content).toEqual([{ type: "text", text: "decline: Le Bistro" }]);
  });

  it("2025-11-25: the question waits with the upstream call open; the answer finishes that same call, once", async () => {
    const before = legacy.toolCalls.book_table ?? 0;
    const asked = await ask(legacy, "Chez Paul");
    expect(asked.resume).toMatchObject({ kind: "pending", keys: ["elicitation"] });
    const done = await answer(legacy, "Chez Paul", asked.resume, {
      elicitation: { action: "accept", content: { confirm: true } },
    });
    expect(done.content).toEqual([{ type: "text", text: "accept: Chez Paul (booked)" }]);
    expect(legacy.toolCalls.book_table).toBe(before + 1);
    // The same answer again finds nothing waiting: it fails clearly, and nothing runs.
    const again = await answer(legacy, "Chez Paul", asked.resume, { elicitation: { action: "accept" } }).catch((e) => e);
    expect(again).toMatchObject({ errorType: "mcp_input_expired" });
    expect(again.message).toMatch(/call the tool again/);
    expect(legacy.toolCalls.book_table).toBe(before + 1);

    // Calls running beside the one that asks do not blur whose question it is.
    const [concurrent, beside] = await Promise.all([
      callOn(legacy, "book_table", { restaurant: "Chez Jean" }).catch((e) => e as ExecutionFailure),
      callOn(legacy, "search_docs", { query: "menus", limit: 1 }),
      callOn(legacy, "get_forecast", { city: "Nice" }),
    ]);
    expect(beside.content[0]?.type).toBe("text");
    expect((concurrent as ExecutionFailure).ask?.resume.kind).toBe("pending");
    const jean = await answer(legacy, "Chez Jean", (concurrent as ExecutionFailure).ask!.resume, {
      elicitation: { action: "accept", content: { confirm: true } },
    });
    expect(jean.content).toEqual([{ type: "text", text: "accept: Chez Jean (booked)" }]);

    const declined = await ask(legacy, "Chez Marie");
    const answered = await answer(legacy, "Chez Marie", declined.resume, { elicitation: { action: "decline" } });
    expect(answered.content).toEqual([{ type: "text", text: "decline: Chez Marie" }]);
  });

  it("2025-11-25: waiting questions are bounded; the oldest is answered cancel and its answer is refused", async () => {
    const bounded = new McpSessions(mcpOutbound, log, { ...DEFAULT_MCP_SESSION_LIMITS, maxPending: 1 });
    try {
      const call = (restaurant: string) =>
        bounded
          .call({ url: legacy.url, toolName: "book_table", input: { restaurant }, headers: {}, timeoutMs: 5000 })
          .catch((e) => e);
      const first = (await call("First")) as ExecutionFailure;
      const second = (await call("Second")) as ExecutionFailure;
      expect(second.ask?.resume.kind).toBe("pending");
      // The first question was answered cancel, and the upstream's tool finished with that answer.
      await vi.waitFor(() => expect(legacy.bookings).toContain("cancel: First"));
      const late = await bounded
        .call({
          url: legacy.url,
          toolName: "book_table",
          input: { restaurant: "First" },
          headers: {},
          timeoutMs: 5000,
          resumption: { resume: first.ask!.resume, answers: { elicitation: { action: "accept", content: { confirm: true } } } },
        })
        .catch((e) => e);
      expect(late).toMatchObject({ errorType: "mcp_input_expired" });
      expect(legacy.bookings).not.toContain("accept: First (booked)");
    } finally {
      await bounded.close();
    }
  });

  it("maps an unknown tool to mcp_invalid_request on either revision", async () => {
    for (const up of [modern, legacy]) {
      const err = await callOn(up, "no_such_tool", {}).catch((e) => e);
      expect(err).toMatchObject({ errorClass: "caller", errorType: "mcp_invalid_request" });
    }
  });
});

describe("secret references", () => {
  it("resolves env:// only for the allowed prefix", async () => {
    const refs = new SecretRefs({
      envPrefix: "TOOLPORT_SECRET_",
      env: { TOOLPORT_SECRET_X: "from-env", DATABASE_URL: "postgres://no" },
    });
    expect(await refs.resolve("env://TOOLPORT_SECRET_X")).toBe("from-env");
    expect(await refs.resolve("literal")).toBe("literal");
    await expect(refs.resolve("env://DATABASE_URL")).rejects.toMatchObject({ errorType: "credential_reference_refused" });
    await expect(refs.resolve("env://TOOLPORT_SECRET_MISSING")).rejects.toMatchObject({
      errorType: "credential_reference_unresolved",
    });
  });

  it("reads vault:// references from Vault KV v2", async () => {
    const vault = await startVault("root-token", { "toolport/github": { token: "from-vault", value: "default-field" } });
    try {
      const refs = new SecretRefs({ envPrefix: "X_", vaultAddr: vault.url, vaultToken: "root-token" });
      expect(await refs.resolve("vault://secret/toolport/github#token")).toBe("from-vault");
      expect(await refs.resolve("vault://secret/toolport/github")).toBe("default-field");
      expect(await refs.resolve("vault://secret/data/toolport/github#token")).toBe("from-vault");
      await expect(refs.resolve("vault://secret/toolport/missing#x")).rejects.toThrow(/HTTP 404/);
      const wrong = new SecretRefs({ envPrefix: "X_", vaultAddr: vault.url, vaultToken: "bad" });
      await expect(wrong.resolve("vault://secret/toolport/github#token")).rejects.toThrow(/HTTP 403/);
      const limited = new SecretRefs({
        envPrefix: "X_",
        vaultAddr: vault.url,
        vaultToken: "root-token",
        vaultPathPrefix: "secret/other/",
      });
      await expect(limited.resolve("vault://secret/toolport/github#token")).rejects.toMatchObject({
        errorType: "credential_reference_refused",
      });
    } finally {
      await vault.close();
    }
  });
});
