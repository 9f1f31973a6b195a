/**
 * In-process calls between co-hosted roles must be indistinguishable, to caller and callee, from the
 * same call over gRPC. One real server (connect-node on HTTP/2) hosts a service; each case is run
 * through `createServiceClient` (in process, since the service is hosted here) and through a plain
 * gRPC client to the same server, and the two outcomes are compared.
 */
import { getEventListeners } from "node:events";
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, encodeBinaryHeader, type HandlerContext } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import { Grant, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { type Webhook, WebhookSchema } from "@toolport/proto/toolport/webhooks/v1/webhooks_resources_pb";
import {
  type CreateWebhookRequest,
  CreateWebhookRequestSchema,
  WebhooksService,
} from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRINCIPAL_HEADER, runInScope } from "./context.js";
import { invalidArgument, readError } from "./errors.js";
import { hostedServices } from "./local-rpc.js";
import { createLogger } from "./logger.js";
import { createServiceClient, principalHeader, principalKey, type RpcServer, requestIdKey, startRpcServer } from "./rpc.js";

interface Seen {
  protocol: string;
  account?: string;
  requestId: string;
  aborted?: boolean;
}

const seen: Seen[] = [];
/** The principal objects getWebhook's calls were given, in order. */
const principals: (Principal | undefined)[] = [];
/** What the handler returned last, to check the caller cannot reach it. */
let lastReturned: { webhook: { id: string; events: string[] } } | undefined;
/** The request createWebhook received last, and the message it answers with and keeps. */
let createReceived: CreateWebhookRequest | undefined;
let kept: Webhook | undefined;
/** The refusal deleteWebhook throws: a ConnectError of the handler's own, with metadata and a detail. */
const refusal = () =>
  new ConnectError("slow down", Code.ResourceExhausted, { "retry-after": "3" }, [
    { desc: ErrorDetailSchema, value: { reason: "rate_limited", detailsJson: new TextEncoder().encode('{"limit":5}') } },
  ]);
let server: RpcServer;
let local: Client<typeof WebhooksService>;
let remote: Client<typeof WebhooksService>;

/** The ConnectError a call fails with (a call that succeeds fails the test). */
async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

const principal = create(PrincipalSchema, { accountId: "acct-1", organizationId: "org-1" });

