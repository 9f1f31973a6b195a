/**
 * The execution service's own layer, on a real Postgres and without a stack: its handlers through connect's
 * in-memory router transport (the kit's server interceptor, real serialization), with the parts deps.ts
 * builds (executor, store, quota leases, guarded outbound HTTP) on the test database after the kit's and
 * execution's migrations. Catalog, billing and identity are in-process fakes of their RPCs only, served
 * through the same transport (test/harness/in-memory-rpc.ts `inMemoryPeer`); upstreams are a real HTTP
 * server on 127.0.0.1.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { loadConfig } from "@toolport/kit/config";
import { failedPrecondition, notFound, readError } from "@toolport/kit/errors";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import { createLogger } from "@toolport/kit/logger";
import { serviceEnv } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { ResolvedToolSchema } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { ParameterLocation, ServiceType } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { AuthMethod, Grant, OrgRole, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { inMemoryPeer, inMemoryService } from "../../../test/harness/in-memory-rpc.js";
import { executionEnv } from "../src/config.js";
import { createDeps, type ExecutionDeps } from "../src/deps.js";
import { createExecutionHandlers } from "../src/handlers/execution-handlers.js";

const log = createLogger("execution-test", process.env.TEST_LOG ?? "silent");
const RATE_LIMIT = 4;
/** The bearer token the weather service's credential holds; the upstream echoes what it received. */
const WEATHER_TOKEN = "wx-live-3f9a1c7e5b2d4a6f8e0c";

/** An agent's API key in its organization (member: may call tools); `of`: another key of that key's account. */
const agentKey = (extra: { requireConfirmation?: boolean; of?: Principal } = {}) =>
  create(PrincipalSchema, {
    keyPermissions: extra.requireConfirmation ? { requireConfirmation: true } : undefined,
    accountId: extra.of?.accountId ?? randomUUID(),
    organizationId: extra.of?.organizationId ?? randomUUID(),
    keyId: randomUUID(),
    authMethod: AuthMethod.API_KEY,
    orgRole: OrgRole.MEMBER,
    grants: [Grant.CALL_TOOLS],
    roleGrants: [Grant.CALL_TOOLS],
  });

/** The refusal's code, reason and details (fails when the call succeeded). */
async function refused(call: Promise<unknown>) {
  try {
    await call;
  } catch (err) {
    return readError(ConnectError.from(err));
  }
  throw new Error("the call succeeded; a refusal was expected");
}

type ResolvedToolInit = MessageInitShape<typeof ResolvedToolSchema>;

const schema = (properties: Record<string, unknown>, required: string[]) =>
  jsonBytes({ type: "object", properties, required, additionalProperties: false });

