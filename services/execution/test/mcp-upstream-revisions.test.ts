/**
 * MCP tools through the whole stack (gateway, catalog, execution) on upstreams built with the v2 SDK: one
 * speaking only protocol revision 2026-07-28, one only 2025-11-25. Each is imported and its tools called;
 * a tool's structured content is its result, and a tool that needs a person's input is a failed
 * execution saying so (an answer of 200 with `success: false`, as any upstream failure is), never a 500
 * or a wait.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, type ExecStack, publishMcp, registerAgent, startExecStack } from "../../../test/e2e/execution-support.js";
import { BOOKING_QUESTION, type ModernMcpUpstream, startModernSdkUpstream } from "./upstreams.js";

let modern: ModernMcpUpstream;
let legacy: ModernMcpUpstream;
let loose: ModernMcpUpstream;
let s: ExecStack;
let agent: AgentKey;

beforeAll(async () => {
  modern = await startModernSdkUpstream({ speaks: "2026-07-28" });
  legacy = await startModernSdkUpstream({ speaks: "2025-11-25" });
  loose = await startModernSdkUpstream({ speaks: "2026-07-28", ignoresClientCapabilities: true });
  const allow = [modern, legacy, loose].map((u) => `127.0.0.1:${u.port}`);
  s = await startExecStack(allow, { CATALOG_OUTBOUND_ALLOW: allow.join(",") });
  agent = await registerAgent(s);
});
afterAll(async () => {
  await s?.stop();
  for (const up of [modern, legacy, loose]) await up?.close();
});

const callTool = (toolId: string, body: unknown) => s.call("POST", `/tools/call/${toolId}`, { key: agent.key, body });
const readResult = (id: string) => s.call("GET", `/tools/executions/${id}/result`, { key: agent.key });

describe.each([
  { revision: "2026-07-28", upstream: () => modern },
  { revision: "2025-11-25", upstream: () => legacy },
])("an upstream speaking only $revision", ({ revision, upstream }) => {
  let tools: Record<string, string>;
  beforeAll(async () => {
    tools = (await publishMcp(s, agent, upstream().url)).tools;
  });

  it("is imported with the server's tools and called on that revision", async () => {
    expect(Object.keys(tools).sort()).toEqual(["book_table", "get_forecast", "search_docs"]);
    const r = await callTool(tools.search_docs!, { query: "cats", limit: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, result: { results: [{ id: "doc-0", title: "cats #0" }] } });
    const era = revision === "2026-07-28" ? "modern" : "legacy";
    const calls = upstream().rpc.filter((m) => m.method === "tools/call" || m.method === "tools/list");
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((m) => m.era === era)).toBe(true);
  });

  it("returns a tool's structuredContent as its result, not its text", async () => {
    const r = await callTool(tools.get_forecast!, { city: "Oslo" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, result: { city: "Oslo", temperature_c: 21, conditions: "sunny" } });
  });

  it("fails a tool that needs a person's input with an error that says so", async () => {
    const before = upstream().toolCalls.book_table ?? 0;
    const r = await callTool(tools.book_table!, { restaurant: "Chez Nous" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: false, result: null });
    expect(r.body.error).toMatch(/^the MCP tool needs a person's input before it can finish/);
    expect(upstream().toolCalls.book_table).toBe(before + 1);
    expect((await readResult(r.body.execution_id)).body).toMatchObject({ status: "error", error: r.body.error });
  });
});

describe("an upstream that answers input_required whatever the client declared", () => {
  it("ends the call with the question it asked, without answering or asking again", async () => {
    const { tools } = await publishMcp(s, agent, loose.url);
    const r = await callTool(tools.book_table!, { restaurant: "Chez Nous" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: false, result: null });
    expect(r.body.error).toContain(`(it asks: ${JSON.stringify(BOOKING_QUESTION)})`);
    expect(loose.toolCalls.book_table).toBe(1);
  });
});
