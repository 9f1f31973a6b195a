/**
 * The intra-organization matrix's table: one row per credentialed operation of the gateway's OpenAPI
 * document, keyed `METHOD /v1/path` as the document spells it (as the tenant matrix's is), each with one
 * or more variants: what the request aims at and the rule (rules.ts) that says what each role and
 * credential form gets. Path parameters come from the tenant matrix's rows (tenants/matrix.ts), and so
 * do bodies where they fit.
 *
 * A variant aims requests that are to be refused at the organization's real objects (`aim`; by default
 * `main`, the person's own objects, the target member and its key), and requests that are to be accepted
 * at throwaway ones where the request changes or removes its target (`fresh`), so an accepted request
 * never takes away what another case aims at. Management requests that must be refused aim at `managed`,
 * not at `main`, whose tool the accepted calls run.
 */

import type { IdName, TenantIds } from "../tenants/accounts.js";
import { matrix as tenantRows } from "../tenants/matrix.js";
import type { Fresh, FreshIds, Org, Person, RoleName } from "./org.js";
import { smallDocument, workflowBody } from "./org.js";
import {
  accepted,
  activityLog,
  baseline,
  call,
  connectOwn,
  type FormName,
  invisible,
  keysIn,
  listedElsewhere,
  manage,
  membersIn,
  othersKeyIn,
  own,
  previewPublish,
  publish,
  type Rule,
  read,
  readIn,
  refused,
} from "./rules.js";

export interface BodyContext {
  /** Unique to the case: names its upstream call, and its objects. */
  tag: string;
  org: Org;
  person: Person;
  upstream: string;
  receiver: string;
  /** A fresh person's email (adding a member). */
  email?: string;
}

export interface Variant {
  name: string;
  rule: Rule;
  /** Targets of requests that are to be refused, over the default ids. */
  aim?: (org: Org, p: Person) => Partial<TenantIds>;
  /** A throwaway target for a request that is to be accepted. */
  fresh?: (f: Fresh, p: Person) => Promise<FreshIds>;
  body?: (ids: TenantIds, c: BodyContext) => unknown;
  query?: (ids: TenantIds) => Record<string, string>;
  /** Only these credential forms (default: all). */
  forms?: readonly FormName[];
  /** Only these people (default: all). */
  roles?: readonly RoleName[];
  /**
   * Accepted requests of this variant go one at a time (they share one target: a `scratch` object).
   * Otherwise only one person's requests of a variant do (they may share that person's own object).
   */
  serial?: boolean;
}

export interface RoleRow {
  /** Path parameter -> id (default: the tenant matrix's row). */
  params?: Record<string, IdName>;
  variants: Variant[];
}

const tenantBody = (key: string) => (ids: TenantIds, c: BodyContext) =>
  tenantRows[key]!.body!(ids, { upstream: c.upstream, receiver: c.receiver, attackerEmail: c.org.candidateEmail });

const managedService = (o: Org): Partial<TenantIds> => ({
  service: o.managed.service,
  serviceSlug: o.managed.serviceSlug,
  tool: o.managed.tool,
  toolSlug: o.managed.toolSlug,
  toolName: o.managed.toolName,
});

const single = (name: string, rule: Rule, more: Partial<Variant> = {}): Variant[] => [{ name, rule, ...more }];

const notOrgKey: readonly FormName[] = ["JWT + svc-org-id", "personal key", "personal key + svc-org-id"];

/** The organization's OAuth client registration, as its owner registers it. */
const clientBody = (_ids: TenantIds, c: BodyContext) => ({ client_id: `client-${c.tag}`, client_secret: `secret-${c.tag}` });

