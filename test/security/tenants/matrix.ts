/**
 * The tenant matrix's table: one row per credentialed operation of the gateway's OpenAPI document, keyed
 * `METHOD /v1/path` exactly as the document spells it. A row says how to aim a request at a tenant's
 * objects: which of the tenant's ids fill the path parameters and query parameters, and a body valid
 * enough to get past input checks (built from the aimed ids, so another tenant's ids go in the body
 * too). Which credentials a route accepts is read from the document itself (its `security`), not
 * repeated here. `cross` records, with the reason, where the spec makes the foreign answer something
 * other than the default 404.
 */
import type { IdName, TenantIds } from "./accounts.js";

export interface AimContext {
  /** The echo upstream's base URL (documents, sites). */
  upstream: string;
  /** The HTTPS receiver's base URL (webhooks). */
  receiver: string;
  /** The attacking tenant's own person's email. */
  attackerEmail: string;
}

export interface Row {
  /** Path parameter -> the id of the tenant's that fills it. */
  params?: Record<string, IdName>;
  /** Query parameter -> the id of the tenant's that fills it. */
  query?: Record<string, IdName>;
  /** Path parameters that also take a slug: the slug of the same object, tried as well. */
  slugs?: Record<string, IdName>;
  /** A valid body for the aimed ids. */
  body?: (ids: TenantIds, ctx: AimContext) => unknown;
  /**
   * When another tenant's valid credential aimed at the objects does not get 404: the status for the
   * foreign objects, the status for missing ones, and why (the spec's words, or the documented behaviour
   * where the spec is silent). When the two are equal, the whole answers must still be equal.
   */
  cross?: { status: number; missing: number; why: string };
}

const smallDocument = (ctx: AimContext) => ({
  api: {
    document: {
      openapi: "3.0.3",
      info: { title: "Intruder", version: "1.0.0" },
      paths: { "/items": { get: { operationId: "intruder_items", responses: { "200": { description: "ok" } } } } },
    },
    base_url: ctx.upstream,
  },
});

const skillBody = () => ({
  name: "intruder-skill",
  skill_md_content: "---\ndescription: An intruder's skill.\n---\n# intruder\n",
});

