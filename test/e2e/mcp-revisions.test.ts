/**
 * Both MCP protocol revisions on one /mcp endpoint, end to end (issue 31): the official v2 SDK client
 * speaking 2026-07-28 (no handshake, no session: every request carries its version and capabilities in
 * `_meta`), the same client as a 2025-11-25 client, and the v1 SDK client (2025-11-25) each list the eleven
 * tools and run search -> batch execute -> fetch result against the real stack, and get the same answers.
 * Raw requests check what a client library would hide: no `Mcp-Session-Id` (2026-07-28, and a 2025-11-25
 * client that cannot be asked), the cache hints, headers that are missing or contradict the body refused
 * before anything runs, and the session a 2025-11-25 client that can be asked gets (its caller only).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, type ExecStack, registerAgent, startExecStack } from "./execution-support.js";
import {
  callOk,
  connectMcp,
  connectMcpV2,
  MCP_TOOL_NAMES,
  MODERN_REVISION,
  modernRequest,
  type ToolCaller,
} from "./mcp-support.js";

let s: ExecStack;
let agent: AgentKey;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  s = await startExecStack([], {}, ["catalog", "execution", "billing", "identity", "content", "gateway", "mcp-server"]);
  agent = await registerAgent(s);
}, 300_000);

afterAll(async () => {
  await Promise.all(closers.map((close) => close().catch(() => {})));
  await s?.stop();
});

const text = "one two three four five six seven eight nine ten eleven";

/** search -> batch -> fetch on one client; returns what each step answered, for comparing clients. */
async function searchRunFetch(client: ToolCaller) {
  const found = await callOk(client, "search_tools", { query: "count the words in a text", limit: 5 });
  const tool = found.tools.find((t: { name: string }) => t.name === "word_count");
  expect(tool, JSON.stringify(found.tools.map((t: { name: string }) => t.name))).toBeDefined();
  const ran = await callOk(client, "batch_execute_tools", { calls: [{ tool_id: tool.id, tool_input: { text } }] });
  expect(ran.results).toHaveLength(1);
  expect(ran.results[0]).toMatchObject({ tool_id: tool.id, success: true, error: null });
  const id = ran.results[0]._meta.execution_id as string;
  const words = await callOk(client, "fetch_result", { execution_id: id, path: "words" });
  expect(words).toMatchObject({ execution_id: id, status: "success", path: "words", result: 11 });
  return { toolId: tool.id as string, result: ran.results[0].result, fetched: words.result };
}

