/**
 * Liveness, readiness and NATS in health, on a stack with a NATS server of its own that the test stops:
 * - each service's readiness (`toolport.readiness`, Kubernetes' readiness probe) needs its database
 *   and, for a role that consumes events (catalog, identity, webhooks), NATS; liveness ("") stays
 *   SERVING throughout, as does the gateway's `GET /livez` and `GET /readyz`;
 * - `GET /v1/health` reports NATS: `connected`, then `disconnected` with 503 and `nats` among `down`,
 *   then `connected` again once NATS is back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createServiceClient } from "@toolport/kit/rpc";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@toolport/proto/grpc/health/v1/health_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort, startNats } from "../../deploy/local/infra.mjs";
import { type ServiceName, type Stack, serviceNames, startStack } from "../harness/stack.js";

const consumers: ServiceName[] = ["catalog", "identity", "webhooks"];

describe("readiness and NATS in health", () => {
  let stack: Stack;
  let natsDir: string;
  let natsPort: number;
  let nats: Awaited<ReturnType<typeof startNats>> | undefined;
  const quiet = { info() {}, warn() {}, error() {} };

  beforeAll(async () => {
    natsDir = await mkdtemp(path.join(os.tmpdir(), "toolport-readiness-"));
    natsPort = await freePort();
    nats = await startNats({ storeDir: natsDir, port: natsPort, log: quiet });
    stack = await startStack([...serviceNames, "gateway"], {}, { infra: { pgUrl: inject("pgUrl"), natsUrl: nats.url } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stopAll();
    await nats?.stop();
    await rm(natsDir, { recursive: true, force: true });
  });

  const check = (name: ServiceName, service: string) =>
    createServiceClient(Health, `http://127.0.0.1:${stack.ports[name]}`)
      .check({ service }, { timeoutMs: 5_000 })
      .then((r) => r.status);
  const health = async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/health`);
    return { status: res.status, body: (await res.json()) as { nats: string; error?: { details: { down: string[] } } } };
  };
  const probe = async (p: string) => (await fetch(`${stack.gatewayUrl}${p}`)).status;

  it("is ready with NATS up, reports it connected", async () => {
    for (const name of serviceNames) {
      expect(await check(name, ""), name).toBe(Status.SERVING);
      expect(await check(name, "toolport.readiness"), name).toBe(Status.SERVING);
      expect(await check(name, "toolport.database"), name).toBe(Status.SERVING);
      expect(await check(name, "toolport.nats"), name).toBe(Status.SERVING);
    }
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body.nats).toBe("connected");
    expect(await probe("/readyz")).toBe(200);
  });

  it("without NATS: consumers are not ready, everyone is alive, health says 503 naming nats", { timeout: 60_000 }, async () => {
    await nats?.stop();
    nats = undefined;
    await expect.poll(async () => (await health()).status, { timeout: 20_000, interval: 250 }).toBe(503);
    const h = await health();
    expect(h.body.nats).toBe("disconnected");
    expect(h.body.error?.details.down).toEqual(["nats"]);
    for (const name of serviceNames) {
      expect(await check(name, ""), name).toBe(Status.SERVING);
      expect(await check(name, "toolport.nats"), name).toBe(Status.NOT_SERVING);
      // A role that only publishes keeps serving: its outbox holds the events meanwhile.
      expect(await check(name, "toolport.readiness"), name).toBe(consumers.includes(name) ? Status.NOT_SERVING : Status.SERVING);
    }
    expect(await probe("/livez")).toBe(200);
    expect(await probe("/readyz")).toBe(200);

    nats = await startNats({ storeDir: natsDir, port: natsPort, log: quiet });
    await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 250 }).toBe(200);
    expect((await health()).body.nats).toBe("connected");
    for (const name of consumers) expect(await check(name, "toolport.readiness"), name).toBe(Status.SERVING);
  });
});