export const matrix: Record<string, Row> = {
  // Execution
  "POST /v1/tools/call/batch": { body: (t) => ({ calls: [{ tool_id: t.tool, tool_input: { n: 1 } }] }) },
  "GET /v1/tools/call/batch/{batch_id}": { params: { batch_id: "batch" } },
  "GET /v1/activity": { query: { tool_id: "tool", key_id: "key" } },
  "POST /v1/tools/call/batch/{batch_id}/cancel": { params: { batch_id: "batch" } },
  "POST /v1/tools/call/{tool_id}": {
    params: { tool_id: "tool" },
    slugs: { tool_id: "toolSlug" },
    body: () => ({ tool_input: { n: 1 } }),
  },
  "GET /v1/tools/executions/{execution_id}/result": { params: { execution_id: "execution" } },

  // Catalog
  "GET /v1/tools": {},
  "GET /v1/tools/search": { query: { service_id: "service", query: "toolName" } },
  "GET /v1/tools/public/search": { query: { service_id: "service", query: "toolName" } },
  "GET /v1/tools/recommended": { query: { tool_id: "tool" } },
  "GET /v1/tools/name/{tool_name}": { params: { tool_name: "toolName" } },
  "GET /v1/tools/{tool_id}/describe": { params: { tool_id: "tool" }, slugs: { tool_id: "toolSlug" } },
  "GET /v1/tools/{tool_id}": { params: { tool_id: "tool" }, slugs: { tool_id: "toolSlug" } },
  "PATCH /v1/tools/{tool_id}": {
    params: { tool_id: "tool" },
    slugs: { tool_id: "toolSlug" },
    body: () => ({ deprecated: true, deprecation_message: "taken over", sunset_date: "2030-01-01T00:00:00Z" }),
  },
  "DELETE /v1/tools/{tool_id}": { params: { tool_id: "tool" }, slugs: { tool_id: "toolSlug" } },
  "POST /v1/services": { body: (_t, ctx) => smallDocument(ctx) },
  "POST /v1/services/preview": { body: (_t, ctx) => smallDocument(ctx) },
  "GET /v1/services": { query: { organization_id: "organization" } },
  "GET /v1/services/{service_id}": { params: { service_id: "service" }, slugs: { service_id: "serviceSlug" } },
  "PATCH /v1/services/{service_id}": {
    params: { service_id: "service" },
    slugs: { service_id: "serviceSlug" },
    body: () => ({ summary: "taken over" }),
  },
  "DELETE /v1/services/{service_id}": { params: { service_id: "service" }, slugs: { service_id: "serviceSlug" } },
  "GET /v1/services/{service_id}/tools": { params: { service_id: "service" }, slugs: { service_id: "serviceSlug" } },
  "POST /v1/services/{service_id}/reimport": {
    params: { service_id: "service" },
    slugs: { service_id: "serviceSlug" },
    body: (_t, ctx) => smallDocument(ctx),
  },
  "PUT /v1/services/{service_id}/credentials": {
    params: { service_id: "service" },
    slugs: { service_id: "serviceSlug" },
    body: () => ({ credential: { api_key: "intruder-value" } }),
  },
  "GET /v1/services/{service_id}/credentials": { params: { service_id: "service" }, slugs: { service_id: "serviceSlug" } },
  "DELETE /v1/services/{service_id}/credentials": { params: { service_id: "service" }, slugs: { service_id: "serviceSlug" } },
  "PUT /v1/services/{service_id}/oauth-client": {
    params: { service_id: "oauthService" },
    body: () => ({ client_id: "intruder", client_secret: "intruder-secret", token_url: "https://intruder.example/token" }),
  },
  "GET /v1/services/{service_id}/oauth-client": { params: { service_id: "oauthService" } },
  "DELETE /v1/services/{service_id}/oauth-client": { params: { service_id: "oauthService" } },
  "POST /v1/services/{service_id}/oauth/connect": {
    params: { service_id: "oauthService" },
    body: () => ({ return_to: "/console/keys" }),
  },
  "GET /v1/connections": {},
  // Toolport's own authorization server: a request the tenant's person opened, and the person's grants.
  "GET /v1/oauth/authorizations/{request_id}": { params: { request_id: "oauthRequest" } },
  "POST /v1/oauth/authorizations/{request_id}": { params: { request_id: "oauthRequest" }, body: () => ({ allow: false }) },
  "GET /v1/oauth/grants": {},
  "DELETE /v1/connections/{connection_id}": { params: { connection_id: "connection" } },

  // Identity
  "GET /v1/accounts/me": {},
  "POST /v1/api-keys": {
    body: (t) => ({ name: "intruder", organization_id: t.organization }),
    cross: {
      status: 403,
      missing: 404,
      why: "spec, POST /api-keys: 404 unknown organization, 403 an organization the caller does not belong to",
    },
  },
  "GET /v1/api-keys": { query: { organization_id: "organization" } },
  "POST /v1/api-keys/callable-tools": { body: (t) => ({ allowed_services: [t.service], allowed_tools: [t.tool] }) },
  "POST /v1/auth/console-key": {
    body: (t) => ({ organization_id: t.organization }),
    cross: {
      status: 403,
      missing: 404,
      why: "as POST /api-keys (the spec's rule for a key's organization): 404 unknown, 403 one the caller does not belong to",
    },
  },
  "POST /v1/auth/logout": {},
  "DELETE /v1/api-keys/{key_id}": { params: { key_id: "key" } },
  "GET /v1/api-keys/{key_id}/usage": { params: { key_id: "key" } },
  "GET /v1/coding-client/mcp-json": { query: { org_id: "organization" } },
  "POST /v1/organizations": { body: () => ({ name: "Intruder org" }) },
  "GET /v1/organizations": {},
  "GET /v1/organizations/context": { query: { org_id: "organization" } },
  "GET /v1/organizations/{organization_id}/members": { params: { organization_id: "organization" } },
  "POST /v1/organizations/{organization_id}/members": {
    params: { organization_id: "organization" },
    body: (_t, ctx) => ({ email: ctx.attackerEmail, role: "admin" }),
  },
  "PATCH /v1/organizations/{organization_id}/members/{account_id}": {
    params: { organization_id: "organization", account_id: "member" },
    body: () => ({ role: "admin" }),
  },
  "DELETE /v1/organizations/{organization_id}/members/{account_id}": {
    params: { organization_id: "organization", account_id: "member" },
  },

  // Billing
  "POST /v1/agents/wallets/fund": { body: () => ({ method: "crypto" }) },
  "POST /v1/agents/wallets/confirm-deposit": {
    body: () => ({ tx_hash: `0x${"ab".repeat(32)}`, expected_amount_atomic: 4_250_000 }),
  },
  "GET /v1/agents/wallet": {},
  "GET /v1/agents/wallet/ledger": {},
  "GET /v1/x402/settings": {},
  "PATCH /v1/x402/settings": { body: () => ({ max_per_call_atomic: 1, daily_limit_atomic: 1 }) },

  // Skills
  "POST /v1/skills": { body: skillBody },
  "GET /v1/skills/my": {},
  "GET /v1/skills/{skill_id}": { params: { skill_id: "skill" } },
  "DELETE /v1/skills/{skill_id}": { params: { skill_id: "skill" } },
  "GET /v1/skills/{skill_id}/archive": { params: { skill_id: "skill" } },
  "POST /v1/skill-submissions": { body: (t) => ({ skill_id: t.skill }) },
  "GET /v1/skill-submissions": {},
  "POST /v1/skills/{skill_id}/submissions": { params: { skill_id: "skill" } },
  "GET /v1/skill-submissions/my": {},
  "GET /v1/skill-submissions/{submission_id}": { params: { submission_id: "submission" } },
  "POST /v1/skill-submissions/{submission_id}/review": {
    params: { submission_id: "submission" },
    body: () => ({ decision: "reject", notes: "intruder" }),
    cross: { status: 403, missing: 403, why: "only platform administrators review (DESIGN: review by a platform admin)" },
  },

  // The APIs.guru directory: platform administrators only; nothing of a tenant's to aim at.
  "GET /v1/directory": {},
  "POST /v1/directory/import": { body: () => ({ names: ["stripe.com"], visibility: "private" }) },

  // Sites
  "POST /v1/agent-sites": { body: (_t, ctx) => ({ url: `${ctx.upstream}/items?site=intruder` }) },
  "GET /v1/agent-sites/my": {},
  "GET /v1/agent-sites/{site_id}": { params: { site_id: "site" } },
  "DELETE /v1/agent-sites/{site_id}": { params: { site_id: "site" } },
  "POST /v1/agent-sites/{site_id}/recrawl": { params: { site_id: "site" } },

  // Workflows
  "GET /v1/workflows/my": {},
  "POST /v1/workflows": {
    body: (t) => ({ name: "Intruder", steps: [{ tool_id: t.tool, input_mapping: { n: 1 } }] }),
    cross: {
      status: 400,
      missing: 400,
      why: "a step's unknown tool is invalid input: 400 naming the field, for a missing tool too",
    },
  },
  "GET /v1/workflows/runs/{run_id}": { params: { run_id: "run" } },
  "POST /v1/workflows/runs/{run_id}/confirm": {
    params: { run_id: "run" },
    body: () => ({ confirm_token: "ct_6f1c2b9e8d4a4f3e9c1b2a7d5e8f0b13" }),
  },
  "GET /v1/workflows/{workflow_id}": { params: { workflow_id: "workflow" } },
  "PATCH /v1/workflows/{workflow_id}": { params: { workflow_id: "workflow" }, body: () => ({ visibility: "public" }) },
  "DELETE /v1/workflows/{workflow_id}": { params: { workflow_id: "workflow" } },
  "POST /v1/workflows/{workflow_id}/run": { params: { workflow_id: "workflow" }, body: () => ({ inputs: {} }) },
  "POST /v1/workflows/{workflow_id}/execute": { params: { workflow_id: "workflow" }, body: () => ({ inputs: {} }) },
  "GET /v1/workflows/{workflow_id}/runs": { params: { workflow_id: "workflow" } },

  // Webhooks
  "POST /v1/webhooks": {
    body: (_t, ctx) => ({ url: `${ctx.receiver}/intruder`, events: ["agent.spend.limit_approaching"] }),
  },
  "GET /v1/webhooks": {},
  "GET /v1/webhooks/{webhook_id}": { params: { webhook_id: "webhook" } },
  "PATCH /v1/webhooks/{webhook_id}": {
    params: { webhook_id: "webhook" },
    body: (_t, ctx) => ({ url: `${ctx.receiver}/stolen`, is_active: false }),
  },
  "DELETE /v1/webhooks/{webhook_id}": { params: { webhook_id: "webhook" } },
  "POST /v1/webhooks/{webhook_id}/rotate-secret": { params: { webhook_id: "webhook" } },
  "GET /v1/webhooks/{webhook_id}/deliveries": { params: { webhook_id: "webhook" } },
  "POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {
    params: { webhook_id: "webhook", delivery_id: "delivery" },
  },
  "POST /v1/webhooks/{webhook_id}/test": { params: { webhook_id: "webhook" } },
};

