/**
 * The gateway's principal cache on the tool-call routes, with two gateways behind the same services:
 * a key revoked through gateway A, or whose owner was removed from the organization the call runs in,
 * is refused (401) on its very next tool call through gateway B although B still holds its principal,
 * because the revoke drops execution's quota leases on the key before it answers and a new lease
 * re-checks the key; nothing is counted for that
 * call (no rate-limit hit, no free-tier call, no upstream request). The refused entry is dropped, so the
 * following request re-authenticates with identity. Valid keys keep working (and counting), and with
 * GATEWAY_AUTH_CACHE_MS=0 every request authenticates.
 */
import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Call, gatewayClient, type Reply } from "../harness/http.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import {
  type AgentKey,
  type ExecStack,
  echoApiDocument,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

interface Key {
  id: string;
  key: string;
  accountId: string;
}

async function newKey(call: Call, auth: { key?: string; token?: string }, accountId: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", "/api-keys", { ...auth, body: { name: `k-${randomUUID().slice(0, 6)}`, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, key: res.body.key as string, accountId };
}

async function signup(call: Call, name: string) {
  const email = `${name}-${randomUUID().slice(0, 8)}@example.com`;
  const res = await call("POST", "/auth/signup", { body: { email, password: "correct horse battery staple", name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { email, token: res.body.access_token as string, accountId: res.body.account_id as string };
}

describe("principal cache on tool calls (two gateways)", () => {
  let api: Upstream;
  let s: ExecStack;
  let a: Call;
  let b: Call;
  let db: Pool;
  let publisher: AgentKey;
  let tool: string;

  /** What identity counted for a key: rate-limit hits of its tool_calls bucket, free-tier calls of its account. */
  async function counters(key: Key) {
    const hits = await db.query<{ n: string }>(
      "SELECT coalesce(sum(hits), 0)::text AS n FROM rate_limit_windows WHERE bucket = 'tool_calls' AND subject_key = $1",
      [key.id],
    );
    const free = await db.query<{ n: string }>(
      "SELECT coalesce(sum(calls), 0)::text AS n FROM free_tier_usage WHERE account_id = $1",
      [key.accountId],
    );
    return { hits: Number(hits.rows[0]!.n), freeCalls: Number(free.rows[0]!.n), upstream: api.requests.length };
  }

  const single = (call: Call, key: Key, headers?: Record<string, string>) =>
    call("POST", `/tools/call/${tool}`, { key: key.key, body: { n: 1 }, headers });
  const batch = (call: Call, key: Key, headers?: Record<string, string>) =>
    call("POST", "/tools/call/batch", {
      key: key.key,
      headers,
      body: {
        calls: [
          { tool_id: tool, tool_input: { n: 1 } },
          { tool_id: tool, tool_input: { n: 2 } },
        ],
      },
    });
  // The echo service is visible to its publisher only; other accounts call a built-in tool.
  const builtIn = (call: Call, key: Key, headers?: Record<string, string>) =>
    call("POST", "/tools/call/text-word-count", { key: key.key, body: { text: "a b" }, headers });
  const builtInBatch = (call: Call, key: Key, headers?: Record<string, string>) =>
    call("POST", "/tools/call/batch", {
      key: key.key,
      headers,
      body: {
        calls: [
          { tool_id: "text-word-count", tool_input: { text: "a" } },
          { tool_id: "text-word-count", tool_input: { text: "b" } },
        ],
      },
    });

  function expectOk(reply: Reply, inBatch = false) {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    if (inBatch) for (const r of reply.body.results) expect(r, JSON.stringify(r)).toMatchObject({ success: true });
    else expect(reply.body.success, JSON.stringify(reply.body)).toBe(true);
  }

  beforeAll(async () => {
    api = await startEchoApi();
    // A TTL far beyond the test's length: only the allowance re-check can refuse a cached key here.
    s = await startExecStack([`127.0.0.1:${api.port}`], { GATEWAY_AUTH_CACHE_MS: "600000" });
    a = gatewayClient(s.stack.gatewayUrl);
    b = gatewayClient(`http://127.0.0.1:${await s.stack.startExtra("gateway")}`);
    db = createPool(s.stack.env.IDENTITY_DATABASE_URL!, 1);
    publisher = await registerAgent(s);
    // A credential-free tool: free-tier accounts count its calls, so both counters apply.
    tool = (await publishOpenApi(s, publisher, echoApiDocument(), api.url)).tools.list_items!;
  });
  afterAll(async () => {
    await db?.end();
    await s?.stop();
    await api?.close();
  });

  it("keeps a valid key working through the warm cache, every call counted and recorded as a use", async () => {
    const key = await newKey(a, { key: publisher.key }, publisher.id);
    const before = await counters(key);
    for (let i = 0; i < 4; i++) expectOk(await single(b, key));
    expectOk(await batch(b, key), true);
    // Quota leases reserve the allowance in blocks: at least the calls made are counted at once, and
    // what the last block did not use comes back when it ends (ALLOWANCE_LEASE_MS, 2 s here).
    const after = await counters(key);
    expect(after.hits - before.hits).toBeGreaterThanOrEqual(6);
    expect(after.freeCalls - before.freeCalls).toBeGreaterThanOrEqual(6);
    expect(after.upstream - before.upstream).toBe(6);
    await expect
      .poll(
        async () => {
          const c = await counters(key);
          return [c.hits - before.hits, c.freeCalls - before.freeCalls];
        },
        { timeout: 6000, interval: 200 },
      )
      .toEqual([6, 6]);
    // Calls served from the cache still record the key's use (the allowance statement's last_used write).
    await db.query("UPDATE api_keys SET last_used_at = now() - interval '1 hour' WHERE id = $1", [key.id]);
    expectOk(await single(b, key));
    const { rows } = await db.query<{ age: number }>(
      "SELECT extract(epoch FROM now() - last_used_at)::float8 AS age FROM api_keys WHERE id = $1",
      [key.id],
    );
    expect(rows[0]!.age).toBeLessThan(60);
  });

  it("refuses a key revoked through gateway A on its very next call through gateway B, counting nothing", async () => {
    const key = await newKey(a, { key: publisher.key }, publisher.id);
    expectOk(await single(b, key));
    expectOk(await single(b, key));
    expect((await a("DELETE", `/api-keys/${key.id}`, { key: publisher.key })).status).toBe(200);
    const before = await counters(key);
    const refused = await single(b, key);
    expectError(refused, 401, "unauthenticated");
    expect(refused.body.error.message).toBe("the API key or token is not valid");
    expect(await counters(key)).toEqual(before);
    // Gateway B forgot the key: identity itself refuses it from now on, on both gateways.
    expectError(await single(b, key), 401, "unauthenticated");
    expectError(await single(a, key), 401, "unauthenticated");
    expect(await counters(key)).toEqual(before);
  });

  it("waits out, before a revoke answers, the lease of a holder that does not confirm the drop", async () => {
    const key = await newKey(a, { key: publisher.key }, publisher.id);
    expectOk(await single(b, key));
    // A holder that is gone (a crashed execution process): its lease still runs for 1.5 s.
    await db.query(
      `INSERT INTO allowance_leases (holder, key_id, account_id, organization_id, expires_at)
       VALUES ('gone-holder', $1, $2, $3, now() + interval '1500 milliseconds')`,
      [key.id, key.accountId, randomUUID()],
    );
    const started = performance.now();
    expect((await a("DELETE", `/api-keys/${key.id}`, { key: publisher.key })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1200);
    expectError(await single(b, key), 401, "unauthenticated");
  });

  it("refuses a whole batch (401, not per-element errors) once its cached key is revoked", async () => {
    const key = await newKey(a, { key: publisher.key }, publisher.id);
    expectOk(await batch(b, key), true);
    expect((await a("DELETE", `/api-keys/${key.id}`, { key: publisher.key })).status).toBe(200);
    const before = await counters(key);
    const refused = await batch(b, key);
    expectError(refused, 401, "unauthenticated");
    expect(refused.body.results).toBeUndefined();
    expect(await counters(key)).toEqual(before);
  });

  it("serves a cached revoked key's earlier checks first (404 for an unknown tool), then drops it on the 401", async () => {
    const key = await newKey(a, { key: publisher.key }, publisher.id);
    expectOk(await single(b, key));
    expect((await a("DELETE", `/api-keys/${key.id}`, { key: publisher.key })).status).toBe(200);
    // The documented consequence: checks run in the order, the key re-check is at the allowance.
    expectError(await b("POST", `/tools/call/${randomUUID()}`, { key: key.key, body: {} }), 404, "tool_not_found");
    expectError(await single(b, key), 401, "unauthenticated");
    // The entry is gone: Authenticate now refuses before anything else.
    expectError(await b("POST", `/tools/call/${randomUUID()}`, { key: key.key, body: {} }), 401, "unauthenticated");
  });

  it("refuses a key bound to an organization its owner was removed from, on the next call and batch", async () => {
    const owner = await signup(a, "owner");
    const member = await signup(a, "member");
    const org = await a("POST", "/organizations", { token: owner.token, body: { name: "Cache Co" } });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    const added = await a("POST", `/organizations/${org.body.id}/members`, {
      token: owner.token,
      body: { email: member.email, role: "member" },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    // One key bound to the organization; one personal key pointed at it with svc-org-id.
    const bound = await newKey(a, { token: member.token }, member.accountId, { organization_id: org.body.id });
    const personal = await newKey(a, { token: member.token }, member.accountId);
    const inOrg = { "svc-org-id": org.body.id };
    expectOk(await builtIn(b, bound));
    expectOk(await builtInBatch(b, personal, inOrg), true);
    // The personal key outside the organization is a different cache entry, unaffected below.
    expectOk(await builtIn(b, personal));

    const removed = await a("DELETE", `/organizations/${org.body.id}/members/${member.accountId}`, { token: owner.token });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const beforeBound = await counters(bound);
    const beforePersonal = await counters(personal);

    // The cached principals are refused by the allowance re-check, with Authenticate's reason for the
    // organization's key (its owner left: dead everywhere) and `unauthenticated` for the personal key's
    // membership, nothing counted...
    expectError(await builtIn(b, bound), 401, "key_organization_left");
    const refusedBatch = await builtInBatch(b, personal, inOrg);
    expectError(refusedBatch, 401, "unauthenticated");
    expect(refusedBatch.body.results).toBeUndefined();
    expect(await counters(bound)).toEqual(beforeBound);
    expect(await counters(personal)).toEqual(beforePersonal);
    // ...then the entries are gone and Authenticate answers with its own reasons.
    expectError(await builtIn(b, bound), 401, "key_organization_left");
    expectError(await builtInBatch(b, personal, inOrg), 404, "organization_not_found");
    // The same personal key in its own organization still works.
    expectOk(await builtIn(b, personal));
  });
});

describe("GATEWAY_AUTH_CACHE_MS=0", () => {
  let s: ExecStack;
  let call: Call;
  let agent: AgentKey;

  beforeAll(async () => {
    s = await startExecStack([], { GATEWAY_AUTH_CACHE_MS: "0" });
    call = gatewayClient(s.stack.gatewayUrl);
    agent = await registerAgent(s);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("authenticates every tool call: a revoked key is refused before any other check", async () => {
    const key = await newKey(call, { key: agent.key }, agent.id);
    const run = (k: Key) => call("POST", "/tools/call/text-word-count", { key: k.key, body: { text: "a b c" } });
    for (let i = 0; i < 2; i++) {
      const ok = await run(key);
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.success).toBe(true);
    }
    expect((await call("DELETE", `/api-keys/${key.id}`, { key: agent.key })).status).toBe(200);
    // No principal was kept: even an unknown tool is a 401 now, not a 404.
    expectError(await call("POST", `/tools/call/${randomUUID()}`, { key: key.key, body: {} }), 401, "unauthenticated");
    expectError(await run(key), 401, "unauthenticated");
    expectError(
      await call("POST", "/tools/call/batch", {
        key: key.key,
        body: { calls: [{ tool_id: "text-word-count", tool_input: { text: "a" } }] },
      }),
      401,
      "unauthenticated",
    );
  });
});
