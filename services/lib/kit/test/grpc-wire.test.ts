/**
 * Calls between processes (grpc-wire.ts: grpc-js on both sides) must give services what connect-es gave
 * them, and the same as a call to a role hosted in the same process (local-rpc.ts). A peer process
 * (fixtures/rpc-peer.ts) serves fixtures/rpc-peer-routes.ts with the kit's RPC server; this process
 * hosts the same routes too. Each case runs through:
 * - `local`: the kit's client to the server in this process (in process, no socket);
 * - `kit`: the kit's client to the peer process (grpc-js client -> grpc-js server);
 * - `connect`: connect-node's own gRPC client to the peer (the reference of what the wire gives).
 */
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@toolport/proto/grpc/health/v1/health_pb";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import { PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInScope } from "../src/context.js";
import { readError } from "../src/errors.js";
import { hostedHere } from "../src/local-rpc.js";
import { createLogger } from "../src/logger.js";
import { createServiceClient, type RpcServer, startRpcServer } from "../src/rpc.js";
import { BIG_BYTES, peerRoutes } from "./fixtures/rpc-peer-routes.js";

const fixture = fileURLToPath(new URL("./fixtures/rpc-peer.ts", import.meta.url));
const principal = create(PrincipalSchema, { accountId: "acct-1", organizationId: "org-1" });
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let peer: ChildProcess | undefined;
let peerUrl = "";
let server: RpcServer;
let local: Client<typeof WebhooksService>;
let kit: Client<typeof WebhooksService>;
let connect: Client<typeof WebhooksService>;

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** What the peer's last slow call saw, once it has ended (polled: the peer learns of the end by itself). */
async function lastSlowEnded(client: Client<typeof WebhooksService>): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const res = await client.getWebhook({ webhookId: "last-slow" });
    if ((res.webhook?.events.length ?? 0) > 1) return res.webhook?.events ?? [];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the peer's slow call did not end");
}

/** Starts the peer process on `port` (0: any); answers the port it listens on. */
async function startPeer(port: number): Promise<number> {
  peer = spawn(process.execPath, ["--conditions=@toolport/source", "--import", "tsx", fixture], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise<number>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /rpc peer listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    peer?.stdout?.on("data", seen);
    peer?.stderr?.on("data", seen);
    peer?.once("exit", (code) => reject(new Error(`the peer exited (${code}):\n${output}`)));
  });
}

beforeAll(async () => {
  const port = await startPeer(0);
  peerUrl = `http://127.0.0.1:${port}`;
  server = await startRpcServer({
    name: "webhooks",
    host: "127.0.0.1",
    port: 0,
    log: createLogger("grpc-wire-test", "silent"),
    serviceNames: [WebhooksService.typeName],
    routes: peerRoutes,
  });
  local = createServiceClient(WebhooksService, `http://127.0.0.1:${server.port}`);
  kit = createServiceClient(WebhooksService, peerUrl);
  connect = createClient(WebhooksService, createGrpcTransport({ baseUrl: peerUrl }));
});

afterAll(async () => {
  await server?.close(1000);
  if (peer && peer.exitCode === null) peer.kill("SIGKILL");
});

