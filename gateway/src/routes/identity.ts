/**
 * /v1 routes served by the identity service: agents and their guide, human sign-up and login, JWKS,
 * API keys and their usage, the client helper and organizations. Each route renders the spec's JSON
 * itself (identity-json.ts) rather than the proto's, so names and nulls are exactly the spec's.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import type { AppDeps } from "../deps.js";
import { HttpError } from "../http/errors.js";
import { badField, boolQuery, intQuery, objectBody, queryString, stringField } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import { clientIp, rateLimit } from "../middleware/rate-limit.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { describedDocument } from "../openapi/document.js";
import { apiMarkdown } from "../openapi/llms.js";
import { identityOps as ops } from "../openapi/operations/identity.js";
import {
  accountJson,
  createdKeyJson,
  guideJson,
  guideMarkdown,
  idList,
  keyJson,
  memberJson,
  organizationJson,
  orgContextJson,
  permissionsField,
  usageJson,
} from "./identity-json.js";

/**
 * Spec limit: 5 registrations per minute per client IP, shared by every gateway replica. The numbers
 * are identity's bucket default (REGISTRATIONS_PER_MINUTE), configured there.
 */
export const REGISTRATION_LIMIT = { bucket: "registration" } as const;
/** Not in the spec: password guessing is slowed to 20 attempts per minute per client IP. */
export const LOGIN_LIMIT = { bucket: "login", limit: 20, windowSeconds: 60 } as const;

