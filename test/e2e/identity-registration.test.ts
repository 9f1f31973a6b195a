/**
 * Agent self-registration through the gateway against real identity, billing and catalog processes:
 * validation naming the field, the wallet rule (no wallet, no account), the guide, and one
 * registration limit shared by two gateway processes.
 */
import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { createPool, type Pool } from "@toolport/kit/pg";
import { createServiceClient } from "@toolport/kit/rpc";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Call, expectBadField, expectError, gatewayClient } from "../harness/identity-http.js";
import { type Stack, startStack } from "../harness/stack.js";

let ipCounter = 0;
/** A distinct client IP per test (the gateway trusts X-Forwarded-For here), so limits do not leak between tests. */
const newIp = () => ({ "x-forwarded-for": `198.51.100.${++ipCounter}` });

/** Windows are fixed minutes: start a burst early enough in one that it cannot straddle two. */
async function awayFromWindowEdge(windowMs = 60_000, needMs = 15_000) {
  const into = Date.now() % windowMs;
  if (into > windowMs - needMs) await new Promise((r) => setTimeout(r, windowMs - into + 250));
}

describe("agent registration", () => {
  let stack: Stack;
  let call: Call;
  let identityDb: Pool;
  const count = async (table: "accounts" | "api_keys" | "organizations") =>
    (await identityDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const accounts = () => count("accounts");

  beforeAll(async () => {
    stack = await startStack(["identity", "billing", "catalog", "gateway"], { TRUST_PROXY: "true" }, { layout: "per-role" });
    call = gatewayClient(stack.gatewayUrl);
    identityDb = createPool(stack.env.IDENTITY_DATABASE_URL!, 2);
  });
  afterAll(async () => {
    await identityDb?.end();
    await stack?.stopAll();
  });

  it("refuses a missing or malformed name or operator_email with 400 naming the field", async () => {
    const headers = newIp();
    expectBadField(await call("POST", "/agents", { headers, body: { operator_email: "ops@example.com" } }), "name");
    expectBadField(await call("POST", "/agents", { headers, body: { name: "   ", operator_email: "ops@example.com" } }), "name");
    expectBadField(await call("POST", "/agents", { headers, body: { name: 42, operator_email: "ops@example.com" } }), "name");
    expectBadField(await call("POST", "/agents", { headers, body: { name: "bot" } }), "operator_email");
    expectBadField(
      await call("POST", "/agents", { headers, body: { name: "bot", operator_email: "not an email" } }),
      "operator_email",
    );
    const array = await call("POST", "/agents", { headers: { ...newIp() }, body: [] });
    expectError(array, 400, "invalid_body");
    expect(await accounts()).toBe(0);
  });

  it("creates account, key and wallet when billing can, and otherwise answers 503 wallet_unavailable leaving nothing", async () => {
    const billing = createServiceClient(BillingService, stack.env.BILLING_URL!);
    const probe = await billing.createWallet({ accountId: randomUUID() }).then(
      () => "answers" as const,
      (err: unknown) => err,
    );
    const before = await accounts();
    const res = await call("POST", "/agents", {
      headers: newIp(),
      body: { name: "Research bot", operator_email: "ops@example.com" },
    });
    if (probe !== "answers") {
      // Billing is not built yet: registration reports it instead of inventing wallet values.
      expect(probe).toBeInstanceOf(ConnectError);
      expect((probe as ConnectError).code).toBe(Code.Unimplemented);
      expectError(res, 503, "wallet_unavailable");
      expect(res.body.error.message).toContain("UNIMPLEMENTED");
      expect(res.headers.get("retry-after")).toBe("30");
      expect(await accounts()).toBe(before);
      return;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(Object.keys(body).sort()).toEqual(
      ["agent_id", "api_key", "balance_usdc", "deposit_address", "getting_started", "registration_url", "wallet_id"].sort(),
    );
    expect(body.api_key).toMatch(/^tp_[0-9A-Za-z]{43}$/);
    expect(body.balance_usdc).toMatch(/^\d+\.\d{6}$/);
    expect(body.getting_started.endpoints.auth_header).toBe(`svc-api-key: ${body.api_key}`);
    expect(await accounts()).toBe(before + 1);
    // The key works at once and runs in the agent's personal organization.
    const keys = await call("GET", "/api-keys", { key: body.api_key });
    expect(keys.status).toBe(200);
    expect(keys.body).toHaveLength(1);
    expect(keys.body[0].key_prefix).toBe(body.api_key.slice(0, 8));
  });

  it("answers 503 wallet_unavailable and creates nothing while billing is unreachable", async () => {
    await stack.stop("billing");
    try {
      const before = [await accounts(), await count("api_keys"), await count("organizations")];
      const res = await call("POST", "/agents", { headers: newIp(), body: { name: "bot", operator_email: "ops@example.com" } });
      expectError(res, 503, "wallet_unavailable");
      expect(res.body.error.message).toContain("no account was created");
      expect([await accounts(), await count("api_keys"), await count("organizations")]).toEqual(before);
    } finally {
      await stack.start("billing");
    }
  });

  it("serves the guide without account-specific parts, with absolute URLs of this deployment", async () => {
    const res = await call("GET", "/agents/getting-started");
    expect(res.status).toBe(200);
    const base = `${stack.gatewayUrl}/v1`;
    expect(res.body.registration_url).toBe(`${base}/agents/getting-started`);
    const guide = res.body.getting_started;
    expect(Object.keys(guide).sort()).toEqual(["endpoints", "free_tier", "read_next", "steps", "try_first"]);
    expect(guide.free_tier.calls_per_month).toBe(5000);
    expect(guide.free_tier.note).toMatch(/wallet/);
    expect(guide.endpoints).toEqual({
      mcp: stack.env.MCP_PUBLIC_URL,
      search: `${base}/tools/search?query={query}`,
      describe: `${base}/tools/{tool_id}/describe`,
      execute: `${base}/tools/call/{tool_id}`,
      auth_header: "svc-api-key: <API_KEY>",
    });
    expect(guide.steps).toHaveLength(4);
    for (const step of guide.steps) expect(step).toMatch(/^[A-Z].*\.$/);
    expect(guide.read_next).toEqual({
      skill: `${base}/agents/skill.md`,
      quickstart: `${base}/agents/quickstart.md`,
      reference: `${stack.gatewayUrl}/docs`,
      openapi: `${base}/openapi.json`,
    });
    expect(guide.try_first.length).toBeLessThanOrEqual(3);
    for (const tool of guide.try_first) {
      expect(tool.execute).toMatchObject({
        method: "POST",
        url: `${base}/tools/call/${tool.tool_id}`,
        body: { tool_input: expect.any(Object) },
      });
    }
    // Every document read_next points to exists.
    for (const url of [guide.read_next.skill, guide.read_next.quickstart] as string[]) {
      const doc = await fetch(url);
      expect(doc.status).toBe(200);
      expect(doc.headers.get("content-type")).toContain("text/markdown");
      expect(await doc.text()).toContain(`${base}/agents`);
    }
    expect((await fetch(guide.read_next.reference)).headers.get("content-type")).toContain("text/html");
    const description = (await (await fetch(guide.read_next.openapi)).json()) as {
      info: { version: string };
      paths: Record<string, Record<string, { summary: string }>>;
    };
    expect(description.info.version).toBe("1.0.0");
    // The skill file ends with every route of the description, each with its summary.
    const skill = await (await fetch(guide.read_next.skill)).text();
    for (const [path, ops] of Object.entries(description.paths)) {
      for (const [method, op] of Object.entries(ops))
        expect(skill).toContain(`\`${method.toUpperCase()} ${path}\`: ${op.summary}`);
    }
  });

  it("enforces 5 registrations per minute per IP across two gateway processes, then 429 with Retry-After", async () => {
    const secondPort = await stack.startExtra("gateway");
    const second = gatewayClient(`http://127.0.0.1:${secondPort}`);
    const headers = newIp();
    await awayFromWindowEdge();
    // Invalid bodies are still registration attempts: they count.
    const attempts = [call, second, call, second, call];
    for (const gateway of attempts) expect((await gateway("POST", "/agents", { headers, body: {} })).status).toBe(400);
    for (const gateway of [second, call]) {
      const refused = await gateway("POST", "/agents", { headers, body: { name: "bot", operator_email: "ops@example.com" } });
      expectError(refused, 429, "rate_limited");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body.error.details).toMatchObject({ bucket: "registration", limit: 5, retry_after_seconds: retryAfter });
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    }
    // Another client IP is not affected.
    expect((await second("POST", "/agents", { headers: newIp(), body: {} })).status).toBe(400);
  });
});
