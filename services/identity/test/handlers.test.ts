/**
 * The identity service's own layer, on a real Postgres and NATS and without a stack: its routes (every
 * handler, as routes.ts serves them, on the parts its deps.ts builds) called through connect's in-memory
 * router transport, with principals that identity itself authenticated. Billing and catalog are fakes of
 * their RPCs only, served by the kit's RPC server in this process, where identity's own clients reach
 * them; identity's stores, rules and lease drops are the real ones. An execution process holding a quota
 * lease is played by a NATS subscriber on its holder subject.
 */
import { randomUUID } from "node:crypto";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { unavailable } from "@toolport/kit/errors";
import { createLogger } from "@toolport/kit/logger";
import { type RpcServer, startRpcServer } from "@toolport/kit/rpc";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { OrgRole, type Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../test/harness/db.js";
import { inMemoryService, refusal } from "../../../test/harness/in-memory-rpc.js";
import { type TestServiceContext, testServiceContext } from "../../../test/harness/service-context.js";
import { identityEnv } from "../src/config.js";
import { createDeps } from "../src/deps.js";
import { leaseDropSubject } from "../src/events/lease-drops.js";
import type { IdentityDeps } from "../src/handlers/deps.js";
import { routes } from "../src/routes.js";

const log = createLogger("identity-test", process.env.TEST_LOG ?? "silent");
const KNOWN_TOOL = randomUUID();

describe("identity: handlers, domain and store on Postgres, billing and catalog as fakes of their RPCs", () => {
  let db: TestDatabase;
  let ctx: TestServiceContext<Parameters<typeof createDeps>[0]["config"]>;
  let peers: RpcServer;
  let identity: ReturnType<typeof inMemoryService<typeof IdentityService>>;
  let billingDown = false;
  const wallets: string[] = [];

  const billingFake: Partial<ServiceImpl<typeof BillingService>> = {
    async createWallet(req) {
      if (billingDown) throw unavailable("internal", "billing is down");
      wallets.push(req.accountId);
      return { wallet: { walletId: `w-${req.accountId}`, accountId: req.accountId, balanceUsdc: "0.00" } };
    },
  };
  const catalogFake: Partial<ServiceImpl<typeof CatalogService>> = {
    async listStarterTools() {
      return { tools: [] };
    },
    async checkCatalogIds(req) {
      return { unknownServiceIds: req.serviceIds, unknownToolIds: req.toolIds.filter((id) => id !== KNOWN_TOOL) };
    },
  };

  beforeAll(async () => {
    db = await testDatabase("identity_handlers");
    peers = await startRpcServer({
      name: "identity-peers",
      host: "127.0.0.1",
      port: 0,
      log,
      routes(router) {
        router.service(BillingService, billingFake);
        router.service(CatalogService, catalogFake);
      },
      serviceNames: [BillingService.typeName, CatalogService.typeName],
    });
    const peerUrl = `http://127.0.0.1:${peers.port}`;
    ctx = await testServiceContext(db, "identity", identityEnv, new URL("../migrations", import.meta.url), {
      BILLING_URL: peerUrl,
      CATALOG_URL: peerUrl,
    });
    const deps: IdentityDeps = createDeps(ctx);
    await deps.tokens;
    identity = inMemoryService(IdentityService, (router) => routes(router, deps), "identity");
  });

  afterAll(async () => {
    await ctx?.close();
    await peers?.close(0);
    await db?.pool.end();
  });

  /** An agent registered anonymously, and the principal identity gives its key. */
  async function agent(): Promise<{ apiKey: string; agentId: string; principal: Principal }> {
    const reg = await identity.anonymous.registerAgent({ name: "Ledger bot", operatorEmail: "ops@example.com", clientIp: "" });
    return { apiKey: reg.apiKey, agentId: reg.agentId, principal: await principalOf(reg.apiKey) };
  }
  async function principalOf(credential: string, kind: "apiKey" | "bearerToken" = "apiKey"): Promise<Principal> {
    const { principal } = await identity.anonymous.authenticate({ credential: { case: kind, value: credential } });
    return principal!;
  }
  const countRows = async (table: string) =>
    Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

  describe("RegisterAgent", () => {
    it("creates the account with its wallet and a key that authenticates as it", async () => {
      const { apiKey, agentId, principal } = await agent();
      expect(wallets).toContain(agentId);
      expect(principal.accountId).toBe(agentId);
      expect(principal.keyId).toBeTruthy();
      const { rows } = await db.pool.query("SELECT kind, email FROM accounts WHERE id = $1", [agentId]);
      expect(rows).toEqual([{ kind: "agent", email: "ops@example.com" }]);
      expect(apiKey).not.toBe("");
    });

    it("refuses bad input by the field's name, and a failed wallet stores no account", async () => {
      const before = await countRows("accounts");
      const bad = await refusal(identity.anonymous.registerAgent({ name: "Bot", operatorEmail: "not-an-email", clientIp: "" }));
      expect(bad).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_request" });
      expect(bad.message).toContain("operator_email");

      billingDown = true;
      try {
        const down = await refusal(
          identity.anonymous.registerAgent({ name: "Bot", operatorEmail: "a@example.com", clientIp: "" }),
        );
        expect(down).toMatchObject({ code: Code.Unavailable, reason: "wallet_unavailable" });
      } finally {
        billingDown = false;
      }
      expect(await countRows("accounts")).toBe(before);
    });
  });

  describe("Signup and Login (a person)", () => {
    it("stores the person with a personal organization; the JWT it gets authenticates as its owner", async () => {
      const email = `p-${randomUUID()}@example.com`;
      const up = await identity.anonymous.signup({ email, password: "correct horse battery", name: "Pat" });
      const { principal } = await identity.anonymous.authenticate({ credential: { case: "bearerToken", value: up.accessToken } });
      expect(principal).toMatchObject({ accountId: up.accountId, organizationId: up.organizationId, orgRole: OrgRole.OWNER });
      expect(principal?.keyId).toBeUndefined();
      const login = await identity.anonymous.login({ email, password: "correct horse battery" });
      expect((await principalOf(login.accessToken, "bearerToken")).accountId).toBe(up.accountId);
      const { rows } = await db.pool.query("SELECT role FROM memberships WHERE organization_id = $1 AND account_id = $2", [
        up.organizationId,
        up.accountId,
      ]);
      expect(rows).toEqual([{ role: "owner" }]);
      // A person makes keys in its personal organization.
      const made = await identity.as(principal!).createApiKey({ name: "laptop" });
      expect((await principalOf(made.key)).organizationId).toBe(up.organizationId);
    });

    it("refuses a short password by its field, a taken email and a wrong password, storing no account", async () => {
      const email = `p-${randomUUID()}@example.com`;
      await identity.anonymous.signup({ email, password: "correct horse battery", name: "Pat" });
      const before = await countRows("accounts");
      const short = await refusal(identity.anonymous.signup({ email: `q-${email}`, password: "short", name: "Q" }));
      expect(short).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_request" });
      expect(short.message).toContain("password");
      expect(await refusal(identity.anonymous.signup({ email, password: "another good one", name: "P2" }))).toMatchObject({
        code: Code.AlreadyExists,
        reason: "email_taken",
      });
      expect(await refusal(identity.anonymous.login({ email, password: "not the password" }))).toMatchObject({
        code: Code.Unauthenticated,
        reason: "invalid_credentials",
      });
      expect(await countRows("accounts")).toBe(before);
    });
  });

  describe("CreateApiKey and ListApiKeys", () => {
    it("stores a key of the caller's that authenticates with its permissions and is listed", async () => {
      const { principal } = await agent();
      const made = await identity.as(principal).createApiKey({
        name: "reader",
        permissions: { allowedTools: { values: [KNOWN_TOOL] }, requireConfirmation: true },
      });
      const p = await principalOf(made.key);
      expect(p.accountId).toBe(principal.accountId);
      expect(p.keyId).toBe(made.id);
      expect(p.keyPermissions?.allowedTools?.values).toEqual([KNOWN_TOOL]);
      expect(p.keyPermissions?.requireConfirmation).toBe(true);
      const { keys } = await identity.as(principal).listApiKeys({});
      expect(keys.map((k) => k.id)).toContain(made.id);
    });

    it("refuses an anonymous caller, a missing name, a key wider than its maker and unknown tool ids, storing no key", async () => {
      const { principal } = await agent();
      const narrow = await identity
        .as(principal)
        .createApiKey({ name: "narrow", permissions: { allowedTools: { values: [KNOWN_TOOL] } } });
      const narrowCaller = await principalOf(narrow.key);
      const before = await countRows("api_keys");

      expect(await refusal(identity.anonymous.createApiKey({ name: "x" }))).toMatchObject({ code: Code.Unauthenticated });
      const noName = await refusal(identity.as(principal).createApiKey({ name: " " }));
      expect(noName).toMatchObject({ code: Code.InvalidArgument });
      expect(noName.message).toContain("name");
      const wider = await refusal(identity.as(narrowCaller).createApiKey({ name: "wider" }));
      expect(wider).toMatchObject({ code: Code.PermissionDenied, reason: "permission_exceeds_key" });
      const unknown = await refusal(
        identity.as(principal).createApiKey({ name: "ghost", permissions: { allowedTools: { values: [randomUUID()] } } }),
      );
      expect(unknown).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_request" });
      expect(unknown.message).toContain("permissions.allowed_tools[0]");

      expect(await countRows("api_keys")).toBe(before);
    });

    it("lists only the caller's own keys, and another account's organization is not found", async () => {
      const a = await agent();
      const b = await agent();
      const { keys } = await identity.as(a.principal).listApiKeys({});
      expect(keys.map((k) => k.id)).toEqual([a.principal.keyId]);
      const other = await refusal(identity.as(a.principal).listApiKeys({ organizationId: b.principal.organizationId }));
      expect(other).toMatchObject({ code: Code.NotFound, reason: "organization_not_found" });
    });
  });

  describe("RevokeApiKey", () => {
    it("revokes the key and the keys made with it, which then no longer authenticate", async () => {
      const { principal } = await agent();
      const parent = await identity.as(principal).createApiKey({ name: "parent" });
      const child = await identity.as(await principalOf(parent.key)).createApiKey({ name: "child" });
      const res = await identity.as(principal).revokeApiKey({ keyId: parent.id });
      expect(res.revoked).toBe(true);
      for (const plaintext of [parent.key, child.key]) {
        const refused = await refusal(identity.anonymous.authenticate({ credential: { case: "apiKey", value: plaintext } }));
        expect(refused.code).toBe(Code.Unauthenticated);
      }
      const { rows } = await db.pool.query("SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND id = ANY($1)", [
        [parent.id, child.id],
      ]);
      expect(rows).toHaveLength(2);
    });

    it("answers another account's key as not found and leaves it working", async () => {
      const a = await agent();
      const b = await agent();
      const refused = await refusal(identity.as(a.principal).revokeApiKey({ keyId: b.principal.keyId! }));
      expect(refused).toMatchObject({ code: Code.NotFound, reason: "api_key_not_found" });
      expect((await principalOf(b.apiKey)).keyId).toBe(b.principal.keyId);
    });

    it("asks the holder of a live lease on the key to drop it before answering; a new lease is then refused", async () => {
      const { principal, apiKey } = await agent();
      const holder = `exec-${randomUUID().slice(0, 8)}`;
      const check = { keyId: principal.keyId!, accountId: principal.accountId, organizationId: principal.organizationId };
      const rateLimit = { bucket: "tool_calls", subjectKey: `key-${check.keyId}`, limit: 100, windowSeconds: 60 };
      const lease = await identity.as(principal).leaseCallAllowance({ rateLimit, want: 5, holder, keyCheck: check });
      expect(lease.granted).toBe(5);
      expect(lease.ttlMs).toBeGreaterThan(0);

      const drops: string[] = [];
      const sub = ctx.nc.subscribe(leaseDropSubject(holder), {
        callback: (_err, msg) => {
          drops.push(msg.subject);
          msg.respond(new Uint8Array());
        },
      });
      try {
        await identity.as(principal).revokeApiKey({ keyId: check.keyId });
        // Answered only after the holder replied.
        expect(drops).toEqual([leaseDropSubject(holder)]);
      } finally {
        sub.unsubscribe();
      }
      const again = await refusal(identity.as(principal).leaseCallAllowance({ rateLimit, want: 1, holder, keyCheck: check }));
      expect(again.code).toBe(Code.Unauthenticated);
      expect(await refusal(identity.anonymous.authenticate({ credential: { case: "apiKey", value: apiKey } }))).toMatchObject({
        code: Code.Unauthenticated,
      });
    });
  });

  describe("LeaseCallAllowance", () => {
    it("grants at most a sixteenth of the limit at once, up to the window's limit, counted in the window's row", async () => {
      const subjectKey = `ip-${randomUUID()}`;
      const rateLimit = { bucket: "handler_test", subjectKey, limit: 32, windowSeconds: 3600 };
      const first = await identity.anonymous.leaseCallAllowance({ rateLimit, want: 5, holder: "h1" });
      expect(first.granted).toBe(2);
      let total = first.granted;
      for (let i = 0; i < 15; i++)
        total += (await identity.anonymous.leaseCallAllowance({ rateLimit, want: 2, holder: "h1" })).granted;
      expect(total).toBe(32);
      const over = await identity.anonymous.leaseCallAllowance({ rateLimit, want: 1, holder: "h1" });
      expect(over.granted).toBe(0);
      expect(over.rateLimit?.retryAfterSeconds).toBeGreaterThan(0);
      const { rows } = await db.pool.query<{ hits: number }>(
        "SELECT hits FROM rate_limit_windows WHERE bucket = 'handler_test' AND subject_key = $1",
        [subjectKey],
      );
      expect(rows.map((r) => r.hits)).toEqual([32]);
    });

    it("refuses a malformed lease by the field's name and counts nothing", async () => {
      const subjectKey = `ip-${randomUUID()}`;
      const rateLimit = { bucket: "handler_test", subjectKey, limit: 4, windowSeconds: 3600 };
      const bad = await refusal(identity.anonymous.leaseCallAllowance({ rateLimit, want: 1, holder: "no spaces allowed" }));
      expect(bad).toMatchObject({ code: Code.InvalidArgument });
      expect(bad.message).toContain("holder");
      const { rows } = await db.pool.query("SELECT 1 FROM rate_limit_windows WHERE subject_key = $1", [subjectKey]);
      expect(rows).toEqual([]);
    });
  });
});