export const rows: Record<string, RoleRow> = {
  // Execution: calling the organization's tool (the echo API's read_file, at a path that names the case).
  "POST /v1/tools/call/batch": {
    variants: single("the org's tool", call("batch"), {
      body: (ids, c) => ({ calls: [{ tool_id: ids.tool, tool_input: { file_path: c.tag } }] }),
    }),
  },
  "POST /v1/tools/call/{tool_id}": {
    variants: single("the org's tool", call("single"), { body: (_ids, c) => ({ tool_input: { file_path: c.tag } }) }),
  },
  "GET /v1/tools/executions/{execution_id}/result": { variants: single("its own result", own()) },
  "GET /v1/activity": { params: {}, variants: single("the call log", activityLog) },
  // An async batch is seen only by the key that sent it, in the organization it ran in (its personal one).
  "GET /v1/tools/call/batch/{batch_id}": { variants: single("its own batch", own(), { forms: ["personal key"] }) },
  "POST /v1/tools/call/batch/{batch_id}/cancel": {
    variants: single("its own batch", own(), { forms: ["personal key"], fresh: (f, p) => f.batch(p) }),
  },

  // Catalog: reads.
  "GET /v1/tools": { variants: single("the list", read(listedElsewhere)) },
  "GET /v1/tools/search": {
    variants: single("the org's service", read(listedElsewhere), {
      query: (ids) => ({ service_id: ids.service, query: ids.toolName }),
    }),
  },
  "GET /v1/tools/public/search": {
    variants: single("public search", own(), { query: (ids) => ({ service_id: ids.service, query: ids.toolName }) }),
  },
  "GET /v1/tools/recommended": {
    variants: single("the org's tool", read(accepted("as for a tool it cannot see", [200, 404])), {
      query: (ids) => ({ tool_id: ids.tool }),
    }),
  },
  "GET /v1/tools/name/{tool_name}": { variants: single("the org's tool", read()) },
  "GET /v1/tools/{tool_id}/describe": { variants: single("the org's tool", read()) },
  "GET /v1/tools/{tool_id}": { variants: single("the org's tool", read()) },
  "GET /v1/services": {
    variants: single("the org's services", read(invisible), { query: (ids) => ({ organization_id: ids.organization }) }),
  },
  "GET /v1/services/{service_id}": { variants: single("the org's service", read()) },
  "GET /v1/services/{service_id}/tools": { variants: single("the org's service", read()) },
  "GET /v1/services/{service_id}/credentials": { variants: single("the org's service", read()) },
  // The registration is the publisher's view (README "Permissions", "Reading"): owners and admins.
  "GET /v1/services/{service_id}/oauth-client": { variants: single("the org's OAuth client", manage()) },
  "GET /v1/connections": { variants: single("the list", read(listedElsewhere)) },
  // Toolport's own authorization server: a person's consent (a JWT only; keys get 401 by the document).
  "GET /v1/oauth/authorizations/{request_id}": { variants: single("a request it opened", own()) },
  "POST /v1/oauth/authorizations/{request_id}": {
    variants: single("a request it opened", own(), {
      fresh: (f, p) => f.authorizationRequest(p),
      body: () => ({ allow: false }),
    }),
  },
  "GET /v1/oauth/grants": { variants: single("its grants", own()) },

  // Catalog: management.
  "POST /v1/services": {
    variants: single("publish into the org", publish, { body: (_ids, c) => smallDocument(c.tag, c.upstream) }),
  },
  "POST /v1/services/preview": {
    variants: single("preview a publish into the org", previewPublish, { body: (_ids, c) => smallDocument(c.tag, c.upstream) }),
  },
  "PATCH /v1/tools/{tool_id}": {
    variants: single("a tool of the org's", manage(), {
      aim: managedService,
      fresh: (f) => f.scratch("PATCH tool"),
      serial: true,
      body: tenantBody("PATCH /v1/tools/{tool_id}"),
    }),
  },
  "DELETE /v1/tools/{tool_id}": {
    variants: single("a tool of the org's", manage(), { aim: managedService, fresh: (f) => f.service() }),
  },
  "PATCH /v1/services/{service_id}": {
    variants: single("the org's service", manage(), {
      aim: managedService,
      fresh: (f) => f.scratch("PATCH service"),
      serial: true,
      body: (_ids, c) => ({ summary: `edited ${c.tag}` }),
    }),
  },
  "DELETE /v1/services/{service_id}": {
    variants: single("the org's service", manage(), { aim: managedService, fresh: (f) => f.service() }),
  },
  "POST /v1/services/{service_id}/reimport": {
    variants: single("the org's service", manage(), {
      aim: managedService,
      fresh: (f) => f.scratch("reimport"),
      serial: true,
      body: (_ids, c) => smallDocument(c.tag, c.upstream),
    }),
  },
  "PUT /v1/services/{service_id}/credentials": {
    variants: [
      {
        name: "the organization's credential",
        rule: manage(),
        aim: managedService,
        fresh: (f) => f.scratch("PUT credentials, organization"),
        serial: true,
        body: (_ids, c) => ({ scope: "organization", credential: { api_key: `org-value-${c.tag}` } }),
      },
      {
        name: "its own credential",
        rule: connectOwn(),
        aim: managedService,
        fresh: (f) => f.scratch("PUT credentials, caller"),
        serial: true,
        body: (_ids, c) => ({ scope: "caller", credential: { api_key: `own-value-${c.tag}` } }),
      },
    ],
  },
  "DELETE /v1/services/{service_id}/credentials": {
    variants: [
      {
        name: "the organization's credential",
        rule: manage(),
        aim: managedService,
        fresh: (f) => f.serviceWithOrgCredential(),
        query: () => ({ scope: "organization" }),
      },
      {
        name: "its own credential",
        rule: connectOwn(),
        aim: managedService,
        fresh: (f, p) => f.serviceWithCallerCredential(p),
        query: () => ({ scope: "caller" }),
      },
    ],
  },
  "PUT /v1/services/{service_id}/oauth-client": {
    variants: single("the org's OAuth client", manage(), {
      aim: (o) => ({ oauthService: o.oauth.managed }),
      fresh: (f) => f.scratchOAuth("PUT oauth-client"),
      serial: true,
      body: clientBody,
    }),
  },
  "DELETE /v1/services/{service_id}/oauth-client": {
    variants: single("the org's OAuth client", manage(), {
      aim: (o) => ({ oauthService: o.oauth.managed }),
      fresh: (f) => f.oauthService(true),
    }),
  },
  "POST /v1/services/{service_id}/oauth/connect": {
    variants: [
      {
        name: "a shared client (the organization's connection)",
        rule: manage(),
        aim: (o) => ({ oauthService: o.oauth.connect }),
        fresh: (f) => f.oauthService(true),
        body: () => ({}),
      },
      {
        name: "a client of each its own",
        rule: connectOwn(),
        aim: (o) => ({ oauthService: o.oauth.own }),
        fresh: (f) => f.oauthService(false),
        body: () => ({}),
      },
    ],
  },
  "DELETE /v1/connections/{connection_id}": {
    variants: [
      {
        name: "the organization's connection",
        rule: manage(),
        fresh: (f) => f.orgConnection(),
      },
      {
        name: "its own connection",
        rule: connectOwn(accepted("its own connection, from anywhere")),
        roles: ["owner", "admin", "member"],
        fresh: (f, p) => f.ownConnection(p),
      },
    ],
  },

  // Identity.
  "GET /v1/accounts/me": { variants: single("itself", own()) },
  "POST /v1/api-keys": {
    variants: [
      {
        name: "bound to the organization",
        rule: keysIn,
        body: (ids, c) => ({ name: `key-${c.tag}`, organization_id: ids.organization }),
      },
      {
        name: "bound to its personal organization",
        rule: own(),
        forms: notOrgKey,
        body: (_ids, c) => ({ name: `key-${c.tag}` }),
      },
    ],
  },
  "GET /v1/api-keys": {
    variants: single("the org's keys", readIn, { query: (ids) => ({ organization_id: ids.organization }) }),
  },
  "DELETE /v1/api-keys/{key_id}": {
    variants: [
      { name: "another member's organization key", rule: othersKeyIn, fresh: (f) => f.targetKey() },
      {
        name: "the owner's organization key",
        rule: othersKeyIn,
        roles: ["admin", "member", "viewer", "removed", "demoted"],
        aim: (o) => ({ key: o.ownerOrgKey.id }),
        fresh: (f) => f.ownerKey(),
      },
      { name: "its own key", rule: own(), aim: (_o, p) => ({ key: p.spareKey.id }), fresh: (f, p) => f.ownKey(p) },
    ],
  },
  "GET /v1/api-keys/{key_id}/usage": {
    variants: single("its own key", own(), { aim: (_o, p) => ({ key: p.personalKey.id }) }),
  },
  "POST /v1/api-keys/callable-tools": {
    params: {},
    variants: single("the org's service", own(), {
      body: (ids) => ({ allowed_services: [ids.service], allowed_tools: null }),
    }),
  },
  "GET /v1/coding-client/mcp-json": {
    variants: single("the organization", readIn, { query: (ids) => ({ org_id: ids.organization }) }),
  },
  "POST /v1/organizations": {
    variants: single("a new organization", own(), { body: (_ids, c) => ({ name: `New ${c.tag}` }) }),
  },
  "GET /v1/organizations": { variants: single("its organizations", own()) },
  "GET /v1/organizations/context": {
    variants: single("the organization", readIn, { query: (ids) => ({ org_id: ids.organization }) }),
  },
  "GET /v1/organizations/{organization_id}/members": { variants: single("the organization", readIn) },
  "POST /v1/organizations/{organization_id}/members": {
    variants: [
      {
        name: "add a member",
        rule: membersIn(),
        fresh: (f) => f.candidate(),
        body: (_ids, c) => ({ email: c.email ?? c.org.candidateEmail, role: "member" }),
      },
      {
        name: "add an owner",
        rule: membersIn(true),
        fresh: (f) => f.candidate(),
        body: (_ids, c) => ({ email: c.email ?? c.org.candidateEmail, role: "owner" }),
      },
    ],
  },
  "PATCH /v1/organizations/{organization_id}/members/{account_id}": {
    variants: [
      { name: "a member made admin", rule: membersIn(), fresh: (f) => f.member("member"), body: () => ({ role: "admin" }) },
      { name: "a member made owner", rule: membersIn(true), fresh: (f) => f.member("member"), body: () => ({ role: "owner" }) },
      {
        name: "an owner made admin",
        rule: membersIn(true),
        aim: (o) => ({ member: o.coOwner.accountId }),
        fresh: (f) => f.member("owner"),
        body: () => ({ role: "admin" }),
      },
    ],
  },
  "DELETE /v1/organizations/{organization_id}/members/{account_id}": {
    variants: [
      { name: "a member", rule: membersIn(), fresh: (f) => f.member("member") },
      { name: "an owner", rule: membersIn(true), aim: (o) => ({ member: o.coOwner.accountId }), fresh: (f) => f.member("owner") },
    ],
  },
  "POST /v1/auth/console-key": {
    params: {},
    variants: single("the organization", keysIn, { body: (ids) => ({ organization_id: ids.organization }) }),
  },
  "POST /v1/auth/logout": {
    params: {},
    variants: single("its own sign-in", own(), { fresh: (f, p) => f.login(p) }),
  },

  // Billing: the person's own wallet and spending settings.
  "POST /v1/agents/wallets/fund": { variants: single("its wallet", own(), { body: tenantBody("POST /v1/agents/wallets/fund") }) },
  "POST /v1/agents/wallets/confirm-deposit": {
    // Without the amount: the gateway's 400, the same for everyone (this stack has no chain to confirm on).
    variants: single("its wallet", baseline, { body: () => ({ tx_hash: `0x${"ab".repeat(32)}` }) }),
  },
  "GET /v1/agents/wallet": { variants: single("its wallet", own()) },
  "GET /v1/agents/wallet/ledger": { variants: single("its wallet", own()) },
  "GET /v1/x402/settings": { variants: single("its settings", own()) },
  "PATCH /v1/x402/settings": {
    variants: single("its settings", own(), { body: () => ({ max_per_call_atomic: 250_000, daily_limit_atomic: 9_000_000 }) }),
  },

  // Skills: the person's own.
  "POST /v1/skills": {
    variants: single("a skill of its own", own(), {
      body: (_ids, c) => ({ name: `skill-${c.tag}`, skill_md_content: `---\ndescription: Skill ${c.tag}.\n---\n# ${c.tag}\n` }),
    }),
  },
  "GET /v1/skills/my": { variants: single("its skills", own()) },
  "GET /v1/skills/{skill_id}": { variants: single("its own skill", own()) },
  "DELETE /v1/skills/{skill_id}": { variants: single("its own skill", own(), { fresh: (f, p) => f.skill(p) }) },
  "GET /v1/skills/{skill_id}/archive": { variants: single("its own skill", own()) },
  "POST /v1/skill-submissions": {
    variants: single("its own skill", own(), { fresh: (f, p) => f.skill(p), body: (ids) => ({ skill_id: ids.skill }) }),
  },
  "GET /v1/skill-submissions": { variants: single("the review queue", baseline) },
  "POST /v1/skills/{skill_id}/submissions": {
    variants: single("its own skill", own(), { fresh: (f, p) => f.skill(p) }),
  },
  "GET /v1/skill-submissions/my": { variants: single("its submissions", own()) },
  "GET /v1/skill-submissions/{submission_id}": { variants: single("its own submission", own()) },
  "POST /v1/skill-submissions/{submission_id}/review": {
    variants: single("its own submission", baseline, { body: tenantBody("POST /v1/skill-submissions/{submission_id}/review") }),
  },

  // The APIs.guru directory: platform administrators only, whatever the organization.
  "GET /v1/directory": { variants: single("the directory (platform administrators only)", baseline) },
  "POST /v1/directory/import": {
    variants: single("the directory (platform administrators only)", baseline, {
      body: () => ({ names: ["stripe.com"], visibility: "private" }),
    }),
  },

  // Sites: the person's own.
  "POST /v1/agent-sites": {
    variants: single("a site of its own", own(), { body: (_ids, c) => ({ url: `${c.upstream}/items?site=${c.tag}` }) }),
  },
  "GET /v1/agent-sites/my": { variants: single("its sites", own()) },
  "GET /v1/agent-sites/{site_id}": { variants: single("its own site", own()) },
  "DELETE /v1/agent-sites/{site_id}": { variants: single("its own site", own(), { fresh: (f, p) => f.site(p) }) },
  "POST /v1/agent-sites/{site_id}/recrawl": { variants: single("its own site", own()) },

  // Workflows: the person's own; running one calls the organization's tool.
  "GET /v1/workflows/my": { variants: single("its workflows", own()) },
  "POST /v1/workflows": {
    variants: single(
      "a workflow of its own calling the org's tool",
      (a) => (a.kind === "org" ? accepted("its own workflow") : refused(400, "a step's tool it cannot see is invalid input")),
      { body: (ids, c) => workflowBody(ids.tool, `Workflow ${c.tag}`) },
    ),
  },
  "GET /v1/workflows/runs/{run_id}": { variants: single("its own run", own()) },
  "POST /v1/workflows/runs/{run_id}/confirm": {
    variants: single("its own run", baseline, { body: tenantBody("POST /v1/workflows/runs/{run_id}/confirm") }),
  },
  "GET /v1/workflows/{workflow_id}": { variants: single("its own workflow", own()) },
  "PATCH /v1/workflows/{workflow_id}": {
    variants: single("its own workflow", own(), { body: (_ids, c) => ({ description: `edited ${c.tag}` }) }),
  },
  "DELETE /v1/workflows/{workflow_id}": { variants: single("its own workflow", own(), { fresh: (f, p) => f.workflow(p) }) },
  "POST /v1/workflows/{workflow_id}/run": {
    variants: single("its own workflow", call("workflow"), { body: (_ids, c) => ({ inputs: { tag: c.tag } }) }),
  },
  "POST /v1/workflows/{workflow_id}/execute": {
    variants: single("its own workflow", call("workflow"), { body: (_ids, c) => ({ inputs: { tag: c.tag } }) }),
  },
  "GET /v1/workflows/{workflow_id}/runs": { variants: single("its own workflow", own()) },

  // Webhooks (JWT only): the person's own.
  "POST /v1/webhooks": {
    variants: single("a webhook of its own", own(), {
      body: (_ids, c) => ({ url: `${c.receiver}/${c.tag}`, events: ["agent.spend.limit_approaching"] }),
    }),
  },
  "GET /v1/webhooks": { variants: single("its webhooks", own()) },
  "GET /v1/webhooks/{webhook_id}": { variants: single("its own webhook", own()) },
  "PATCH /v1/webhooks/{webhook_id}": {
    variants: single("its own webhook", own(), { body: (_ids, c) => ({ description: `edited ${c.tag}` }) }),
  },
  "DELETE /v1/webhooks/{webhook_id}": { variants: single("its own webhook", own(), { fresh: (f, p) => f.webhook(p) }) },
  "POST /v1/webhooks/{webhook_id}/rotate-secret": { variants: single("its own webhook", own()) },
  "GET /v1/webhooks/{webhook_id}/deliveries": { variants: single("its own webhook", own()) },
  "POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": { variants: single("its own delivery", own()) },
  "POST /v1/webhooks/{webhook_id}/test": { variants: single("its own webhook", own()) },
};

/** Path parameters of a row: its own, else the tenant matrix's row's. */
export function paramsOf(key: string): Record<string, IdName> {
  return rows[key]?.params ?? tenantRows[key]?.params ?? {};
}
