/**
 * Webhooks under faults: 1,000 events fanned out to 3 HTTPS receivers (one failing every other answer)
 * while the webhooks process is SIGKILLed and restarted twice and NATS is restarted once. Every one of
 * the 3,000 deliveries ends `succeeded` or `failed` after exactly its recorded attempts, none is missing
 * or doubled, and the receivers see each delivery id at least once. Runs one process per role (only the
 * webhooks process is killed) on a NATS server of its own (so it can be restarted).
 */

import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { natsNames } from "@toolport/kit/events";
import { createPool, type Pool } from "@toolport/kit/pg";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startNats } from "../../deploy/local/infra.mjs";
import { gatewayClient } from "../harness/http.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { signupHuman } from "../harness/identity-http.js";
import { type Stack, startStack } from "../harness/stack.js";
import { until } from "../harness/wait.js";

const EVENTS = 1000;
const quiet = { info() {}, warn() {}, error() {} };

describe("webhooks under faults", () => {
  let nats: { url: string; stop(): Promise<void> };
  let natsPort: number;
  let storeDir: string;
  let stack: Stack;
  let db: Pool;
  let receivers: Receiver[];

  beforeAll(async () => {
    natsPort = await freePort();
    storeDir = await mkdtemp(path.join(os.tmpdir(), "toolport-nats-webhooks-"));
    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    const ca = await testCertificates();
    receivers = await Promise.all([0, 1, 2].map(() => startHttpsReceiver()));
    // The third receiver fails every other answer it gives.
    let n = 0;
    receivers[2]!.respond(() => (n++ % 2 === 0 ? { status: 500, body: "flaky" } : { status: 200 }));
    stack = await startStack(
      ["identity", "billing", "webhooks", "gateway"],
      {
        NATS_URL: nats.url,
        NODE_EXTRA_CA_CERTS: ca.caFile,
        WEBHOOKS_OUTBOUND_ALLOW: receivers.map((r) => `127.0.0.1:${r.port}`).join(","),
        // A short timeout keeps the lease of a killed sender's attempts short (1.5 x timeout + 5 s).
        WEBHOOKS_TIMEOUT_MS: "2000",
        WEBHOOKS_POLL_MS: "200",
      },
      { layout: "per-role" },
    );
    db = createPool(stack.env.WEBHOOKS_DATABASE_URL!, 2);
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stopAll();
    await Promise.all((receivers ?? []).map((r) => r.close()));
    await nats?.stop();
  });

  const done = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.status <> 'pending' AND w.owner_id = $1",
        [owner],
      )
    ).rows[0]!.n;
  let owner = "";

  it("ends every delivery succeeded or failed after exactly its attempts, none missing, through kills and a NATS restart", async () => {
    const call = gatewayClient(stack.gatewayUrl);
    const user = await signupHuman(call, "faults");
    owner = user.accountId;
    const hooks: string[] = [];
    for (const r of receivers) {
      const res = await call("POST", "/webhooks", {
        token: user.token,
        body: { url: `${r.url}/hook`, events: ["tool.execution.completed"] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      hooks.push(res.body.id);
    }

    const nc: NatsConnection = await connect({ servers: nats.url });
    const js = nc.jetstream();
    const eventIds: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const eventId = randomUUID();
      eventIds.push(eventId);
      const event = create(ExecutionEventSchema, {
        eventId,
        occurredAt: timestampFromDate(new Date()),
        executionId: randomUUID(),
        toolId: "tool-faults",
        toolName: `call ${i}`,
        accountId: user.accountId,
        status: ExecutionStatus.SUCCESS,
        seconds: 0.01,
      });
      await js.publish(
        natsNames(stack.env.NATS_NAMESPACE).wire("toolport.execution.completed"),
        toBinary(ExecutionEventSchema, event),
        { msgID: eventId },
      );
    }
    await nc.close();

    const total = EVENTS * receivers.length;
    // First kill, a fifth of the way in.
    await until("a fifth delivered", async () => (await done()) >= total / 5, { timeoutMs: 60_000, intervalMs: 50 });
    expect(await stack.stop("webhooks", "SIGKILL")).not.toBe(0);
    await stack.start("webhooks");
    // NATS restarts, two fifths in.
    await until("two fifths delivered", async () => (await done()) >= (2 * total) / 5, { timeoutMs: 90_000, intervalMs: 50 });
    await nats.stop();
    await new Promise((r) => setTimeout(r, 500));
    nats = await startNats({ storeDir, port: natsPort, log: quiet });
    // Second kill, three fifths in.
    await until("three fifths delivered", async () => (await done()) >= (3 * total) / 5, { timeoutMs: 90_000, intervalMs: 50 });
    expect(await stack.stop("webhooks", "SIGKILL")).not.toBe(0);
    await stack.start("webhooks");

    await until("every delivery settled", async () => (await done()) >= total, { timeoutMs: 120_000, intervalMs: 200 });

    const { rows } = await db.query<{
      id: string;
      webhook_id: string;
      event_id: string;
      status: string;
      series: number;
      attempts: number;
      attempt_history: { series: number; attempt: number; status: number | null }[];
    }>(
      `SELECT id, webhook_id, event_id, status, series, attempts, attempt_history FROM deliveries
        WHERE webhook_id = ANY($1::uuid[])`,
      [hooks],
    );
    // None missing, none doubled: one delivery per event and webhook.
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((r) => `${r.webhook_id} ${r.event_id}`)).size).toBe(total);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(eventIds));
    const ok = (s: number | null) => s !== null && s >= 200 && s < 300;
    for (const r of rows) {
      expect(["succeeded", "failed"]).toContain(r.status);
      expect(r.series).toBe(1);
      // Exactly its attempts: the count matches the history, numbered 1..n, every one but a success failed.
      expect(r.attempt_history.map((a) => a.attempt)).toEqual(Array.from({ length: r.attempts }, (_, i) => i + 1));
      const last = r.attempt_history[r.attempts - 1]!;
      for (const a of r.attempt_history.slice(0, -1)) expect(ok(a.status)).toBe(false);
      if (r.status === "succeeded") {
        expect(ok(last.status)).toBe(true);
        expect(r.attempts).toBeLessThanOrEqual(3);
      } else {
        expect(r.attempts).toBe(3);
        expect(ok(last.status)).toBe(false);
      }
    }
    // The two healthy receivers' deliveries all succeeded; the flaky one's succeeded or failed.
    const healthy = new Set(hooks.slice(0, 2));
    expect(rows.filter((r) => healthy.has(r.webhook_id) && r.status !== "succeeded")).toEqual([]);
    // Every delivery id reached its receiver at least once.
    const seen = new Set(receivers.flatMap((rc) => rc.requests.map((q) => q.headers["x-svc-delivery"] as string)));
    expect(rows.filter((r) => !seen.has(r.id)).map((r) => r.id)).toEqual([]);
  }, 240_000);
});
