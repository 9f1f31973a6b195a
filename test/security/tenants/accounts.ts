/**
 * Two complete tenants on one stack for the tenant matrix: each has a person (signed up, with a JWT, an
 * API key of their own, an organization of their own with a second member) and an agent (registered,
 * with its API key and wallet), and owns one of every kind of object the API keeps: API keys (one of
 * them revoked) and their usage, a published service with a stored credential and its tools, a stored
 * result of a call to a real upstream, an OAuth service with its client and a connection (client
 * credentials, against a real authorization server), a webhook with a delivery, a skill with a submission, a workflow
 * with a run, a site record and spending settings. Also an expired JWT of the person, signed with the
 * identity service's own signing key, so only its expiry is wrong.
 */
import { createHash, createPrivateKey, randomBytes, sign } from "node:crypto";
import { createLogger } from "@toolport/kit/logger";
import { createPool } from "@toolport/kit/pg";
import { expect } from "vitest";
import { loadSigningKey } from "../../../services/identity/src/auth/signing-keys.js";
import { type ExecStack, echoApiDocument, registerAgent } from "../../e2e/execution-support.js";
import { signupHuman } from "../../harness/identity-http.js";
import type { OAuthServer } from "../../harness/oauth-server.js";

/** The identity service's key-encryption secret on the matrix's stack (the expired JWT is signed with its key). */
export const IDENTITY_SECRET_KEY = "tenant-matrix-secret-0123456789-abcdefghij";

/** Everything a tenant owns, by the names the matrix's rows use to aim at it. */
export interface TenantIds {
  organization: string;
  personalOrganization: string;
  member: string;
  key: string;
  revokedKey: string;
  service: string;
  serviceSlug: string;
  tool: string;
  toolSlug: string;
  toolName: string;
  execution: string;
  webhook: string;
  delivery: string;
  skill: string;
  submission: string;
  workflow: string;
  run: string;
  site: string;
  account: string;
  agent: string;
  wallet: string;
  /** A service of the tenant's behind OAuth (client credentials), with a registered OAuth client. */
  oauthService: string;
  /** The tenant's OAuth connection to it (for its personal organization). */
  connection: string;
  /** An async batch of the tenant's key (POST /v1/tools/call/batch with Prefer: respond-async). */
  batch: string;
  /** An MCP client's authorization request the tenant's person opened on the consent page. */
  oauthRequest: string;
}

export type IdName = keyof TenantIds;

export interface Tenant {
  label: string;
  /** The person's email. */
  email: string;
  /** The person's JWT. */
  token: string;
  /** The person's own API key (its id is `ids.key`). */
  key: string;
  /** A key of the person's that was revoked. */
  revokedKey: string;
  /** A JWT of the person's that expired an hour ago, signed with identity's key. */
  expiredToken: string;
  /** The agent's API key (registration). */
  agentKey: string;
  ids: TenantIds;
  /** Values that must never appear in another tenant's answers: ids, names, emails, secrets. */
  secrets: string[];
}

/** The echo API's document with tool names of this tenant's own, so a name identifies one tenant's tool. */
function tenantDocument(tag: string) {
  const doc = echoApiDocument({ scheme: { type: "apiKey", in: "header", name: "x-api-key" } });
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops) as Array<{ operationId: string }>) op.operationId = `${op.operationId}_${tag}`;
  }
  return doc;
}

function ok(res: { status: number; body: unknown }, status = 200): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
}

