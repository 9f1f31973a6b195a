/**
 * The call log (issue 33), end to end: GET /v1/activity over calls that ran, failed and were refused,
 * newest first, paged by cursor, filtered by tool, key, status and time; who sees what (a signed-in owner
 * the organization's calls, a key its own, another account nothing); refused calls listed with their
 * reason and counted in the key's usage; and a page read at hundreds of thousands of rows staying an
 * index range scan (rows inserted straight into the execution database).
 */
import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import {
  type AgentKey,
  type ExecStack,
  echoApiDocument,
  expectError,
  fund,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

/** A row of GET /v1/activity (the reply is checked against the described schema by the harness). */
interface Row {
  id: string;
  at: string;
  status: string;
  reason: string | null;
  tool: { id: string; name: string };
  key: { id: string; name: string | null } | null;
  account_id: string;
}

let api: Upstream;
let s: ExecStack;
let db: Pool;
let owner: { token: string; accountId: string };
let full: { id: string; key: string };
let narrow: { id: string; key: string };
let publisher: { id: string; key: string };
let stranger: AgentKey;
let echo: { serviceId: string; tools: Record<string, string> };
/** The five calls, oldest first. */
const made: Array<{ status: number; executionId?: string }> = [];

async function makeKey(name: string, permissions: Record<string, unknown> | null) {
  const res = await s.call("POST", "/api-keys", { token: owner.token, body: { name, permissions } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, key: res.body.key as string };
}

const activity = (who: { key?: string; token?: string }, query = "") => s.call("GET", `/activity${query}`, who);

beforeAll(async () => {
  api = await startEchoApi();
  s = await startExecStack([`127.0.0.1:${api.port}`]);
  db = createPool(s.stack.env.EXECUTION_DATABASE_URL!, 2);
  const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
  const signup = await s.call("POST", "/auth/signup", {
    body: { email, password: "correct horse battery staple", name: "Owner" },
  });
  expect(signup.status, JSON.stringify(signup.body)).toBe(200);
  owner = { token: signup.body.access_token, accountId: signup.body.account_id };
  publisher = await makeKey("publisher", null);
  echo = await publishOpenApi(s, { id: owner.accountId, key: publisher.key }, echoApiDocument(), api.url);
  // Asks for consent before a call that writes (echo_item is a POST).
  full = await makeKey("full key", { require_confirmation: true });
  narrow = await makeKey("narrow key", { allowed_tools: [echo.tools.list_items] });
  stranger = await registerAgent(s);

  const call = async (key: string, tool: string, input: Record<string, unknown>) => {
    const res = await s.call("POST", `/tools/call/${echo.tools[tool]}`, { key, body: { tool_input: input } });
    made.push({ status: res.status, executionId: res.body?.execution_id });
    return res;
  };
  expect((await call(full.key, "list_items", { n: 2 })).body.success).toBe(true);
  expect((await call(full.key, "status", { code: 500 })).body.success).toBe(false);
  expectError(await call(narrow.key, "read_file", { file_path: "a" }), 403, "tool_not_permitted");
  expectError(await call(full.key, "echo_item", { item_id: "x", title: "t" }), 409, "confirmation_required");
  expect((await call(narrow.key, "list_items", { n: 1 })).body.success).toBe(true);
});

afterAll(async () => {
  await db?.end();
  await s?.stop();
  await api?.close();
});

describe("GET /v1/activity", () => {
  it("lists the organization's calls for its signed-in owner, newest first, refused ones with their reason", async () => {
    const res = await activity({ token: owner.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const calls = res.body.calls;
    expect(calls.map((c: Row) => [c.tool.name, c.status, c.reason])).toEqual([
      ["list_items", "success", null],
      ["echo_item", "refused", "confirmation_required"],
      ["read_file", "refused", "tool_not_permitted"],
      ["status", "error", "http_500"],
      ["list_items", "success", null],
    ]);
    expect(res.body.next_cursor).toBeNull();
    expect(res.headers.get("link")).toBeNull();
    const [last, consent, denied, failed, first] = calls;
    expect(first).toMatchObject({
      id: made[0]!.executionId,
      execution_id: made[0]!.executionId,
      result_url: `/v1/tools/executions/${made[0]!.executionId}/result`,
      account_id: owner.accountId,
      key: { id: full.id, name: "full key" },
      service: { id: echo.serviceId },
      cost_cents: 0,
    });
    expect(first.duration_ms).toBeGreaterThanOrEqual(0);
    expect(failed).toMatchObject({ execution_id: made[1]!.executionId, error_class: "upstream" });
    expect(denied).toMatchObject({
      key: { id: narrow.id, name: "narrow key" },
      execution_id: null,
      result_url: null,
      duration_ms: 0,
    });
    expect(denied.message).toMatch(/not permitted/);
    expect(consent).toMatchObject({ key: { id: full.id }, execution_id: null });
    expect(last).toMatchObject({ key: { id: narrow.id }, execution_id: made[4]!.executionId });
    for (let i = 1; i < calls.length; i++) expect(Date.parse(calls[i - 1].at)).toBeGreaterThanOrEqual(Date.parse(calls[i].at));
  });

  it("opens a call's stored result from its row; a refused call's id opens nothing", async () => {
    const { body } = await activity({ token: owner.token, key: undefined }, "?status=success&limit=1");
    const row = body.calls[0];
    const result = await s.call("GET", row.result_url.replace(/^\/v1/, ""), { token: owner.token });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.status).toBe("success");
    const refused = (await activity({ token: owner.token }, "?status=refused")).body.calls[0];
    expectError(
      await s.call("GET", `/tools/executions/${refused.id}/result`, { token: owner.token }),
      404,
      "execution_not_found",
    );
  });

  it("pages with a cursor (and a Link header) without repeating or skipping a call", async () => {
    const seen: string[] = [];
    let query = "?limit=2";
    for (let page = 0; page < 5 && query; page++) {
      const res = await activity({ token: owner.token }, query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.calls.map((c: Row) => c.id));
      expect(res.body.calls.length).toBe(page < 2 ? 2 : 1);
      const link = res.headers.get("link");
      if (res.body.next_cursor) {
        expect(link).toContain(`cursor=${encodeURIComponent(res.body.next_cursor)}`);
        expect(link).toContain("limit=2");
        query = `?limit=2&cursor=${encodeURIComponent(res.body.next_cursor)}`;
      } else {
        expect(link).toBeNull();
        query = "";
      }
    }
    const all = (await activity({ token: owner.token })).body.calls.map((c: Row) => c.id);
    expect(seen).toEqual(all);
  });

  it("filters by tool, key, status and time range, and combines them", async () => {
    const all = (await activity({ token: owner.token })).body.calls;
    const ids = async (query: string) => {
      const res = await activity({ token: owner.token }, query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.calls.map((c: Row) => c.id);
    };
    const pick = (f: (c: Row) => boolean) => all.filter(f).map((c: Row) => c.id);
    expect(await ids(`?tool_id=${echo.tools.list_items}`)).toEqual(pick((c) => c.tool.name === "list_items"));
    expect(await ids(`?key_id=${narrow.id}`)).toEqual(pick((c) => c.key?.id === narrow.id));
    expect(await ids("?status=refused")).toEqual(pick((c) => c.status === "refused"));
    expect(await ids("?status=error")).toEqual(pick((c) => c.status === "error"));
    expect(await ids(`?key_id=${narrow.id}&status=success`)).toEqual([all[0].id]);
    const middle = encodeURIComponent(all[2].at);
    expect(await ids(`?since=${middle}`)).toEqual(all.slice(0, 3).map((c: Row) => c.id));
    expect(await ids(`?until=${middle}`)).toEqual(all.slice(3).map((c: Row) => c.id));
  });

  it("refuses bad filters with 400 and the field", async () => {
    expectError(await activity({ token: owner.token }, "?status=pending"), 400, "invalid_status");
    expectError(await activity({ token: owner.token }, "?cursor=not-a-cursor"), 400, "invalid_cursor");
    expectError(await activity({ token: owner.token }, "?since=yesterday"), 400, "invalid_request");
    expectError(await activity({ token: owner.token }, "?limit=ten"), 400, "invalid_request");
    const later = new Date().toISOString();
    const earlier = new Date(Date.now() - 60_000).toISOString();
    expectError(await activity({ token: owner.token }, `?since=${later}&until=${earlier}`), 400, "invalid_time_range");
  });

  it("shows a key its own calls only, whatever the filter; another account sees none of them", async () => {
    const own = await activity({ key: narrow.key });
    expect(own.status).toBe(200);
    expect(own.body.calls.map((c: Row) => [c.tool.name, c.status])).toEqual([
      ["list_items", "success"],
      ["read_file", "refused"],
    ]);
    expect((await activity({ key: narrow.key }, `?key_id=${full.id}`)).body.calls).toEqual([]);
    const fullOwn = await activity({ key: full.key });
    expect(fullOwn.body.calls.every((c: Row) => c.key?.id === full.id)).toBe(true);
    expect(fullOwn.body.calls.length).toBe(3);
    const foreign = await activity({ key: stranger.key });
    expect(foreign.status).toBe(200);
    expect(foreign.body.calls).toEqual([]);
    expect((await activity({ key: stranger.key }, `?key_id=${narrow.id}`)).body.calls).toEqual([]);
  });

  it("counts a key's refused calls in its usage, by reason", async () => {
    const res = await s.call("GET", `/api-keys/${narrow.id}/usage`, { token: owner.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.refused).toBe(1);
    expect(res.body.refused_reasons).toEqual([{ reason: "tool_not_permitted", calls: 1 }]);
    const fullUsage = await s.call("GET", `/api-keys/${full.id}/usage`, { key: full.key });
    expect(fullUsage.body.refused_reasons).toEqual([{ reason: "confirmation_required", calls: 1 }]);
  });
});

describe("in a team", () => {
  it("shows an owner every member's calls with the key's name, and a member only their own", async () => {
    const org = await s.call("POST", "/organizations", { token: owner.token, body: { name: "Activity Team" } });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    const teamId = org.body.id as string;
    const email = `member-${randomUUID().slice(0, 8)}@example.com`;
    const signup = await s.call("POST", "/auth/signup", {
      body: { email, password: "correct horse battery staple", name: "Member" },
    });
    const member = { token: signup.body.access_token as string, accountId: signup.body.account_id as string };
    const added = await s.call("POST", `/organizations/${teamId}/members`, {
      token: owner.token,
      body: { email, role: "member" },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const bound = async (token: string, name: string) => {
      const res = await s.call("POST", "/api-keys", { token, body: { name, organization_id: teamId } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { id: res.body.id as string, key: res.body.key as string };
    };
    const ownerKey = await bound(owner.token, "team owner key");
    const memberKey = await bound(member.token, "team member key");
    const team = await publishOpenApi(s, { id: owner.accountId, key: ownerKey.key }, echoApiDocument(), api.url);
    const run = async (key: string) => {
      const res = await s.call("POST", `/tools/call/${team.tools.list_items}`, { key, body: { tool_input: { n: 1 } } });
      expect(res.body.success, JSON.stringify(res.body)).toBe(true);
      return res.body.execution_id as string;
    };
    const ownerCall = await run(ownerKey.key);
    const memberCall = await run(memberKey.key);
    const headers = { "svc-org-id": teamId };

    const ownerView = await s.call("GET", "/activity", { token: owner.token, headers });
    expect(ownerView.status, JSON.stringify(ownerView.body)).toBe(200);
    expect(ownerView.body.calls.map((c: Row) => [c.id, c.account_id, c.key?.name])).toEqual([
      [memberCall, member.accountId, "team member key"],
      [ownerCall, owner.accountId, "team owner key"],
    ]);
    // The member's result is the member's to open, not the owner's.
    expect(ownerView.body.calls[0].result_url).toBeNull();
    expect(ownerView.body.calls[1].result_url).toBe(`/v1/tools/executions/${ownerCall}/result`);

    const memberView = await s.call("GET", "/activity", { token: member.token, headers });
    expect(memberView.body.calls.map((c: Row) => [c.id, c.key?.name])).toEqual([[memberCall, "team member key"]]);
    expect(memberView.body.calls[0].result_url).toBe(`/v1/tools/executions/${memberCall}/result`);
    const asked = await s.call("GET", `/activity?key_id=${ownerKey.id}`, { token: member.token, headers });
    expect(asked.body.calls).toEqual([]);
    // Outside the team (the owner's personal organization), none of the team's calls.
    const personal = (await activity({ token: owner.token })).body.calls.map((c: Row) => c.id);
    expect(personal).not.toContain(ownerCall);
    expect(personal).not.toContain(memberCall);
  });
});

describe("refusals about money", () => {
  it("lists insufficient_balance and spend_limit_exceeded with the key that was refused", async () => {
    const priced = await s.call("PATCH", `/tools/${echo.tools.status}`, {
      key: publisher.key,
      body: { price_per_call_cents: 7 },
    });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    const since = new Date().toISOString();
    const broke = await s.call("POST", `/tools/call/${echo.tools.status}`, {
      key: full.key,
      body: { tool_input: { code: 200 } },
    });
    expectError(broke, 402, "insufficient_balance");
    await fund(s, { id: owner.accountId, key: publisher.key }, 1000);
    const capped = await makeKey("capped key", { max_cost_per_call_cents: 1 });
    const over = await s.call("POST", `/tools/call/${echo.tools.status}`, {
      key: capped.key,
      body: { tool_input: { code: 200 } },
    });
    expectError(over, 403, "spend_limit_exceeded");
    const paid = await s.call("POST", `/tools/call/${echo.tools.status}`, { key: full.key, body: { tool_input: { code: 200 } } });
    expect(paid.body.success, JSON.stringify(paid.body)).toBe(true);

    const res = await activity({ token: owner.token }, `?since=${encodeURIComponent(since)}`);
    expect(res.body.calls.map((c: Row) => [c.key?.id, c.status, c.reason])).toEqual([
      [full.id, "success", null],
      [capped.id, "refused", "spend_limit_exceeded"],
      [full.id, "refused", "insufficient_balance"],
    ]);
    expect(res.body.calls[0]).toMatchObject({ cost_cents: 7 });
    expect(res.body.calls[1]).toMatchObject({ cost_cents: 0, execution_id: null });
    const usage = await s.call("GET", `/api-keys/${capped.id}/usage`, { key: capped.key });
    expect(usage.body).toMatchObject({ refused: 1, refused_reasons: [{ reason: "spend_limit_exceeded", calls: 1 }] });
  });
});

describe("batches", () => {
  it("lists a batch element's refusal beside the elements that ran", async () => {
    const batchKey = await makeKey("batch key", { allowed_tools: [echo.tools.list_items] });
    const res = await s.call("POST", "/tools/call/batch", {
      key: batchKey.key,
      body: {
        calls: [
          { tool_id: echo.tools.list_items, tool_input: { n: 1 } },
          { tool_id: echo.tools.read_file, tool_input: { file_path: "b" } },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false]);
    const listed = await activity({ key: batchKey.key });
    expect(listed.body.calls.map((c: Row) => [c.tool.name, c.status, c.reason]).sort()).toEqual([
      ["list_items", "success", null],
      ["read_file", "refused", "tool_not_permitted"],
    ]);
  });
});

describe("a page read at 300,000 calls", () => {
  it("stays an index range scan from the cursor in every scope, and pages correctly", async () => {
    const { rows } = await db.query<{ organization_id: string }>("SELECT organization_id FROM executions WHERE id = $1", [
      made[0]!.executionId,
    ]);
    const org = rows[0]!.organization_id;
    // Older than the calls above, spread over ten days, with three tools and the two keys.
    await db.query(
      `INSERT INTO executions (id, account_id, organization_id, key_id, tool_id, tool_name, service_id, service_name, service_type,
         status, error_type, duration_ms, cost_cents, executed_at)
       SELECT gen_random_uuid(), $1, $2, CASE WHEN i % 2 = 0 THEN $3 ELSE $4 END, 'bulk-tool-' || (i % 3), 'bulk_' || (i % 3),
              $5, 'Bulk', 'api', CASE WHEN i % 10 = 0 THEN 'refused' ELSE 'success' END,
              CASE WHEN i % 10 = 0 THEN 'rate_limited' END, i % 500, 0,
              now() - interval '1 hour' - (i * interval '3 seconds')
         FROM generate_series(1, 300000) AS i`,
      [owner.accountId, org, full.id, narrow.id, echo.serviceId],
    );
    await db.query("ANALYZE executions");
    for (const [scope, cond] of [
      ["organization", `organization_id = '${org}'`],
      ["account", `account_id = '${owner.accountId}' AND organization_id = '${org}'`],
      ["key", `key_id = '${full.id}'`],
    ]) {
      const plan = await db.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT id FROM executions WHERE ${cond} AND (executed_at, id) < (now() - interval '2 hours', '${randomUUID()}'::uuid)
          ORDER BY executed_at DESC, id DESC LIMIT 51`,
      );
      const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text, `${scope}: ${text}`).toMatch(/Index (Only )?Scan using executions_\w+_activity_idx/);
      expect(text, `${scope}: ${text}`).not.toMatch(/Sort/);
    }
    // Through the API: the real calls first, then the bulk rows in order, across pages.
    const first = await activity({ token: owner.token }, "?limit=200");
    expect(first.body.calls.length).toBe(200);
    const real = first.body.calls.findIndex((c: Row) => c.tool.name.startsWith("bulk_"));
    // The first calls, the money test's three and the batch's two.
    expect(real).toBe(made.length + 5);
    const second = await activity({ token: owner.token }, `?limit=200&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    const bulk = [...first.body.calls.slice(real), ...second.body.calls];
    expect(bulk.length).toBe(400 - real);
    expect(bulk.every((c: Row) => c.tool.name.startsWith("bulk_"))).toBe(true);
    for (let i = 1; i < bulk.length; i++) expect(Date.parse(bulk[i - 1].at) - Date.parse(bulk[i].at)).toBe(3000);
    const refusedBulk = await activity({ key: full.key }, "?status=refused&limit=3");
    expect(refusedBulk.body.calls.map((c: Row) => c.reason)).toEqual([
      "insufficient_balance",
      "confirmation_required",
      "rate_limited",
    ]);
  });
});

describe("with the execution service down", () => {
  it.runIf(process.env.TOOLPORT_STACK_LAYOUT === "per-role")(
    "answers the log and the key usage with 503, not a 500",
    async () => {
      await s.stack.stop("execution");
      const log = await activity({ token: owner.token });
      expect(log.status, JSON.stringify(log.body)).toBe(503);
      const usage = await s.call("GET", `/api-keys/${narrow.id}/usage`, { token: owner.token });
      expectError(usage, 503, "usage_unavailable");
      expect(usage.headers.get("retry-after")).toBe("1");
    },
  );
});
