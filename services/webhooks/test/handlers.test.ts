/**
 * The webhooks service's own layer, on a real Postgres and without a stack: its handlers through
 * connect's in-memory router transport (the kit's server interceptor, real serialization), its store
 * (fan-out, claims) and its sender attempting deliveries to a real HTTP receiver on 127.0.0.1. Covers
 * registration, listing and deletion, the fan-out of an event into deliveries, claiming, an attempt's
 * outcome as domain/delivery-policy.ts decides it, and the circuit.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { createLogger } from "@toolport/kit/logger";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { withTransaction } from "@toolport/kit/pg";
import { Sealer } from "@toolport/kit/sealing";
import { AuthMethod, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { DeliveryStatus } from "@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { verify } from "@toolport/webhooks-verify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { inMemoryService, refusal } from "../../../test/harness/in-memory-rpc.js";
import { until } from "../../../test/harness/wait.js";
import { Sender } from "../src/delivery/sender.js";
import { pausedReason, RETRY_DELAYS_S, RETRY_JITTER } from "../src/domain/delivery-policy.js";
import { executionOutgoing } from "../src/events/outgoing.js";
import { createWebhookHandlers } from "../src/handlers/webhook-handlers.js";
import { claimDue, handBack, nextDueInMs } from "../src/store/claim.js";
import { insertFanOut } from "../src/store/fan-out.js";
import { WebhookStore } from "../src/store/webhook-store.js";

const log = createLogger("webhooks-test", process.env.TEST_LOG ?? "silent");
const MAX_PER_USER = 4;

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A plain HTTP receiver on 127.0.0.1 that records every request and answers with `status()`, once it resolves. */
async function startReceiver() {
  const requests: Received[] = [];
  let status: () => number | Promise<number> = () => 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const n = requests.length;
      res.writeHead(await status(), { "content-type": "text/plain" });
      res.end(`answer ${n}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    requests,
    answer(fn: () => number | Promise<number>) {
      status = fn;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const jwtCaller = (accountId = randomUUID()) => create(PrincipalSchema, { accountId, authMethod: AuthMethod.JWT });

describe("webhooks: handlers, fan-out, claims and attempts on Postgres", () => {
  let db: TestDatabase;
  let store: WebhookStore;
  let sender: Sender;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let service: ReturnType<typeof inMemoryService<typeof WebhooksService>>;
  const sealer = Sealer.fromSecret(undefined, { setting: "WEBHOOKS_SECRET_KEY", developmentPhrase: "webhooks handler test" });
  const policy = new AddressPolicy("127.0.0.1", "WEBHOOKS_OUTBOUND_ALLOW");
  const outbound = new Outbound({ policy });

  beforeAll(async () => {
    db = await migratedDatabase("webhooks_handlers", "webhooks");
    store = new WebhookStore(db.pool);
    receiver = await startReceiver();
    await startSender();
    service = inMemoryService(
      WebhooksService,
      createWebhookHandlers({
        store,
        sealer,
        policy,
        sender: { wake: () => sender.wake() },
        log,
        config: { WEBHOOKS_ALLOW_HTTP: true, WEBHOOKS_MAX_PER_USER: MAX_PER_USER },
      }),
      "webhooks",
    );
  });

  afterAll(async () => {
    await sender?.stop();
    await outbound.close();
    await receiver?.close();
    await db?.pool.end();
  });

  beforeEach(() => receiver.answer(() => 200));

  /** A sender as the role runs one (a stopped sender does not start again: a test that stops it starts a new one). */
  async function startSender() {
    sender = new Sender({
      pool: db.pool,
      outbound,
      sealer,
      log,
      timeoutMs: 2000,
      endpointConcurrency: 2,
      circuitMs: 3_600_000,
      pollMs: 200,
    });
    await sender.start();
  }

  const deliveryRow = async (id: string) =>
    (
      await db.pool.query<{
        status: string;
        attempts: number;
        series: number;
        next_attempt_at: Date | null;
        delivered_at: Date | null;
        locked_until: Date | null;
        history_last_at: string | null;
      }>(
        `SELECT status, attempts, series, next_attempt_at, delivered_at, locked_until,
                attempt_history -> -1 ->> 'at' AS history_last_at FROM deliveries WHERE id = $1`,
        [id],
      )
    ).rows[0];
  const circuitOf = async (webhookId: string) =>
    (
      await db.pool.query<{ is_active: boolean; failing_since: Date | null; disabled_reason: string | null }>(
        "SELECT is_active, failing_since, disabled_reason FROM webhooks WHERE id = $1",
        [webhookId],
      )
    ).rows[0];

  it("registers a webhook, shows its secret once and keeps it sealed, lists newest first, and refuses what the rules refuse", async () => {
    const me = service.as(jwtCaller());
    const first = await me.createWebhook({ url: receiver.url, events: ["tool.execution.completed"], description: "first" });
    const second = await me.createWebhook({
      url: receiver.url,
      events: ["workflow.failed", "workflow.failed", "tool.execution.failed"],
    });
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(second.secret).not.toBe(first.secret);
    expect(first.webhook).toMatchObject({
      url: receiver.url,
      events: ["tool.execution.completed"],
      isActive: true,
      description: "first",
    });
    // Duplicates dropped; the description defaults to empty.
    expect(second.webhook?.events).toEqual(["workflow.failed", "tool.execution.failed"]);
    expect(second.webhook?.description).toBe("");

    const stored = await db.pool.query<{ secret: Buffer }>("SELECT secret FROM webhooks WHERE id = $1", [first.webhook?.id]);
    const sealed = stored.rows[0]?.secret as Buffer;
    expect(sealed.toString("utf8")).not.toContain(first.secret);
    expect(sealer.open(sealed, `webhook:${first.webhook?.id}`)).toBe(first.secret);

    const listed = await me.listWebhooks({});
    expect(listed.webhooks.map((w) => w.id)).toEqual([second.webhook?.id, first.webhook?.id]);
    expect((await me.getWebhook({ webhookId: first.webhook?.id ?? "" })).webhook?.description).toBe("first");

    const unknownEvent = await refusal(me.createWebhook({ url: receiver.url, events: ["tool.execution.started"] }));
    expect(unknownEvent).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_events" });
    expect(unknownEvent.message).toContain("tool.execution.started");
    expect(await refusal(me.createWebhook({ url: receiver.url, events: [] }))).toMatchObject({ reason: "invalid_events" });
    expect(await refusal(me.createWebhook({ url: "https://10.1.2.3/hook", events: ["workflow.completed"] }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "url_not_allowed",
    });
    expect(
      await refusal(me.createWebhook({ url: receiver.url, events: ["workflow.completed"], description: "x".repeat(501) })),
    ).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_request" });

    // The per-user limit: what is refused is not stored.
    await me.createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    await me.createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    expect(await refusal(me.createWebhook({ url: receiver.url, events: ["workflow.completed"] }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "webhook_limit_reached",
    });
    expect((await me.listWebhooks({})).webhooks).toHaveLength(MAX_PER_USER);
  });

  it("is its owner's alone: another caller's webhook is not found, and an API key or no caller is refused", async () => {
    const owner = jwtCaller();
    const { webhook } = await service.as(owner).createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    const id = webhook?.id ?? "";
    const other = service.as(jwtCaller());
    expect(await refusal(other.getWebhook({ webhookId: id }))).toMatchObject({
      code: Code.NotFound,
      reason: "webhook_not_found",
    });
    expect(await refusal(other.deleteWebhook({ webhookId: id }))).toMatchObject({ code: Code.NotFound });
    expect(await refusal(other.listDeliveries({ webhookId: id }))).toMatchObject({ code: Code.NotFound });
    expect((await other.listWebhooks({})).webhooks).toEqual([]);
    expect(await refusal(other.getWebhook({ webhookId: "not-a-uuid" }))).toMatchObject({ reason: "webhook_not_found" });

    const apiKey = service.as(create(PrincipalSchema, { accountId: owner.accountId, authMethod: AuthMethod.API_KEY }));
    expect(await refusal(apiKey.listWebhooks({}))).toMatchObject({ code: Code.Unauthenticated, reason: "jwt_required" });
    expect(await refusal(service.anonymous.listWebhooks({}))).toMatchObject({ code: Code.Unauthenticated });
    // Still there for its owner.
    expect((await service.as(owner).getWebhook({ webhookId: id })).webhook?.id).toBe(id);
  });

  it("changes only the fields given, and deletes a webhook with its deliveries", async () => {
    const me = service.as(jwtCaller());
    const { webhook } = await me.createWebhook({ url: receiver.url, events: ["workflow.completed"], description: "before" });
    const id = webhook?.id ?? "";
    const updated = await me.updateWebhook({ webhookId: id, events: { values: ["workflow.failed"] } });
    expect(updated.webhook).toMatchObject({
      events: ["workflow.failed"],
      description: "before",
      url: receiver.url,
      isActive: true,
    });
    expect(await refusal(me.updateWebhook({ webhookId: id, url: "https://192.168.0.1/x" }))).toMatchObject({
      reason: "url_not_allowed",
    });
    expect((await me.getWebhook({ webhookId: id })).webhook?.url).toBe(receiver.url);

    const { delivery } = await me.sendTestEvent({ webhookId: id });
    expect(delivery).toMatchObject({ webhookId: id, event: "webhook.test", status: DeliveryStatus.PENDING });
    expect(await me.deleteWebhook({ webhookId: id })).toMatchObject({ deleted: true });
    expect(await refusal(me.getWebhook({ webhookId: id }))).toMatchObject({ code: Code.NotFound });
    expect(await refusal(me.deleteWebhook({ webhookId: id }))).toMatchObject({ code: Code.NotFound });
    expect(await deliveryRow(delivery?.id ?? "")).toBeUndefined();
  });

  it("fans an event out once to each active webhook of its owner that subscribes to it", async () => {
    const owner = jwtCaller();
    const me = service.as(owner);
    const wants = await me.createWebhook({ url: receiver.url, events: ["tool.execution.completed"] });
    const alsoWants = await me.createWebhook({ url: receiver.url, events: ["tool.execution.completed", "workflow.failed"] });
    const paused = await me.createWebhook({ url: receiver.url, events: ["tool.execution.completed"] });
    await me.updateWebhook({ webhookId: paused.webhook?.id ?? "", isActive: false });
    await me.createWebhook({ url: receiver.url, events: ["tool.execution.failed"] });
    // Another owner's webhook for the same event gets nothing of this owner's events.
    await service.as(jwtCaller()).createWebhook({ url: receiver.url, events: ["tool.execution.completed"] });

    const occurredAt = new Date("2026-12-01T10:00:00.123Z");
    const event = create(ExecutionEventSchema, {
      accountId: owner.accountId,
      toolId: "tool-1",
      toolName: "weather",
      status: ExecutionStatus.SUCCESS,
      seconds: 0.25,
      occurredAt: timestampFromDate(occurredAt),
    });
    const out = executionOutgoing(event);
    expect(out).not.toBeNull();
    const eventId = randomUUID();
    const fan = () => withTransaction(db.pool, (client) => insertFanOut(client, out ? [{ ...out, eventId }] : []));
    expect(await fan()).toBe(2);
    // The same event again adds nothing.
    expect(await fan()).toBe(0);

    const { rows } = await db.pool.query<{ webhook_id: string; event: string; body: string }>(
      "SELECT webhook_id, event, body FROM deliveries WHERE event_id = $1 ORDER BY webhook_id",
      [eventId],
    );
    expect(rows.map((r) => r.webhook_id).sort()).toEqual([wants.webhook?.id, alsoWants.webhook?.id].sort());
    for (const row of rows) {
      expect(row.event).toBe("tool.execution.completed");
      expect(JSON.parse(row.body)).toEqual({
        event: "tool.execution.completed",
        timestamp: "2026-12-01T10:00:00.123Z",
        data: { tool_id: "tool-1", tool_name: "weather", status: "success", execution_time: 0.25, error: null },
      });
    }
    const page = await me.listDeliveries({ webhookId: wants.webhook?.id ?? "" });
    expect(page.deliveries.map((d) => d.eventId)).toContain(eventId);
    expect((await me.listDeliveries({ webhookId: paused.webhook?.id ?? "" })).deliveries).toEqual([]);
  });

  it("claims due deliveries up to each webhook's free slots, never a paused webhook's, and hands back what it will not attempt", async () => {
    // Stopped, so that only this test's claims take deliveries; started again at the end.
    await sender.stop();
    try {
      const owner = randomUUID();
      const hook = async (active: boolean) => {
        const id = randomUUID();
        await db.pool.query(
          "INSERT INTO webhooks (id, owner_id, url, events, is_active, secret) VALUES ($1, $2, $3, $4, $5, $6)",
          [id, owner, receiver.url, ["workflow.completed"], active, Buffer.from("sealed")],
        );
        return id;
      };
      const due = async (webhookId: string, n: number, inSeconds = -1) => {
        for (let i = 0; i < n; i++)
          await db.pool.query(
            `INSERT INTO deliveries (id, webhook_id, event, event_id, body, next_attempt_at)
             VALUES ($1, $2, 'workflow.completed', $3, '{}', now() + make_interval(secs => $4))`,
            [randomUUID(), webhookId, randomUUID(), inSeconds - i],
          );
      };
      const busy = await hook(true);
      const quiet = await hook(true);
      const paused = await hook(false);
      await due(busy, 5);
      await due(quiet, 1);
      await due(quiet, 1, 3600); // not due for an hour
      await due(paused, 3);
      // Some are due now: the sender's idle poll may not wait.
      expect(await nextDueInMs(db.pool)).toBeLessThanOrEqual(0);

      const first = await claimDue(db.pool, { limit: 100, perWebhook: 2, leaseSeconds: 30 });
      const byHook = (rows: { webhook_id: string }[], id: string) => rows.filter((r) => r.webhook_id === id).length;
      expect(byHook(first, busy)).toBe(2);
      expect(byHook(first, quiet)).toBe(1);
      expect(byHook(first, paused)).toBe(0);
      // The earliest due first, with what an attempt needs.
      const busyClaimed = first.filter((r) => r.webhook_id === busy);
      expect(busyClaimed[0]).toMatchObject({ url: receiver.url, series: 1, attempts: 0, previous_secret: null });
      for (const row of first) expect((await deliveryRow(row.id))?.locked_until).not.toBeNull();

      // Every slot is taken: nothing more until a claim is let go of. (Earlier tests' deliveries may be
      // claimed too: only this test's webhooks are counted, and every claim is handed back at the end.)
      const held = [...first];
      const ours: string[] = [busy, quiet, paused];
      const mine = (rows: { webhook_id: string }[]) => rows.filter((r) => ours.includes(r.webhook_id));
      const none = await claimDue(db.pool, { limit: 100, perWebhook: 2, leaseSeconds: 30 });
      held.push(...none);
      expect(mine(none)).toEqual([]);
      await handBack(db.pool, [busyClaimed[0]?.id ?? ""]);
      const again = await claimDue(db.pool, { limit: 100, perWebhook: 2, leaseSeconds: 30 });
      held.push(...again);
      expect(mine(again).map((r) => r.webhook_id)).toEqual([busy]);
      // `limit` bounds a claim across webhooks.
      await handBack(
        db.pool,
        held.map((r) => r.id),
      );
      expect(await claimDue(db.pool, { limit: 1, perWebhook: 2, leaseSeconds: 30 })).toHaveLength(1);
      await db.pool.query("UPDATE deliveries SET locked_until = NULL");
      await db.pool.query("DELETE FROM webhooks WHERE owner_id = $1", [owner]);
    } finally {
      await startSender();
    }
  });

  it("attempts a delivery signed with the webhook's secret and records each outcome as the policy decides", async () => {
    const me = service.as(jwtCaller());
    const { webhook, secret } = await me.createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    const id = webhook?.id ?? "";
    receiver.answer(() => 500);
    const seen = receiver.requests.length;
    const { delivery } = await me.sendTestEvent({ webhookId: id });
    const deliveryId = delivery?.id ?? "";

    // A failure before the last: pending, retried after its delay (about 1 s after the first, 4 s after
    // the second) from when the attempt began. Whichever of the two this read finds recorded.
    await until("the first attempt's record", async () => ((await deliveryRow(deliveryId))?.attempts ?? 0) >= 1);
    const retrying = await deliveryRow(deliveryId);
    if (retrying && retrying.attempts < 3) {
      expect(retrying.status).toBe("pending");
      expect(retrying.locked_until).toBeNull();
      expect(retrying.delivered_at).toBeNull();
      const delay = RETRY_DELAYS_S[retrying.attempts - 1] as number;
      const retryIn = ((retrying.next_attempt_at?.getTime() ?? 0) - Date.parse(retrying.history_last_at ?? "")) / 1000;
      expect(retryIn).toBeGreaterThanOrEqual(delay * (1 - RETRY_JITTER) - 0.05);
      expect(retryIn).toBeLessThanOrEqual(delay * (1 + RETRY_JITTER) + 2.1); // + the attempt and its record
    }

    // The third failure fails the delivery: no next attempt.
    await until("the delivery to fail", async () => (await deliveryRow(deliveryId))?.status === "failed", { timeoutMs: 20_000 });
    const failed = await deliveryRow(deliveryId);
    expect(failed).toMatchObject({ attempts: 3, next_attempt_at: null, delivered_at: null });
    const history = (await me.listDeliveries({ webhookId: id })).deliveries.find((d) => d.id === deliveryId);
    expect(history?.status).toBe(DeliveryStatus.FAILED);
    expect(history?.attemptHistory.map((a) => [a.series, a.attempt, a.responseStatus])).toEqual([
      [1, 1, 500],
      [1, 2, 500],
      [1, 3, 500],
    ]);
    expect(history?.attemptHistory[0]?.responseBody).toMatch(/^answer \d+$/);
    expect(history?.lastResponseStatus).toBe(500);

    // Every attempt was the same signed body, with the headers the spec names.
    const got = receiver.requests.slice(seen).filter((r) => r.headers["x-svc-delivery"] === deliveryId);
    expect(got).toHaveLength(3);
    for (const r of got) {
      expect(r.headers["x-svc-event"]).toBe("webhook.test");
      expect(r.headers["user-agent"]).toBe("Svc-Webhooks/1.0");
      expect(verify({ secret, body: r.body, header: r.headers["x-svc-signature"] }).ok).toBe(true);
      expect(JSON.parse(r.body)).toMatchObject({ event: "webhook.test", data: { webhook_id: id } });
    }

    // A redelivery is a new series, and a 2xx succeeds it at once. While its attempt is in flight (the
    // receiver holds its answer) it is pending and cannot be redelivered again.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const before = receiver.requests.length;
    receiver.answer(async () => {
      await held;
      return 204;
    });
    expect((await me.redeliver({ webhookId: id, deliveryId })).delivery?.status).toBe(DeliveryStatus.PENDING);
    await until("the redelivery's attempt to reach the receiver", async () => receiver.requests.length > before);
    expect(await refusal(me.redeliver({ webhookId: id, deliveryId }))).toMatchObject({
      code: Code.AlreadyExists,
      reason: "delivery_pending",
    });
    release();
    await until("the redelivery to succeed", async () => (await deliveryRow(deliveryId))?.status === "succeeded");
    const succeeded = await deliveryRow(deliveryId);
    expect(succeeded).toMatchObject({ attempts: 1, series: 2, next_attempt_at: null, locked_until: null });
    expect(succeeded?.delivered_at).not.toBeNull();
    const redelivered = (await me.listDeliveries({ webhookId: id, status: "succeeded" })).deliveries;
    expect(redelivered.map((d) => d.id)).toEqual([deliveryId]);
    expect(redelivered[0]?.attemptHistory.at(-1)).toMatchObject({ series: 2, attempt: 1, responseStatus: 204 });
  });

  it("pauses a webhook whose every attempt failed for circuitMs, with a reason, until its owner resumes it; a success stops the clock", async () => {
    const me = service.as(jwtCaller());
    const { webhook } = await me.createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    const id = webhook?.id ?? "";

    // The first failure starts the clock.
    receiver.answer(() => 503);
    const first = (await me.sendTestEvent({ webhookId: id })).delivery?.id ?? "";
    await until("the first failure", async () => ((await deliveryRow(first))?.attempts ?? 0) >= 1);
    expect((await circuitOf(id))?.failing_since).not.toBeNull();
    expect((await circuitOf(id))?.is_active).toBe(true);

    // Failing for longer than circuitMs (an hour): the next failure pauses it.
    const since = new Date(Date.now() - 2 * 3_600_000);
    await db.pool.query("UPDATE webhooks SET failing_since = $2 WHERE id = $1", [id, since]);
    await until("the circuit to open", async () => (await circuitOf(id))?.is_active === false, { timeoutMs: 20_000 });
    const paused = await me.getWebhook({ webhookId: id });
    expect(paused.webhook?.isActive).toBe(false);
    expect(paused.webhook?.disabledReason).toBe(pausedReason(since));
    // Paused: no test event, and its pending delivery waits.
    expect(await refusal(me.sendTestEvent({ webhookId: id }))).toMatchObject({
      code: Code.AlreadyExists,
      reason: "webhook_paused",
    });

    // Resuming clears the reason and the clock; the waiting delivery continues and succeeds.
    receiver.answer(() => 200);
    const resumed = await me.updateWebhook({ webhookId: id, isActive: true });
    expect(resumed.webhook?.isActive).toBe(true);
    expect(resumed.webhook?.disabledReason).toBeUndefined();
    expect((await circuitOf(id))?.failing_since).toBeNull();
    await until("the waiting delivery to succeed", async () => (await deliveryRow(first))?.status === "succeeded", {
      timeoutMs: 20_000,
    });

    // A success stops a running clock.
    await db.pool.query("UPDATE webhooks SET failing_since = now() - interval '10 minutes' WHERE id = $1", [id]);
    const next = (await me.sendTestEvent({ webhookId: id })).delivery?.id ?? "";
    await until("the success", async () => (await deliveryRow(next))?.status === "succeeded");
    expect(await circuitOf(id)).toEqual({ is_active: true, failing_since: null, disabled_reason: null });
  });

  it("pages the history with a cursor, and refuses a cursor, status or limit it does not know", async () => {
    const me = service.as(jwtCaller());
    const { webhook } = await me.createWebhook({ url: receiver.url, events: ["workflow.completed"] });
    const id = webhook?.id ?? "";
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await me.sendTestEvent({ webhookId: id })).delivery?.id ?? "");
    const one = await me.listDeliveries({ webhookId: id, limit: 2 });
    const two = await me.listDeliveries({ webhookId: id, limit: 2, cursor: one.nextCursor });
    const three = await me.listDeliveries({ webhookId: id, limit: 2, cursor: two.nextCursor });
    const paged = [...one.deliveries, ...two.deliveries, ...three.deliveries].map((d) => d.id);
    expect(paged).toEqual([...ids].reverse());
    expect(three.nextCursor).toBeUndefined();

    expect(await refusal(me.listDeliveries({ webhookId: id, cursor: "nonsense" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "invalid_cursor",
    });
    expect(await refusal(me.listDeliveries({ webhookId: id, status: "delivered" }))).toMatchObject({ reason: "invalid_request" });
    expect(await refusal(me.listDeliveries({ webhookId: id, limit: 201 }))).toMatchObject({ reason: "invalid_request" });
    expect(await refusal(me.listDeliveries({ webhookId: id, limit: 0 }))).toMatchObject({ reason: "invalid_request" });
    expect(await refusal(me.redeliver({ webhookId: id, deliveryId: randomUUID() }))).toMatchObject({
      code: Code.NotFound,
      reason: "delivery_not_found",
    });
  });
});
