/**
 * API keys, organizations, key usage and the client helper through the gateway, on real identity and
 * catalog processes: exact response shapes, every bad input named, membership rules, revocation seen
 * by a second gateway on the next call, and usage computed from real execution events on JetStream.
 */

import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectError } from "@connectrpc/connect";
import { natsNames } from "@toolport/kit/events";
import { createPool } from "@toolport/kit/pg";
import { createServiceClient } from "@toolport/kit/rpc";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type Call,
  createKey,
  expectBadField,
  expectError,
  gatewayClient,
  type Human,
  signupHuman,
} from "../harness/identity-http.js";
import { type Stack, startStack } from "../harness/stack.js";

describe("API keys, organizations, usage and the client helper", () => {
  let stack: Stack;
  let call: Call;
  let second: Call;
  let owner: Human;
  let outsider: Human;
  let nc: NatsConnection;

  beforeAll(async () => {
    // Execution too: a key's usage counts its refused calls, which the execution service records.
    stack = await startStack(["identity", "catalog", "execution", "gateway"]);
    call = gatewayClient(stack.gatewayUrl);
    second = gatewayClient(`http://127.0.0.1:${await stack.startExtra("gateway")}`);
    owner = await signupHuman(call, "owner");
    outsider = await signupHuman(call, "outsider");
    nc = await connect({ servers: inject("natsUrl") });
  });
  afterAll(async () => {
    await nc?.drain();
    await stack?.stopAll();
  });

  describe("authentication", () => {
    it("answers 401 in the error shape for missing, unknown and malformed credentials", async () => {
      expectError(await call("GET", "/api-keys"), 401, "unauthenticated");
      expectError(await call("GET", "/api-keys", { key: `tp_${"a".repeat(43)}` }), 401, "unauthenticated");
      expectError(await call("GET", "/api-keys", { key: "not-a-key" }), 401, "unauthenticated");
      expectError(await call("GET", "/api-keys", { token: "not.a.jwt" }), 401, "invalid_token");
      expectError(await call("GET", "/coding-client/mcp-json"), 401, "unauthenticated");
    });

    it("logs in with the password and refuses a wrong one", async () => {
      const ok = await call("POST", "/auth/login", { body: { email: owner.email, password: owner.password } });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ account_id: owner.accountId, token_type: "Bearer", expires_in: 3600 });
      expect((await call("GET", "/api-keys", { token: ok.body.access_token })).status).toBe(200);
      expectError(
        await call("POST", "/auth/login", { body: { email: owner.email, password: "wrong password!" } }),
        401,
        "invalid_credentials",
      );
      expectError(
        await call("POST", "/auth/login", { body: { email: "nobody@example.com", password: "whatever123" } }),
        401,
        "invalid_credentials",
      );
      expectError(
        await call("POST", "/auth/signup", { body: { email: owner.email, password: "another password" } }),
        409,
        "email_taken",
      );
      expectBadField(await call("POST", "/auth/signup", { body: { email: "new@example.com", password: "short" } }), "password");
      const me = await call("GET", "/accounts/me", { token: owner.token });
      expect(me.body).toEqual({
        id: owner.accountId,
        kind: "human",
        name: "owner",
        email: owner.email,
        tier: "free",
        personal_organization_id: owner.organizationId,
        is_platform_admin: false,
        created_at: expect.any(String),
      });
    });
  });

  describe("creating keys", () => {
    it("returns the spec's create response: plaintext once, 8-character prefix, last_used and permissions null", async () => {
      const res = await call("POST", "/api-keys", { token: owner.token, body: { name: "ci" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        key: expect.stringMatching(/^tp_[0-9A-Za-z]{43}$/),
        key_prefix: res.body.key.slice(0, 8),
        name: "ci",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        last_used: null,
        permissions: null,
        organization_id: owner.organizationId,
        agent_name: null,
        agent_type: null,
        purpose: null,
        expires_at: null,
        created_by_key_id: null,
        console_key: null,
      });
      // Listed without the secret; last_used set once the key was used.
      const listed = await call("GET", "/api-keys", { key: res.body.key });
      expect(listed.status).toBe(200);
      const mine = listed.body.find((k: { id: string }) => k.id === res.body.id);
      expect(mine).not.toHaveProperty("key");
      expect(JSON.stringify(listed.body)).not.toContain(res.body.key);
      expect(mine.key_prefix).toBe(res.body.key_prefix);
      expect(mine.last_used).toEqual(expect.any(String));
      // The plaintext never reaches a log line of any process that handled it.
      for (const name of ["gateway", "identity"] as const) expect(await stack.log(name)).not.toContain(res.body.key);
    });

    it("keeps permissions and agent fields as given, and an agent may create keys with its own key", async () => {
      const parent = await createKey(call, { token: owner.token });
      const permissions = {
        allowed_services: null,
        allowed_tools: null,
        max_cost_per_call_cents: 25,
        daily_spend_limit_cents: 1000,
        require_confirmation: true,
      };
      const res = await call("POST", "/api-keys", {
        key: parent.key,
        body: { name: "agent key", permissions, agent_name: "Claude", agent_type: "coding_agent", purpose: "refactors the repo" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        permissions,
        agent_name: "Claude",
        agent_type: "coding_agent",
        purpose: "refactors the repo",
      });
      const empty = await call("POST", "/api-keys", {
        key: parent.key,
        body: { name: "nothing", permissions: { allowed_tools: [] } },
      });
      expect(empty.body.permissions).toEqual({
        allowed_services: null,
        allowed_tools: [],
        max_cost_per_call_cents: null,
        daily_spend_limit_cents: null,
        require_confirmation: false,
      });
    });

    it("refuses every bad input with 400 naming the field", async () => {
      const auth = { token: owner.token };
      const post = (body: unknown) => call("POST", "/api-keys", { ...auth, body });
      expectBadField(await post({}), "name");
      expectBadField(await post({ name: 7 }), "name");
      expectBadField(await post({ name: "x", agent_type: "robot" }), "agent_type");
      expectBadField(await post({ name: "x", purpose: "line one\nline two" }), "purpose");
      expectBadField(await post({ name: "x", permissions: "all" }), "permissions");
      expectBadField(
        await post({ name: "x", permissions: { max_cost_per_call_cents: -1 } }),
        "permissions.max_cost_per_call_cents",
      );
      expectBadField(
        await post({ name: "x", permissions: { daily_spend_limit_cents: -5 } }),
        "permissions.daily_spend_limit_cents",
      );
      expectBadField(
        await post({ name: "x", permissions: { max_cost_per_call_cents: "10" } }),
        "permissions.max_cost_per_call_cents",
      );
      expectBadField(
        await post({ name: "x", permissions: { max_cost_per_call_cents: 1.5 } }),
        "permissions.max_cost_per_call_cents",
      );
      expectBadField(await post({ name: "x", permissions: { require_confirmation: "yes" } }), "permissions.require_confirmation");
      expectBadField(await post({ name: "x", permissions: { allowed_tools: "t1" } }), "permissions.allowed_tools");
      expectBadField(
        await post({ name: "x", permissions: { allowed_tools: [randomUUID(), 3] } }),
        "permissions.allowed_tools[1]",
      );
      expectBadField(
        await post({ name: "x", permissions: { allowed_services: ["not-a-uuid"] } }),
        "permissions.allowed_services[0]",
      );
      expectBadField(await post({ name: "x", permissions: { allowed_tool: [] } }), "permissions.allowed_tool");
      // Nothing was created by any of them.
      const keys = await call("GET", "/api-keys", auth);
      expect(keys.body.every((k: { name: string }) => k.name !== "x")).toBe(true);
    });

    it("checks allow-listed ids with the catalog: unknown ids are a 400 naming the entry, never accepted unchecked", async () => {
      const catalog = createServiceClient(CatalogService, stack.env.CATALOG_URL!);
      const ghost = randomUUID();
      const probe = await catalog.checkCatalogIds({ serviceIds: [], toolIds: [ghost] }).then(
        () => "answers" as const,
        (err: unknown) => err,
      );
      const res = await call("POST", "/api-keys", {
        token: owner.token,
        body: { name: "x", permissions: { allowed_tools: [ghost] } },
      });
      if (probe === "answers") {
        expectBadField(res, "permissions.allowed_tools[0]");
        expect(res.body.error.details.unknown_ids).toEqual([ghost]);
      } else {
        expect((probe as ConnectError).code).toBe(Code.Unimplemented);
        expectError(res, 503, "catalog_unavailable");
      }
    });

    it("answers 404 for an unknown organization and 403 for one the caller does not belong to", async () => {
      const unknown = await call("POST", "/api-keys", { token: owner.token, body: { name: "x", organization_id: randomUUID() } });
      expectError(unknown, 404, "organization_not_found");
      expectError(
        await call("POST", "/api-keys", { token: owner.token, body: { name: "x", organization_id: "nope" } }),
        404,
        "organization_not_found",
      );
      const foreign = await call("POST", "/api-keys", {
        token: owner.token,
        body: { name: "x", organization_id: outsider.organizationId },
      });
      expectError(foreign, 403, "not_a_member");
    });
  });

  describe("organizations and revocation", () => {
    it("binds a member's key to the organization; owners revoke it and every gateway refuses it on the next call", async () => {
      const org = await call("POST", "/organizations", { token: owner.token, body: { name: "Acme Robotics" } });
      expect(org.status).toBe(200);
      expect(org.body).toMatchObject({
        name: "Acme Robotics",
        is_personal: false,
        role: "owner",
        slug: expect.stringMatching(/^acme-robotics-/),
      });
      const member = await signupHuman(call, "member");
      const added = await call("POST", `/organizations/${org.body.id}/members`, {
        token: owner.token,
        body: { email: member.email, role: "member" },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body).toMatchObject({ account_id: member.accountId, role: "member" });

      const key = await createKey(call, { token: member.token }, { name: "bound", organization_id: org.body.id });
      expect(key.organization_id).toBe(org.body.id);
      // Calls with the key run in that organization without an org header.
      const context = await call("GET", "/organizations/context", { key: key.key });
      expect(context.body).toEqual({ org_id: org.body.id, org_name: "Acme Robotics", org_slug: org.body.slug, role: "member" });
      // The owner sees the organization's keys; a plain member revoking the owner's key gets 404.
      const ownerKey = await createKey(call, { token: owner.token }, { name: "owner's", organization_id: org.body.id });
      const orgKeys = await call("GET", `/api-keys?organization_id=${org.body.id}`, { token: owner.token });
      expect(orgKeys.body.map((k: { id: string }) => k.id).sort()).toEqual([key.id, ownerKey.id].sort());
      const memberView = await call("GET", `/api-keys?organization_id=${org.body.id}`, { token: member.token });
      expect(memberView.body.map((k: { id: string }) => k.id)).toEqual([key.id]);
      expectError(await call("DELETE", `/api-keys/${ownerKey.id}`, { token: member.token }), 404, "api_key_not_found");
      expectError(await call("DELETE", `/api-keys/${key.id}`, { token: outsider.token }), 404, "api_key_not_found");

      expect((await second("GET", "/api-keys", { key: key.key })).status).toBe(200);
      const revoked = await call("DELETE", `/api-keys/${key.id}`, { token: owner.token });
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: key.id, revoked: true, key: { revoked_at: expect.any(String) } });
      expectError(await second("GET", "/api-keys", { key: key.key }), 401, "unauthenticated");
      expectError(await call("GET", "/api-keys", { key: key.key }), 401, "unauthenticated");
      // Revoking again is harmless.
      expect((await call("DELETE", `/api-keys/${key.id}`, { token: member.token })).status).toBe(200);
    });

    it("refuses a key on its next call after its own account revokes it", async () => {
      const key = await createKey(call, { token: owner.token });
      expect((await second("GET", "/api-keys", { key: key.key })).status).toBe(200);
      expect((await call("DELETE", `/api-keys/${key.id}`, { key: key.key })).status).toBe(200);
      expectError(await second("GET", "/api-keys", { key: key.key }), 401, "unauthenticated");
    });

    it("revokes the keys made with a key along with it, and a key made with a console key ends with the sign-in", async () => {
      const parent = await createKey(call, { token: owner.token });
      const child = await createKey(call, { key: parent.key }, { name: "child" });
      const grandchild = await createKey(call, { key: child.key }, { name: "grandchild" });
      const other = await createKey(call, { token: owner.token });
      expect((await second("GET", "/api-keys", { key: grandchild.key })).status).toBe(200);
      expect((await call("DELETE", `/api-keys/${parent.id}`, { token: owner.token })).status).toBe(200);
      // Every key made with it, directly or not, is refused on its next use on every gateway...
      for (const made of [parent, child, grandchild]) {
        expectError(await second("GET", "/api-keys", { key: made.key }), 401, "unauthenticated");
      }
      // ...and another key of the same account is not touched.
      expect((await second("GET", "/api-keys", { key: other.key })).status).toBe(200);

      const consoleKey = await call("POST", "/auth/console-key", { token: owner.token, body: {} });
      expect(consoleKey.status, JSON.stringify(consoleKey.body)).toBe(200);
      expect(consoleKey.body.expires_at).toEqual(expect.any(String));
      const made = await call("POST", "/api-keys", { key: consoleKey.body.key, body: { name: "made in the console" } });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body).toMatchObject({ created_by_key_id: consoleKey.body.id, expires_at: consoleKey.body.expires_at });
      // Signing out revokes it with the console key.
      expect((await call("POST", "/auth/logout", { token: owner.token })).body).toEqual({ revoked_keys: 2 });
      expectError(await second("GET", "/api-keys", { key: made.body.key }), 401, "unauthenticated");
    });

    it("selects the organization with svc-org-id, 404 for a non-member, and keeps the last owner", async () => {
      expectError(
        await call("GET", "/api-keys", { token: owner.token, headers: { "svc-org-id": outsider.organizationId } }),
        404,
        "organization_not_found",
      );
      expectError(
        await call("GET", "/api-keys", { token: owner.token, headers: { "svc-org-id": randomUUID() } }),
        404,
        "organization_not_found",
      );
      const ctx = await call("GET", "/organizations/context", {
        token: owner.token,
        headers: { "svc-org-id": owner.organizationId },
      });
      expect(ctx.body.org_id).toBe(owner.organizationId);
      const org = await call("POST", "/organizations", { token: owner.token, body: { name: "Solo" } });
      expectError(
        await call("PATCH", `/organizations/${org.body.id}/members/${owner.accountId}`, {
          token: owner.token,
          body: { role: "admin" },
        }),
        412,
        "last_owner",
      );
      expectBadField(
        await call("POST", `/organizations/${org.body.id}/members`, {
          token: owner.token,
          body: { email: outsider.email, role: "king" },
        }),
        "role",
      );
      expectError(
        await call("GET", `/organizations/${org.body.id}/members`, { token: outsider.token }),
        404,
        "organization_not_found",
      );
    });
  });

  describe("usage", () => {
    async function publish(keyId: string | undefined, over: Partial<Record<string, unknown>> = {}) {
      const eventId = randomUUID();
      const event = create(ExecutionEventSchema, {
        eventId,
        occurredAt: timestampFromDate(new Date()),
        executionId: randomUUID(),
        toolId: "tool-a",
        toolName: "Tool A",
        serviceId: "svc-1",
        serviceName: "Service One",
        accountId: owner.accountId,
        organizationId: owner.organizationId,
        keyId,
        status: ExecutionStatus.SUCCESS,
        seconds: 1,
        ...over,
      });
      const subject = event.status === ExecutionStatus.SUCCESS ? "toolport.execution.completed" : "toolport.execution.failed";
      await nc
        .jetstream()
        .publish(natsNames(stack.env.NATS_NAMESPACE).wire(subject), toBinary(ExecutionEventSchema, event), { msgID: eventId });
      return event;
    }

    /** The dates a window of `days` ends with on `today` (UTC): days + 1 of them, oldest first. */
    const windowDates = (days: number, today: Date) =>
      Array.from({ length: days + 1 }, (_, i) => new Date(today.getTime() - (days - i) * 86_400_000).toISOString().slice(0, 10));

    it("answers 404 for a key that is not the caller's, and null rates with no calls", async () => {
      const key = await createKey(call, { token: owner.token });
      expectError(await call("GET", `/api-keys/${key.id}/usage`, { token: outsider.token }), 404, "api_key_not_found");
      expectError(await call("GET", `/api-keys/${randomUUID()}/usage`, { token: owner.token }), 404, "api_key_not_found");
      expectError(await call("GET", "/api-keys/not-a-uuid/usage", { token: owner.token }), 404, "api_key_not_found");
      const before = new Date();
      const res = await call("GET", `/api-keys/${key.id}/usage`, { key: key.key });
      const after = new Date();
      expect(res.status).toBe(200);
      // Every date of the window, today's last, each without calls (either side of a UTC midnight).
      expect([windowDates(30, before), windowDates(30, after)]).toContainEqual(
        res.body.daily.map((d: { date: string }) => d.date),
      );
      for (const day of res.body.daily) expect(day).toEqual({ date: day.date, calls: 0, successes: 0, p50_seconds: null });
      expect(res.body).toEqual({
        key: { id: key.id, name: "test key", agent_name: null, agent_type: null, purpose: null, created_at: expect.any(String) },
        window_days: 30,
        calls: 0,
        successes: 0,
        success_rate: null,
        p50_seconds: null,
        paid_calls: 0,
        spent_cents: 0,
        first_call_at: null,
        last_call_at: null,
        top_tools: [],
        daily: expect.any(Array),
        refused: 0,
        refused_reasons: [],
      });
      const days = async (q: string) =>
        (await call("GET", `/api-keys/${key.id}/usage?days=${q}`, { key: key.key })).body.window_days;
      expect([await days("7"), await days("500"), await days("0"), await days("-3")]).toEqual([7, 90, 1, 1]);
      expectBadField(await call("GET", `/api-keys/${key.id}/usage?days=abc`, { key: key.key }), "days");
    });

    it("counts real execution events stamped with the key, excluding probes and other keys", async () => {
      const key = await createKey(call, { token: owner.token }, { name: "worker", agent_name: "w", agent_type: "workflow" });
      const other = await createKey(call, { token: owner.token });
      // tool-a: 3 calls (2 ok, 1 failed); tool-b: 1 paid call; tools c..l: one call each = 14 calls over 12 tools.
      await publish(key.id, { seconds: 1 });
      await publish(key.id, { seconds: 3 });
      await publish(key.id, { seconds: 5, status: ExecutionStatus.ERROR, error: "upstream 502" });
      await publish(key.id, {
        toolId: "tool-b",
        toolName: "Tool B",
        isPaid: true,
        costCents: 12n,
        costAtomic: 120_000n,
        seconds: 2,
      });
      for (const t of "cdefghijkl") await publish(key.id, { toolId: `tool-${t}`, toolName: `Tool ${t}`, seconds: 4 });
      await publish(key.id, { isProbe: true });
      await publish(other.id);
      await publish(undefined);
      const old = await publish(key.id, {
        toolId: "tool-old",
        occurredAt: timestampFromDate(new Date(Date.now() - 10 * 86_400_000)),
      });

      const usage = async (days = 30) =>
        (await call("GET", `/api-keys/${key.id}/usage?days=${days}`, { token: owner.token })).body;
      await expect.poll(async () => (await usage()).calls, { timeout: 10_000 }).toBe(15);
      const u = await usage();
      expect(u).toMatchObject({
        key: { id: key.id, name: "worker", agent_name: "w", agent_type: "workflow" },
        window_days: 30,
        calls: 15,
        successes: 14,
        paid_calls: 1,
        spent_cents: 12,
      });
      expect(u.success_rate).toBeCloseTo(14 / 15, 10);
      expect(u.p50_seconds).toBe(4);
      expect(new Date(u.first_call_at).getTime()).toBeLessThan(Date.now() - 9 * 86_400_000);
      expect(u.top_tools).toHaveLength(10);
      expect(u.top_tools[0]).toEqual({
        tool_id: "tool-a",
        tool_name: "Tool A",
        service_name: "Service One",
        calls: 3,
        successes: 2,
      });
      for (const t of u.top_tools.slice(1)) expect(t.calls).toBe(1);
      // Per day: 31 dates whose calls add up to the totals, the old call on its own date.
      type Day = { date: string; calls: number; successes: number; p50_seconds: number | null };
      const daily = u.daily as Day[];
      expect(daily).toHaveLength(31);
      expect(daily.reduce((n, d) => n + d.calls, 0)).toBe(15);
      expect(daily.reduce((n, d) => n + d.successes, 0)).toBe(14);
      const oldDate = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
      expect(daily.find((d) => d.date === oldDate)).toMatchObject({ calls: 1, successes: 1 });
      for (const d of daily) if (d.calls === 0) expect(d.p50_seconds).toBeNull();
      // A 7-day window leaves the old call out.
      const week = await usage(7);
      expect(week.calls).toBe(14);
      expect(week.top_tools.some((t: { tool_id: string }) => t.tool_id === old.toolId)).toBe(false);
      // A redelivered event (same execution, new message id) changes nothing.
      await publish(key.id, { executionId: old.executionId, toolId: "tool-old" });
      await new Promise((r) => setTimeout(r, 500));
      expect((await usage()).calls).toBe(15);
    });

    it("answers 503 usage_unavailable when usage cannot be computed", async () => {
      const key = await createKey(call, { token: owner.token });
      const db = createPool(stack.env.IDENTITY_DATABASE_URL!, 1);
      try {
        await db.query("ALTER TABLE key_usage RENAME TO key_usage_unreachable");
        const res = await call("GET", `/api-keys/${key.id}/usage`, { key: key.key });
        expectError(res, 503, "usage_unavailable");
        expect(res.headers.get("retry-after")).toBe("1");
      } finally {
        await db.query("ALTER TABLE key_usage_unreachable RENAME TO key_usage");
        await db.end();
      }
      expect((await call("GET", `/api-keys/${key.id}/usage`, { key: key.key })).status).toBe(200);
    });
  });

  describe("client helper", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the spec's literal placeholder
    const placeholder = "${DANUBE_API_KEY}";
    const template = (org: string | null) => ({
      mcpServers: {
        danube: {
          type: "http",
          url: stack.env.MCP_PUBLIC_URL,
          headers: org ? { "svc-api-key": placeholder, "svc-org-id": org } : { "svc-api-key": placeholder },
        },
      },
    });

    it("resolves the organization: query, then header, then the key's bound organization, then the personal one", async () => {
      const org = await call("POST", "/organizations", { token: owner.token, body: { name: "Helper Org" } });
      const bound = await createKey(call, { token: owner.token }, { name: "bound", organization_id: org.body.id });

      const personal = await call("GET", "/coding-client/mcp-json", { token: owner.token });
      expect(personal.status).toBe(200);
      expect(personal.body).toEqual({
        file: ".mcp.json",
        scope: "project",
        mcp_json: template(owner.organizationId),
        org: { org_id: owner.organizationId, org_name: expect.any(String), org_slug: expect.any(String), role: "owner" },
        instructions: expect.stringContaining("claude mcp add --transport http --scope project danube"),
      });
      expect(personal.body.instructions).toContain(`--header 'svc-org-id: ${owner.organizationId}'`);

      const byKey = await call("GET", "/coding-client/mcp-json", { key: bound.key });
      expect(byKey.body.org.org_id).toBe(org.body.id);
      const byHeader = await call("GET", "/coding-client/mcp-json", {
        key: bound.key,
        headers: { "svc-org-id": owner.organizationId },
      });
      expect(byHeader.body.org.org_id).toBe(owner.organizationId);
      // The query wins; a header naming a foreign organization is then ignored.
      const byQuery = await call("GET", `/coding-client/mcp-json?org_id=${org.body.id}`, {
        token: owner.token,
        headers: { "svc-org-id": outsider.organizationId },
      });
      expect(byQuery.status).toBe(200);
      expect(byQuery.body.mcp_json).toEqual(template(org.body.id));
      expect(byQuery.body.org).toEqual({ org_id: org.body.id, org_name: "Helper Org", org_slug: org.body.slug, role: "owner" });
    });

    it("answers 404 for a selected organization that does not exist or the caller is not in", async () => {
      expectError(
        await call("GET", `/coding-client/mcp-json?org_id=${outsider.organizationId}`, { token: owner.token }),
        404,
        "organization_not_found",
      );
      expectError(
        await call("GET", `/coding-client/mcp-json?org_id=${randomUUID()}`, { token: owner.token }),
        404,
        "organization_not_found",
      );
      expectError(
        await call("GET", "/coding-client/mcp-json", { token: owner.token, headers: { "svc-org-id": "junk" } }),
        404,
        "organization_not_found",
      );
    });
  });
});