/** An ES256 JWT for `accountId`, signed with identity's current key, that expired an hour ago. */
async function expiredJwt(s: ExecStack, accountId: string): Promise<string> {
  const pool = createPool(s.stack.env.IDENTITY_DATABASE_URL!, 1);
  try {
    const key = await loadSigningKey(pool, IDENTITY_SECRET_KEY, createLogger("tenant-matrix", "silent"));
    const now = Math.floor(Date.now() / 1000);
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const input = `${part({ alg: "ES256", kid: key.kid, typ: "JWT" })}.${part({
      iss: "toolport",
      aud: "toolport",
      sub: accountId,
      jti: randomBytes(8).toString("hex"),
      iat: now - 7200,
      exp: now - 3600,
    })}`;
    const privateKey = createPrivateKey({ key: key.privateJwk as import("node:crypto").JsonWebKey, format: "jwk" });
    const signature = sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" });
    return `${input}.${signature.toString("base64url")}`;
  } finally {
    await pool.end();
  }
}

export interface TenantServers {
  /** Base URL of the echo upstream (the tenant's service and its site). */
  upstream: string;
  /** An HTTPS receiver's URL the webhooks service may deliver to. */
  receiver: string;
  /** The OAuth authorization server the tenants' OAuth services use. */
  oauth: OAuthServer;
}

/**
 * An MCP client's authorization request (a client registered dynamically: the stack turns
 * OAUTH_DYNAMIC_REGISTRATION on), opened on the consent page by the person of `token`, which makes it
 * theirs: anyone else finds nothing at its id.
 */
export async function openAuthorizationRequest(s: ExecStack, token: string, tag: string): Promise<string> {
  const redirect = `http://127.0.0.1:9/${tag}/callback`;
  const registered = await fetch(`${s.stack.gatewayUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: `client-${tag}`, redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const authorize = new URL(`${s.stack.gatewayUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: createHash("sha256")
      .update(`verifier-${tag}-${randomBytes(16).toString("hex")}`)
      .digest("base64url"),
    code_challenge_method: "S256",
    state: tag,
  }))
    authorize.searchParams.set(k, v);
  const sent = await fetch(authorize, { redirect: "manual" });
  expect(sent.status).toBe(302);
  const id = new URL(sent.headers.get("location") as string).searchParams.get("request") as string;
  ok(await s.call("GET", `/oauth/authorizations/${id}`, { token }));
  return id;
}

