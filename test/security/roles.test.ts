/**
 * Roles and keys inside one organization (issue 29; README "Permissions" is the contract), beside the
 * tenant matrix (which keeps tenants apart): one organization (roles/org.ts) with a person in each role
 * (owner, admin, member, viewer, removed, demoted), each with every credential form (a JWT, a personal
 * key with and without `svc-org-id`, an organization key with `svc-org-id` of the organization and of
 * another), and the organization's objects: services published by its owner with an organization
 * credential stored, their tools, OAuth clients and connections, keys, members.
 *
 * 1. The matrix: every credentialed operation of the gateway's OpenAPI document (a row each,
 *    roles/rows.ts), each role and credential form; the expected status follows README "Permissions"
 *    (roles/rules.ts) and the document's credential kinds. A refusal must change nothing in any database
 *    (every table of every service fingerprinted around each batch of refusals, roles/runner.ts); a tool
 *    call that is refused must never reach the upstream, and one that is accepted must reach it with the
 *    organization's credential. Also through the MCP server (a real SDK client) and a workflow's step.
 *    A summary table is printed; a self-check shows that wrong expectations are caught.
 * 2. A restricted key of each kind (allow-lists, caps, confirmation, and a key bound to the organization
 *    used with another organization) is refused every management route (403 `key_restricted`, or
 *    `key_organization_mismatch`), changing nothing; it still calls what it may, and revokes itself and
 *    the keys it made.
 * 3. A restricted key makes a narrower key, and is refused a wider one on each field (403
 *    `permission_exceeds_key` naming the field), making nothing.
 * 4. A property (fast-check, seeded): along random chains of keys made with keys, a wider request is
 *    refused naming a widened field, an accepted key is within its maker field by field, and what it can
 *    call (real calls, and POST /v1/api-keys/callable-tools) is a subset of what its maker can.
 */
import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExecStack, startExecStack } from "../e2e/execution-support.js";
import { connectMcp } from "../e2e/mcp-support.js";
import type { Reply, RequestOptions } from "../harness/http.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { type OAuthServer, startOAuthServer } from "../harness/oauth-server.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { changedTables, type StateProbe, stateProbe } from "./fuzz/state.js";
import { baseIds, createOrg, Fresh, type Org, type Person, ROLES, smallDocument, workflowBody } from "./roles/org.js";
import { paramsOf, rows } from "./roles/rows.js";
import { accepted, type Expect, type FORMS, refused } from "./roles/rules.js";
import {
  buildCases,
  type Case,
  failureLine,
  judge,
  type MatrixContext,
  type Outcome,
  refusalBatch,
  runCase,
  runMatrix,
  send,
  settle,
} from "./roles/runner.js";
import { IDENTITY_SECRET_KEY } from "./tenants/accounts.js";
import { credentialedOperations, expectRowsCover, type Operation, tableRow, tally } from "./tenants/cases.js";

/** xpub of the well-known test mnemonic: crypto funding answers (as in the MCP server's test). */
const DEPOSIT_XPUB =
  "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
const SEED = Number(process.env.ROLES_SEED ?? 29_0001);

