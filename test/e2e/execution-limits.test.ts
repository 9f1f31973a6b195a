/**
 * The 429s of a tool call, on a stack with small limits: the per-key rate limit and the free tier's
 * monthly calls (both counted by identity), with the DESIGN.md body {message, usage, upgrade_url}, and
 * their place in the order of checks (after validation and consent, before anything runs).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import {
  connectCredential,
  type ExecStack,
  echoApiDocument,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

let api: Upstream;
let s: ExecStack;

beforeAll(async () => {
  api = await startEchoApi();
  s = await startExecStack([`127.0.0.1:${api.port}`], { EXECUTION_RATE_LIMIT_PER_MINUTE: "4", FREE_TIER_CALLS_PER_MONTH: "2" });
});
afterAll(async () => {
  await s?.stop();
  await api?.close();
});

describe("429 on tool calls", () => {
  it("limits calls per key per minute, with Retry-After and the usage body", async () => {
    const agent = await registerAgent(s);
    // A tool needing a credential is outside the free tier, so only the rate limit counts here.
    const svc = await publishOpenApi(
      s,
      agent,
      echoApiDocument({ scheme: { type: "apiKey", in: "header", name: "X-Api-Key" } }),
      api.url,
    );
    await connectCredential(s, agent, svc.serviceId, { api_key: "rate-limit-key" });
    const tool = svc.tools.list_items!;
    // Windows are aligned to the minute: start early enough in one that these calls cannot straddle two.
    const into = Date.now() % 60_000;
    if (into > 50_000) await new Promise((r) => setTimeout(r, 60_000 - into + 250));
    for (let i = 0; i < 4; i++)
      expect((await s.call("POST", `/tools/call/${tool}`, { key: agent.key, body: { n: 1 } })).status).toBe(200);
    // Bad input is refused before the limit is counted.
    expectError(await s.call("POST", `/tools/call/${tool}`, { key: agent.key, body: { n: "many" } }), 400, "invalid_parameters");
    const before = api.requests.length;
    const limited = await s.call("POST", `/tools/call/${tool}`, { key: agent.key, body: { n: 1 } });
    expectError(limited, 429, "rate_limited");
    expect(limited.body.detail).toMatchObject({
      message: expect.stringMatching(/rate limit/),
      usage: { limit: 4, remaining: 0 },
      upgrade_url: expect.any(String),
    });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(api.requests.length).toBe(before);
    // In a batch the refusal stays in its element.
    const batch = await s.call("POST", "/tools/call/batch", {
      key: agent.key,
      body: { calls: [{ tool_id: tool, tool_input: { n: 1 } }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results[0]).toMatchObject({ success: false, error_code: "rate_limited", execution_id: null });
  });

  it("stops free-tier accounts at their monthly calls of credential-free tools", async () => {
    const agent = await registerAgent(s);
    for (let i = 0; i < 2; i++) {
      const ok = await s.call("POST", "/tools/call/text-word-count", { key: agent.key, body: { text: "a b" } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    }
    const over = await s.call("POST", "/tools/call/text-word-count", { key: agent.key, body: { text: "a b" } });
    expectError(over, 429, "usage_limit_reached");
    expect(over.body.detail).toMatchObject({
      message: expect.stringMatching(/free tier/),
      usage: { calls_this_month: 2, limit: 2, resets_at: expect.any(String) },
      upgrade_url: expect.any(String),
    });
  });
});
