/**
 * Shared by the execution end-to-end tests: a stack (catalog, execution, billing, identity, gateway)
 * whose execution service may reach the test's own upstreams, agents registered through the gateway,
 * services published from OpenAPI documents and MCP servers, credentials, funding by a signed Stripe
 * webhook, and JSON calls.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { expect } from "vitest";
import { type Call, gatewayClient, type Reply } from "../harness/http.js";
import { type ProcessName, type Stack, type StackOptions, startStack } from "../harness/stack.js";

export const STRIPE_WEBHOOK_SECRET = "whsec_execution_e2e";

export type { Reply } from "../harness/http.js";

export interface ExecStack {
  stack: Stack;
  call: Call;
  stop(): Promise<void>;
}

export async function startExecStack(
  allow: string[],
  env: Record<string, string> = {},
  names?: ProcessName[],
  options: StackOptions = {},
): Promise<ExecStack> {
  const stack = await startStack(
    names ?? ["catalog", "execution", "billing", "identity", "gateway"],
    {
      EXECUTION_OUTBOUND_ALLOW: allow.join(","),
      CATALOG_SECRET_KEY: randomBytes(32).toString("hex"),
      EXECUTION_CONSENT_SECRET: randomBytes(32).toString("hex"),
      STRIPE_WEBHOOK_SECRET,
      STRIPE_SECRET_KEY: "sk_test_unused",
      TOOL_CALLS_PER_MINUTE: "100000",
      ...env,
    },
    options,
  );
  return {
    stack,
    call: gatewayClient(stack.gatewayUrl),
    stop: () => stack.stopAll(),
  };
}

export interface AgentKey {
  id: string;
  key: string;
}

export async function registerAgent(s: ExecStack, name = `agent-${randomBytes(3).toString("hex")}`): Promise<AgentKey> {
  const res = await s.call("POST", "/agents", { body: { name, operator_email: `${name}@example.com` } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.agent_id, key: res.body.api_key };
}

/** A second key of the same agent with permissions. */
export async function createKey(s: ExecStack, owner: AgentKey, permissions: Record<string, unknown> | null): Promise<string> {
  const res = await s.call("POST", "/api-keys", {
    key: owner.key,
    body: { name: `key-${randomUUID().slice(0, 6)}`, permissions },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.key;
}

export async function publishOpenApi(
  s: ExecStack,
  owner: AgentKey,
  document: unknown,
  baseUrl: string,
): Promise<{ serviceId: string; tools: Record<string, string> }> {
  const res = await s.call("POST", "/services", { key: owner.key, body: { api: { document, base_url: baseUrl } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { serviceId: res.body.service.id, tools: Object.fromEntries(res.body.tools.map((t: any) => [t.name, t.id])) };
}

export async function publishMcp(
  s: ExecStack,
  owner: AgentKey,
  url: string,
): Promise<{ serviceId: string; tools: Record<string, string> }> {
  const res = await s.call("POST", "/services", { key: owner.key, body: { mcp_server: url } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { serviceId: res.body.service.id, tools: Object.fromEntries(res.body.tools.map((t: any) => [t.name, t.id])) };
}

export async function connectCredential(s: ExecStack, owner: AgentKey, serviceId: string, credential: unknown): Promise<void> {
  const res = await s.call("PUT", `/services/${serviceId}/credentials`, { key: owner.key, body: { credential } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Credits the agent's wallet the way production does: a signed checkout.session.completed webhook. */
export async function fund(s: ExecStack, agent: AgentKey, cents: number): Promise<void> {
  const wallet = await s.call("GET", "/agents/wallet", { key: agent.key });
  expect(wallet.status, JSON.stringify(wallet.body)).toBe(200);
  const walletId = wallet.body.wallet_id ?? wallet.body.id;
  const payload = JSON.stringify({
    id: `evt_${randomUUID().replace(/-/g, "")}`,
    object: "event",
    api_version: "2025-01-01",
    created: Math.floor(Date.now() / 1000),
    type: "checkout.session.completed",
    data: {
      object: {
        object: "checkout.session",
        id: `cs_test_${randomUUID().replace(/-/g, "")}`,
        amount_total: cents,
        currency: "usd",
        payment_status: "paid",
        client_reference_id: walletId,
        metadata: { wallet_id: walletId, account_id: agent.id, amount_cents: String(cents) },
      },
    },
  });
  const t = Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", STRIPE_WEBHOOK_SECRET).update(`${t}.${payload}`).digest("hex");
  const res = await s.call("POST", "/billing/stripe/webhook", {
    body: payload,
    headers: { "stripe-signature": `t=${t},v1=${signature}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

export async function balanceAtomic(s: ExecStack, agent: AgentKey): Promise<bigint> {
  const wallet = await s.call("GET", "/agents/wallet", { key: agent.key });
  expect(wallet.status, JSON.stringify(wallet.body)).toBe(200);
  return BigInt(String(wallet.body.balance_atomic ?? Math.round(Number(wallet.body.balance_usdc) * 1e6)));
}

export function expectError(reply: Reply, status: number, code: string): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body.error.code, JSON.stringify(reply.body)).toBe(code);
  expect(typeof reply.body.detail === "string" || typeof reply.body.detail === "object").toBe(true);
}

/** The OpenAPI document of the echo API (test/harness/upstreams.ts). */
export function echoApiDocument(security?: { scheme: Record<string, unknown> }) {
  const sec = security ? { components: { securitySchemes: { auth: security.scheme } }, security: [{ auth: [] }] } : {};
  return {
    openapi: "3.0.3",
    info: { title: `Echo ${randomBytes(3).toString("hex")}`, version: "1.0.0" },
    ...sec,
    paths: {
      "/echo/items/{item_id}": {
        post: {
          operationId: "echo_item",
          parameters: [
            { name: "item_id", in: "path", required: true, schema: { type: "string" } },
            { name: "verbose", in: "query", schema: { type: "boolean" } },
            { name: "tags", in: "query", schema: { type: "array", items: { type: "string" } } },
            { name: "sort", in: "query", schema: { type: "string", enum: ["asc", "desc"], default: "asc" } },
            { name: "X-Trace", in: "header", schema: { type: "string" } },
            { name: "session", in: "cookie", schema: { type: "string" } },
          ],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["title"],
                  properties: { title: { type: "string", minLength: 1 }, count: { type: "integer", minimum: 0, maximum: 10 } },
                },
              },
            },
          },
          responses: { "200": { description: "echo" } },
        },
      },
      "/echo/files/{file_path}": {
        get: {
          operationId: "read_file",
          parameters: [{ name: "file_path", in: "path", required: true, schema: { type: "string", "x-encode-slashes": false } }],
          responses: { "200": { description: "echo" } },
        },
      },
      "/items": {
        get: {
          operationId: "list_items",
          parameters: [{ name: "n", in: "query", schema: { type: "integer", minimum: 0, maximum: 100000 } }],
          responses: { "200": { description: "items" } },
        },
      },
      "/secret": { get: { operationId: "show_secret", responses: { "200": { description: "echoes the credential" } } } },
      "/status/{code}": {
        get: {
          operationId: "status",
          parameters: [{ name: "code", in: "path", required: true, schema: { type: "integer" } }],
          responses: { "200": { description: "status" } },
        },
      },
      "/slow/{ms}": {
        get: {
          operationId: "slow",
          parameters: [{ name: "ms", in: "path", required: true, schema: { type: "integer" } }],
          responses: { "200": { description: "slow" } },
        },
      },
      "/echo/orders": {
        delete: {
          operationId: "delete_orders",
          parameters: [{ name: "id", in: "query", schema: { type: "string" } }],
          responses: { "200": { description: "ok" } },
        },
      },
    },
  };
}
