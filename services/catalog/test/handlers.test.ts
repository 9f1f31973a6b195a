/**
 * The catalog service's own layer, on a real Postgres and NATS and without a stack: its routes (every
 * handler, as routes.ts serves them, on the parts its deps.ts builds: the search index, the sealer, the
 * import threads) called through connect's in-memory router transport. The catalog calls no other
 * service, so nothing is faked: callers are principals as identity writes them (a person owning an
 * organization, a member and a viewer of it, a person of another organization, a restricted key) or
 * no principal at all. Covers publishing, visibility and credentials, each refusal with what it must not change.
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { AuthMethod, Grant, OrgRole, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../test/harness/db.js";
import { inMemoryService, refusal } from "../../../test/harness/in-memory-rpc.js";
import { type TestServiceContext, testServiceContext } from "../../../test/harness/service-context.js";
import { catalogEnv } from "../src/config.js";
import { type CatalogParts, createDeps } from "../src/deps.js";
import { routes } from "../src/routes.js";

const EVERY_GRANT = [
  Grant.CALL_TOOLS,
  Grant.MANAGE_CATALOG,
  Grant.MANAGE_CREDENTIALS,
  Grant.MANAGE_SPENDING,
  Grant.MANAGE_ORGANIZATIONS,
  Grant.MANAGE_KEYS,
];

/** A person signed in with a JWT, in an organization with `role`, holding the grants identity gives it. */
function person(organizationId: string, role: OrgRole, grants = role === OrgRole.VIEWER ? [] : EVERY_GRANT): Principal {
  return create(PrincipalSchema, {
    accountId: randomUUID(),
    organizationId,
    personalOrganizationId: organizationId,
    authMethod: AuthMethod.JWT,
    orgRole: role,
    grants,
    roleGrants: grants,
  });
}

/** The same account's key with permissions: identity leaves it calling tools only. */
function restrictedKey(p: Principal): Principal {
  return create(PrincipalSchema, {
    accountId: p.accountId,
    organizationId: p.organizationId,
    personalOrganizationId: p.personalOrganizationId,
    orgRole: p.orgRole,
    roleGrants: p.roleGrants,
    authMethod: AuthMethod.API_KEY,
    keyId: randomUUID(),
    keyPermissions: { requireConfirmation: true },
    grants: [Grant.CALL_TOOLS],
  });
}