beforeAll(async () => {
  server = await startRpcServer({
    name: "webhooks",
    host: "127.0.0.1",
    port: 0,
    log: createLogger("local-rpc-test", "silent"),
    serviceNames: [WebhooksService.typeName],
    routes(router) {
      router.service(WebhooksService, {
        async getWebhook(req, ctx: HandlerContext) {
          const entry: Seen = {
            protocol: ctx.protocolName,
            account: ctx.values.get(principalKey)?.accountId,
            requestId: ctx.values.get(requestIdKey),
          };
          seen.push(entry);
          principals.push(ctx.values.get(principalKey));
          if (req.webhookId === "refuse") {
            throw invalidArgument("bad_webhook", "that webhook is refused", { details: { limit: 3 } });
          }
          if (req.webhookId === "crash") throw new Error("password=hunter2 in a stack trace");
          if (req.webhookId === "slow") {
            await new Promise((resolve) => setTimeout(resolve, 400));
            entry.aborted = ctx.signal.aborted;
          }
          req.webhookId = "changed by the callee";
          lastReturned = { webhook: { id: "wh-1", events: ["tool.execution.completed"] } };
          return lastReturned;
        },
        async createWebhook(req) {
          createReceived = req;
          req.events.push("added by the callee");
          kept = create(WebhookSchema, {
            id: "wh-2",
            url: req.url,
            events: ["workflow.completed"],
            createdAt: timestampFromMs(1_700_000_000_000),
          });
          return { webhook: kept, secret: "whsec_kept" };
        },
        async deleteWebhook() {
          throw refusal();
        },
      });
    },
  });
  local = createServiceClient(WebhooksService, `http://127.0.0.1:${server.port}`);
  remote = createClient(WebhooksService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` }));
});

afterAll(async () => {
  await server?.close(1000);
});

describe("a call to a service hosted in this process", () => {
  it("stays in process while the service is hosted here", async () => {
    expect(hostedServices()).toContain(`${WebhooksService.typeName} ${server.port}`);
    seen.length = 0;
    await local.getWebhook({ webhookId: "a" });
    await remote.getWebhook({ webhookId: "a" });
    expect(seen.map((s) => s.protocol)).toEqual(["local", "grpc"]);
  });

  it("hands the callee a copy of the request and the caller a copy of the response", async () => {
    const request = { webhookId: "a" };
    const res = await local.getWebhook(request);
    expect(request.webhookId).toBe("a");
    expect(res.webhook?.events).toEqual(["tool.execution.completed"]);
    res.webhook?.events.push("mutated by the caller");
    expect(lastReturned?.webhook.events).toEqual(["tool.execution.completed"]);
  });

  it("keeps a mutation of a message, nested lists and messages included, on the side that made it", async () => {
    for (const client of [local, remote]) {
      const request = create(CreateWebhookRequestSchema, { url: "https://hooks.test/a", events: ["tool.execution.completed"] });
      const res = await client.createWebhook(request);
      // The callee's change to its request does not reach the caller's...
      expect(request.events).toEqual(["tool.execution.completed"]);
      // ...nor the caller's later change the callee's.
      request.events.push("added by the caller");
      expect(createReceived?.events).toEqual(["tool.execution.completed", "added by the callee"]);
      // The caller's change to the response does not reach what the callee kept.
      expect(res.webhook).not.toBe(kept);
      res.webhook?.events.push("added by the caller");
      if (res.webhook?.createdAt) res.webhook.createdAt.seconds = 0n;
      expect(kept?.events).toEqual(["workflow.completed"]);
      expect(kept?.createdAt?.seconds).toBe(1_700_000_000n);
      expect(res.webhook?.events).toEqual(["workflow.completed", "added by the caller"]);
    }
  });

  it("gives a ConnectError of the handler's own the same code, message, metadata and details as the wire", async () => {
    const [a, b] = await Promise.all([
      failure(local.deleteWebhook({ webhookId: "a" })),
      failure(remote.deleteWebhook({ webhookId: "a" })),
    ]);
    for (const err of [a, b]) {
      expect(err.code).toBe(Code.ResourceExhausted);
      expect(err.metadata.get("retry-after")).toBe("3");
      expect(err.cause).toBeUndefined();
    }
    expect([a.rawMessage, a.message]).toEqual([b.rawMessage, b.message]);
    expect(a.findDetails(ErrorDetailSchema)).toEqual(b.findDetails(ErrorDetailSchema));
    expect(a.findDetails(ErrorDetailSchema)).toHaveLength(1);
    // The details arrive encoded, as findDetails reads them off the wire.
    expect(a.details).toEqual(b.details);
    expect(readError(a)).toEqual(readError(b));
  });

  it("carries the principal and request id of the caller's scope, as over the wire", async () => {
    seen.length = 0;
    await runInScope({ requestId: "req-local-1", principal }, () => local.getWebhook({ webhookId: "a" }));
    await remote.getWebhook({ webhookId: "a" }, { headers: { ...principalHeader(principal), "x-request-id": "req-local-1" } });
    expect(seen).toEqual([
      { protocol: "local", account: "acct-1", requestId: "req-local-1" },
      { protocol: "grpc", account: "acct-1", requestId: "req-local-1" },
    ]);
  });

  it("decodes a caller's principal once: its calls share one frozen object, another caller gets its own", async () => {
    const caller = create(PrincipalSchema, {
      accountId: "acct-shared",
      organizationId: "org-1",
      grants: [Grant.CALL_TOOLS],
      keyPermissions: { allowedTools: { values: ["tool-1"] } },
    });
    const other = create(PrincipalSchema, { accountId: "acct-other", organizationId: "org-2" });
    principals.length = 0;
    await runInScope({ requestId: "req-p1", principal: caller }, () => local.getWebhook({ webhookId: "a" }));
    await runInScope({ requestId: "req-p2", principal: caller }, () => local.getWebhook({ webhookId: "a" }));
    await remote.getWebhook({ webhookId: "a" }, { headers: principalHeader(caller) });
    await runInScope({ requestId: "req-p3", principal: other }, () => local.getWebhook({ webhookId: "a" }));
    const [first, second, overTheWire, another] = principals;
    expect(first?.accountId).toBe("acct-shared");
    expect(second).toBe(first);
    expect(overTheWire).toBe(first);
    expect(another).not.toBe(first);
    expect(another?.accountId).toBe("acct-other");
    // Frozen all the way down, so a callee cannot change what another call reads.
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.grants)).toBe(true);
    expect(Object.isFrozen(first?.keyPermissions?.allowedTools?.values)).toBe(true);
    expect(() => {
      (first as { accountId: string }).accountId = "acct-changed";
    }).toThrow(TypeError);
    expect(() => first?.grants.push(Grant.CALL_TOOLS)).toThrow(TypeError);
  });

  it("still reads a principal that carries fields this build does not know (kept as bytes)", async () => {
    // A newer sender's principal, during an upgrade: field 999 is unknown here and kept in $unknown.
    const known = toBinary(PrincipalSchema, create(PrincipalSchema, { accountId: "acct-newer", organizationId: "org-1" }));
    const unknown = new BinaryWriter()
      .tag(999, WireType.LengthDelimited)
      .bytes(new Uint8Array([1, 2, 3]))
      .finish();
    const bytes = new Uint8Array([...known, ...unknown]);
    seen.length = 0;
    principals.length = 0;
    await remote.getWebhook({ webhookId: "a" }, { headers: { [PRINCIPAL_HEADER]: encodeBinaryHeader(bytes) } });
    expect(seen[0]?.account).toBe("acct-newer");
    expect(principals[0]?.$unknown?.[0]?.no).toBe(999);
  });

  it("delivers a domain error with the same code, message and details", async () => {
    const [a, b] = await Promise.all([
      failure(local.getWebhook({ webhookId: "refuse" })),
      failure(remote.getWebhook({ webhookId: "refuse" })),
    ]);
    const [x, y] = [a, b];
    expect(x.code).toBe(Code.InvalidArgument);
    expect(readError(x)).toEqual(readError(y));
    expect(readError(x)).toMatchObject({ reason: "bad_webhook", message: "that webhook is refused", details: { limit: 3 } });
    expect(x.cause).toBeUndefined();
  });

  it("hides an unexpected error behind 'internal error', as over the wire", async () => {
    const [a, b] = await Promise.all([
      failure(local.getWebhook({ webhookId: "crash" })),
      failure(remote.getWebhook({ webhookId: "crash" })),
    ]);
    for (const err of [a, b]) {
      expect(err.code).toBe(Code.Internal);
      expect(err.rawMessage).toBe("internal error");
      expect(JSON.stringify({ ...err, stack: err.stack, cause: String(err.cause) })).not.toContain("hunter2");
    }
  });

  it("keeps the caller's deadline and aborts the callee's signal", async () => {
    seen.length = 0;
    const started = performance.now();
    const err = await failure(local.getWebhook({ webhookId: "slow" }, { timeoutMs: 50 }));
    expect(performance.now() - started).toBeLessThan(300);
    expect(err.code).toBe(Code.DeadlineExceeded);
    const remoteErr = await failure(remote.getWebhook({ webhookId: "slow" }, { timeoutMs: 50 }));
    expect(remoteErr.code).toBe(Code.DeadlineExceeded);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.map((s) => [s.protocol, s.aborted])).toEqual([
      ["local", true],
      ["grpc", true],
    ]);
  });

  it("leaves no listener on the caller's signal once a call is over", async () => {
    const caller = new AbortController();
    for (let i = 0; i < 50; i++) await local.getWebhook({ webhookId: "a" }, { signal: caller.signal });
    await failure(local.getWebhook({ webhookId: "refuse" }, { signal: caller.signal }));
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("goes over the wire once the service is no longer hosted here", async () => {
    await server.close(1000);
    expect(hostedServices()).not.toContain(`${WebhooksService.typeName} ${server.port}`);
    const err = await failure(local.getWebhook({ webhookId: "a" }, { timeoutMs: 1000 }));
    expect(err.code).toBe(Code.Unavailable);
  });
});