export function identityRoutes(api: DescribedRouter, deps: AppDeps): void {
  const identity = deps.clients.identity;
  const publicAddresses = {
    publicBaseUrl: `${deps.config.PUBLIC_URL.replace(/\/+$/, "")}/v1`,
    mcpUrl: deps.config.MCP_PUBLIC_URL,
  };
  const publicUrl = deps.config.PUBLIC_URL.replace(/\/+$/, "");
  const describedAt = { reference: `${publicUrl}/docs`, openapi: `${publicUrl}/v1/openapi.json` };
  const none = auth(identity, "none");
  const either = auth(identity, "api_key_or_jwt");
  const jwt = auth(identity, "jwt");

  // ---- agents ----

  api.post("/agents", ops.registerAgent, none, rateLimit(identity, { ...REGISTRATION_LIMIT, key: clientIp }), async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.registerAgent({
      name: stringField(body, "name") ?? "",
      operatorEmail: stringField(body, "operator_email") ?? "",
      clientIp: clientIp(ctx),
      ...publicAddresses,
    });
    ctx.body = {
      agent_id: res.agentId,
      api_key: res.apiKey,
      wallet_id: res.walletId,
      balance_usdc: res.balanceUsdc,
      deposit_address: res.depositAddress ?? null,
      registration_url: res.registrationUrl,
      getting_started: guideJson(res.gettingStarted, describedAt),
    };
  });

  api.get("/agents/getting-started", ops.gettingStarted, none, async (ctx) => {
    const res = await identity.getGettingStarted(publicAddresses);
    ctx.body = { registration_url: res.registrationUrl, getting_started: guideJson(res.gettingStarted, describedAt) };
  });

  for (const kind of ["skill", "quickstart"] as const) {
    api.get(`/agents/${kind}.md`, kind === "skill" ? ops.skillMd : ops.quickstartMd, none, async (ctx) => {
      const res = await identity.getGettingStarted(publicAddresses);
      ctx.type = "text/markdown; charset=utf-8";
      const routes = kind === "skill" ? apiMarkdown(describedDocument(api, deps.config.PUBLIC_URL), publicUrl) : [];
      ctx.body = guideMarkdown(
        kind,
        guideJson(res.gettingStarted, describedAt),
        { register: `${publicAddresses.publicBaseUrl}/agents`, guide: res.registrationUrl },
        routes,
      );
    });
  }

  // ---- humans ----

  api.post("/auth/signup", ops.signup, none, async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.signup({
      email: stringField(body, "email") ?? "",
      password: stringField(body, "password") ?? "",
      name: stringField(body, "name"),
    });
    ctx.body = {
      account_id: res.accountId,
      organization_id: res.organizationId,
      access_token: res.accessToken,
      token_type: res.tokenType,
      expires_in: res.expiresIn,
    };
  });

  api.post("/auth/login", ops.login, none, rateLimit(identity, { ...LOGIN_LIMIT, key: clientIp }), async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.login({ email: stringField(body, "email") ?? "", password: stringField(body, "password") ?? "" });
    ctx.body = { account_id: res.accountId, access_token: res.accessToken, token_type: res.tokenType, expires_in: res.expiresIn };
  });

  api.get("/auth/jwks.json", ops.jwks, none, async (ctx) => {
    const res = await identity.getJwks({});
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = {
      keys: res.keys.map((k) => ({ kty: k.kty, crv: k.crv, x: k.x, y: k.y, kid: k.kid, alg: k.alg, use: k.use })),
    };
  });

  // The console's key for this sign-in (docs/console.md), and ending the sign-in.
  api.post("/auth/console-key", ops.consoleKey, jwt, async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.issueConsoleKey({ organizationId: stringField(body, "organization_id") });
    if (!res.key) throw badField("organization_id", "no key returned");
    ctx.body = createdKeyJson(res.key);
  });

  api.post("/auth/logout", ops.logout, jwt, async (ctx) => {
    const res = await identity.endSession({});
    ctx.body = { revoked_keys: res.revokedKeys };
  });

  api.get("/accounts/me", ops.me, either, async (ctx) => {
    const { account } = await identity.getAccount({});
    ctx.body = accountJson(account);
  });

  // ---- API keys ----

  api.post("/api-keys", ops.createKey, either, async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.createApiKey({
      name: stringField(body, "name") ?? "",
      permissions: permissionsField(body),
      agentName: stringField(body, "agent_name"),
      agentType: stringField(body, "agent_type"),
      purpose: stringField(body, "purpose"),
      organizationId: stringField(body, "organization_id"),
    });
    ctx.body = createdKeyJson(res);
  });

  // Served by the catalog: it alone knows which tools a pair of allow-lists lets through.
  api.post("/api-keys/callable-tools", ops.callableTools, either, async (ctx) => {
    const body = objectBody(ctx);
    const limit = body.limit;
    if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 100)) {
      throw badField("limit", "must be an integer from 1 to 100");
    }
    const res = await deps.clients.catalog.listCallableTools({
      allowedServices: idList(body, "allowed_services", ""),
      allowedTools: idList(body, "allowed_tools", ""),
      limit: limit as number | undefined,
    });
    ctx.body = {
      count: Number(res.count),
      tools: res.tools.map((t) => ({ id: t.id, name: t.name, service_id: t.serviceId, service_name: t.serviceName })),
      warnings: res.warnings,
    };
  });

  api.get("/api-keys", ops.listKeys, either, async (ctx) => {
    const res = await identity.listApiKeys({
      organizationId: queryString(ctx, "organization_id"),
      includeRevoked: boolQuery(ctx.query.include_revoked, "include_revoked"),
    });
    ctx.body = res.keys.map(keyJson);
  });

  api.delete("/api-keys/:key_id", ops.revokeKey, either, async (ctx) => {
    const res = await identity.revokeApiKey({ keyId: ctx.params.key_id ?? "" });
    ctx.body = { id: res.key?.id ?? ctx.params.key_id, revoked: res.revoked, key: res.key ? keyJson(res.key) : null };
  });

  api.get("/api-keys/:key_id/usage", ops.keyUsage, either, async (ctx) => {
    const days = intQuery(ctx.query.days, "days");
    const res = await identity.getApiKeyUsage({ keyId: ctx.params.key_id ?? "", days });
    if (!res.usage) throw badField("key_id", "no usage returned");
    // Refused calls never ran, so identity's counts (fed by execution events) hold none of them: the
    // execution service, which records them, counts them over the same window (issue 33).
    const refusals = await deps.clients.execution
      .countRefusals({ keyId: res.usage.key?.id ?? ctx.params.key_id ?? "", days })
      .catch((err: unknown) => {
        // Without them the usage is not whole: the spec's 503, as when identity cannot compute it.
        throw Object.assign(
          new HttpError(
            503,
            "usage_unavailable",
            "key usage is temporarily unavailable; retry shortly",
            {},
            { "Retry-After": "1" },
          ),
          { cause: err },
        );
      });
    ctx.body = {
      ...usageJson(res.usage),
      refused: Number(refusals.refused),
      refused_reasons: refusals.reasons.map((r) => ({ reason: r.reason, calls: Number(r.calls) })),
    };
  });

  // ---- client helper (spec item 35) ----

  // The header svc-org-id is passed to identity as a selector, not used to authenticate: the query
  // org_id wins over it, which only the client helper's own resolution can apply.
  api.get("/coding-client/mcp-json", ops.mcpJson, auth(identity, "api_key_or_jwt", { orgHeader: false }), async (ctx) => {
    const res = await identity.getMcpJson({
      orgId: queryString(ctx, "org_id"),
      headerOrgId: ctx.get("svc-org-id").trim() || undefined,
      mcpUrl: deps.config.MCP_PUBLIC_URL,
    });
    ctx.body = {
      file: res.file,
      scope: res.scope,
      mcp_json: (res.mcpJson ?? {}) as JsonObject,
      org: orgContextJson(res.org),
      instructions: res.instructions,
    };
  });

  // ---- organizations ----

  api.post("/organizations", ops.createOrganization, either, async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.createOrganization({ name: stringField(body, "name") ?? "", slug: stringField(body, "slug") });
    ctx.body = organizationJson(res.organization);
  });

  api.get("/organizations", ops.listOrganizations, either, async (ctx) => {
    const res = await identity.listOrganizations({});
    ctx.body = res.organizations.map(organizationJson);
  });

  api.get("/organizations/context", ops.organizationContext, either, async (ctx) => {
    const res = await identity.getOrganizationContext({ orgId: queryString(ctx, "org_id") });
    ctx.body = orgContextJson(res.org);
  });

  api.get("/organizations/:organization_id/members", ops.listMembers, either, async (ctx) => {
    const res = await identity.listMembers({ organizationId: ctx.params.organization_id ?? "" });
    ctx.body = res.members.map(memberJson);
  });

  api.post("/organizations/:organization_id/members", ops.addMember, either, async (ctx) => {
    const body = objectBody(ctx);
    const accountId = stringField(body, "account_id");
    const email = stringField(body, "email");
    const res = await identity.addMember({
      organizationId: ctx.params.organization_id ?? "",
      member: accountId ? { case: "accountId", value: accountId } : email ? { case: "email", value: email } : { case: undefined },
      role: stringField(body, "role") ?? "",
    });
    ctx.body = memberJson(res.member);
  });

  api.patch("/organizations/:organization_id/members/:account_id", ops.updateMember, either, async (ctx) => {
    const body = objectBody(ctx);
    const res = await identity.updateMember({
      organizationId: ctx.params.organization_id ?? "",
      accountId: ctx.params.account_id ?? "",
      role: stringField(body, "role") ?? "",
    });
    ctx.body = memberJson(res.member);
  });

  api.delete("/organizations/:organization_id/members/:account_id", ops.removeMember, either, async (ctx) => {
    const res = await identity.removeMember({
      organizationId: ctx.params.organization_id ?? "",
      accountId: ctx.params.account_id ?? "",
    });
    ctx.body = { removed: res.removed };
  });
}