/** Builds one tenant through the gateway, as its users would. */
export async function createTenant(s: ExecStack, label: string, servers: TenantServers): Promise<Tenant> {
  const { call } = s;
  const tag = `${label.toLowerCase()}${randomBytes(5).toString("hex")}`;
  const human = await signupHuman(call, `tenant-${tag}`);
  const member = await signupHuman(call, `member-${tag}`);
  const agent = await registerAgent(s, `agent-${tag}`);
  const token = human.token;

  const org = await call("POST", "/organizations", { token, body: { name: `Org ${tag}`, slug: `org-${tag}` } });
  ok(org);
  const organization = org.body.id ?? org.body.organization?.id;
  ok(await call("POST", `/organizations/${organization}/members`, { token, body: { email: member.email, role: "member" } }));

  const keyRes = await call("POST", "/api-keys", { token, body: { name: `key-${tag}`, agent_name: `bot-${tag}` } });
  ok(keyRes);
  const revokedRes = await call("POST", "/api-keys", { token, body: { name: `revoked-${tag}` } });
  ok(revokedRes);
  ok(await call("DELETE", `/api-keys/${revokedRes.body.id}`, { token }));
  const key = keyRes.body.key as string;

  const published = await call("POST", "/services", {
    key,
    body: { api: { document: tenantDocument(tag), base_url: servers.upstream } },
  });
  ok(published, 201);
  const service = published.body.service.id as string;
  const toolName = `list_items_${tag}`;
  const publishedTool = published.body.tools.find((t: { name: string }) => t.name === toolName);
  const tool = publishedTool.id as string;
  const credentialSecret = `cred-${tag}-${randomBytes(8).toString("hex")}`;
  ok(await call("PUT", `/services/${service}/credentials`, { key, body: { credential: { api_key: credentialSecret } } }));

  const oauthPublished = await call("POST", "/services", {
    key,
    body: { api: { document: servers.oauth.openapi({ title: `OAuth ${tag}`, flows: ["clientCredentials"] }) } },
  });
  ok(oauthPublished, 201);
  const oauthService = oauthPublished.body.service.id as string;
  const machine = servers.oauth.machineClient;
  ok(
    await call("PUT", `/services/${oauthService}/oauth-client`, {
      key,
      body: { client_id: machine.clientId, client_secret: machine.clientSecret, revocation_url: servers.oauth.revocationUrl },
    }),
  );
  const connected = await call("POST", `/services/${oauthService}/oauth/connect`, { token, body: {} });
  ok(connected);

  const called = await call("POST", `/tools/call/${tool}`, { key, body: { tool_input: { n: 2 } } });
  ok(called);
  const batch = await call("POST", "/tools/call/batch", {
    key,
    headers: { prefer: "respond-async" },
    body: { calls: [{ tool_id: tool, tool_input: { n: 3 } }] },
  });
  ok(batch, 202);
  const oauthRequest = await openAuthorizationRequest(s, token, tag);
  const execution = called.body.execution_id as string;

  const hook = await call("POST", "/webhooks", {
    token,
    body: { url: `${servers.receiver}/${tag}`, events: ["agent.spend.limit_approaching"], description: `hook-${tag}` },
  });
  ok(hook);
  ok(await call("POST", `/webhooks/${hook.body.id}/test`, { token }));
  const deliveries = await call("GET", `/webhooks/${hook.body.id}/deliveries`, { token });
  ok(deliveries);

  const skillName = `skill-${tag}`;
  const skill = await call("POST", "/skills", {
    key,
    body: { name: skillName, skill_md_content: `---\ndescription: Skill of tenant ${tag}.\n---\n# ${skillName}\n` },
  });
  ok(skill);
  const submission = await call("POST", `/skills/${skill.body.id}/submissions`, { token });
  ok(submission);

  const workflow = await call("POST", "/workflows", {
    key,
    body: { name: `Workflow ${tag}`, steps: [{ tool_id: tool, input_mapping: { n: 1 } }] },
  });
  ok(workflow);
  const run = await call("POST", `/workflows/${workflow.body.id}/run`, { key, body: { inputs: {} } });
  ok(run);

  const site = await call("POST", "/agent-sites", { key, body: { url: `${servers.upstream}/items?site=${tag}` } });
  ok(site);
  ok(await call("PATCH", "/x402/settings", { token, body: { max_per_call_atomic: 123_456, daily_limit_atomic: 7_654_321 } }));
  const wallet = await call("GET", "/agents/wallet", { key: agent.key });
  ok(wallet);

  const ids: TenantIds = {
    organization,
    personalOrganization: human.organizationId,
    member: member.accountId,
    key: keyRes.body.id,
    revokedKey: revokedRes.body.id,
    service,
    serviceSlug: published.body.service.slug,
    tool,
    toolSlug: publishedTool.slug,
    toolName,
    execution,
    webhook: hook.body.id,
    delivery: deliveries.body.deliveries[0].id,
    skill: skill.body.id,
    submission: submission.body.id,
    workflow: workflow.body.id,
    run: run.body.run_id,
    site: site.body.id,
    account: human.accountId,
    agent: agent.id,
    wallet: wallet.body.wallet_id ?? wallet.body.id,
    oauthService,
    connection: connected.body.connection.id,
    batch: batch.body.batch_id,
    oauthRequest,
  };
  for (const [name, id] of Object.entries(ids)) expect(id, `${label}'s ${name}`).toMatch(/^\S{3,}$/);
  return {
    label,
    email: human.email,
    token,
    key,
    revokedKey: revokedRes.body.key,
    expiredToken: await expiredJwt(s, human.accountId),
    agentKey: agent.key,
    ids,
    secrets: [
      ...Object.values(ids),
      tag,
      human.email,
      member.email,
      key,
      revokedRes.body.key,
      agent.key,
      token,
      hook.body.secret,
      credentialSecret,
    ],
  };
}
