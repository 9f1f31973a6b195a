/**
 * The tenant matrix (issue 18): two complete tenants, A and B, on one stack (tenants/accounts.ts), and
 * for every operation of the gateway's OpenAPI document that takes a credential, requests aimed at A's
 * objects (tenants/matrix.ts says how, per operation; a credentialed operation without a row, or a row
 * for an operation that is gone, fails the first test):
 * - no credential, a malformed API key, a malformed JWT, A's revoked API key, A's expired JWT (signed
 *   with identity's own key), and A's valid credential of the kind the route does not take: each must
 *   be 401 `unauthenticated` (`invalid_token` for a bearer token that fails verification) (SERVICE-SPEC
 *   "Authentication" 1-2);
 * - B's valid credentials (its person's key, its agent's key, its person's JWT; each kind the route
 *   takes) aimed at A's objects: every id of A's at once, by slug too where a route takes one, and for
 *   routes with two ids each one alone beside B's own; and B's credentials with `svc-org-id` of A's
 *   team or personal organization (the spec: "organization unknown or caller not a member" is 404).
 *   On routes with optional credentials, an anonymous caller is tried the same way. B's own view (each
 *   GET aimed at B's own objects and lists) must hold nothing of A's either.
 * How such an answer is judged ("exists but not yours" against "does not exist"): the same request is
 * sent with fresh random ids in place of A's (a random UUID; a random name for a tool name). Both
 * answers must have the same status and the same whole body once every id the request carried is
 * replaced by `<id>` in each: so the same error code, message and details, to the letter. The status
 * must be 404 (the spec's "not found, or not visible to the caller") unless the row records the
 * reason for another one (the spec's words, or the documented behaviour where the spec is silent); an
 * id given only in a query or body (a search filter) may instead get an equal 2xx answer. No answer to B (or to no one) may contain anything of A's: ids, names, emails,
 * keys, tokens, secrets (checked after that same replacement, so an id B sent itself does not count).
 * Every reply is also checked against the description by the harness client: a status or body the
 * document does not describe fails the case. Any 5xx fails.
 * Writes: A's objects are read back by A before and after the matrix and must be unchanged (fields
 * derived later from events, such as reliability figures, are left out of the comparison).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExecStack, startExecStack } from "../e2e/execution-support.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { type OAuthServer, startOAuthServer } from "../harness/oauth-server.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { until } from "../harness/wait.js";
import { createTenant, IDENTITY_SECRET_KEY, type IdName, type Tenant } from "./tenants/accounts.js";
import { checks, credentialedOperations, expectRowsCover, type Operation, tableRow, tally } from "./tenants/cases.js";
import { type AimContext, matrix, readBack } from "./tenants/matrix.js";

/** Fields that change after the fact from events, not from requests: left out of the read-back. */
const DERIVED = new Set(["reliability", "last_used", "total_executions", "success_rate", "usage", "calls", "successes"]);

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !DERIVED.has(k))
        .map(([k, v]) => [k, stable(v)]),
    );
  }
  return value;
}

