/**
 * The MCP server end to end (spec "MCP server", items 8 and 36; "Result fields on the MCP surface"):
 * the SDK's own `Client` on Streamable HTTP against the real mcp-server process, in front of the real
 * gateway, catalog, execution, billing, identity and content processes, on Postgres and NATS. Upstreams
 * are real too: the built-in tools, and a REST API started here (the echo API) published from its
 * OpenAPI document. Covers the eleven tools and their schemas, search -> batch -> fetch with a path, the
 * consent round trip, redaction, truncation with a cursor, per-element refusals, errors as tool results
 * (never protocol errors) with and without a key, and fifty concurrent clients each getting their own
 * results on their own key. Results are compared with exact values, and where the MCP surface passes a
 * gateway body through, with the same request made straight to the gateway.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { encode } from "gpt-tokenizer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shapeMismatches } from "../harness/shapes.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import {
  type AgentKey,
  connectCredential,
  createKey,
  type ExecStack,
  echoApiDocument,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";
import {
  callError,
  callOk,
  connectMcp,
  connectMcpV2,
  gatewayErrorLine,
  MCP_TOOL_NAMES,
  type McpCaller,
  modernRpc,
  schemaProperties,
} from "./mcp-support.js";

/** xpub of m/44'/60'/0' of the well-known test mnemonic ("test test ... junk"): crypto funding answers. */
const DEPOSIT_XPUB =
  "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
/** Native USDC on Base, billing's default contract (checksummed as the funding response gives it). */
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PUBLIC_SEARCHES_PER_MINUTE = 60;

let api: Upstream;
let s: ExecStack;
let agent: AgentKey;
let echo: { serviceId: string; tools: Record<string, string> };
/** The built-in word_count tool (slug text-word-count), as GET /v1/tools lists it. */
let wordCount: { id: string; slug: string; serviceId: string };
let mcp: Client;
const clients: Client[] = [];
const closers: (() => Promise<void>)[] = [];

async function connect(caller: McpCaller = {}): Promise<Client> {
  const client = await connectMcp(s.stack.mcpUrl, caller);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  api = await startEchoApi();
  s = await startExecStack(
    [`127.0.0.1:${api.port}`],
    {
      BILLING_DEPOSIT_XPUB: DEPOSIT_XPUB,
      // Fifty agents register for the concurrency test; the 5/min/IP limit is identity's own test's business.
      REGISTRATIONS_PER_MINUTE: "1000",
      PUBLIC_SEARCHES_PER_MINUTE: String(PUBLIC_SEARCHES_PER_MINUTE),
    },
    ["catalog", "execution", "billing", "identity", "content", "gateway", "mcp-server"],
  );
  agent = await registerAgent(s);
  echo = await publishOpenApi(s, agent, echoApiDocument(), api.url);
  const tools = await s.call("GET", "/tools/text-word-count", { key: agent.key });
  expect(tools.status, `the catalog seeds the built-in word_count: ${JSON.stringify(tools.body).slice(0, 300)}`).toBe(200);
  const found = tools.body;
  wordCount = { id: found.id, slug: found.slug, serviceId: found.service_id };
  mcp = await connect({ key: agent.key });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(closers.map((close) => close().catch(() => {})));
  await s?.stop();
  await api?.close();
});