/**
 * What tenant A's objects look like, read back by A with its JWT (never its key, whose last use would
 * change): compared before and after the matrix, so no refused request changed or removed any of them.
 */
export const readBack: Array<{ path: string; ids: IdName[] }> = [
  { path: "/api-keys", ids: [] },
  { path: "/services/{service}", ids: ["service"] },
  { path: "/services/{service}/tools", ids: ["service"] },
  { path: "/services/{service}/credentials", ids: ["service"] },
  { path: "/services/{oauthService}/oauth-client", ids: ["oauthService"] },
  { path: "/connections", ids: [] },
  { path: "/oauth/authorizations/{oauthRequest}", ids: ["oauthRequest"] },
  { path: "/tools/executions/{execution}/result", ids: ["execution"] },
  { path: "/organizations/{organization}/members", ids: ["organization"] },
  { path: "/webhooks/{webhook}", ids: ["webhook"] },
  { path: "/webhooks/{webhook}/deliveries", ids: ["webhook"] },
  { path: "/skills/{skill}", ids: ["skill"] },
  { path: "/skills/my", ids: [] },
  { path: "/skill-submissions/{submission}", ids: ["submission"] },
  { path: "/workflows/{workflow}", ids: ["workflow"] },
  { path: "/workflows/{workflow}/runs", ids: ["workflow"] },
  { path: "/workflows/runs/{run}", ids: ["run"] },
  { path: "/agent-sites/{site}", ids: ["site"] },
  { path: "/x402/settings", ids: [] },
  { path: "/agents/wallet", ids: [] },
  { path: "/agents/wallet/ledger", ids: [] },
];