describe("tenant matrix", () => {
  let s: ExecStack;
  let upstream: Upstream;
  let receiver: Receiver;
  let oauth: OAuthServer;
  let a: Tenant;
  let b: Tenant;
  let ctx: AimContext;
  let operations: Operation[];
  let before: Map<string, unknown>;
  const started = performance.now();

  const readAll = async (t: Tenant) => {
    const out = new Map<string, unknown>();
    for (const r of readBack) {
      const path = r.path.replace(/\{(\w+)\}/g, (_, n: IdName) => t.ids[n]);
      const res = await s.call("GET", path, { token: t.token });
      out.set(r.path, { status: res.status, body: stable(res.body) });
    }
    return out;
  };

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
      },
      ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway"],
    );
    const servers = { upstream: upstream.url, receiver: receiver.url, oauth };
    [a, b] = await Promise.all([createTenant(s, "A", servers), createTenant(s, "B", servers)]);
    ctx = { upstream: upstream.url, receiver: receiver.url, attackerEmail: b.email };
    // What settles on its own (the test delivery, the site crawl) settles before A's objects are read.
    await until(
      "A's test delivery and site crawl to settle",
      async () => {
        const hooks = await s.call("GET", `/webhooks/${a.ids.webhook}/deliveries`, { token: a.token });
        const site = await s.call("GET", `/agent-sites/${a.ids.site}`, { token: a.token });
        return hooks.body.deliveries[0].status !== "pending" && !["pending", "crawling"].includes(site.body.status);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    before = await readAll(a);

    operations = credentialedOperations((await s.call("GET", "/openapi.json")).body);
  });
  afterAll(async () => {
    await s?.stop();
    await upstream?.close();
    await receiver?.close();
    await oauth?.close();
  });

  it("has a row for every credentialed operation of the document, and none for an operation that is gone", () => {
    expectRowsCover(operations, Object.keys(matrix), (key) => Object.keys(matrix[key]!.params ?? {}), "tenants/matrix.ts");
  });

  it("refuses bad credentials with 401 and answers another tenant as if A's objects did not exist", async () => {
    const matrixChecks = checks(s.call, matrix, ctx, a, b);
    // Deletions last and one at a time: one that wrongly succeeded must not disturb the other rows.
    const queue = operations.filter((o) => o.method !== "DELETE");
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let op = queue.shift(); op; op = queue.shift()) await matrixChecks.all(op);
      }),
    );
    for (const op of operations.filter((o) => o.method === "DELETE")) await matrixChecks.all(op);

    const { outcomes } = matrixChecks;
    const byOp = tally(outcomes, (o) => o.op).sort(([x], [y]) => x.localeCompare(y));
    const passed = outcomes.filter((o) => o.problems.length === 0).length;
    console.log(
      [
        "tenant matrix, by operation: cases run, passed",
        ...byOp.map(([op, e]) => tableRow(op, e, 68)),
        "by case: cases run, passed",
        ...tally(outcomes, (o) => o.name).map(([name, e]) => tableRow(name, e, 40)),
        `total: ${byOp.length} operations, ${outcomes.length} cases, ${passed} passed; ` +
          `${((performance.now() - started) / 1000).toFixed(1)} s since the file started`,
      ].join("\n"),
    );
    const failures = outcomes.filter((o) => o.problems.length > 0).map((o) => `${o.op} [${o.name}]: ${o.problems.join("; ")}`);
    expect(failures).toEqual([]);
  });

  it("leaves every one of A's objects as it was", async () => {
    const after = await readAll(a);
    for (const [path, value] of before) expect(after.get(path), path).toEqual(value);
  });

  it("catches what it claims: the checks fail when aimed at the attacker's own objects, and the read-back sees a change", async () => {
    // B against B: its own objects answer 200 with its data where a missing one answers 404.
    const own = checks(s.call, matrix, ctx, b, b);
    const byKey = (key: string) => operations.find((o) => o.key === key)!;
    const reads = [
      "GET /v1/webhooks/{webhook_id}",
      "GET /v1/skills/{skill_id}",
      "GET /v1/tools/executions/{execution_id}/result",
      "GET /v1/workflows/runs/{run_id}",
      "GET /v1/api-keys/{key_id}/usage",
    ];
    for (const key of reads) {
      const op = byKey(key);
      await own.compared(op, "B's JWT -> B's own", { token: b.token }, Object.values(matrix[key]!.params!));
    }
    await own.compared(byKey("GET /v1/x402/settings"), "B's JWT + B's svc-org-id", { token: b.token }, [], "organization");
    await own.ownView(byKey("GET /v1/webhooks"), "B's webhooks, B's data", { token: b.token });
    // A valid credential is not refused.
    await own.refused(byKey("GET /v1/agents/wallet"), "B's valid key", { key: b.key });
    const caught = own.outcomes.filter((o) => o.problems.length > 0).length;
    const leaked = own.outcomes.filter((o) => o.problems.some((p) => p.includes("the victim's data"))).length;
    console.log(
      `self-check: ${caught} of ${own.outcomes.length} deliberately wrong cases caught, ${leaked} of them as data shown`,
    );
    expect(caught).toBe(own.outcomes.length);
    expect(leaked).toBeGreaterThanOrEqual(reads.length + 1);

    // A change of A's own is seen by the read-back comparison.
    const patched = await s.call("PATCH", "/x402/settings", { token: a.token, body: { max_per_call_atomic: 42 } });
    expect(patched.status).toBe(200);
    expect(await readAll(a)).not.toEqual(before);
  });
});
