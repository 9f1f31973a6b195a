/**
 * The sessions of 2025-11-25 clients that can be asked (legacy-sessions.ts), in process: which
 * initialize opens one, whom it serves, and its bounds. No tool is called, so the gateway is never
 * reached.
 */
import { afterEach, describe, expect, it } from "vitest";
import { GatewayClient } from "./gateway-client.js";
import { initializeThatCanAsk, LegacySessions } from "./legacy-sessions.js";
import { createMcpServer } from "./server.js";

const gateway = new GatewayClient("http://127.0.0.1:9");
const opened: LegacySessions[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.closeAll()));
});

function sessions(limits: { maxSessions: number; idleMs: number }) {
  const made = new LegacySessions(() => createMcpServer(gateway), 1 << 20, limits);
  opened.push(made);
  return made;
}

const initialize = (capabilities: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "t", version: "1" } },
});

function post(body: unknown, key: string, session?: string): Request {
  return new Request("http://127.0.0.1/mcp", {
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
}

async function open(s: LegacySessions, key: string): Promise<string> {
  const body = initialize({ elicitation: {} });
  const response = await s.open(post(body, key), body);
  expect(response.status).toBe(200);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  expect(id).toBeTruthy();
  return id as string;
}

describe("initializeThatCanAsk", () => {
  it("is true for an initialize declaring form elicitation (or the bare 2025-06-18 object), false otherwise", () => {
    expect(initializeThatCanAsk(initialize({ elicitation: {} }))).toBe(true);
    expect(initializeThatCanAsk(initialize({ elicitation: { form: {} } }))).toBe(true);
    expect(initializeThatCanAsk(initialize({ elicitation: { url: {} } }))).toBe(false);
    expect(initializeThatCanAsk(initialize({ sampling: {} }))).toBe(false);
    expect(initializeThatCanAsk({ ...initialize({ elicitation: {} }), method: "tools/list" })).toBe(false);
    expect(initializeThatCanAsk([initialize({ elicitation: {} })])).toBe(false);
  });
});

describe("LegacySessions", () => {
  it("serves a session to the caller that opened it, not to another key", async () => {
    const s = sessions({ maxSessions: 10, idleMs: 60_000 });
    const id = await open(s, "key-a");
    expect(s.find(post({}, "key-a", id))).toBeDefined();
    expect(s.find(post({}, "key-b", id))).toBeUndefined();
    expect(s.find(post({}, "key-a", "00000000-0000-4000-8000-000000000000"))).toBeUndefined();
  });

  it("closes the least recently used session past the limit", async () => {
    const s = sessions({ maxSessions: 2, idleMs: 60_000 });
    const first = await open(s, "k");
    const second = await open(s, "k");
    // Using the first makes the second the least recently used.
    expect(s.find(post({}, "k", first))).toBeDefined();
    const third = await open(s, "k");
    expect(s.size).toBe(2);
    expect(s.find(post({}, "k", second))).toBeUndefined();
    expect(s.find(post({}, "k", first))).toBeDefined();
    expect(s.find(post({}, "k", third))).toBeDefined();
  });

  it("closes sessions left idle", async () => {
    const s = sessions({ maxSessions: 10, idleMs: 20 });
    const id = await open(s, "k");
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(s.find(post({}, "k", id))).toBeUndefined();
    expect(s.size).toBe(0);
  });

  it("keeps nothing for an initialize the transport refused", async () => {
    const s = sessions({ maxSessions: 10, idleMs: 60_000 });
    const body = initialize({ elicitation: {} });
    const refused = new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "svc-api-key": "k" },
      body: JSON.stringify(body),
    });
    expect((await s.open(refused, body)).status).toBe(406);
    expect(s.size).toBe(0);
  });
});