describe("execution: handlers, executor and store on Postgres, catalog, billing and identity as fakes of their RPCs", () => {
  let db: TestDatabase;
  let deps: ExecutionDeps;
  let execution: ReturnType<typeof inMemoryService<typeof ExecutionService>>;
  let upstream: Server;
  let base: string;
  /** Requests the upstream received, by path. */
  const hits: { path: string; auth: string | undefined; body: string }[] = [];
  const hitsOf = (path: string) => hits.filter((h) => h.path === path).length;

  // The catalog: tools by id; `ownerId` set: only that account may see it. The weather service has a bearer credential.
  const tools = new Map<string, { tool: ResolvedToolInit; ownerId?: string }>();
  const weatherService = randomUUID();
  const weather = { id: randomUUID(), price: 3n };
  const order = { id: randomUUID() };
  const broken = { id: randomUUID() };
  const privateTool = { id: randomUUID() };
  const catalogFake: Partial<ServiceImpl<typeof CatalogService>> = {
    async resolveToolForCall(req) {
      const found = tools.get(req.toolId);
      if (!found || (found.ownerId && found.ownerId !== req.accountId)) throw notFound("tool_not_found", "no such tool");
      return { tool: found.tool };
    },
    async resolveCredential(req) {
      if (req.serviceId !== weatherService) return { found: false };
      return { found: true, credential: { kind: { case: "bearer", value: { token: WEATHER_TOKEN } } } };
    },
  };

  // Billing: balances in atomic units and holds by execution id; each capture and release counted.
  const balances = new Map<string, bigint>();
  const holds = new Map<string, { accountId: string; amount: bigint; status: "held" | "captured" | "released" }>();
  const settlements: { executionId: string; kind: "capture" | "release" }[] = [];
  const billingFake: Partial<ServiceImpl<typeof BillingService>> = {
    async hold(req) {
      if (holds.has(req.executionId)) return { replayed: true };
      if ((balances.get(req.accountId) ?? 0n) < req.amountAtomic)
        throw failedPrecondition("insufficient_balance", "wallet balance too low");
      balances.set(req.accountId, (balances.get(req.accountId) ?? 0n) - req.amountAtomic);
      holds.set(req.executionId, { accountId: req.accountId, amount: req.amountAtomic, status: "held" });
      return {};
    },
    async capture(req) {
      const hold = holds.get(req.executionId);
      if (!hold) throw notFound("hold_not_found", "no hold");
      if (hold.status === "held") settlements.push({ executionId: req.executionId, kind: "capture" });
      hold.status = "captured";
      return {};
    },
    async release(req) {
      const hold = holds.get(req.executionId);
      if (!hold) throw notFound("hold_not_found", "no hold");
      if (hold.status === "held") {
        settlements.push({ executionId: req.executionId, kind: "release" });
        balances.set(hold.accountId, (balances.get(hold.accountId) ?? 0n) + hold.amount);
      }
      hold.status = "released";
      return {};
    },
  };

  // Identity: a per-minute rate-limit counter per subject (the key), granted in the blocks asked for.
  const used = new Map<string, number>();
  const identityFake: Partial<ServiceImpl<typeof IdentityService>> = {
    async leaseCallAllowance(req) {
      const subject = req.rateLimit!.subjectKey;
      const limit = req.rateLimit!.limit;
      const before = (used.get(subject) ?? 0) - (req.giveBack?.hits ?? 0);
      const granted = Math.max(0, Math.min(req.want, limit - before));
      used.set(subject, before + granted);
      const resetAt = timestampFromDate(new Date(Date.now() + 60_000));
      return {
        granted,
        rateLimit: {
          allowed: granted > 0 || req.want === 0,
          limit,
          remaining: limit - before - granted,
          resetAt,
          retryAfterSeconds: granted > 0 ? 0 : 60,
        },
        windowStart: timestampFromDate(new Date()),
        month: "2026-12",
        ttlMs: 2_000,
      };
    },
  };

  beforeAll(async () => {
    db = await migratedDatabase("execution_handlers", "execution");
    upstream = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://x");
        hits.push({ path: url.pathname, auth: req.headers.authorization, body });
        res.setHeader("content-type", "application/json");
        if (url.pathname === "/forecast")
          res.end(
            JSON.stringify({ city: url.searchParams.get("city"), sky: "clear", debug: { auth: req.headers.authorization } }),
          );
        else if (url.pathname === "/orders") res.writeHead(201).end(`{"order_id":"o-1","received":${body || "null"}}`);
        else res.writeHead(500).end(JSON.stringify({ error: "boom" }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    const api = (id: string, name: string, method: string, path: string, extra: ResolvedToolInit = {}) => ({
      id,
      name,
      serviceId: randomUUID(),
      serviceName: `${name} service`,
      serviceType: ServiceType.API,
      method,
      path,
      baseUrl: base,
      revision: 1n,
      ...extra,
    });
    const city = { city: { name: "city", location: ParameterLocation.QUERY, type: "string", required: true } };
    tools.set(weather.id, {
      tool: api(weather.id, "forecast", "GET", "/forecast", {
        serviceId: weatherService,
        parameters: city,
        inputSchemaJson: schema({ city: { type: "string", minLength: 2 } }, ["city"]),
        securitySchemes: [{ name: "bearer", type: "http", scheme: "bearer" }],
        isPaid: true,
        pricePerCallCents: weather.price,
      }),
    });
    tools.set(order.id, {
      tool: api(order.id, "place_order", "POST", "/orders", {
        parameters: { amount: { name: "amount", location: ParameterLocation.BODY, type: "integer", required: true } },
        inputSchemaJson: schema({ amount: { type: "integer" } }, ["amount"]),
        requestBodyContentType: "application/json",
      }),
    });
    tools.set(broken.id, { tool: api(broken.id, "always_fails", "GET", "/broken", { inputSchemaJson: schema({}, []) }) });

    const config = loadConfig(
      { ...serviceEnv("execution", 50052), ...executionEnv },
      {
        EXECUTION_OUTBOUND_ALLOW: "127.0.0.1",
        EXECUTION_CONSENT_SECRET: "execution-handlers-test-consent-secret",
        EXECUTION_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        EXECUTION_ALLOWANCE_BLOCK: "1",
      },
    );
    deps = createDeps(
      {
        name: "execution",
        config,
        log,
        pool: db.pool,
        nc: undefined as never, // the parts take no NATS connection; the role's background work does
        outbox: { flush: async () => true, nudge: () => {} },
        relaxedPool: () => db.pool,
      },
      {
        catalog: inMemoryPeer(CatalogService, catalogFake, "catalog"),
        billing: inMemoryPeer(BillingService, billingFake, "billing"),
        identity: inMemoryPeer(IdentityService, identityFake, "identity"),
      },
    );
    tools.set(privateTool.id, { tool: api(privateTool.id, "mine", "GET", "/forecast"), ownerId: randomUUID() });
    execution = inMemoryService(ExecutionService, createExecutionHandlers(deps), "execution");
  });

  afterAll(async () => {
    await deps?.close();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    await db?.pool.end();
  });

  /** The stored executions of an account, refused ones included (the call log). */
  const rows = async (accountId: string) =>
    (
      await db.pool.query<{
        id: string;
        status: string;
        error_type: string | null;
        settlement: string;
        result_json: string | null;
      }>("SELECT id, status, error_type, settlement, result_json FROM executions WHERE account_id = $1 ORDER BY executed_at", [
        accountId,
      ])
    ).rows;

  describe("CallTool", () => {
    it("runs a paid tool with the caller's credential, masks it in the reply and the stored result, and captures the hold once", async () => {
      const key = agentKey();
      balances.set(key.accountId, 1_000_000n);
      const before = hitsOf("/forecast");
      const { result } = await execution.as(key).callTool({ toolId: weather.id, toolInputJson: jsonBytes({ city: "Oslo" }) });
      expect(result).toMatchObject({ success: true, toolId: weather.id });
      expect(hitsOf("/forecast")).toBe(before + 1);
      expect(hits.at(-1)?.auth).toBe(`Bearer ${WEATHER_TOKEN}`);
      const reply = fromJsonBytes(result!.resultJson) as { city: string; debug: { auth: string } };
      expect(reply.city).toBe("Oslo");
      expect(reply.debug.auth).not.toContain(WEATHER_TOKEN);
      expect(reply.debug.auth).toContain("[REDACTED:");
      expect(result!.redaction?.count).toBeGreaterThan(0);

      // Stored once, masked, charged once, with its completion event beside it.
      const executionId = result!.executionId!;
      const [row] = await rows(key.accountId);
      expect(row).toMatchObject({ id: executionId, status: "success", settlement: "captured" });
      expect(row!.result_json).not.toContain(WEATHER_TOKEN);
      expect(settlements.filter((s) => s.executionId === executionId)).toEqual([{ executionId, kind: "capture" }]);
      expect(holds.get(executionId)).toMatchObject({ amount: weather.price * 10_000n, status: "captured" });
      const events = await db.pool.query<{ subject: string; payload: Buffer }>(
        "SELECT subject, payload FROM outbox WHERE subject LIKE 'toolport.execution.%'",
      );
      const mine = events.rows.filter((e) => fromBinary(ExecutionEventSchema, e.payload).executionId === executionId);
      expect(mine.map((e) => e.subject)).toEqual(["toolport.execution.completed"]);
      expect(fromBinary(ExecutionEventSchema, mine[0]!.payload)).toMatchObject({
        accountId: key.accountId,
        keyId: key.keyId,
        status: ExecutionStatus.SUCCESS,
      });

      // Read back by its owner (a path of it), by no one else.
      const read = await execution.as(key).getExecutionResult({ executionId, path: "city" });
      expect(fromJsonBytes(read.result!.resultJson)).toBe("Oslo");
      expect(await refused(execution.as(agentKey()).getExecutionResult({ executionId }))).toMatchObject({
        code: Code.NotFound,
        reason: "execution_not_found",
      });
      expect(await refused(execution.anonymous.getExecutionResult({ executionId }))).toMatchObject({
        code: Code.Unauthenticated,
      });
    });

    it("refuses an anonymous caller, an unknown or another account's tool, bad input and a short balance, running and storing nothing", async () => {
      const key = agentKey();
      const asKey = execution.as(key);
      const before = hits.length;
      expect(await refused(execution.anonymous.callTool({ toolId: weather.id }))).toMatchObject({
        code: Code.Unauthenticated,
        reason: "unauthenticated",
      });
      for (const toolId of [randomUUID(), privateTool.id])
        expect(await refused(asKey.callTool({ toolId }))).toMatchObject({ code: Code.NotFound, reason: "tool_not_found" });
      expect(await refused(asKey.callTool({ toolId: "  " }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "invalid_parameters",
        details: { field: "tool_id" },
      });
      const invalid = await refused(asKey.callTool({ toolId: weather.id, toolInputJson: jsonBytes({ city: "X", wind: 1 }) }));
      expect(invalid).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_parameters" });
      const fields = (invalid.details.fields as { field: string }[]).map((f) => f.field);
      expect(fields).toEqual(expect.arrayContaining(["city", "wind"]));
      expect(await refused(asKey.callTool({ toolId: weather.id, toolInputJson: jsonBytes([1]) }))).toMatchObject({
        reason: "invalid_parameters",
      });

      // No money: billing's refusal is relayed; the refusal is in the call log, nothing ran.
      expect(await refused(asKey.callTool({ toolId: weather.id, toolInputJson: jsonBytes({ city: "Oslo" }) }))).toMatchObject({
        code: Code.FailedPrecondition,
        reason: "insufficient_balance",
      });
      expect(hits.length).toBe(before);
      expect((await rows(key.accountId)).map((r) => [r.status, r.error_type])).toEqual([["refused", "insufficient_balance"]]);
    });

    it("stores a failed upstream call as an error and releases nothing it did not hold", async () => {
      const key = agentKey();
      const { result } = await execution.as(key).callTool({ toolId: broken.id });
      expect(result).toMatchObject({
        success: false,
        errorClass: ErrorClass.UPSTREAM,
        error: expect.stringContaining("HTTP 500"),
      });
      expect(await rows(key.accountId)).toMatchObject([{ id: result!.executionId, status: "error", settlement: "none" }]);
      expect(holds.has(result!.executionId!)).toBe(false);
    });
  });

  describe("consent, idempotency and limits", () => {
    it("asks a key that requires confirmation for consent before a writing call, runs it once with the token and refuses the token a second time", async () => {
      const key = agentKey({ requireConfirmation: true });
      const asKey = execution.as(key);
      const input = jsonBytes({ amount: 7 });
      const asked = await refused(asKey.callTool({ toolId: order.id, toolInputJson: input }));
      expect(asked).toMatchObject({ code: Code.Aborted, reason: "confirmation_required" });
      const token = asked.details.confirm_token as string;
      expect(token).toMatch(/^ct1\./);
      expect(hitsOf("/orders")).toBe(0);

      // The token is for these parameters only.
      const changed = await refused(
        asKey.callTool({ toolId: order.id, toolInputJson: jsonBytes({ amount: 8 }), confirmToken: token }),
      );
      expect(changed).toMatchObject({ reason: "confirmation_required", details: { token_problem: "parameters_changed" } });
      const { result } = await asKey.callTool({ toolId: order.id, toolInputJson: input, confirmToken: token });
      expect(result).toMatchObject({ success: true });
      expect(fromJsonBytes(result!.resultJson)).toEqual({ order_id: "o-1", received: { amount: 7 } });
      expect(hits.filter((h) => h.path === "/orders").map((h) => JSON.parse(h.body))).toEqual([{ amount: 7 }]);

      const again = await refused(asKey.callTool({ toolId: order.id, toolInputJson: input, confirmToken: token }));
      expect(again).toMatchObject({ reason: "confirmation_required", details: { token_problem: "used" } });
      expect(hitsOf("/orders")).toBe(1);
      // A key without that setting runs the same call at once.
      expect((await execution.as(agentKey()).callTool({ toolId: order.id, toolInputJson: input })).result?.success).toBe(true);
      expect(hitsOf("/orders")).toBe(2);
    });

    it("replays a call with the same idempotency key and input, and refuses the key with other input", async () => {
      const key = agentKey();
      balances.set(key.accountId, 1_000_000n);
      const asKey = execution.as(key);
      const call = (city: string) =>
        asKey.callTool({ toolId: weather.id, toolInputJson: jsonBytes({ city }), idempotencyKey: "order-42" });
      const before = hitsOf("/forecast");
      const first = (await call("Bergen")).result!;
      const second = (await call("Bergen")).result!;
      expect(second.executionId).toBe(first.executionId);
      expect(fromJsonBytes(second.resultJson)).toEqual(fromJsonBytes(first.resultJson));
      expect(hitsOf("/forecast")).toBe(before + 1);
      expect(await refused(call("Tromsø"))).toMatchObject({ code: Code.InvalidArgument, reason: "idempotency_key_reused" });
      expect(hitsOf("/forecast")).toBe(before + 1);
      // Charged once: one hold, one capture.
      expect(balances.get(key.accountId)).toBe(1_000_000n - weather.price * 10_000n);
      expect(settlements.filter((s) => s.executionId === first.executionId)).toHaveLength(1);
      expect((await rows(key.accountId)).map((r) => r.id)).toEqual([first.executionId]);
    });

    it("answers a duplicate whose first attempt's process died 412 idempotency_key_in_flight before the caller's deadline", async () => {
      const key = agentKey();
      balances.set(key.accountId, 1_000_000n);
      const asKey = execution.as(key);
      const call = (options?: { timeoutMs: number }) =>
        asKey.callTool(
          { toolId: weather.id, toolInputJson: jsonBytes({ city: "Bodø" }), idempotencyKey: "died-mid-call" },
          options,
        );
      const first = (await call()).result!;
      // The claim as a process killed mid-call leaves it: running, its lease (upstream timeout + 30 s) not over.
      await db.pool.query(
        "UPDATE idempotency_keys SET state = 'running', updated_at = now() WHERE account_id = $1 AND idempotency_key = $2",
        [key.accountId, "died-mid-call"],
      );
      const started = Date.now();
      const waited = await refused(call({ timeoutMs: 3_000 }));
      expect(waited).toMatchObject({
        code: Code.FailedPrecondition,
        reason: "idempotency_key_in_flight",
        details: { idempotency_key: "died-mid-call", retry_after_seconds: 1 },
      });
      // It waited for the first attempt (not refused at once), and answered inside the caller's deadline.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
      // Once the first attempt ends, the same key replays it.
      await db.pool.query("UPDATE idempotency_keys SET state = 'done' WHERE account_id = $1 AND idempotency_key = $2", [
        key.accountId,
        "died-mid-call",
      ]);
      expect((await call()).result!.executionId).toBe(first.executionId);
    });

    it("refuses the call past the key's rate limit with the window's figures, without running it", async () => {
      const key = agentKey();
      const asKey = execution.as(key);
      for (let i = 0; i < RATE_LIMIT; i++) expect((await asKey.callTool({ toolId: broken.id })).result?.executionId).toBeTruthy();
      const before = hits.length;
      const limited = await refused(asKey.callTool({ toolId: broken.id }));
      expect(limited).toMatchObject({
        code: Code.ResourceExhausted,
        reason: "rate_limited",
        details: { limit: RATE_LIMIT, retry_after_seconds: 60 },
      });
      expect(hits.length).toBe(before);
      // Another key of the same account has its own window.
      expect((await execution.as(agentKey({ of: key })).callTool({ toolId: broken.id })).result).toBeTruthy();
      const stored = await rows(key.accountId);
      expect(stored.filter((r) => r.status === "error")).toHaveLength(RATE_LIMIT + 1);
      expect(stored.filter((r) => r.status === "refused").map((r) => r.error_type)).toEqual(["rate_limited"]);
    });

    it("refuses a batch of more than ten calls as a whole and runs none of it", async () => {
      const key = agentKey();
      const before = hits.length;
      const calls = Array.from({ length: 11 }, () => ({ toolId: broken.id }));
      expect(await refused(execution.as(key).callBatch({ calls }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "invalid_batch",
        details: { field: "calls", count: 11 },
      });
      expect(await refused(execution.as(key).callBatch({ calls: [{ toolId: broken.id }, { toolId: "" }] }))).toMatchObject({
        reason: "invalid_parameters",
        details: { field: "calls[1].tool_id" },
      });
      expect(hits.length).toBe(before);
      expect(await rows(key.accountId)).toEqual([]);
    });
  });
});