/** A small OpenAPI document: two operations, one API-key scheme in a header. */
const document = (title: string) =>
  JSON.stringify({
    openapi: "3.0.3",
    info: { title, version: "1.0.0" },
    servers: [{ url: "https://api.example.com/v1" }],
    components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
    security: [{ key: [] }],
    paths: {
      "/forecasts/{city}": {
        get: {
          operationId: "getForecast",
          summary: "Forecast for a city",
          parameters: [{ name: "city", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
      "/alerts": {
        post: {
          operationId: "createAlert",
          requestBody: {
            content: { "application/json": { schema: { type: "object", properties: { city: { type: "string" } } } } },
          },
          responses: { "201": { description: "created" } },
        },
      },
    },
  });

describe("catalog: handlers, domain and store on Postgres", () => {
  let db: TestDatabase;
  let ctx: TestServiceContext<Parameters<typeof createDeps>[0]["config"]>;
  let deps: CatalogParts;
  let catalog: ReturnType<typeof inMemoryService<typeof CatalogService>>;
  const orgA = randomUUID();
  const owner = person(orgA, OrgRole.OWNER);
  const viewer = person(orgA, OrgRole.VIEWER);
  const member = person(orgA, OrgRole.MEMBER);
  const stranger = person(randomUUID(), OrgRole.OWNER);

  beforeAll(async () => {
    db = await testDatabase("catalog_handlers");
    ctx = await testServiceContext(db, "catalog", catalogEnv, new URL("../migrations", import.meta.url), {
      CATALOG_SECRET_KEY: "0123456789abcdef".repeat(4),
      CATALOG_IMPORT_THREADS: "1",
    });
    deps = createDeps(ctx);
    catalog = inMemoryService(CatalogService, (router) => routes(router, deps), "catalog");
  });

  afterAll(async () => {
    await deps?.close();
    await ctx?.close();
    await db?.pool.end();
  });

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params)).rows[0]!.n);

  /** Publishes the document as `as` (a principal, or none: anonymous). */
  async function publish(as: Principal | null, visibility = "private") {
    const res = await (as ? catalog.as(as) : catalog.anonymous).createService({
      source: { case: "api", value: { document: { case: "documentText", value: document(`Weather ${randomUUID()}`) } } },
      visibility,
    });
    return res;
  }

  describe("CreateService (publish)", () => {
    it("stores the service in the caller's organization with one tool per operation, read back by its managers", async () => {
      const events = await count("outbox WHERE subject LIKE '%tool%'");
      const res = await publish(owner);
      const id = res.service!.id;
      expect(res.tools.map((t) => t.name).sort()).toEqual(["createAlert", "getForecast"]);
      const got = await catalog.as(owner).getService({ serviceId: id });
      expect(got.service?.visibility).toBe(Visibility.PRIVATE);
      expect(got.publishing).toMatchObject({ organizationId: orgA, baseUrl: "https://api.example.com/v1" });
      const { tools } = await catalog.as(owner).listServiceTools({ serviceId: id });
      expect(tools.map((t) => t.name).sort()).toEqual(["createAlert", "getForecast"]);
      const { rows } = await db.pool.query("SELECT organization_id FROM services WHERE id = $1", [id]);
      expect(rows).toEqual([{ organization_id: orgA }]);
      // Tool changes are announced through the outbox, in the same transaction as the rows.
      expect(await count("outbox WHERE subject LIKE '%tool%'")).toBeGreaterThan(events);
    });

    it("refuses no caller, a viewer, a restricted key, a bad visibility and a broken document, storing nothing", async () => {
      const before = await count("services");
      expect(await refusal(publish(null))).toMatchObject({ code: Code.Unauthenticated });
      expect(await refusal(publish(viewer))).toMatchObject({ code: Code.PermissionDenied, reason: "insufficient_role" });
      expect(await refusal(publish(restrictedKey(owner)))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "key_restricted",
      });
      const visibility = await refusal(publish(owner, "everyone"));
      expect(visibility).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_visibility" });
      expect(visibility.message).toContain("visibility");
      const broken = await refusal(
        catalog.as(owner).createService({
          source: { case: "api", value: { document: { case: "documentText", value: '{"openapi":"3.0.3","paths":{}}' } } },
        }),
      );
      expect(broken).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_openapi_document" });
      expect(await count("services")).toBe(before);
    });
  });

  describe("visibility", () => {
    it("a private service is another organization's 'not found', and not public", async () => {
      const published = await publish(owner);
      const id = published.service!.id;
      const toolId = published.tools[0]!.id;
      expect(await refusal(catalog.as(stranger).getService({ serviceId: id }))).toMatchObject({ code: Code.NotFound });
      expect(await refusal(catalog.as(stranger).getTool({ toolId }))).toMatchObject({ code: Code.NotFound });
      expect((await catalog.as(member).getTool({ toolId })).tool?.id).toBe(toolId);
      expect(await refusal(catalog.anonymous.getPublicService({ serviceId: id }))).toMatchObject({ code: Code.NotFound });
      const { services } = await catalog.anonymous.listPublicServices({ limit: 100 });
      expect(services.map((s) => s.id)).not.toContain(id);
      // Refused reads and a refused edit changed nothing.
      expect(await refusal(catalog.as(stranger).updateService({ serviceId: id, visibility: "public" }))).toMatchObject({
        code: Code.NotFound,
      });
      expect((await catalog.as(owner).getService({ serviceId: id })).service?.visibility).toBe(Visibility.PRIVATE);
    });

    it("made public by its owner, everyone sees it, anonymous callers too; its publishing facts stay its managers'", async () => {
      const published = await publish(owner);
      const id = published.service!.id;
      // A member of the organization is not one of its managers: refused, and the service stays private.
      expect(await refusal(catalog.as(member).updateService({ serviceId: id, visibility: "public" }))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "not_service_owner",
      });
      expect(await refusal(catalog.anonymous.getPublicService({ serviceId: id }))).toMatchObject({ code: Code.NotFound });
      await catalog.as(owner).updateService({ serviceId: id, visibility: "public" });
      expect((await catalog.anonymous.getPublicService({ serviceId: id })).service?.id).toBe(id);
      expect((await catalog.anonymous.getTool({ toolId: published.tools[0]!.id })).tool?.id).toBe(published.tools[0]!.id);
      expect(await refusal(catalog.as(stranger).getService({ serviceId: id }))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "not_service_owner",
      });
      const { services } = await catalog.anonymous.listPublicServices({ limit: 100 });
      expect(services.map((s) => s.id)).toContain(id);
    });

    it("an internal service is every signed-in caller's, never an anonymous one's", async () => {
      const published = await publish(owner, "internal");
      const toolId = published.tools[0]!.id;
      expect((await catalog.as(stranger).getTool({ toolId })).tool?.id).toBe(toolId);
      expect(await refusal(catalog.anonymous.getTool({ toolId }))).toMatchObject({ code: Code.NotFound });
      expect(await refusal(catalog.anonymous.getPublicService({ serviceId: published.service!.id }))).toMatchObject({
        code: Code.NotFound,
      });
    });
  });

  describe("credentials", () => {
    const apiKey = (value: string) => ({ kind: { case: "apiKey" as const, value: { value } } });

    it("seals a member's credential: listed with a hint, stored without the secret", async () => {
      const id = (await publish(owner)).service!.id;
      const secret = `sk-live-${randomUUID()}`;
      const put = await catalog.as(member).putServiceCredential({ serviceId: id, credential: apiKey(secret) });
      expect(put.credential?.hint).toBe(secret.slice(-4));
      const { credentials } = await catalog.as(member).listServiceCredentials({ serviceId: id });
      expect(credentials.map((c) => c.hint)).toEqual([secret.slice(-4)]);
      // The owner has connected none of its own.
      expect((await catalog.as(owner).listServiceCredentials({ serviceId: id })).credentials).toEqual([]);
      const { rows } = await db.pool.query<{ sealed: Buffer; owner_id: string }>(
        "SELECT sealed, owner_id FROM credentials WHERE service_id = $1",
        [id],
      );
      expect(rows.map((r) => r.owner_id)).toEqual([member.accountId]);
      expect(rows[0]!.sealed.includes(Buffer.from(secret))).toBe(false);
    });

    it("refuses another organization, a viewer and a credential without a value, storing nothing", async () => {
      const id = (await publish(owner)).service!.id;
      expect(
        await refusal(catalog.as(stranger).putServiceCredential({ serviceId: id, credential: apiKey("sk-1234567890") })),
      ).toMatchObject({
        code: Code.NotFound,
      });
      expect(
        await refusal(catalog.as(viewer).putServiceCredential({ serviceId: id, credential: apiKey("sk-1234567890") })),
      ).toMatchObject({
        code: Code.PermissionDenied,
      });
      const empty = await refusal(catalog.as(member).putServiceCredential({ serviceId: id }));
      expect(empty).toMatchObject({ code: Code.InvalidArgument });
      expect(empty.message).toContain("credential");
      expect(await count("credentials WHERE service_id = $1", [id])).toBe(0);
    });
  });
});