describe("roles and keys inside an organization", () => {
  let s: ExecStack;
  let upstream: Upstream;
  let receiver: Receiver;
  let oauth: OAuthServer;
  let org: Org;
  let probe: StateProbe;
  let ctx: MatrixContext;
  let operations: Operation[];
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s since the file started`;

  const opOf = (key: string) => {
    const op = operations.find((o) => o.key === key);
    if (!op) throw new Error(`the document has no ${key}`);
    return op;
  };
  const inOrg = (extra: RequestOptions = {}): RequestOptions => ({ ...extra, headers: { "svc-org-id": org.id } });
  const ownerJwt = () => inOrg({ token: org.people.owner.token });
  const tag = () => `t${randomBytes(5).toString("hex")}`;

  beforeAll(async () => {
    const ca = await testCertificates();
    [upstream, receiver, oauth] = await Promise.all([startEchoApi(), startHttpsReceiver(), startOAuthServer()]);
    s = await startExecStack(
      [`127.0.0.1:${upstream.port}`],
      {
        IDENTITY_SECRET_KEY,
        NODE_EXTRA_CA_CERTS: ca.caFile,
        CONTENT_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
        CATALOG_OUTBOUND_ALLOW: new URL(oauth.tokenUrl).host,
        WEBHOOKS_OUTBOUND_ALLOW: `127.0.0.1:${receiver.port}`,
        WEBHOOKS_POLL_MS: "200",
        // Authorization requests of MCP clients registered dynamically (tenants/accounts.ts).
        OAUTH_DYNAMIC_REGISTRATION: "true",
        BILLING_DEPOSIT_XPUB: DEPOSIT_XPUB,
        PUBLIC_SEARCHES_PER_MINUTE: "100000",
        SEARCHES_PER_MINUTE: "100000",
        FREE_TIER_CALLS_PER_MONTH: "100000",
      },
      ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway", "mcp-server"],
    );
    const servers = { upstream: upstream.url, receiver: receiver.url, oauth };
    org = await createOrg(s, servers);
    console.log(`the organization and its people are set up; ${seconds()}`);
    probe = await stateProbe(s.stack);
    ctx = {
      call: s.call,
      org,
      fresh: new Fresh(s, org, servers),
      probe,
      upstream,
      receiverUrl: receiver.url,
      background: [],
      timings: [],
    };
    operations = credentialedOperations((await s.call("GET", "/openapi.json")).body);
  }, 240_000);

  afterAll(async () => {
    await probe?.close();
    await s?.stop();
    await upstream?.close();
    await receiver?.close();
    await oauth?.close();
  });

  it("has a row for every credentialed operation of the document, and none for an operation that is gone", () => {
    expectRowsCover(operations, Object.keys(rows), (key) => Object.keys(paramsOf(key)), "roles/rows.ts");
  });

  it("answers each role and credential form as README 'Permissions' says; a refusal changes nothing", async () => {
    const cases = buildCases(operations, rows, org);
    const outcomes = await runMatrix(ctx, cases);
    const passed = outcomes.filter((o) => o.problems.length === 0).length;
    const byOp = tally(outcomes, (o) => o.op).sort(([x], [y]) => x.localeCompare(y));
    const byRole = tally(outcomes, (o) => `${o.role} / ${o.form}`).sort(
      ([x], [y]) => ROLES.indexOf(x.split(" / ")[0] as never) - ROLES.indexOf(y.split(" / ")[0] as never) || x.localeCompare(y),
    );
    console.log(
      [
        "intra-organization matrix, by operation: cases run, passed",
        ...byOp.map(([op, e]) => tableRow(op, e, 68)),
        "by role / credential form: cases run, passed",
        ...byRole.map(([name, e]) => tableRow(name, e, 44)),
        `background changes during refusals, not repeated by a replay: ${ctx.background.length}` +
          (ctx.background.length ? ` (${ctx.background.map((b) => `${b.batch}: ${b.tables.join(", ")}`).join("; ")})` : ""),
        `phases: ${ctx.timings.join("; ")}`,
        `total: ${byOp.length} operations, ${outcomes.length} cases, ${passed} passed; ${seconds()}`,
      ].join("\n"),
    );
    const failures = outcomes.filter((o) => o.problems.length > 0).map(failureLine);
    if (failures.length > 0) console.log(`failures:\n${failures.join("\n")}`);
    expect(failures).toEqual([]);
  }, 420_000);

  it("runs batch_execute_tools through the MCP server for members and above, and refuses it to a viewer", async () => {
    const outcomes: Outcome[] = [];
    const clients: Client[] = [];
    const forms = ["personal key + svc-org-id", "org key + svc-org-id"] as const;
    try {
      for (const role of ROLES) {
        const p = org.people[role];
        for (const form of forms) {
          const key = form === "org key + svc-org-id" ? p.orgKey?.key : p.personalKey.key;
          if (!key) continue;
          const t = tag();
          const outcome: Outcome = {
            op: "MCP batch_execute_tools",
            variant: "the org's tool",
            role,
            form,
            expected: "",
            got: "",
            problems: [],
          };
          const refusal =
            p.now === null ? (form === "org key + svc-org-id" ? "key_organization_left" : "organization_not_found") : undefined;
          const runs = p.now !== null && p.now !== "viewer";
          const code = refusal ?? (runs ? undefined : "insufficient_role");
          outcome.expected = runs ? "the element runs with the org's credential" : `refused: ${code}`;
          try {
            const client = await connectMcp(s.stack.mcpUrl, { key, orgId: org.id });
            clients.push(client);
            const result = (await client.callTool({
              name: "batch_execute_tools",
              arguments: { calls: [{ tool_id: org.main.tool, tool_input: { file_path: t } }] },
            })) as CallToolResult;
            const text = ((result.content[0] as { text?: string } | undefined)?.text ?? "").split("\n")[0]!;
            const element = (result.structuredContent as { results?: Array<Record<string, unknown>> } | undefined)?.results?.[0];
            outcome.got = result.isError ? text.slice(0, 120) : JSON.stringify(element).slice(0, 160);
            if (runs) {
              if (result.isError || element?.success !== true)
                outcome.problems.push(`expected the element to run, got ${outcome.got}`);
            } else {
              const refusedWhole = result.isError === true && text.startsWith(`${code}:`);
              const refusedElement = !result.isError && element?.success === false && element.error_code === code;
              if (!refusedWhole && !refusedElement) outcome.problems.push(`expected a refusal with ${code}, got ${outcome.got}`);
            }
          } catch (err) {
            const message = (err as Error).message;
            outcome.got = `threw: ${message.slice(0, 160)}`;
            // A former member's credential may be refused when the connection opens, never a current member's.
            if (p.now !== null || !/40[134]/.test(message)) outcome.problems.push(outcome.got);
          }
          outcome.problems.push(
            ...judge(
              ctx,
              { status: "2xx", refusal: !runs, why: "", upstream: runs ? "org" : "none" },
              { status: 200, body: null, headers: new Headers(), ms: 0 },
              t,
            ),
          );
          outcomes.push(outcome);
        }
      }
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
    }
    console.log(
      ["MCP batch_execute_tools: role / form -> answer", ...outcomes.map((o) => `  ${o.role} / ${o.form}: ${o.got}`)].join("\n"),
    );
    expect(outcomes.filter((o) => o.problems.length > 0).map(failureLine)).toEqual([]);
  });

  it("runs a member's workflow step with the org's credential, and refuses a viewer's step before the upstream", async () => {
    const problems: string[] = [];
    for (const role of ["member", "viewer", "demoted"] as const) {
      const p = org.people[role];
      const wf = await s.call("POST", "/workflows", {
        ...inOrg({ token: p.token }),
        body: workflowBody(org.main.tool, `Step ${role}`),
      });
      expect(wf.status, JSON.stringify(wf.body)).toBe(200);
      const t = tag();
      const run = await s.call(
        "POST",
        `/workflows/${wf.body.id}/run`,
        inOrg({ key: p.personalKey.key, body: { inputs: { tag: t } } }),
      );
      const hits = upstream.requests.filter((r) => r.url === `/echo/files/${t}`);
      const step = run.body?.steps?.[0];
      if (role === "member") {
        if (run.status !== 200 || run.body.status !== "completed")
          problems.push(`member: ${run.status} ${JSON.stringify(run.body)}`);
        if (hits.length !== 1 || hits[0]!.headers["x-api-key"] !== org.orgSecret)
          problems.push("member: not the org's credential");
      } else {
        if (run.status !== 200 || run.body.status !== "failed" || step?.error_code !== "insufficient_role") {
          problems.push(
            `${role}: expected the step refused with insufficient_role, got ${run.status} ${JSON.stringify(run.body)}`,
          );
        }
        if (hits.length > 0) problems.push(`${role}: the step reached the upstream`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("catches what it claims: wrong expectations fail, a change inside a batch of refusals and a wrong credential upstream are seen", async () => {
    const owner = org.people.owner;
    const member = org.people.member;
    const viewer = org.people.viewer;
    const wrong = (
      key: string,
      person: Person,
      form: (typeof FORMS)[number],
      expect: Expect,
      variant = rows[key]!.variants[0]!,
    ): Case => ({
      op: opOf(key),
      variant: { ...variant, name: `self-check: ${expect.why}` },
      person,
      form,
      expect,
    });
    const cases: Case[] = [
      wrong("GET /v1/services/{service_id}", owner, "JWT + svc-org-id", refused(404, "an owner's read said to be refused")),
      wrong(
        "GET /v1/organizations/{organization_id}/members",
        viewer,
        "personal key + svc-org-id",
        refused(403, "a viewer's read said to be refused"),
      ),
      wrong("GET /v1/tools", owner, "JWT + svc-org-id", accepted("a JWT on a key-only route said to be accepted", [200])),
      wrong(
        "POST /v1/tools/call/{tool_id}",
        member,
        "personal key + svc-org-id",
        refused(403, "a member's call said to be refused", "insufficient_role"),
      ),
      wrong(
        "POST /v1/tools/call/{tool_id}",
        owner,
        "org key + svc-org-id",
        accepted("a call said not to reach the upstream", [200], { upstream: "none" }),
      ),
    ];
    const outcomes: Outcome[] = [];
    for (const c of cases) outcomes.push((await runCase(ctx, c)).outcome);

    // An accepted call judged against another credential than the one stored.
    const t = `self${randomBytes(4).toString("hex")}`;
    const callCase = wrong(
      "POST /v1/tools/call/{tool_id}",
      owner,
      "org key + svc-org-id",
      accepted("", [200], { upstream: "org" }),
    );
    const res = await send(ctx, callCase, baseIds(org, owner), t);
    const wrongCredential = judge(ctx, callCase.expect, res, t, org.storedSecrets["managed's organization credential"]);
    outcomes.push({
      ...outcomes[0]!,
      op: callCase.op.key,
      variant: "self-check: the org's credential said to be another",
      problems: wrongCredential,
    });

    // An accepted write inside a batch of refusals (its status said to be right): only the fingerprint sees it.
    await settle(probe);
    const batch: Outcome[] = [];
    const skill = wrong("POST /v1/skills", owner, "JWT + svc-org-id", refused(200, "a write said to be a refusal"));
    await refusalBatch(ctx, "self-check: POST /v1/skills inside a batch of refusals", [skill], batch);
    outcomes.push(...batch);

    const caught = outcomes.filter((o) => o.problems.length > 0).length;
    console.log(
      [
        `self-check: ${caught} of ${outcomes.length} deliberately wrong cases caught`,
        ...outcomes.map(
          (o) => `  ${o.variant}: ${o.problems.length > 0 ? `caught (${o.problems[0]!.slice(0, 140)})` : "NOT caught"}`,
        ),
      ].join("\n"),
    );
    expect(caught).toBe(outcomes.length);
    expect(
      batch.some((o) => o.problems.some((p) => p.includes("changed"))),
      "the fingerprint saw the write",
    ).toBe(true);
  });

  describe("restricted keys", () => {
    type Kind = { name: string; key: string; headers?: Record<string, string>; code: string; id: string };
    let kinds: Kind[];

    beforeAll(async () => {
      const owner = org.people.owner;
      const make = async (body: Record<string, unknown>, who: RequestOptions = ownerJwt()) => {
        const res = await s.call("POST", "/api-keys", { ...who, body: { name: `restricted-${tag()}`, ...body } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return { key: res.body.key as string, id: res.body.id as string };
      };
      const restricted = (permissions: Record<string, unknown>) => make({ organization_id: org.id, permissions });
      const allowedTools = await restricted({ allowed_tools: [org.main.tool] });
      const allowedServices = await restricted({ allowed_services: [org.main.service] });
      const caps = await restricted({ max_cost_per_call_cents: 100, daily_spend_limit_cents: 1000 });
      const confirmation = await restricted({ require_confirmation: true });
      const bound = await make({ organization_id: org.id });
      const personalRestricted = await make({ permissions: { allowed_tools: [org.main.tool] } }, { token: owner.token });
      kinds = [
        { name: "allowed_tools", ...allowedTools, code: "key_restricted" },
        { name: "allowed_services", ...allowedServices, code: "key_restricted" },
        { name: "caps", ...caps, code: "key_restricted" },
        { name: "require_confirmation", ...confirmation, code: "key_restricted" },
        {
          name: "bound to the org, svc-org-id of another",
          ...bound,
          headers: { "svc-org-id": owner.personalOrg },
          code: "key_organization_mismatch",
        },
        {
          name: "restricted personal key, svc-org-id of the org",
          ...personalRestricted,
          headers: { "svc-org-id": org.id },
          code: "key_organization_mismatch",
        },
      ];
    });

    /** Every management route, aimed at the organization's objects. */
    const management = (): Array<{ key: string; path: string; body?: (t: string) => unknown }> => {
      const m = org.managed;
      return [
        { key: "POST /v1/services", path: "/services", body: (t) => smallDocument(t, upstream.url) },
        { key: "PATCH /v1/services/{service_id}", path: `/services/${m.service}`, body: () => ({ summary: "restricted" }) },
        { key: "DELETE /v1/services/{service_id}", path: `/services/${m.service}` },
        {
          key: "POST /v1/services/{service_id}/reimport",
          path: `/services/${m.service}/reimport`,
          body: (t) => smallDocument(t, upstream.url),
        },
        {
          key: "PATCH /v1/tools/{tool_id}",
          path: `/tools/${m.tool}`,
          body: () => ({ deprecated: true, deprecation_message: "restricted" }),
        },
        { key: "DELETE /v1/tools/{tool_id}", path: `/tools/${m.tool}` },
        {
          key: "PUT /v1/services/{service_id}/credentials",
          path: `/services/${m.service}/credentials`,
          body: (t) => ({ scope: "organization", credential: { api_key: `restricted-${t}` } }),
        },
        {
          key: "PUT /v1/services/{service_id}/credentials",
          path: `/services/${m.service}/credentials`,
          body: (t) => ({ scope: "caller", credential: { api_key: `restricted-own-${t}` } }),
        },
        { key: "DELETE /v1/services/{service_id}/credentials", path: `/services/${m.service}/credentials?scope=organization` },
        { key: "DELETE /v1/services/{service_id}/credentials", path: `/services/${m.service}/credentials?scope=caller` },
        {
          key: "PUT /v1/services/{service_id}/oauth-client",
          path: `/services/${org.oauth.managed}/oauth-client`,
          body: (t) => ({ client_id: `restricted-${t}`, client_secret: `secret-${t}` }),
        },
        { key: "DELETE /v1/services/{service_id}/oauth-client", path: `/services/${org.oauth.managed}/oauth-client` },
        {
          key: "POST /v1/services/{service_id}/oauth/connect",
          path: `/services/${org.oauth.connect}/oauth/connect`,
          body: () => ({}),
        },
        {
          key: "POST /v1/services/{service_id}/oauth/connect",
          path: `/services/${org.oauth.own}/oauth/connect`,
          body: () => ({}),
        },
        { key: "DELETE /v1/connections/{connection_id}", path: `/connections/${org.oauth.managedConnection}` },
        {
          key: "PATCH /v1/x402/settings",
          path: "/x402/settings",
          body: () => ({ max_per_call_atomic: 1, daily_limit_atomic: 1 }),
        },
        { key: "POST /v1/organizations", path: "/organizations", body: (t) => ({ name: `Restricted ${t}` }) },
        {
          key: "POST /v1/organizations/{organization_id}/members",
          path: `/organizations/${org.id}/members`,
          body: () => ({ email: org.candidateEmail, role: "member" }),
        },
        {
          key: "PATCH /v1/organizations/{organization_id}/members/{account_id}",
          path: `/organizations/${org.id}/members/${org.target.accountId}`,
          body: () => ({ role: "admin" }),
        },
        {
          key: "DELETE /v1/organizations/{organization_id}/members/{account_id}",
          path: `/organizations/${org.id}/members/${org.target.accountId}`,
        },
        { key: "DELETE /v1/api-keys/{key_id}", path: `/api-keys/${org.ownerOrgKey.id}` },
        { key: "DELETE /v1/api-keys/{key_id}", path: `/api-keys/${org.target.orgKey.id}` },
      ];
    };

    it("refuses every management route to a restricted key of each kind, and nothing changes", async () => {
      await settle(probe);
      const outcomes: Outcome[] = [];
      const hits0 = upstream.requests.length;
      for (const route of management()) {
        const method = route.key.split(" ")[0]!;
        const before = await probe.fingerprint();
        const answers = await Promise.all(
          kinds.map(async (k) => {
            let res: Reply | undefined;
            const outcome: Outcome = {
              op: route.key,
              variant: route.path,
              role: "owner",
              form: "-",
              expected: `403 ${k.code}`,
              got: "",
              problems: [],
            };
            try {
              res = await s.call(method, route.path, { key: k.key, headers: k.headers, body: route.body?.(tag()) });
              outcome.got = `${res.status} ${res.body?.error?.code ?? ""}`;
              if (res.status !== 403 || res.body?.error?.code !== k.code) {
                outcome.problems.push(
                  `${k.name}: expected 403 ${k.code}, got ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
                );
              }
            } catch (err) {
              outcome.problems.push(`${k.name}: threw ${(err as Error).message.split("\n")[0]}`);
            }
            return outcome;
          }),
        );
        const changed = changedTables(before, await probe.fingerprint());
        if (changed.length > 0) answers[0]!.problems.push(`changed ${changed.join(", ")}`);
        outcomes.push(...answers);
      }
      if (upstream.requests.length !== hits0) {
        outcomes.push({
          op: "(the upstream)",
          variant: "",
          role: "-",
          form: "-",
          expected: "nothing reached",
          got: "",
          problems: [`${upstream.requests.length - hits0} requests reached the upstream`],
        });
      }
      const byRoute = tally(outcomes, (o) => `${o.op} ${o.variant.includes("?") ? o.variant.split("?")[1] : ""}`.trim());
      console.log(
        [
          "restricted keys against management routes: cases run, passed",
          ...byRoute.map(([name, e]) => tableRow(name, e, 80)),
          `kinds: ${kinds.map((k) => k.name).join("; ")}`,
        ].join("\n"),
      );
      const failures = outcomes.filter((o) => o.problems.length > 0).map((o) => `${o.op} ${o.variant}: ${o.problems.join("; ")}`);
      if (failures.length) console.log(`failures:\n${failures.join("\n")}`);
      expect(failures).toEqual([]);
    });

    it("still calls what it may with the org's credential, makes a narrower key, revokes it and then itself", async () => {
      const problems: string[] = [];
      for (const k of kinds.slice(0, 5)) {
        const who: RequestOptions = { key: k.key, headers: k.headers?.["svc-org-id"] === org.id ? k.headers : undefined };
        const t = tag();
        const called = await s.call("POST", `/tools/call/${org.main.tool}`, { ...who, body: { tool_input: { file_path: t } } });
        const hits = upstream.requests.filter((r) => r.url === `/echo/files/${t}`);
        if (called.status !== 200)
          problems.push(`${k.name}: the allowed call got ${called.status} ${JSON.stringify(called.body)}`);
        if (hits.length !== 1 || hits[0]!.headers["x-api-key"] !== org.orgSecret)
          problems.push(`${k.name}: not the org's credential`);
        const listed = await s.call("GET", `/api-keys/${k.id}/usage`, who);
        if (listed.status !== 200) problems.push(`${k.name}: reading its own usage got ${listed.status}`);
        const self = (await s.call("GET", "/api-keys", { ...who })).body as
          | Array<{ id: string; permissions: unknown }>
          | undefined;
        const permissions = Array.isArray(self) ? self.find((x) => x.id === k.id)?.permissions : undefined;
        const child = await s.call("POST", "/api-keys", {
          ...who,
          body: { name: `child-${t}`, organization_id: org.id, ...(permissions !== undefined ? { permissions } : {}) },
        });
        if (child.status !== 200 || child.body.created_by_key_id !== k.id) {
          problems.push(
            `${k.name}: making a key as narrow as itself got ${child.status} ${JSON.stringify(child.body).slice(0, 200)}`,
          );
        } else {
          const revoked = await s.call("DELETE", `/api-keys/${child.body.id}`, who);
          if (revoked.status !== 200)
            problems.push(`${k.name}: revoking the key it made got ${revoked.status} ${JSON.stringify(revoked.body)}`);
        }
        const gone = await s.call("DELETE", `/api-keys/${k.id}`, who);
        if (gone.status !== 200) problems.push(`${k.name}: revoking itself got ${gone.status} ${JSON.stringify(gone.body)}`);
        const after = await s.call("GET", "/agents/wallet", who);
        if (after.status !== 401) problems.push(`${k.name}: used after revoking itself got ${after.status}`);
      }
      expect(problems).toEqual([]);
    });
  });

  it("lets a restricted key make a narrower key and refuses a wider one on each field, naming it, making nothing", async () => {
    const { main, second } = org;
    // A service of the organization's that no other test touches: what a wider list adds.
    const published = await s.call("POST", "/services", { ...ownerJwt(), body: smallDocument(tag(), upstream.url) });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const other = { service: published.body.service.id as string, tool: published.body.tools[0].id as string };
    const parentPermissions = {
      allowed_services: [main.service, second.service],
      allowed_tools: [main.tools.read_file!, main.tools.list_items!, second.tools.read_file!],
      max_cost_per_call_cents: 100,
      daily_spend_limit_cents: 1000,
      require_confirmation: true,
    };
    const made = await s.call("POST", "/api-keys", {
      ...ownerJwt(),
      body: { name: `parent-${tag()}`, organization_id: org.id, permissions: parentPermissions },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const parent = { key: made.body.key as string, id: made.body.id as string };
    const narrow = {
      allowed_services: [main.service],
      allowed_tools: [main.tools.read_file!],
      max_cost_per_call_cents: 50,
      daily_spend_limit_cents: 500,
      require_confirmation: true,
    };
    const problems: string[] = [];
    for (const [what, permissions] of [
      ["narrower on every field", narrow],
      ["the same as its maker", parentPermissions],
    ] as const) {
      const res = await s.call("POST", "/api-keys", {
        key: parent.key,
        body: { name: `narrow-${tag()}`, organization_id: org.id, permissions },
      });
      if (res.status !== 200) {
        problems.push(`${what}: expected 200, got ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        continue;
      }
      if (res.body.created_by_key_id !== parent.id) problems.push(`${what}: created_by_key_id ${res.body.created_by_key_id}`);
      if (res.body.organization_id !== org.id) problems.push(`${what}: organization ${res.body.organization_id}`);
      const sorted = (p: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Array.isArray(v) ? [...v].sort() : v]));
      if (JSON.stringify(sorted(res.body.permissions)) !== JSON.stringify(sorted(permissions))) {
        problems.push(`${what}: permissions stored as ${JSON.stringify(res.body.permissions)}`);
      }
    }

    const wider: Array<[string, string, Record<string, unknown>]> = [
      [
        "allowed_services",
        "a service more",
        { permissions: { ...narrow, allowed_services: [...parentPermissions.allowed_services, other.service] } },
      ],
      ["allowed_services", "null (every service)", { permissions: { ...narrow, allowed_services: null } }],
      ["allowed_tools", "a tool more", { permissions: { ...narrow, allowed_tools: [main.tools.read_file!, other.tool] } }],
      ["allowed_tools", "null (every tool)", { permissions: { ...narrow, allowed_tools: null } }],
      ["max_cost_per_call_cents", "higher", { permissions: { ...narrow, max_cost_per_call_cents: 101 } }],
      ["max_cost_per_call_cents", "null (no cap)", { permissions: { ...narrow, max_cost_per_call_cents: null } }],
      ["daily_spend_limit_cents", "higher", { permissions: { ...narrow, daily_spend_limit_cents: 1001 } }],
      ["daily_spend_limit_cents", "null (no cap)", { permissions: { ...narrow, daily_spend_limit_cents: null } }],
      ["require_confirmation", "false", { permissions: { ...narrow, require_confirmation: false } }],
      ["permissions", "null (unrestricted)", { permissions: null }],
      [
        "organization_id",
        "its person's personal organization",
        { permissions: narrow, organization_id: org.people.owner.personalOrg },
      ],
    ];
    await settle(probe);
    const listed = async () =>
      ((await s.call("GET", `/api-keys?organization_id=${org.id}`, ownerJwt())).body as unknown[]).length;
    const keysBefore = await listed();
    const before = await probe.fingerprint();
    for (const [field, how, body] of wider) {
      const res = await s.call("POST", "/api-keys", {
        key: parent.key,
        body: { name: `wider-${tag()}`, organization_id: org.id, ...body },
      });
      const named = res.body?.error?.details?.field;
      if (
        res.status !== 403 ||
        res.body?.error?.code !== "permission_exceeds_key" ||
        ![field, `permissions.${field}`].includes(named)
      ) {
        problems.push(
          `${field} ${how}: expected 403 permission_exceeds_key naming ${field}, got ${res.status} ${JSON.stringify(res.body).slice(0, 240)}`,
        );
      }
    }
    const changed = changedTables(before, await probe.fingerprint());
    if (changed.length > 0) problems.push(`the refused requests changed ${changed.join(", ")}`);
    if ((await listed()) !== keysBefore) problems.push("a key was made");
    console.log(`keys made with a restricted key: ${2 + wider.length} requests, ${problems.length} problems`);
    expect(problems).toEqual([]);
  });

  it("property: along chains of keys made with keys, none is wider than its maker or calls more", async () => {
    const { main, second } = org;
    const universe = {
      services: [main.service, second.service],
      tools: [
        { id: main.tools.read_file!, service: main.service, input: (t: string) => ({ file_path: t }) },
        { id: main.tools.list_items!, service: main.service, input: () => ({ n: 1 }) },
        { id: main.tools.show_secret!, service: main.service, input: () => ({}) },
        { id: second.tools.read_file!, service: second.service, input: (t: string) => ({ file_path: t }) },
        { id: second.tools.list_items!, service: second.service, input: () => ({ n: 1 }) },
      ],
    };
    type Perms = {
      allowed_services: string[] | null;
      allowed_tools: string[] | null;
      max_cost_per_call_cents: number | null;
      daily_spend_limit_cents: number | null;
      require_confirmation: boolean;
    } | null;
    const listMode = fc.constantFrom("same", "subset", "superset", "null");
    const capMode = fc.constantFrom("same", "lower", "higher", "null");
    const step = fc.record({
      unrestricted: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      services: fc.record({ mode: listMode, pick: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }) }),
      tools: fc.record({ mode: listMode, pick: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }) }),
      maxCost: fc.record({ mode: capMode, n: fc.integer({ min: 1, max: 50 }) }),
      daily: fc.record({ mode: capMode, n: fc.integer({ min: 1, max: 500 }) }),
      confirm: fc.constantFrom("same", "true", "false"),
      org: fc.constantFrom("org", "org", "org", "personal"),
    });
    type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

    const pickList = (parent: string[] | null, all: string[], mode: string, pick: boolean[]): string[] | null => {
      const picked = all.filter((_, i) => pick[i]);
      if (mode === "null") return null;
      if (mode === "same") return parent;
      if (mode === "subset") return parent === null ? picked : parent.filter((id) => picked.includes(id));
      return parent === null ? null : [...new Set([...parent, ...picked])];
    };
    const pickCap = (parent: number | null, mode: string, n: number): number | null => {
      if (mode === "null") return null;
      if (mode === "same") return parent;
      if (mode === "lower") return parent === null ? n * 10 : Math.max(0, parent - n);
      return parent === null ? null : parent + n;
    };
    const childOf = (parent: Perms, st: Step): Perms => {
      if (st.unrestricted) return null;
      const base = parent ?? {
        allowed_services: null,
        allowed_tools: null,
        max_cost_per_call_cents: null,
        daily_spend_limit_cents: null,
        require_confirmation: false,
      };
      return {
        allowed_services: pickList(base.allowed_services, universe.services, st.services.mode, st.services.pick),
        allowed_tools: pickList(
          base.allowed_tools,
          universe.tools.map((t) => t.id),
          st.tools.mode,
          st.tools.pick,
        ),
        max_cost_per_call_cents: pickCap(base.max_cost_per_call_cents, st.maxCost.mode, st.maxCost.n),
        daily_spend_limit_cents: pickCap(base.daily_spend_limit_cents, st.daily.mode, st.daily.n),
        require_confirmation: st.confirm === "same" ? base.require_confirmation : st.confirm === "true",
      };
    };
    /** The fields on which `child` is wider than `parent` (README "Keys made with a key"). */
    const widened = (parent: Perms, child: Perms, orgId: string): string[] => {
      const out: string[] = [];
      if (orgId !== org.id) out.push("organization_id");
      if (parent === null) return out;
      if (child === null) return [...out, "permissions"];
      for (const f of ["allowed_services", "allowed_tools"] as const) {
        const mine = parent[f];
        const theirs = child[f];
        if (mine !== null && (theirs === null || theirs.some((id) => !mine.includes(id)))) out.push(f);
      }
      for (const f of ["max_cost_per_call_cents", "daily_spend_limit_cents"] as const) {
        const mine = parent[f];
        const theirs = child[f];
        if (mine !== null && (theirs === null || theirs > mine)) out.push(f);
      }
      if (parent.require_confirmation && !child.require_confirmation) out.push("require_confirmation");
      return out;
    };
    const predicted = (p: Perms) =>
      universe.tools
        .filter(
          (t) =>
            p === null ||
            ((p.allowed_tools === null || p.allowed_tools.includes(t.id)) &&
              (p.allowed_services === null || p.allowed_services.includes(t.service))),
        )
        .map((t) => t.id);
    const callable = async (key: string): Promise<string[]> => {
      const out: string[] = [];
      for (const t of universe.tools) {
        const res = await s.call("POST", `/tools/call/${t.id}`, { key, body: { tool_input: t.input(tag()) } });
        if (res.status === 200 && res.body?.success !== false) out.push(t.id);
      }
      return out;
    };
    const callableTools = new Map<string, string>();
    let chains = 0;
    let made = 0;
    let refusedWider = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        chains++;
        const start = await s.call("POST", "/api-keys", {
          ...ownerJwt(),
          body: { name: `chain-${tag()}`, organization_id: org.id },
        });
        expect(start.status, JSON.stringify(start.body)).toBe(200);
        let parent: { key: string; id: string; perms: Perms; calls: string[] } = {
          key: start.body.key,
          id: start.body.id,
          perms: null,
          calls: await callable(start.body.key),
        };
        for (const st of steps) {
          const perms = childOf(parent.perms, st);
          const orgId = st.org === "org" ? org.id : org.people.owner.personalOrg;
          const wide = widened(parent.perms, perms, orgId);
          const res = await s.call("POST", "/api-keys", {
            key: parent.key,
            body: { name: `link-${tag()}`, organization_id: orgId, permissions: perms },
          });
          const story = `maker ${JSON.stringify(parent.perms)}, asked ${JSON.stringify(perms)} in ${orgId === org.id ? "the org" : "the personal org"}`;
          if (wide.length > 0) {
            const field = String(res.body?.error?.details?.field ?? "").replace(/^permissions\./, "");
            if (res.status !== 403 || res.body?.error?.code !== "permission_exceeds_key" || !wide.includes(field)) {
              throw new Error(
                `${story}: wider on ${wide.join(", ")}, expected 403 permission_exceeds_key naming one, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
              );
            }
            refusedWider++;
            continue;
          }
          if (res.status !== 200)
            throw new Error(`${story}: not wider, expected 200, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
          made++;
          const stored = res.body.permissions as Perms;
          const storedWide = widened(parent.perms, stored, res.body.organization_id);
          if (storedWide.length > 0)
            throw new Error(`${story}: stored ${JSON.stringify(stored)}, wider on ${storedWide.join(", ")}`);
          const calls = await callable(res.body.key);
          const extra = calls.filter((id) => !parent.calls.includes(id));
          if (extra.length > 0) throw new Error(`${story}: calls ${extra.join(", ")}, which its maker cannot`);
          const expected = predicted(stored);
          if (JSON.stringify([...calls].sort()) !== JSON.stringify([...expected].sort())) {
            throw new Error(`${story}: calls ${JSON.stringify(calls)}, the allow-lists let through ${JSON.stringify(expected)}`);
          }
          const listedTools = await s.call("POST", "/api-keys/callable-tools", {
            key: res.body.key,
            // Services default to the universe's two: with no list at all, the first 100 tools of the whole
            // catalog (built-ins included) need not hold them; the universe's tools are the same either way.
            body: {
              allowed_services: stored?.allowed_services ?? universe.services,
              allowed_tools: stored?.allowed_tools ?? null,
              limit: 100,
            },
          });
          const said = Array.isArray(listedTools.body?.tools)
            ? (listedTools.body.tools as Array<{ id: string }>)
                .map((t) => t.id)
                .filter((id) => universe.tools.some((u) => u.id === id))
            : null;
          if (said === null || JSON.stringify([...said].sort()) !== JSON.stringify([...expected].sort())) {
            callableTools.set(
              JSON.stringify(stored),
              `${listedTools.status} ${said ? JSON.stringify(said) : JSON.stringify(listedTools.body).slice(0, 200)}, expected ${JSON.stringify(expected)}`,
            );
          }
          parent = { key: res.body.key, id: res.body.id, perms: stored, calls };
        }
      }),
      { seed: SEED, numRuns: 25, endOnFailure: true },
    );
    console.log(
      `key chains (seed ${SEED}, ROLES_SEED to repeat): ${chains} chains, ${made} keys made, ${refusedWider} wider ones refused; ` +
        `callable-tools disagreed ${callableTools.size} times; ${seconds()}`,
    );
    expect([...callableTools].map(([p, said]) => `callable-tools for ${p}: ${said}`)).toEqual([]);
  }, 300_000);
});