describe("one endpoint, both revisions", () => {
  it("a 2026-07-28 client (v2 SDK, negotiating), a 2025-11-25 v2 client and a v1 client list the eleven tools and search, run and fetch alike", async () => {
    const modern = await connectMcpV2(s.stack.mcpUrl, { key: agent.key }, "auto");
    closers.push(() => modern.close());
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN_REVISION);
    const legacyV2 = await connectMcpV2(s.stack.mcpUrl, { key: agent.key }, "legacy");
    closers.push(() => legacyV2.close());
    expect(legacyV2.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    const legacyV1 = await connectMcp(s.stack.mcpUrl, { key: agent.key });
    closers.push(() => legacyV1.close());

    const lists = [await modern.listTools(), await legacyV2.listTools(), await legacyV1.listTools()];
    for (const list of lists) expect(list.tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    expect(lists[0]?.tools).toEqual(lists[2]?.tools);

    const answers = [await searchRunFetch(modern), await searchRunFetch(legacyV2), await searchRunFetch(legacyV1)];
    expect(answers[0]?.fetched).toBe(11);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});

describe("2026-07-28 on the wire", () => {
  it("answers without a session, with the tool list's cache hints, and discovery", async () => {
    const list = await fetch(s.stack.mcpUrl, modernRequest("tools/list", {}, { key: agent.key }));
    expect(list.status).toBe(200);
    expect(list.headers.get("mcp-session-id")).toBeNull();
    const body = (await list.json()) as { result: { tools: unknown[]; ttlMs: number; cacheScope: string; resultType: string } };
    expect(body.result.tools).toHaveLength(11);
    expect(body.result).toMatchObject({ ttlMs: 3_600_000, cacheScope: "public", resultType: "complete" });
    const discover = await fetch(s.stack.mcpUrl, modernRequest("server/discover", {}, { key: agent.key }));
    const found = (await discover.json()) as { result: { supportedVersions: string[]; capabilities: Record<string, unknown> } };
    // Only the revisions without a handshake: a 2025-11-25 client negotiates by initialize (tested above).
    expect(found.result.supportedVersions).toEqual([MODERN_REVISION]);
    expect(found.result.capabilities.tools).toBeDefined();
  });

  // That nothing reaches the gateway then is mcp-server/src/http.test.ts's (its gateway records every request).
  it("refuses a call whose headers are missing or contradict its body, naming the header", async () => {
    const call = { name: "batch_execute_tools", arguments: { calls: [{ tool_id: "text-word-count", tool_input: { text } }] } };
    const contradicting = await fetch(
      s.stack.mcpUrl,
      modernRequest("tools/call", call, { key: agent.key, headers: { "mcp-name": "search_tools" } }),
    );
    expect(contradicting.status).toBe(400);
    expect(((await contradicting.json()) as { error: { message: string } }).error.message.toLowerCase()).toContain("mcp-name");
    const missing = await fetch(
      s.stack.mcpUrl,
      modernRequest("tools/call", call, { key: agent.key, headers: { "mcp-method": undefined } }),
    );
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message.toLowerCase()).toContain("mcp-method");
  });

  it("refuses a page of another site (foreign Origin) with 403 in either revision", async () => {
    const res = await fetch(
      s.stack.mcpUrl,
      modernRequest("tools/list", {}, { key: agent.key, headers: { origin: "https://evil.example.com" } }),
    );
    expect(res.status).toBe(403);
  });
});

describe("2025-11-25 on the wire", () => {
  /** A raw 2025-11-25 request (plain JSON-RPC, no `_meta` envelope). */
  const legacyPost = (body: unknown, key: string, session?: string) =>
    fetch(s.stack.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "svc-api-key": key,
        ...(session ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify(body),
    });
  const initialize = (capabilities: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } },
  });
  const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };

  it("opens a session only for a client that can be asked, and serves it only to the caller that opened it", async () => {
    const plain = await legacyPost(initialize({}), agent.key);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("mcp-session-id"), "stateless as before").toBeNull();

    const asking = await legacyPost(initialize({ elicitation: { form: {} } }), agent.key);
    expect(asking.status).toBe(200);
    const session = asking.headers.get("mcp-session-id");
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    await asking.text();

    // Its session answers on a stream (where a question could travel before the result).
    const inSession = await legacyPost(toolsList, agent.key, session!);
    expect(inSession.status).toBe(200);
    expect(inSession.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(inSession.headers.get("mcp-session-id")).toBe(session);
    expect(await inSession.text()).toContain('"batch_execute_tools"');

    // Another caller naming it is served statelessly, with its own key, outside the session.
    const other = await registerAgent(s);
    const borrowed = await legacyPost(toolsList, other.key, session!);
    expect(borrowed.status).toBe(200);
    expect(borrowed.headers.get("content-type")).toMatch(/^application\/json/);
    expect(borrowed.headers.get("mcp-session-id")).toBeNull();
    expect(((await borrowed.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(MCP_TOOL_NAMES.length);

    // DELETE ends it; naming it afterwards is served statelessly too.
    const ended = await fetch(s.stack.mcpUrl, {
      method: "DELETE",
      headers: { "mcp-protocol-version": "2025-11-25", "svc-api-key": agent.key, "mcp-session-id": session! },
    });
    expect(ended.status).toBe(200);
    const after = await legacyPost(toolsList, agent.key, session!);
    expect(after.headers.get("mcp-session-id")).toBeNull();
    await after.text();
    const deleteAgain = await fetch(s.stack.mcpUrl, {
      method: "DELETE",
      headers: { "mcp-protocol-version": "2025-11-25", "svc-api-key": agent.key, "mcp-session-id": session! },
    });
    expect(deleteAgain.status).toBe(405);
  });
});