describe("a call to another process", () => {
  it("goes over the wire, and the in-process client stays in process", async () => {
    expect(hostedHere(WebhooksService, peerUrl)).toBe(false);
    const [a, b] = await Promise.all([local, kit].map((c) => c.getWebhook({ webhookId: "echo" })));
    expect(a?.webhook?.events[0]).toBe("local");
    expect(b?.webhook?.events[0]).toBe("grpc");
  });

  it("carries the request id, principal and traceparent, and the caller's deadline", async () => {
    const echoed = await runInScope({ requestId: "req-wire-1", principal }, () =>
      kit.getWebhook({ webhookId: "echo" }, { headers: { traceparent }, timeoutMs: 5_000 }),
    );
    expect(echoed.webhook?.id).toBe("req-wire-1");
    expect(echoed.webhook?.url).toBe("acct-1");
    expect(echoed.webhook?.events.slice(0, 2)).toEqual(["grpc", traceparent]);
    const deadline = Number(echoed.webhook?.events[2]);
    expect(deadline).toBeGreaterThan(0);
    expect(deadline).toBeLessThanOrEqual(5_000);
    // The client's default deadline (10 s) when the call sets none; none at all with timeoutMs 0.
    const byDefault = await kit.getWebhook({ webhookId: "echo" });
    expect(Number(byDefault.webhook?.events[2])).toBeGreaterThan(5_000);
    expect(Number(byDefault.webhook?.events[2])).toBeLessThanOrEqual(10_000);
    const unbounded = await kit.getWebhook({ webhookId: "echo" }, { timeoutMs: 0 });
    expect(unbounded.webhook?.events[2]).toBe("none");
  });

  it("cuts a call's default deadline to what is left of its request's, in and out of process; a call's own stands", async () => {
    const due = (ms: number) => ({ requestId: "req-due", deadline: Date.now() + ms });
    const deadlineSeen = (res: { webhook?: { events: string[] } }) => Number(res.webhook?.events[2]);
    for (const client of [local, kit]) {
      const cut = await runInScope(due(3_000), () => client.getWebhook({ webhookId: "echo" }));
      expect(deadlineSeen(cut)).toBeGreaterThan(0);
      expect(deadlineSeen(cut)).toBeLessThanOrEqual(3_000);
      // The client's default (10 s) when the request has longer; the call's own deadline, even a longer one.
      const long = await runInScope(due(60_000), () => client.getWebhook({ webhookId: "echo" }));
      expect(deadlineSeen(long)).toBeGreaterThan(3_000);
      expect(deadlineSeen(long)).toBeLessThanOrEqual(10_000);
      const own = await runInScope(due(3_000), () => client.getWebhook({ webhookId: "echo" }, { timeoutMs: 20_000 }));
      expect(deadlineSeen(own)).toBeGreaterThan(10_000);
      // Made once the answer is due, a call ends at once at its deadline (the slow handler would answer in 5 s).
      const started = Date.now();
      const late = await failure(runInScope(due(-1), () => client.getWebhook({ webhookId: "slow" })));
      expect(late.code).toBe(Code.DeadlineExceeded);
      expect(Date.now() - started).toBeLessThan(4_000);
    }
  });

  it("gives a handler's ConnectError the same code, message, metadata and details through all three", async () => {
    const errors = await Promise.all([local, kit, connect].map((c) => failure(c.deleteWebhook({ webhookId: "a" }))));
    const [reference] = errors as [ConnectError];
    expect(reference.code).toBe(Code.ResourceExhausted);
    expect(reference.rawMessage).toBe("slow down, 50% used: a/b?c");
    for (const err of errors) {
      expect(err.code).toBe(reference.code);
      expect([err.rawMessage, err.message]).toEqual([reference.rawMessage, reference.message]);
      expect(err.metadata.get("retry-after")).toBe("3");
      expect(err.details).toEqual(reference.details);
      expect(err.findDetails(ErrorDetailSchema)).toEqual(reference.findDetails(ErrorDetailSchema));
      expect(err.findDetails(ErrorDetailSchema)).toHaveLength(1);
      expect(readError(err)).toEqual(readError(reference));
      expect(err.cause).toBeUndefined();
    }
  });

  it("gives a domain error the same code, reason, message and details through all three", async () => {
    const errors = await Promise.all([local, kit, connect].map((c) => failure(c.getWebhook({ webhookId: "refuse" }))));
    for (const err of errors) {
      expect(err.code).toBe(Code.InvalidArgument);
      expect(readError(err)).toEqual({
        code: Code.InvalidArgument,
        reason: "bad_webhook",
        message: "that webhook is refused",
        details: { limit: 3 },
        detail: undefined,
      });
    }
  });

  it("hides an unexpected error behind 'internal error' through all three", async () => {
    const errors = await Promise.all([local, kit, connect].map((c) => failure(c.getWebhook({ webhookId: "crash" }))));
    for (const err of errors) {
      expect(err.code).toBe(Code.Internal);
      expect(err.rawMessage).toBe("internal error");
      expect(err.findDetails(ErrorDetailSchema)).toEqual([]);
      expect(JSON.stringify({ ...err, stack: err.stack, cause: String(err.cause) })).not.toContain("hunter2");
    }
  });

  it("ends a call at its deadline on both sides", async () => {
    const err = await failure(kit.getWebhook({ webhookId: "slow" }, { timeoutMs: 1_000 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
    expect(readError(err).reason).toBe("timeout");
    expect(await lastSlowEnded(kit)).toEqual(["started", "aborted DeadlineExceeded"]);
  });

  it("ends a call at its deadline on both sides when the call reached the peer late", async () => {
    // The peer counts the call's timeout from when the call came, so a call that came 150 ms late is reset
    // by its caller with 150 ms still on the peer's clock (a CI run saw "aborted Canceled" so).
    const lateBy = 150;
    const relay = net.createServer((socket) => {
      const upstream = net.connect(Number(new URL(peerUrl).port), "127.0.0.1");
      const held: Buffer[] = [];
      let holding = true;
      socket.on("data", (chunk: Buffer) => {
        if (!holding) return upstream.write(chunk);
        if (held.push(chunk) === 1) {
          setTimeout(() => {
            holding = false;
            for (const c of held) upstream.write(c);
          }, lateBy);
        }
      });
      upstream.pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    try {
      const late = createServiceClient(WebhooksService, `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`);
      expect((await failure(late.getWebhook({ webhookId: "slow" }, { timeoutMs: 1_000 }))).code).toBe(Code.DeadlineExceeded);
      expect(await lastSlowEnded(kit)).toEqual(["started", "aborted DeadlineExceeded"]);
    } finally {
      relay.close();
    }
  });

  it.each([
    ["no deadline", 0],
    ["a deadline far off", 10_000],
  ])("passes the caller's cancellation on to the handler (%s)", async (_, timeoutMs) => {
    const caller = new AbortController();
    const call = failure(kit.getWebhook({ webhookId: "slow" }, { signal: caller.signal, timeoutMs }));
    // Once the handler runs, the caller gives up.
    for (let i = 0; i < 100; i++) {
      const res = await kit.getWebhook({ webhookId: "last-slow" });
      if (res.webhook?.events.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    caller.abort();
    expect((await call).code).toBe(Code.Canceled);
    expect(await lastSlowEnded(kit)).toEqual(["started", "aborted Canceled"]);
  });

  it("carries a message past grpc-js's default 4 MiB limit, as connect did", async () => {
    const res = await kit.getWebhook({ webhookId: "big" });
    expect(res.webhook?.url.length).toBe(BIG_BYTES);
  });

  it("keeps serving when an error's or an answer's header cannot go as gRPC metadata", async () => {
    const refused = await failure(kit.getWebhook({ webhookId: "odd-error" }));
    expect([refused.code, refused.rawMessage]).toEqual([Code.FailedPrecondition, "refused with an odd header"]);
    expect(refused.findDetails(ErrorDetailSchema).map((d) => d.reason)).toEqual(["odd"]);
    const answered = await failure(kit.getWebhook({ webhookId: "odd-header" }));
    expect([answered.code, answered.rawMessage]).toEqual([Code.Internal, "internal error"]);
    // The peer is still there.
    expect((await kit.getWebhook({ webhookId: "echo" })).webhook?.events[0]).toBe("grpc");
  });

  it("answers the standard health check and watch, also to connect's client", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: peerUrl }));
    expect((await health.check({ service: WebhooksService.typeName })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await failure(health.check({ service: "no.such.Service" }))).code).toBe(Code.NotFound);
    const watching = new AbortController();
    for await (const res of health.watch({ service: "" }, { signal: watching.signal })) {
      expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      break;
    }
    watching.abort();
    const kitHealth = createServiceClient(Health, peerUrl);
    expect((await kitHealth.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("gives each client a connection of its own, as connect's transports had (a Service balances connections)", async () => {
    // A TCP relay in front of the peer counts the connections made through it.
    let connections = 0;
    const relay = net.createServer((socket) => {
      connections++;
      const upstream = net.connect(Number(new URL(peerUrl).port), "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    try {
      const relayUrl = `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
      const webhooks = createServiceClient(WebhooksService, relayUrl);
      const health = createServiceClient(Health, relayUrl);
      expect((await webhooks.getWebhook({ webhookId: "echo" })).webhook?.events[0]).toBe("grpc");
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect((await webhooks.getWebhook({ webhookId: "echo" })).webhook?.events[0]).toBe("grpc");
      expect(connections).toBe(2);
    } finally {
      relay.close();
    }
  });

  it("reaches a peer again as soon as it is back on its port", async () => {
    const port = Number(new URL(peerUrl).port);
    const stopped = new Promise((resolve) => peer?.once("exit", resolve));
    peer?.kill("SIGTERM");
    await stopped;
    for (let i = 0; i < 2; i++) {
      expect((await failure(kit.getWebhook({ webhookId: "echo" }, { timeoutMs: 2_000 }))).code).toBe(Code.Unavailable);
    }
    await startPeer(port);
    // The first call after the peer is back gets through (grpc-js alone would wait out its reconnect backoff).
    expect((await kit.getWebhook({ webhookId: "echo" })).webhook?.events[0]).toBe("grpc");
  });

  it("reports a peer that is not there as unavailable", async () => {
    const gone = createServiceClient(WebhooksService, "http://127.0.0.1:1");
    const err = await failure(gone.getWebhook({ webhookId: "a" }, { timeoutMs: 2_000 }));
    expect(err.code).toBe(Code.Unavailable);
    expect(readError(err).reason).toBe("service_unavailable");
  });
});
