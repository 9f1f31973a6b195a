/**
 * Webhooks end to end, with real HTTPS receivers (a test CA the webhooks process trusts through
 * NODE_EXTRA_CA_CERTS): the registry's rules (HTTPS, known events, public addresses, owner only, the
 * secret shown once and never logged), a tool call becoming a signed delivery the receiver helper
 * verifies, each event's data fields, retries (~1 s, ~4 s) and the failed mark, the 10 s timeout,
 * redirects not followed, pausing and resuming, a private address refused at send, history and
 * redelivery, secret rotation with both signatures, and the circuit.
 */

import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { natsNames } from "@toolport/kit/events";
import { createPool, type Pool } from "@toolport/kit/pg";
import { WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { SpendLimitApproachingSchema, WorkflowEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { verify } from "@toolport/webhooks-verify";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Call } from "../harness/http.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { signupHuman } from "../harness/identity-http.js";
import { expectTimeOrderedUuidOfNow } from "../harness/ids.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { type ExecStack, echoApiDocument, expectError, startExecStack } from "./execution-support.js";

interface Attempt {
  series: number;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string | null;
}

interface HistoryEntry {
  id: string;
  webhook_id: string;
  event: string;
  status: "pending" | "succeeded" | "failed";
  created_at: string;
  attempts: Attempt[];
  next_attempt_at: string | null;
  delivered_at: string | null;
}

interface User {
  token: string;
  accountId: string;
  key: string;
}

const header = (r: { headers: Record<string, string | string[] | undefined> }, name: string) => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

describe("webhooks", () => {
  let s: ExecStack;
  let call: Call;
  let db: Pool;
  let nc: NatsConnection;
  let api: Upstream;
  let receivers: Receiver[];
  let a: Receiver;
  let b: Receiver;
  let c: Receiver;
  let d: Receiver;
  let user: User;
  let tools: { list: string; status: string };

  async function newUser(name: string): Promise<User> {
    const h = await signupHuman(call, name);
    const key = await call("POST", "/api-keys", { token: h.token, body: { name: "calls" } });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    return { token: h.token, accountId: h.accountId, key: key.body.key };
  }

  async function register(u: User, url: string, events: string[], extra: Record<string, unknown> = {}) {
    const res = await call("POST", "/webhooks", { token: u.token, body: { url, events, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { id: string; secret: string; url: string; is_active: boolean };
  }

  async function deliveries(u: User, webhookId: string, query = "") {
    const res = await call("GET", `/webhooks/${webhookId}/deliveries${query}`, { token: u.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.deliveries as HistoryEntry[];
  }

  /** Waits until the webhook's newest delivery is no longer pending; returns it. */
  async function settled(u: User, webhookId: string, count = 1, timeout = 30_000) {
    let found: HistoryEntry[] = [];
    await expect
      .poll(
        async () => {
          found = await deliveries(u, webhookId);
          return found.length >= count && found.slice(0, count).every((x) => x.status !== "pending");
        },
        { timeout, interval: 200 },
      )
      .toBe(true);
    return found as [HistoryEntry, ...HistoryEntry[]];
  }

  const callTool = (u: User, tool: string, input: Record<string, unknown>) =>
    call("POST", `/tools/call/${tool}`, { key: u.key, body: input });

  beforeAll(async () => {
    const ca = await testCertificates(["hooks.test"]);
    receivers = await Promise.all([0, 1, 2, 3].map(() => startHttpsReceiver()));
    [a, b, c, d] = receivers as [Receiver, Receiver, Receiver, Receiver];
    api = await startEchoApi();
    s = await startExecStack(
      [`127.0.0.1:${api.port}`],
      {
        NODE_EXTRA_CA_CERTS: ca.caFile,
        // The receivers' own ports only: any other loopback address stays refused.
        WEBHOOKS_OUTBOUND_ALLOW: receivers.map((r) => `127.0.0.1:${r.port}`).join(","),
        WEBHOOKS_MAX_PER_USER: "6",
        WEBHOOKS_CIRCUIT_MS: "8000",
        WEBHOOKS_POLL_MS: "200",
      },
      ["catalog", "execution", "billing", "identity", "webhooks", "gateway"],
    );
    call = s.call;
    db = createPool(s.stack.env.WEBHOOKS_DATABASE_URL!, 2);
    nc = await connect({ servers: s.stack.env.NATS_URL! });
    user = await newUser("hooks");
    const published = await call("POST", "/services", {
      key: user.key,
      body: { api: { document: echoApiDocument(), base_url: api.url } },
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const byName = Object.fromEntries(published.body.tools.map((t: { name: string; id: string }) => [t.name, t.id]));
    tools = { list: byName.list_items, status: byName.status };
  });
  afterAll(async () => {
    await nc?.close();
    await db?.end();
    await s?.stop();
    await Promise.all((receivers ?? []).map((r) => r.close()));
    await api?.close();
  });

  describe("registry", () => {
    it("shows the secret once, lists newest first, and never shows or logs it again", async () => {
      const u = await newUser("registry");
      const first = await register(u, `${a.url}/one`, ["tool.execution.completed"], { description: "first" });
      expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(first).toMatchObject({ url: `${a.url}/one`, is_active: true, description: "first", disabled_reason: null });
      const second = await register(u, `${a.url}/two`, ["tool.execution.failed", "workflow.completed"]);
      const list = await call("GET", "/webhooks", { token: u.token });
      expect(list.status).toBe(200);
      expect(list.body.map((w: { id: string }) => w.id)).toEqual([second.id, first.id]);
      expect(Object.keys(list.body[0]).sort()).toEqual(
        ["created_at", "description", "disabled_reason", "events", "id", "is_active", "updated_at", "url"].sort(),
      );
      const one = await call("GET", `/webhooks/${first.id}`, { token: u.token });
      expect(one.body.secret).toBeUndefined();
      expect(JSON.stringify(list.body)).not.toContain(first.secret);
      for (const name of ["webhooks", "gateway"] as const) expect(await s.stack.log(name)).not.toContain(first.secret.slice(6));
    });

    it("refuses plain http, unknown or no events, private addresses, and more than the per-user limit", async () => {
      const u = await newUser("rules");
      const bad = async (body: Record<string, unknown>, reason: string, field: string) => {
        const res = await call("POST", "/webhooks", { token: u.token, body });
        expectError(res, 400, reason);
        if (field) expect(res.body.error.message).toMatch(new RegExp(`^${field}:`));
      };
      await bad({ url: `http://127.0.0.1:${a.port}/`, events: ["tool.execution.completed"] }, "invalid_url", "url");
      await bad({ url: `${a.url}/`, events: ["tool.execution.done"] }, "invalid_events", "events");
      await bad({ url: `${a.url}/`, events: [] }, "invalid_events", "events");
      for (const url of [
        "https://127.0.0.1:9/",
        "https://10.1.2.3/",
        "https://169.254.169.254/latest/meta-data",
        "https://localhost:9/",
        "https://[::1]/",
      ])
        await bad({ url, events: ["tool.execution.completed"] }, "url_not_allowed", "url");
      const patch = await register(u, `${a.url}/ok`, ["tool.execution.completed"]);
      const refused = await call("PATCH", `/webhooks/${patch.id}`, { token: u.token, body: { url: "https://10.0.0.1/" } });
      expectError(refused, 400, "url_not_allowed");
      for (let i = 1; i < 6; i++) await register(u, `${a.url}/n${i}`, ["tool.execution.completed"]);
      await bad({ url: `${a.url}/seventh`, events: ["tool.execution.completed"] }, "webhook_limit_reached", "");
    });

    it("is the owner's alone: another user's webhook is a 404, and an API key is not accepted", async () => {
      const owner = await newUser("owner");
      const other = await newUser("other");
      const hook = await register(owner, `${a.url}/mine`, ["tool.execution.completed"]);
      for (const [method, path] of [
        ["GET", `/webhooks/${hook.id}`],
        ["PATCH", `/webhooks/${hook.id}`],
        ["DELETE", `/webhooks/${hook.id}`],
        ["GET", `/webhooks/${hook.id}/deliveries`],
        ["POST", `/webhooks/${hook.id}/rotate-secret`],
        ["POST", `/webhooks/${hook.id}/test`],
      ] as const)
        expectError(
          await call(method, path, { token: other.token, body: method === "GET" ? undefined : {} }),
          404,
          "webhook_not_found",
        );
      expect((await call("GET", "/webhooks", { token: other.token })).body).toEqual([]);
      expect((await call("GET", "/webhooks", { key: owner.key })).status).toBe(401);
      const patched = await call("PATCH", `/webhooks/${hook.id}`, { token: owner.token, body: { description: "changed" } });
      expect(patched.body).toMatchObject({ description: "changed", url: `${a.url}/mine`, events: ["tool.execution.completed"] });
      expect((await call("DELETE", `/webhooks/${hook.id}`, { token: owner.token })).body).toEqual({ deleted: true });
      expectError(await call("GET", `/webhooks/${hook.id}`, { token: owner.token }), 404, "webhook_not_found");
    });
  });

  describe("delivery", () => {
    it("turns a tool call into a signed delivery with the spec's headers and data", async () => {
      const hook = await register(user, `${a.url}/calls`, ["tool.execution.completed", "tool.execution.failed"]);
      const start = a.requests.length;
      const ok = await callTool(user, tools.list, {});
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const failed = await callTool(user, tools.status, { code: 500 });
      expect(failed.status, JSON.stringify(failed.body)).toBe(200);
      const got = (await a.waitFor(start + 2, 15_000)).slice(start);
      const byEvent = Object.fromEntries(got.map((r) => [header(r, "x-svc-event"), r]));
      for (const r of got) {
        expect(r.method).toBe("POST");
        expect(r.path).toBe("/calls");
        expect(header(r, "content-type")).toBe("application/json");
        expect(header(r, "user-agent")).toBe("Svc-Webhooks/1.0");
        // A version 7 UUID (webhooks migration 0003): deliveries are written in the order of their ids.
        expectTimeOrderedUuidOfNow(header(r, "x-svc-delivery"));
        expect(header(r, "x-svc-signature")).toMatch(/^t=\d+,sha256=[0-9a-f]{64}$/);
        expect(verify({ secret: hook.secret, body: r.body, header: r.headers["x-svc-signature"] })).toMatchObject({ ok: true });
        expect(verify({ secret: "whsec_wrong", body: r.body, header: r.headers["x-svc-signature"] }).ok).toBe(false);
      }
      const completed = JSON.parse(byEvent["tool.execution.completed"]!.body.toString("utf8"));
      expect(Object.keys(completed).sort()).toEqual(["data", "event", "timestamp"]);
      expect(completed.event).toBe("tool.execution.completed");
      expect(completed.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Object.keys(completed.data).sort()).toEqual(["error", "execution_time", "status", "tool_id", "tool_name"]);
      expect(completed.data).toMatchObject({ tool_id: tools.list, tool_name: "list_items", status: "success", error: null });
      expect(typeof completed.data.execution_time).toBe("number");
      const failure = JSON.parse(byEvent["tool.execution.failed"]!.body.toString("utf8"));
      expect(failure.data).toMatchObject({ tool_id: tools.status, tool_name: "status", status: "error" });
      expect(typeof failure.data.error).toBe("string");
      // The history shows both, succeeded after one attempt, the delivery id as sent.
      const history = await settled(user, hook.id, 2);
      expect(history.map((x) => x.id).sort()).toEqual(got.map((r) => header(r, "x-svc-delivery")).sort());
      for (const x of history.slice(0, 2)) {
        expect(x).toMatchObject({ status: "succeeded", next_attempt_at: null });
        expect(x.attempts).toHaveLength(1);
        expect(x.attempts[0]).toMatchObject({ series: 1, attempt: 1, status_code: 200, error: null, response_body: "ok" });
      }
    });

    it("sends workflow and spend events with exactly the spec's data fields", async () => {
      const hook = await register(user, `${b.url}/other-events`, [
        "workflow.completed",
        "workflow.failed",
        "agent.spend.limit_approaching",
      ]);
      const js = nc.jetstream();
      const wire = natsNames(s.stack.env.NATS_NAMESPACE).wire;
      const at = timestampFromDate(new Date("2026-11-24T10:00:00.123Z"));
      const workflow = (status: WorkflowRunStatus, error?: string) =>
        toBinary(
          WorkflowEventSchema,
          create(WorkflowEventSchema, {
            eventId: randomUUID(),
            occurredAt: at,
            workflowId: "wf-1",
            executionId: "run-1",
            ownerId: user.accountId,
            status,
            executionTimeMs: 1234n,
            stepsCompleted: 2,
            stepsTotal: 3,
            error,
          }),
        );
      const start = b.requests.length;
      await js.publish(wire("toolport.workflow.completed"), workflow(WorkflowRunStatus.COMPLETED), { msgID: randomUUID() });
      await js.publish(wire("toolport.workflow.failed"), workflow(WorkflowRunStatus.FAILED, "step 3 failed"), {
        msgID: randomUUID(),
      });
      await js.publish(
        wire("toolport.spend.limit_approaching"),
        toBinary(
          SpendLimitApproachingSchema,
          create(SpendLimitApproachingSchema, {
            eventId: randomUUID(),
            occurredAt: at,
            accountId: user.accountId,
            keyId: randomUUID(),
            dailyLimitCents: 1000n,
            spentTodayCents: 812n,
            percentage: 81.2,
            day: "2026-11-24",
          }),
        ),
        { msgID: randomUUID() },
      );
      const got = (await b.waitFor(start + 3, 15_000)).slice(start).map((r) => JSON.parse(r.body.toString("utf8")));
      const byEvent = Object.fromEntries(got.map((x) => [x.event, x]));
      expect(byEvent["workflow.completed"]).toEqual({
        event: "workflow.completed",
        timestamp: "2026-11-24T10:00:00.123Z",
        data: {
          workflow_id: "wf-1",
          execution_id: "run-1",
          status: "completed",
          execution_time_ms: 1234,
          steps_completed: 2,
          steps_total: 3,
          error: null,
        },
      });
      expect(byEvent["workflow.failed"].data).toMatchObject({ status: "failed", error: "step 3 failed" });
      expect(byEvent["agent.spend.limit_approaching"]).toEqual({
        event: "agent.spend.limit_approaching",
        timestamp: "2026-11-24T10:00:00.123Z",
        data: { daily_limit_cents: 1000, spent_today_cents: 812, percentage: 81.2 },
      });
      expect(hook.id).toBeTruthy();
    });

    it("retries after about 1 s and 4 s, then marks the delivery failed after the third attempt", async () => {
      const u = await newUser("retries");
      const path = `/retries-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${c.url}${path}`, ["tool.execution.completed"]);
      c.respond((r) => (r.path === path ? { status: 500, body: "receiver down" } : { status: 200 }));
      expect((await callTool(u, "text-word-count", { text: "a b" })).status).toBe(200);
      const [x] = await settled(u, hook.id, 1, 20_000);
      expect(x.status).toBe("failed");
      expect(x.attempts.map((t) => [t.attempt, t.status_code, t.response_body])).toEqual([
        [1, 500, "receiver down"],
        [2, 500, "receiver down"],
        [3, 500, "receiver down"],
      ]);
      const times = c.requests.filter((r) => r.path === path).map((r) => r.receivedAt);
      expect(times).toHaveLength(3);
      const gaps = [times[1]! - times[0]!, times[2]! - times[1]!];
      expect(gaps[0]).toBeGreaterThanOrEqual(750);
      expect(gaps[0]).toBeLessThan(1600);
      expect(gaps[1]).toBeGreaterThanOrEqual(3150);
      expect(gaps[1]).toBeLessThan(5200);
      // All three carry the same delivery id.
      expect(new Set(c.requests.filter((r) => r.path === path).map((r) => header(r, "x-svc-delivery"))).size).toBe(1);
      c.respond(() => ({ status: 200 }));
    });

    it("fails an attempt the receiver does not answer within 10 s, and succeeds on the retry", async () => {
      const u = await newUser("timeout");
      const path = `/slow-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${d.url}${path}`, ["tool.execution.completed"]);
      let n = 0;
      d.respond((r) => (r.path === path && n++ === 0 ? { status: 200, delayMs: 12_000 } : { status: 204 }));
      expect((await callTool(u, "text-word-count", { text: "slow" })).status).toBe(200);
      const [x] = await settled(u, hook.id, 1, 25_000);
      expect(x.status).toBe("succeeded");
      expect(x.attempts[0]).toMatchObject({ attempt: 1, status_code: null, error: "timeout" });
      expect(x.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(9_900);
      expect(x.attempts[0]!.duration_ms).toBeLessThan(11_500);
      expect(x.attempts[1]).toMatchObject({ attempt: 2, status_code: 204 });
      d.respond(() => ({ status: 200 }));
    }, 40_000);

    it("does not follow a redirect: the attempt fails with the 3xx", async () => {
      const u = await newUser("redirect");
      const path = `/moved-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${a.url}${path}`, ["tool.execution.completed"]);
      a.respond((r) =>
        r.path === path ? { status: 302, headers: { location: `${b.url}/elsewhere` } } : { status: 200, body: "ok" },
      );
      const before = b.requests.filter((r) => r.path === "/elsewhere").length;
      expect((await callTool(u, "text-word-count", { text: "moved" })).status).toBe(200);
      const [x] = await settled(u, hook.id, 1, 20_000);
      expect(x.status).toBe("failed");
      expect(x.attempts.map((t) => t.status_code)).toEqual([302, 302, 302]);
      expect(b.requests.filter((r) => r.path === "/elsewhere").length).toBe(before);
      a.respond(() => ({ status: 200, body: "ok" }));
    });

    it("sends nothing to a paused webhook, keeps nothing for later, and delivers again once resumed", async () => {
      const u = await newUser("paused");
      const paused = await register(u, `${b.url}/paused`, ["tool.execution.completed"]);
      const witness = await register(u, `${b.url}/witness`, ["tool.execution.completed"]);
      const off = await call("PATCH", `/webhooks/${paused.id}`, { token: u.token, body: { is_active: false } });
      expect(off.body.is_active).toBe(false);
      expect((await callTool(u, "text-word-count", { text: "while paused" })).status).toBe(200);
      // The witness got the event: the paused webhook had its chance and got nothing.
      await settled(u, witness.id, 1);
      expect(await deliveries(u, paused.id)).toEqual([]);
      const on = await call("PATCH", `/webhooks/${paused.id}`, { token: u.token, body: { is_active: true } });
      expect(on.body.is_active).toBe(true);
      expect((await callTool(u, "text-word-count", { text: "resumed" })).status).toBe(200);
      const [x] = await settled(u, paused.id, 1);
      expect(x.status).toBe("succeeded");
      expect(await deliveries(u, paused.id)).toHaveLength(1);
      // A paused webhook gets no test event either.
      await call("PATCH", `/webhooks/${paused.id}`, { token: u.token, body: { is_active: false } });
      expectError(await call("POST", `/webhooks/${paused.id}/test`, { token: u.token }), 409, "webhook_paused");
    });

    it("refuses at send an address that became private after registration", async () => {
      const u = await newUser("rebind");
      const hook = await register(u, `${a.url}/rebind`, ["tool.execution.completed"]);
      // As if its name now resolved to a private address: the stored URL points at one.
      await db.query("UPDATE webhooks SET url = 'https://127.0.0.1:9/' WHERE id = $1", [hook.id]);
      const test = await call("POST", `/webhooks/${hook.id}/test`, { token: u.token });
      expect(test.status, JSON.stringify(test.body)).toBe(200);
      const [x] = await settled(u, hook.id, 1, 20_000);
      expect(x.status).toBe("failed");
      expect(x.attempts.map((t) => t.error)).toEqual(["address_not_allowed", "address_not_allowed", "address_not_allowed"]);
    });

    it("pages the history, filters it by status, and redelivers a delivery as a new series with the same id", async () => {
      const u = await newUser("history");
      const path = `/history-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${b.url}${path}`, ["tool.execution.completed"]);
      b.respond((r) => (r.path === path ? { status: 503 } : { status: 200 }));
      const test = await call("POST", `/webhooks/${hook.id}/test`, { token: u.token });
      expect(test.body).toMatchObject({ event: "webhook.test", status: "pending" });
      await settled(u, hook.id, 1, 20_000);
      b.respond(() => ({ status: 200 }));
      expect((await callTool(u, "text-word-count", { text: "two" })).status).toBe(200);
      await settled(u, hook.id, 2);
      const page1 = await call("GET", `/webhooks/${hook.id}/deliveries?limit=1`, { token: u.token });
      expect(page1.body.deliveries).toHaveLength(1);
      expect(page1.body.next_cursor).toEqual(expect.any(String));
      const page2 = await call("GET", `/webhooks/${hook.id}/deliveries?limit=1&cursor=${page1.body.next_cursor}`, {
        token: u.token,
      });
      expect(page2.body.deliveries).toHaveLength(1);
      expect(page2.body.next_cursor).toBeNull();
      expect(page2.body.deliveries[0].id).not.toBe(page1.body.deliveries[0].id);
      const failed = await deliveries(u, hook.id, "?status=failed");
      expect(failed).toHaveLength(1);
      const failedId = failed[0]!.id;
      expect(failed[0]).toMatchObject({ event: "webhook.test", status: "failed" });
      expect(await deliveries(u, hook.id, "?status=succeeded")).toHaveLength(1);
      expectError(await call("GET", `/webhooks/${hook.id}/deliveries?status=done`, { token: u.token }), 400, "invalid_request");
      expectError(await call("GET", `/webhooks/${hook.id}/deliveries?cursor=nope`, { token: u.token }), 400, "invalid_cursor");

      const before = b.requests.filter((r) => r.path === path).length;
      const again = await call("POST", `/webhooks/${hook.id}/deliveries/${failedId}/redeliver`, { token: u.token });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toMatchObject({ id: failedId, status: "pending" });
      const redelivered = await b.waitFor(b.requests.length + 1);
      expect(header(redelivered[redelivered.length - 1]!, "x-svc-delivery")).toBe(failedId);
      await expect
        .poll(async () => (await deliveries(u, hook.id, "?status=succeeded")).map((x) => x.id), { timeout: 10_000 })
        .toContain(failedId);
      const done = (await deliveries(u, hook.id)).find((x) => x.id === failedId)!;
      expect(done.attempts.map((t) => [t.series, t.attempt, t.status_code])).toEqual([
        [1, 1, 503],
        [1, 2, 503],
        [1, 3, 503],
        [2, 1, 200],
      ]);
      expect(b.requests.filter((r) => r.path === path).length).toBe(before + 1);
      expectError(
        await call("POST", `/webhooks/${hook.id}/deliveries/${randomUUID()}/redeliver`, { token: u.token }),
        404,
        "delivery_not_found",
      );
    });

    it("signs with both the new and the previous secret for a day after a rotation", async () => {
      const u = await newUser("rotation");
      const hook = await register(u, `${a.url}/rotate`, ["tool.execution.completed"]);
      const rotated = await call("POST", `/webhooks/${hook.id}/rotate-secret`, { token: u.token });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(hook.secret);
      const expires = new Date(rotated.body.previous_secret_expires_at).getTime();
      expect(Math.abs(expires - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);
      const start = a.requests.length;
      await call("POST", `/webhooks/${hook.id}/test`, { token: u.token });
      const [r] = (await a.waitFor(start + 1)).slice(start);
      const sig = header(r!, "x-svc-signature")!;
      expect(sig).toMatch(/^t=\d+,sha256=[0-9a-f]{64},sha256=[0-9a-f]{64}$/);
      expect(verify({ secret: rotated.body.secret, body: r!.body, header: sig }).ok).toBe(true);
      expect(verify({ secret: hook.secret, body: r!.body, header: sig }).ok).toBe(true);
      // Once the overlap has ended, only the new secret signs.
      await db.query("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [hook.id]);
      const next = a.requests.length;
      await call("POST", `/webhooks/${hook.id}/test`, { token: u.token });
      const [later] = (await a.waitFor(next + 1)).slice(next);
      expect(verify({ secret: rotated.body.secret, body: later!.body, header: later!.headers["x-svc-signature"] }).ok).toBe(true);
      expect(verify({ secret: hook.secret, body: later!.body, header: later!.headers["x-svc-signature"] }).ok).toBe(false);
    });

    it("keeps at most WEBHOOKS_ENDPOINT_CONCURRENCY (10) attempts in flight per webhook", async () => {
      const u = await newUser("concurrency");
      const path = `/busy-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${d.url}${path}`, ["tool.execution.completed"]);
      let inFlight = 0;
      let most = 0;
      d.respond((r) => {
        if (r.path !== path) return { status: 200 };
        inFlight++;
        most = Math.max(most, inFlight);
        // Long enough that the 30 test events are all queued while the first 10 are still in flight, also on
        // a loaded machine (at 300 ms a slow enqueue let the sender keep up and never reach the cap).
        setTimeout(() => inFlight--, 1500);
        return { status: 200, delayMs: 1500 };
      });
      const sent = await Promise.all(
        Array.from({ length: 30 }, () => call("POST", `/webhooks/${hook.id}/test`, { token: u.token })),
      );
      expect(sent.every((x) => x.status === 200)).toBe(true);
      await settled(u, hook.id, 30, 30_000);
      expect(most).toBe(10);
      d.respond(() => ({ status: 200 }));
    });

    it("pauses a webhook whose every attempt failed for WEBHOOKS_CIRCUIT_MS, with a reason, until it is resumed", async () => {
      const u = await newUser("circuit");
      const path = `/circuit-${randomUUID().slice(0, 8)}`;
      const hook = await register(u, `${c.url}${path}`, ["tool.execution.completed"]);
      c.respond((r) => (r.path === path ? { status: 500 } : { status: 200 }));
      // Failing attempts for longer than the circuit's 8 s (here: three series of test events).
      const started = Date.now();
      while (Date.now() - started < 11_000) {
        const t = await call("POST", `/webhooks/${hook.id}/test`, { token: u.token });
        if (t.status !== 200) break;
        await new Promise((r) => setTimeout(r, 1500));
      }
      await expect
        .poll(async () => (await call("GET", `/webhooks/${hook.id}`, { token: u.token })).body.is_active, { timeout: 15_000 })
        .toBe(false);
      const paused = await call("GET", `/webhooks/${hook.id}`, { token: u.token });
      expect(paused.body.disabled_reason).toMatch(/every delivery attempt failed since/);
      const resumed = await call("PATCH", `/webhooks/${hook.id}`, { token: u.token, body: { is_active: true } });
      expect(resumed.body).toMatchObject({ is_active: true, disabled_reason: null });
      c.respond(() => ({ status: 200 }));
    }, 40_000);
  });
});