describe("the server and its eleven tools", () => {
  it("answers GET /mcp/health without a key", async () => {
    const res = await fetch(`${s.stack.mcpUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("lists exactly the eleven tools, each with a title, a description, described inputs, an output schema and annotations", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(typeof tool.title, `${tool.name}.title`).toBe("string");
      expect(tool.title!.length, `${tool.name}.title`).toBeGreaterThan(3);
      expect(tool.description?.length ?? 0, `${tool.name}.description`).toBeGreaterThan(40);
      expect(tool.inputSchema.type, `${tool.name}.inputSchema`).toBe("object");
      for (const [pointer, property] of schemaProperties(tool.inputSchema)) {
        expect(typeof property.description, `${tool.name}.inputSchema${pointer} has a description`).toBe("string");
        expect((property.description as string).length, `${tool.name}.inputSchema${pointer}`).toBeGreaterThan(5);
      }
      expect(tool.outputSchema?.type, `${tool.name}.outputSchema`).toBe("object");
      expect(typeof tool.annotations?.readOnlyHint, `${tool.name}.annotations.readOnlyHint`).toBe("boolean");
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // The arguments of the contract, no more and no less, and the required ones.
    const inputs: Record<string, [string[], string[]]> = {
      search_tools: [["detail", "limit", "query", "ready_only", "service_id"], ["query"]],
      batch_execute_tools: [["calls"], ["calls"]],
      fetch_result: [["execution_id", "max_chars", "path"], ["execution_id"]],
      get_recommendations: [["limit", "tool_id"], []],
      get_spending_limits: [[], []],
      fund_agent_wallet: [["amount_cents", "method"], ["method"]],
      create_skill: [
        ["assets", "name", "reference_files", "scripts", "skill_md_content", "visibility"],
        ["name", "skill_md_content"],
      ],
      list_workflows: [["limit", "offset", "search", "sort"], []],
      delete_workflow: [["workflow_id"], ["workflow_id"]],
      run_workflow: [["inputs", "max_response_chars", "workflow_id"], ["workflow_id"]],
      get_site_info: [["domain"], ["domain"]],
    };
    for (const [name, [properties, required]] of Object.entries(inputs)) {
      const schema = byName[name]!.inputSchema;
      expect(Object.keys(schema.properties ?? {}).sort(), `${name} arguments`).toEqual(properties);
      expect([...(schema.required ?? [])].sort(), `${name} required arguments`).toEqual(required);
    }
    const calls = byName.batch_execute_tools!.inputSchema.properties!.calls as {
      items: { properties: Record<string, unknown>; required: string[] };
    };
    expect(calls).toMatchObject({ type: "array", minItems: 1, maxItems: 10 });
    expect(Object.keys(calls.items.properties).sort()).toEqual([
      "confirm_token",
      "fields",
      "max_response_chars",
      "tool_id",
      "tool_input",
    ]);
    expect(calls.items.required).toEqual(["tool_id"]);
    expect((byName.fund_agent_wallet!.inputSchema.properties!.method as { enum: string[] }).enum).toEqual([
      "card_checkout",
      "crypto",
    ]);
    // Truthful annotations: only running tools or workflows, funding, creating a skill and deleting change anything.
    const readOnly = Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]));
    expect(readOnly).toEqual({
      search_tools: true,
      batch_execute_tools: false,
      fetch_result: true,
      get_recommendations: true,
      get_spending_limits: true,
      fund_agent_wallet: false,
      create_skill: false,
      list_workflows: true,
      delete_workflow: false,
      run_workflow: false,
      get_site_info: true,
    });
    expect(byName.delete_workflow!.annotations?.destructiveHint).toBe(true);
  });

  it("refuses a client that sent no credential with 401 and the OAuth challenge (issue 32), and lists nothing", async () => {
    await expect(connect()).rejects.toThrow(/authorization required/);
    const raw = await fetch(s.stack.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp"$/,
    );
    expect(JSON.stringify(await raw.json())).not.toContain("batch_execute_tools");
  });
});

describe("search -> batch execute -> fetch result, on the built-in word_count", () => {
  const text = "The quick brown fox jumps over the lazy dog. It barked!";
  const counted = {
    words: 11,
    characters: 55,
    characters_no_spaces: 45,
    lines: 1,
    sentences: 2,
    paragraphs: 1,
    reading_time_seconds: 3,
  };

  it("finds the tool by name, as the gateway's public search does for the same key", async () => {
    const found = await callOk(mcp, "search_tools", { query: "word_count", limit: 5, detail: "full" });
    expect(Object.keys(found)).toEqual(["tools"]);
    expect(found.tools[0]).toMatchObject({
      id: wordCount.id,
      slug: "text-word-count",
      name: "word_count",
      readiness: "ready",
      deprecated: false,
    });
    expect(found.tools[0].parameters.text).toMatchObject({ name: "text", type: "string", required: true });
    expect(found.tools.length).toBeLessThanOrEqual(5);
    for (const tool of found.tools) expect(shapeMismatches("PublicTool", tool), tool.id).toEqual([]);
    const rest = await s.call("GET", "/tools/public/search?query=word_count&limit=5", { key: agent.key });
    expect(rest.status).toBe(200);
    expect(found.tools).toEqual(rest.body);
  });

  it("answers the compact form by default: the same tools, each thing once, in fewer tokens", async () => {
    const compact = await callOk(mcp, "search_tools", { query: "word_count", limit: 5 });
    const full = await callOk(mcp, "search_tools", { query: "word_count", limit: 5, detail: "full" });
    expect(compact.tools.map((t: { id: string }) => t.id)).toEqual(full.tools.map((t: { id: string }) => t.id));
    const [tool, whole] = [compact.tools[0], full.tools[0]];
    expect(tool).toEqual({
      id: wordCount.id,
      name: "word_count",
      service_id: wordCount.serviceId,
      description: whole.description,
      parameters: {
        // The description once; the schema for its constraint (the built-in's 200,000-character bound).
        text: {
          type: "string",
          required: true,
          description: whole.parameters.text.description,
          schema: { type: "string", maxLength: 200_000 },
        },
      },
      readiness: "ready",
      // Called by the tests above this one: the reliability block is there, in three fields.
      ...(whole.reliability?.calls_30d
        ? {
            reliability: {
              success_rate_30d: whole.reliability.success_rate_30d,
              calls_30d: whole.reliability.calls_30d,
              p50_seconds: whole.reliability.p50_seconds,
            },
          }
        : {}),
    });
    expect(whole.parameters.text.description).not.toBe("");
    expect(encode(JSON.stringify(compact)).length).toBeLessThan(encode(JSON.stringify(full)).length);
  });

  it("searches the public catalog with the caller's readiness, and keeps the filters", async () => {
    const found = await callOk(mcp, "search_tools", { query: "count the words of a text", limit: 3, detail: "full" });
    const rest = await s.call("GET", `/tools/public/search?query=${encodeURIComponent("count the words of a text")}&limit=3`, {
      key: agent.key,
    });
    expect(found.tools).toEqual(rest.body);
    expect(found.tools.length).toBe(3);
    expect(found.tools.map((t: { id: string }) => t.id)).toContain(wordCount.id);
    // service_id keeps only that service's tools: here the built-in text tools' service.
    const scoped = await callOk(mcp, "search_tools", {
      query: "count words",
      service_id: wordCount.serviceId,
      limit: 30,
      detail: "full",
    });
    expect(scoped.tools.map((t: { id: string }) => t.id)).toContain(wordCount.id);
    expect(new Set(scoped.tools.map((t: { service_id: string }) => t.service_id))).toEqual(new Set([wordCount.serviceId]));
    const scopedPath = `/tools/public/search?query=count%20words&service_id=${wordCount.serviceId}&limit=30`;
    const scopedRest = await s.call("GET", scopedPath, { key: agent.key });
    expect(scoped.tools).toEqual(scopedRest.body);
    // ready_only keeps what this key can call now, as the gateway does.
    const ready = await callOk(mcp, "search_tools", { query: "echo items", ready_only: true, limit: 30, detail: "full" });
    const readyRest = await s.call("GET", "/tools/public/search?query=echo%20items&ready_only=true&limit=30", { key: agent.key });
    expect(ready.tools).toEqual(readyRest.body);
    expect(ready.tools.length).toBeGreaterThan(0);
    expect(ready.tools.every((t: { readiness: string }) => t.readiness === "ready")).toBe(true);
    // An empty query returns nothing (spec item 6).
    expect(await callOk(mcp, "search_tools", { query: "  " })).toEqual({ tools: [] });
  });

  it("recommends tools, as GET /v1/tools/recommended does", async () => {
    const got = await callOk(mcp, "get_recommendations", { tool_id: wordCount.id, limit: 3 });
    expect(Object.keys(got)).toEqual(["recommendations"]);
    const rest = await s.call("GET", `/tools/recommended?tool_id=${wordCount.id}&limit=3`, { key: agent.key });
    expect(rest.status).toBe(200);
    expect(got.recommendations).toEqual(rest.body);
    expect(got.recommendations.length).toBeLessThanOrEqual(3);
    const popular = await callOk(mcp, "get_recommendations", {});
    expect(popular.recommendations).toEqual((await s.call("GET", "/tools/recommended", { key: agent.key })).body);
  });

  it("runs it in a batch and reads the stored result back at a path", async () => {
    const ran = await callOk(mcp, "batch_execute_tools", { calls: [{ tool_id: wordCount.id, tool_input: { text } }] });
    expect(Object.keys(ran)).toEqual(["results"]);
    expect(ran.results).toHaveLength(1);
    const [element] = ran.results;
    expect(element).toEqual({
      tool_id: wordCount.id,
      success: true,
      result: counted,
      truncated: false,
      cursor: null,
      error: null,
      _meta: { execution_id: expect.stringMatching(UUID) },
    });
    const id = element._meta.execution_id;

    const words = await callOk(mcp, "fetch_result", { execution_id: id, path: "words" });
    expect(words).toEqual({
      execution_id: id,
      tool_id: wordCount.id,
      status: "success",
      executed_at: expect.any(String),
      error: null,
      path: "words",
      result: 11,
      truncated: false,
      response_meta: null,
      path_matched: true,
    });
    expect(shapeMismatches("ExecutionResult", words)).toEqual([]);
    const rest = await s.call("GET", `/tools/executions/${id}/result?path=words`, { key: agent.key });
    expect(words).toEqual(rest.body);

    const whole = await callOk(mcp, "fetch_result", { execution_id: id });
    expect(whole).toMatchObject({ execution_id: id, status: "success", path: null, result: counted });
    expect("path_matched" in whole).toBe(false);
    const missing = await callOk(mcp, "fetch_result", { execution_id: id, path: "nope" });
    expect(missing).toMatchObject({ path: "nope", path_matched: false, result: null });
  });

  it("runs by slug, projects with fields, and keeps input order", async () => {
    const ran = await callOk(mcp, "batch_execute_tools", {
      calls: [
        { tool_id: "text-word-count", tool_input: { text: "one two three" }, fields: ["words", "nope"] },
        { tool_id: "text-slugify", tool_input: { text: "Crème Brûlée: 10 Easy Steps!" } },
        { tool_id: wordCount.id, tool_input: {} },
      ],
    });
    const [projected, slug, invalid] = ran.results;
    expect(projected).toEqual({
      tool_id: wordCount.id,
      success: true,
      result: { words: 3 },
      truncated: false,
      cursor: null,
      error: null,
      _meta: { execution_id: expect.stringMatching(UUID) },
      projection: { kept: ["words"], unmatched: ["nope"] },
    });
    expect(slug).toMatchObject({ success: true, result: { slug: "creme-brulee-10-easy-steps" }, error: null });
    // Invalid input is that element's refusal; it never ran, so it has no handle.
    expect(invalid).toMatchObject({
      tool_id: wordCount.id,
      success: false,
      result: null,
      error_code: "invalid_parameters",
      _meta: { execution_id: null },
    });
    expect(typeof invalid.error).toBe("string");
  });

  it("answers a handle that is not the caller's as an error result carrying the gateway's 404", async () => {
    const unknown = randomUUID();
    const text404 = await callError(mcp, "fetch_result", { execution_id: unknown });
    const rest = await s.call("GET", `/tools/executions/${unknown}/result`, { key: agent.key });
    expect(rest.status).toBe(404);
    expect(text404.startsWith(`${gatewayErrorLine(rest)}\n`), text404).toBe(true);
    // Another account's handle is not found either.
    const ran = await callOk(mcp, "batch_execute_tools", { calls: [{ tool_id: wordCount.id, tool_input: { text: "mine" } }] });
    const other = await connect({ key: (await registerAgent(s)).key });
    const theirs = await callError(other, "fetch_result", { execution_id: ran.results[0]._meta.execution_id });
    expect(theirs.split(":")[0]).toBe(rest.body.error.code);
  });
});

describe("consent round trip through batch_execute_tools", () => {
  let confirming: Client;
  let confirmingKey: string;
  beforeAll(async () => {
    confirmingKey = await createKey(s, agent, { require_confirmation: true });
    confirming = await connect({ key: confirmingKey });
  });

  it("returns a consent element and runs nothing; the same call with its confirm_token runs once", async () => {
    const input = { item_id: "mcp-1", title: "written through MCP" };
    const before = api.requests.length;
    const asked = await callOk(confirming, "batch_execute_tools", {
      calls: [{ tool_id: echo.tools.echo_item, tool_input: input }],
    });
    const [element] = asked.results;
    expect(element).toEqual({
      tool_id: echo.tools.echo_item,
      success: false,
      result: null,
      truncated: false,
      cursor: null,
      error: expect.any(String),
      _meta: { execution_id: null },
      error_code: "confirmation_required",
      consent: {
        tool_id: echo.tools.echo_item,
        tool_name: "echo_item",
        parameters: input,
        confirm_token: expect.stringMatching(/^ct1\./),
        expires_at: expect.any(String),
      },
    });
    expect(new Date(element.consent.expires_at).getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(api.requests.length, "nothing reached the upstream").toBe(before);

    const confirmed = await callOk(confirming, "batch_execute_tools", {
      calls: [{ tool_id: echo.tools.echo_item, tool_input: input, confirm_token: element.consent.confirm_token }],
    });
    const [ran] = confirmed.results;
    expect(ran).toMatchObject({ tool_id: echo.tools.echo_item, success: true, error: null, truncated: false });
    expect(ran.result).toMatchObject({ method: "POST", path: "/echo/items/mcp-1", body: { title: "written through MCP" } });
    expect(ran._meta.execution_id).toMatch(UUID);
    expect("consent" in ran).toBe(false);
    expect(api.requests.length - before).toBe(1);

    // The token is single use: sent again, it asks again and runs nothing.
    const replayed = await callOk(confirming, "batch_execute_tools", {
      calls: [{ tool_id: echo.tools.echo_item, tool_input: input, confirm_token: element.consent.confirm_token }],
    });
    expect(replayed.results[0]).toMatchObject({ success: false, error_code: "confirmation_required" });
    expect(api.requests.length - before).toBe(1);
  });

  // The same person, asked through either revision: `input_required` rounds (2026-07-28), or
  // `elicitation/create` on the call's stream of a session opened by an initialize that declared
  // elicitation (2025-11-25).
  describe.each([
    ["2026-07-28", "auto"],
    ["2025-11-25", "legacy"],
  ] as const)("by asking the person (%s client with elicitation)", (_revision, mode) => {
    type Asked = { message: string; requestedSchema: unknown };
    async function asking(answer: "accept" | "decline" | "cancel", asked: Asked[]) {
      const client = await connectMcpV2(s.stack.mcpUrl, { key: confirmingKey }, mode, async (params) => {
        asked.push(params);
        return answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: answer };
      });
      closers.push(() => client.close());
      return client;
    }

    it("asks with the tool, the exact parameters and the price; accept runs the call once, and the read beside it once", async () => {
      const asked: Asked[] = [];
      const client = await asking("accept", asked);
      const input = { item_id: "asked-1", title: "agreed by the person" };
      const before = api.requests.length;
      const ran = await callOk(client, "batch_execute_tools", {
        calls: [
          { tool_id: echo.tools.list_items, tool_input: { n: 1 } },
          { tool_id: echo.tools.echo_item, tool_input: input },
        ],
      });
      expect(asked).toHaveLength(1);
      expect(asked[0]?.message).toContain('"echo_item"');
      expect(asked[0]?.message).toContain('"title": "agreed by the person"');
      expect(asked[0]?.message).toContain("Price: free.");
      expect(asked[0]?.requestedSchema).toMatchObject({ properties: { confirm: { type: "boolean" } } });
      expect(ran.results).toHaveLength(2);
      expect(ran.results[0]).toMatchObject({ tool_id: echo.tools.list_items, success: true });
      expect(ran.results[1]).toMatchObject({ tool_id: echo.tools.echo_item, success: true, error: null });
      expect(ran.results[1].result).toMatchObject({ method: "POST", path: "/echo/items/asked-1" });
      expect("consent" in ran.results[1]).toBe(false);
      expect(api.requests.length - before, "the read once, the write once").toBe(2);
    });

    it("decline (or dismissing the question) runs nothing and says so", async () => {
      for (const answer of ["decline", "cancel"] as const) {
        const asked: Asked[] = [];
        const client = await asking(answer, asked);
        const before = api.requests.length;
        const ran = await callOk(client, "batch_execute_tools", {
          calls: [{ tool_id: echo.tools.echo_item, tool_input: { item_id: `no-${answer}`, title: "no" } }],
        });
        expect(asked, answer).toHaveLength(1);
        expect(ran.results[0], answer).toMatchObject({
          success: false,
          error_code: "consent_declined",
          _meta: { execution_id: null },
        });
        expect(ran.results[0].error, answer).toMatch(answer === "decline" ? /^declined: / : /^cancelled: /);
        expect(api.requests.length - before, answer).toBe(0);
      }
    });
  });

  describe("by asking the person (2026-07-28, raw)", () => {
    /** A raw 2026-07-28 tools/call of batch_execute_tools from a client that can ask its user. */
    const rawBatch = (params: Record<string, unknown>, key = confirmingKey) =>
      modernRpc(
        s.stack.mcpUrl,
        "tools/call",
        { name: "batch_execute_tools", ...params },
        {
          key,
          capabilities: { elicitation: { form: {} } },
        },
      );

    it("runs nothing on a replayed, altered or borrowed requestState, or on other arguments", async () => {
      const args = { calls: [{ tool_id: echo.tools.echo_item, tool_input: { item_id: "raw-1", title: "once" } }] };
      const before = api.requests.length;
      const first = await rawBatch({ arguments: args });
      expect(first.result.resultType).toBe("input_required");
      const state = first.result.requestState as string;
      expect(Object.keys(first.result.inputRequests)).toEqual(["consent_0"]);
      expect(api.requests.length).toBe(before);

      const accept = { consent_0: { action: "accept", content: { confirm: true } } };
      const answered = await rawBatch({ arguments: args, inputResponses: accept, requestState: state });
      expect(answered.result.structuredContent.results[0]).toMatchObject({ success: true });
      expect(api.requests.length - before).toBe(1);

      // The same answer again: the services' confirm token inside is used up, so nothing runs.
      const replayed = await rawBatch({ arguments: args, inputResponses: accept, requestState: state });
      expect(replayed.result.structuredContent.results[0]).toMatchObject({ success: false, error_code: "confirmation_required" });
      expect(replayed.result.structuredContent.results[0].error).toMatch(/used already/);
      expect("consent" in replayed.result.structuredContent.results[0], "no new token for the model").toBe(false);
      // One character changed, another caller's key, or other arguments: refused before anything runs.
      const [head, body, mac] = state.split(".");
      const flipped = `${head}.${body?.slice(0, 10)}${body?.[10] === "A" ? "B" : "A"}${body?.slice(11)}.${mac}`;
      const altered = await rawBatch({ arguments: args, inputResponses: accept, requestState: flipped });
      expect(altered.error?.code).toBe(-32602);
      const borrowed = await rawBatch({ arguments: args, inputResponses: accept, requestState: state }, agent.key);
      expect(borrowed.error?.code).toBe(-32602);
      const other = { calls: [{ tool_id: echo.tools.echo_item, tool_input: { item_id: "raw-1", title: "changed" } }] };
      const changed = await rawBatch({ arguments: other, inputResponses: accept, requestState: state });
      expect(changed.result.isError).toBe(true);
      expect(changed.result.content[0].text).toMatch(/^consent_state_mismatch: /);
      expect(api.requests.length - before).toBe(1);
    });
  });

  it("runs reading calls on the same key without consent", async () => {
    const ran = await callOk(confirming, "batch_execute_tools", {
      calls: [{ tool_id: echo.tools.list_items, tool_input: { n: 1 } }],
    });
    expect(ran.results[0]).toMatchObject({
      success: true,
      result: { items: [{ id: 0, name: "item 0" }], next_cursor: "cursor-2" },
    });
  });
});

describe("what an upstream returns", () => {
  it("masks a credential the upstream echoes back, with _meta.redaction, here and in the stored result", async () => {
    const secret = `header-key-${randomBytes(6).toString("hex")}`;
    const svc = await publishOpenApi(
      s,
      agent,
      echoApiDocument({ scheme: { type: "apiKey", in: "header", name: "X-Api-Key" } }),
      api.url,
    );
    await connectCredential(s, agent, svc.serviceId, { api_key: secret });
    const result = await mcp.callTool({
      name: "batch_execute_tools",
      arguments: { calls: [{ tool_id: svc.tools.show_secret }] },
    });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(api.requests.at(-1)!.headers["x-api-key"], "the upstream did receive the credential").toBe(secret);
    const [element] = (result.structuredContent as { results: Array<{ _meta: { execution_id: string } }> }).results;
    expect(element).toEqual({
      tool_id: svc.tools.show_secret,
      success: true,
      result: { you_sent: "[REDACTED:API_KEY]", note: "ok" },
      truncated: false,
      cursor: null,
      error: null,
      _meta: {
        execution_id: expect.stringMatching(UUID),
        redaction: { count: 1, fields: [{ path: "you_sent", key: "you_sent", rule: "injected_credential" }], mode: "mask" },
      },
    });
    const stored = await callOk(mcp, "fetch_result", { execution_id: element!._meta.execution_id, path: "you_sent" });
    expect(stored).toMatchObject({ result: "[REDACTED:API_KEY]", path_matched: true });
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it("trims a large result to max_response_chars with a truncation note, and passes the upstream's cursor", async () => {
    const n = 2000;
    const cap = 2000;
    const ran = await callOk(mcp, "batch_execute_tools", {
      calls: [
        { tool_id: echo.tools.list_items, tool_input: { n }, max_response_chars: cap },
        { tool_id: echo.tools.list_items, tool_input: { n: 2 } },
      ],
    });
    const [big, small] = ran.results;
    const original = { items: Array.from({ length: n }, (_, i) => ({ id: i, name: `item ${i}` })), next_cursor: "cursor-2" };
    const kept = big.result.items as unknown[];
    expect(big).toMatchObject({
      tool_id: echo.tools.list_items,
      success: true,
      truncated: true,
      cursor: "cursor-2",
      error: null,
    });
    expect(big.result.next_cursor).toBe("cursor-2");
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(original.items.slice(0, kept.length));
    const chars = JSON.stringify(big.result).length;
    expect(chars).toBeLessThanOrEqual(cap);
    expect(big._meta).toEqual({
      execution_id: expect.stringMatching(UUID),
      truncation_note:
        `result trimmed from ${JSON.stringify(original).length} to ${chars} characters (cap ${cap}); ` +
        `items: kept ${kept.length} of ${n} entries (each whole; ${n - kept.length} dropped from the end)`,
    });
    // A payload that fits is whole, and still names its cursor.
    expect(small).toEqual({
      tool_id: echo.tools.list_items,
      success: true,
      result: { items: original.items.slice(0, 2), next_cursor: "cursor-2" },
      truncated: false,
      cursor: "cursor-2",
      error: null,
      _meta: { execution_id: expect.stringMatching(UUID) },
    });

    // The whole result is stored: the last entry is there by path, and a small read is capped with its meta.
    const id = big._meta.execution_id;
    expect(await callOk(mcp, "fetch_result", { execution_id: id, path: `items[${n - 1}].name` })).toMatchObject({
      result: `item ${n - 1}`,
      path_matched: true,
      truncated: false,
    });
    const capped = await callOk(mcp, "fetch_result", { execution_id: id, max_chars: 500 });
    expect(capped).toMatchObject({ truncated: true, response_meta: { truncated: true, cursor: "cursor-2" } });
    expect(capped.response_meta.dropped_items.items).toEqual({ kept: capped.result.items.length, total: n });
    expect(shapeMismatches("ExecutionResult", capped)).toEqual([]);
  });

  it("reports a failed upstream call as a failed element with its handle, not as an error result", async () => {
    const ran = await callOk(mcp, "batch_execute_tools", { calls: [{ tool_id: echo.tools.status, tool_input: { code: 502 } }] });
    const [failed] = ran.results;
    expect(failed).toMatchObject({ success: false, result: null, truncated: false, cursor: null });
    expect(failed.error).toMatch(/HTTP 502/);
    expect(failed._meta.execution_id).toMatch(UUID);
    expect(await callOk(mcp, "fetch_result", { execution_id: failed._meta.execution_id })).toMatchObject({
      status: "error",
      result: null,
      error: failed.error,
    });
  });
});

describe("refusals per element", () => {
  it("refuses a tool outside the key's allow-list in its element while the allowed one runs", async () => {
    const limited = await connect({ key: await createKey(s, agent, { allowed_tools: [echo.tools.list_items] }) });
    const before = api.requests.length;
    const ran = await callOk(limited, "batch_execute_tools", {
      calls: [
        { tool_id: echo.tools.list_items, tool_input: { n: 2 } },
        { tool_id: echo.tools.echo_item, tool_input: { item_id: "x", title: "not allowed" } },
        { tool_id: wordCount.id, tool_input: { text: "not allowed either" } },
      ],
    });
    const [allowed, refused, builtin] = ran.results;
    expect(allowed).toMatchObject({
      tool_id: echo.tools.list_items,
      success: true,
      result: {
        items: [
          { id: 0, name: "item 0" },
          { id: 1, name: "item 1" },
        ],
        next_cursor: "cursor-2",
      },
      error: null,
    });
    for (const [element, toolId] of [
      [refused, echo.tools.echo_item],
      [builtin, wordCount.id],
    ] as const) {
      expect(element).toEqual({
        tool_id: toolId,
        success: false,
        result: null,
        truncated: false,
        cursor: null,
        error: expect.any(String),
        _meta: { execution_id: null },
        error_code: "tool_not_permitted",
      });
    }
    expect(api.requests.length - before, "only the allowed call reached the upstream").toBe(1);
  });

  it("refuses a priced tool on an empty wallet with insufficient_balance in its element", async () => {
    const owner = await registerAgent(s);
    const svc = await publishOpenApi(s, owner, echoApiDocument(), api.url);
    const priced = await s.call("PATCH", `/tools/${svc.tools.list_items}`, { key: owner.key, body: { price_per_call_cents: 7 } });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    const client = await connect({ key: owner.key });
    const ran = await callOk(client, "batch_execute_tools", { calls: [{ tool_id: svc.tools.list_items, tool_input: { n: 1 } }] });
    expect(ran.results[0]).toMatchObject({
      tool_id: svc.tools.list_items,
      success: false,
      result: null,
      error_code: "insufficient_balance",
      _meta: { execution_id: null },
    });
  });
});

describe("wallet tools", () => {
  it("gets the spending settings as GET /v1/x402/settings gives them", async () => {
    const limits = await callOk(mcp, "get_spending_limits");
    expect(limits).toMatchObject({ max_per_call_atomic: 5_000_000, daily_limit_atomic: null });
    expect(limits).toEqual((await s.call("GET", "/x402/settings", { key: agent.key })).body);
  });

  it("returns the crypto deposit details, every field present", async () => {
    const funding = await callOk(mcp, "fund_agent_wallet", { method: "crypto" });
    expect(funding).toEqual({
      wallet_id: expect.any(String),
      method: "crypto",
      checkout_url: null,
      deposit_address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      network: "eip155:8453",
      usdc_contract: BASE_USDC,
      balance_usdc: "0.000000",
    });
    const rest = await s.call("POST", "/agents/wallets/fund", { key: agent.key, body: { method: "crypto" } });
    expect(funding).toEqual(rest.body);
  });

  it("refuses card_checkout without an amount with the gateway's 400, and a too-small amount without a call", async () => {
    const text = await callError(mcp, "fund_agent_wallet", { method: "card_checkout" });
    const rest = await s.call("POST", "/agents/wallets/fund", { key: agent.key, body: { method: "card_checkout" } });
    expect(rest.status).toBe(400);
    expect(text.startsWith(`${gatewayErrorLine(rest)}\n`), text).toBe(true);
    // Below the 100-cent minimum the arguments are refused as a tool result too.
    const small = await callError(mcp, "fund_agent_wallet", { method: "card_checkout", amount_cents: 50 });
    expect(small).toMatch(/amount_cents/);
  });
});

describe("content tools", () => {
  it("create_skill saves a private skill, the same one the REST route shows", async () => {
    const name = `mcp-skill-${randomBytes(3).toString("hex")}`;
    const md = `---\ndescription: a test skill\n---\n# Skill`;
    const made = await callOk(mcp, "create_skill", {
      name,
      skill_md_content: md,
      scripts: [{ name: "run.sh", content: "echo hi" }],
    });
    expect(made).toMatchObject({ name, description: "a test skill", visibility: "private", skill_md: md });
    const rest = await s.call("GET", `/skills/${made.id}`, { key: agent.key });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual(made);
    // The same name again: the gateway's 409 as an error result.
    const again = await s.call("POST", "/skills", { key: agent.key, body: { name, skill_md_content: md } });
    expect(again.status).toBe(409);
    const text = await callError(mcp, "create_skill", { name, skill_md_content: md });
    expect(text.startsWith(`${gatewayErrorLine(again)}\n`), text).toBe(true);
  });

  it("get_site_info: a domain without a live public record is the gateway's 404 as an error result", async () => {
    const rest = await s.call("GET", "/agent-sites/domain/example.com");
    expect(rest.status).toBe(404);
    const text = await callError(mcp, "get_site_info", { domain: "example.com" });
    expect(text.startsWith(`${gatewayErrorLine(rest)}\n`), text).toBe(true);
  });
});

describe("workflow tools", () => {
  it("list_workflows: public workflows, as the REST route lists them", async () => {
    const word = `mcpflow${randomBytes(3).toString("hex")}`;
    const made = await s.call("POST", "/workflows", {
      key: agent.key,
      body: {
        name: `Count ${word}`,
        visibility: "public",
        steps: [{ tool_id: wordCount.id, input_mapping: { text: "{{inputs.text}}" } }],
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const rest = await s.call("GET", `/workflows/public?search=${word}&limit=5`);
    expect(rest.body.map((w: { id: string }) => w.id)).toEqual([made.body.id]);
    const listed = await callOk(mcp, "list_workflows", { search: word, limit: 5 });
    expect(listed).toEqual({ workflows: rest.body });
    expect(listed.workflows[0]).toMatchObject({ step_count: 1, total_executions: 0, success_rate: 0 });
  });

  it("delete_workflow: deletes the caller's workflow; another's is the gateway's 404", async () => {
    const made = await s.call("POST", "/workflows", {
      key: agent.key,
      body: { name: "to delete", steps: [{ tool_id: wordCount.id, input_mapping: { text: "a b" } }] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const stranger = await registerAgent(s);
    const other = await connect({ key: stranger.key });
    const rest = await s.call("DELETE", `/workflows/${made.body.id}`, { key: stranger.key });
    expect(rest.status).toBe(404);
    const text = await callError(other, "delete_workflow", { workflow_id: made.body.id });
    expect(text.startsWith(`${gatewayErrorLine(rest)}\n`), text).toBe(true);
    expect(await callOk(mcp, "delete_workflow", { workflow_id: made.body.id })).toEqual({ deleted: true });
    expect((await s.call("GET", `/workflows/${made.body.id}`, { key: agent.key })).status).toBe(404);
  });
});

describe("errors are tool results, never protocol errors", () => {
  it("with a revoked key: every tool that acts for the caller says the key was not accepted and to send svc-api-key", async () => {
    const revokedKey = await createKey(s, agent, null);
    const revokedId = (await s.call("GET", "/api-keys", { key: agent.key })).body.find(
      (k: { key_prefix: string }) => k.key_prefix === revokedKey.slice(0, 8),
    ).id;
    expect((await s.call("DELETE", `/api-keys/${revokedId}`, { key: agent.key })).status).toBe(200);
    const anonymous = await connect({ key: revokedKey });
    const needKey: Array<[string, Record<string, unknown>]> = [
      ["batch_execute_tools", { calls: [{ tool_id: wordCount.id, tool_input: { text: "a b" } }] }],
      ["fetch_result", { execution_id: randomUUID() }],
      ["get_spending_limits", {}],
      ["fund_agent_wallet", { method: "crypto" }],
      ["create_skill", { name: "s", skill_md_content: "---\ndescription: d\n---\n" }],
      ["delete_workflow", { workflow_id: randomUUID() }],
    ];
    for (const [tool, args] of needKey) {
      const text = await callError(anonymous, tool, args);
      expect(text, tool).toContain("svc-api-key");
    }
  });

  it("with a key that is not valid: the gateway's 401 as an error result naming svc-api-key", async () => {
    const badKey = `tp_${randomBytes(24).toString("hex")}`;
    const bad = await connect({ key: badKey });
    const rest = await s.call("POST", "/tools/call/batch", {
      key: badKey,
      body: { calls: [{ tool_id: wordCount.id, tool_input: { text: "a" } }] },
    });
    expect(rest.status).toBe(401);
    expect(rest.body.error.code).toBe("unauthenticated");
    const text = await callError(bad, "batch_execute_tools", { calls: [{ tool_id: wordCount.id, tool_input: { text: "a" } }] });
    expect(text.startsWith(`${gatewayErrorLine(rest)}\n`), text).toBe(true);
    expect(text).toContain("svc-api-key");
    for (const [tool, args] of [
      // Public search takes no key, but one that was sent and refused is refused here as at the gateway.
      ["search_tools", { query: "word_count" }],
      ["get_spending_limits", {}],
      ["fetch_result", { execution_id: randomUUID() }],
      ["fund_agent_wallet", { method: "crypto" }],
    ] as const) {
      const refused = await callError(bad, tool, args);
      expect(refused.startsWith("unauthenticated: "), `${tool}: ${refused}`).toBe(true);
    }
  });

  it("forwards svc-org-id: the answer is the gateway's for the same key and organization", async () => {
    const orgId = randomUUID();
    const client = await connect({ key: agent.key, orgId });
    const rest = await s.call("GET", "/x402/settings", { key: agent.key, headers: { "svc-org-id": orgId } });
    if (rest.status === 200) {
      expect(await callOk(client, "get_spending_limits")).toEqual(rest.body);
    } else {
      const text = await callError(client, "get_spending_limits");
      expect(text.startsWith(`${gatewayErrorLine(rest)}\n`), text).toBe(true);
    }
  });

  it("answers arguments outside the schema as error results (0 or 11 calls, a missing tool_id)", async () => {
    const eleven = Array.from({ length: 11 }, () => ({ tool_id: wordCount.id, tool_input: { text: "a" } }));
    for (const args of [{ calls: [] }, { calls: eleven }, { calls: [{ tool_input: {} }] }, {}]) {
      const text = await callError(mcp, "batch_execute_tools", args);
      expect(text, JSON.stringify(args).slice(0, 80)).toMatch(/calls/);
    }
    expect(await callError(mcp, "search_tools", { limit: 3 })).toMatch(/query/);
    expect(await callError(mcp, "fetch_result", {})).toMatch(/execution_id/);
  });
});

describe("fifty concurrent clients", () => {
  it("each runs a batch on its own key and gets its own results", { timeout: 180_000 }, async () => {
    const agents: AgentKey[] = [];
    for (let i = 0; i < 50; i += 10) {
      agents.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => registerAgent(s, `mcp-conc-${i + j}`)))));
    }
    const own = await Promise.all(agents.map((a) => connectMcp(s.stack.mcpUrl, { key: a.key }, `client-${a.id}`)));
    clients.push(...own);
    // Client i counts i + 1 distinct words and slugifies its own name.
    const runs = await Promise.all(
      own.map(async (client, i) => {
        const text = Array.from({ length: i + 1 }, (_, k) => `c${i}w${k}`).join(" ");
        const ran = await callOk(client, "batch_execute_tools", {
          calls: [
            { tool_id: wordCount.id, tool_input: { text } },
            { tool_id: "text-slugify", tool_input: { text: `Client Number ${i}` } },
          ],
        });
        return { i, text, ran };
      }),
    );
    for (const { i, text, ran } of runs) {
      const [count, slug] = ran.results;
      expect(count, `client ${i}`).toMatchObject({ tool_id: wordCount.id, success: true, error: null });
      expect(count.result, `client ${i}`).toMatchObject({ words: i + 1, characters: text.length });
      expect(slug.result, `client ${i}`).toEqual({ slug: `client-number-${i}` });
    }
    const handles = runs.map((r) => r.ran.results[0]._meta.execution_id as string);
    expect(new Set(handles).size).toBe(50);
    // Each reads its own handle back, and the next client's handle is not found on its key: every gateway
    // call of every concurrent MCP request carried that request's own key.
    await Promise.all(
      own.map(async (client, i) => {
        const mine = await callOk(client, "fetch_result", { execution_id: handles[i], path: "words" });
        expect(mine, `client ${i}`).toMatchObject({ execution_id: handles[i], result: i + 1, path_matched: true });
        const theirs = await callError(client, "fetch_result", { execution_id: handles[(i + 1) % 50] });
        expect(theirs.split(":")[0], `client ${i}`).toBe("execution_not_found");
      }),
    );
  });
});

describe("rate limits", () => {
  // Last in the file: it spends the public-search budget of this stack's one client address.
  it("turns the gateway's 429 into an error result that says to wait Retry-After", async () => {
    const anonymous = await connect({ key: agent.key });
    let text: string | undefined;
    // Up to twice the limit and one: a run of searches that straddles the edge of a minute window still
    // goes over the limit within one window (a slow machine once spread 61 searches over two).
    for (let i = 0; i <= 2 * PUBLIC_SEARCHES_PER_MINUTE && text === undefined; i++) {
      const result = await anonymous.callTool({ name: "search_tools", arguments: { query: "word_count", limit: 1 } });
      if (result.isError) text = (result.content as Array<{ text: string }>)[0]!.text;
    }
    expect(text, "the public search limit was reached").toBeDefined();
    const rest = await s.call("GET", "/tools/public/search?query=word_count&limit=1");
    expect(rest.status).toBe(429);
    expect(text!.split(":")[0]).toBe(rest.body.error.code);
    expect(text).toMatch(/Retry-After/);
    expect(text).toMatch(/wait/i);
  });
});
