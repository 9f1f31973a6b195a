/**
 * Two catalog replicas on one database: a change made through one reaches the other's search index
 * through toolport.catalog.tool.changed. The internal RPCs other services call (ResolveToolForCall,
 * ResolveCredential, CheckCatalogIds, ListStarterTools), called over gRPC as they would, and stored
 * credentials encrypted at rest.
 */

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromJsonBytes } from "@toolport/kit/json-bytes";
import { createPool } from "@toolport/kit/pg";
import { createServiceClient, principalHeader } from "@toolport/kit/rpc";
import { CredentialScope } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { Readiness, ServiceType } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Agent, type CatalogStack, call, registerAgent, startCatalogStack } from "../harness/catalog-stack.js";

let s: CatalogStack;
let agent: Agent;
let replicaPort: number;
const petstore = await import("node:fs").then((fs) =>
  fs.readFileSync(new URL("../../services/catalog/test/fixtures/petstore-3.0.json", import.meta.url), "utf8"),
);

beforeAll(async () => {
  s = await startCatalogStack(["catalog", "identity", "billing", "gateway"]);
  replicaPort = await s.stack.startExtra("catalog");
  agent = await registerAgent(s);
});
afterAll(() => s?.stop());

const client = (port: number) => createServiceClient(CatalogService, `http://127.0.0.1:${port}`);

describe("search index on every replica", () => {
  it("follows a service published through the other replica, and its deletion", async () => {
    const doc = {
      openapi: "3.0.3",
      info: { title: "Zebra Tracker", version: "1" },
      servers: [{ url: "https://zebra.example.com" }],
      paths: {
        "/zebras": {
          get: {
            operationId: "trackZebraHerds",
            summary: "Track zebra herds on the savannah",
            responses: { "200": { description: "ok" } },
          },
        },
      },
    };
    const created = await call(s, "POST", "/services", { agent, body: { api: { document: doc }, visibility: "public" } });
    expect(created.status).toBe(201);
    const toolId = created.body.tools[0].id;
    const replica = client(replicaPort);
    await expect
      .poll(async () => (await replica.publicSearchTools({ query: "zebra herds" })).tools.map((t) => t.id), { timeout: 10_000 })
      .toContain(toolId);

    await call(s, "DELETE", `/services/${created.body.service.id}`, { agent });
    await expect
      .poll(async () => (await replica.publicSearchTools({ query: "zebra herds" })).tools.map((t) => t.id), { timeout: 10_000 })
      .not.toContain(toolId);
  });
});

describe("internal RPCs", () => {
  it("ResolveToolForCall gives execution everything it needs, and refuses sunset tools with NOT_FOUND", async () => {
    const catalog = client(s.stack.ports.catalog);
    const created = await call(s, "POST", "/services", {
      agent,
      body: { api: { document_text: petstore, base_url: "https://petstore3.swagger.io/api/v3" }, visibility: "public" },
    });
    const getPet = created.body.tools.find((t: { name: string }) => t.name === "getPetById");
    const { tool } = await catalog.resolveToolForCall({ toolId: getPet.slug, accountId: agent.id, organizationId: "" });
    expect(tool).toMatchObject({
      id: getPet.id,
      method: "GET",
      path: "/pet/{petId}",
      baseUrl: "https://petstore3.swagger.io/api/v3",
      serviceType: ServiceType.API,
      readiness: Readiness.NEEDS_CREDENTIAL,
    });
    expect(tool?.securitySchemes.map((x) => x.name).sort()).toEqual(["api_key", "petstore_auth"]);
    expect(fromJsonBytes(tool?.inputSchemaJson)).toMatchObject({ type: "object", required: ["petId"] });

    const demo = (await call(s, "GET", "/tools/name/word_count", { agent })).body;
    const builtin = (await catalog.resolveToolForCall({ toolId: demo.id, accountId: agent.id, organizationId: "" })).tool;
    expect(builtin).toMatchObject({
      serviceType: ServiceType.INTERNAL,
      internalHandler: expect.stringMatching(/\w/),
      readiness: Readiness.READY,
    });

    await call(s, "PATCH", `/tools/${getPet.id}`, {
      agent,
      body: { deprecated: true, sunset_date: new Date(Date.now() - 1000).toISOString() },
    });
    const err = await catalog.resolveToolForCall({ toolId: getPet.id, accountId: agent.id, organizationId: "" }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).rawMessage).toContain("not found");
  });

  it("ResolveCredential returns the decrypted credential, caller's before organization's; secrets are sealed at rest", async () => {
    const catalog = client(s.stack.ports.catalog);
    const created = await call(s, "POST", "/services", { agent, body: { api: { document_text: petstore }, name: "Creds Pets" } });
    const serviceId = created.body.service.id;
    const me = (await call(s, "GET", `/services/${serviceId}`, { agent })).body.publishing;
    const orgId = me.organization_id as string;

    expect((await catalog.resolveCredential({ serviceId, accountId: agent.id, organizationId: orgId })).found).toBe(false);
    const org = await call(s, "PUT", `/services/${serviceId}/credentials`, {
      agent,
      body: { scope: "organization", credential: { basic: { username: "ops", password: "org-password-secret-1" } } },
    });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    let resolved = await catalog.resolveCredential({ serviceId, accountId: agent.id, organizationId: orgId });
    expect(resolved).toMatchObject({ found: true, scope: CredentialScope.ORGANIZATION });
    expect(resolved.credential?.kind).toMatchObject({
      case: "basic",
      value: { username: "ops", password: "org-password-secret-1" },
    });

    await call(s, "PUT", `/services/${serviceId}/credentials`, {
      agent,
      body: {
        credential: { api_key: { value: "caller-key-secret-123456", location: "query", parameter_name: "key" } },
        scheme_name: "api_key",
      },
    });
    resolved = await catalog.resolveCredential({ serviceId, accountId: agent.id, organizationId: orgId });
    expect(resolved).toMatchObject({ found: true, scope: CredentialScope.CALLER, schemeName: "api_key" });
    expect(resolved.credential?.kind).toMatchObject({
      case: "apiKey",
      value: { value: "caller-key-secret-123456", location: "query", parameterName: "key" },
    });

    const db = createPool(s.stack.env.CATALOG_DATABASE_URL as string, 1);
    try {
      const { rows } = await db.query("SELECT sealed FROM credentials WHERE service_id = $1", [serviceId]);
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        const text = Buffer.from(r.sealed).toString("latin1");
        expect(text).not.toContain("secret");
      }
    } finally {
      await db.end();
    }

    const del = await call(s, "DELETE", `/services/${serviceId}/credentials`, { agent });
    expect(del.body).toEqual({ deleted: true });
    expect((await catalog.resolveCredential({ serviceId, accountId: agent.id, organizationId: orgId })).scope).toBe(
      CredentialScope.ORGANIZATION,
    );
  });

  it("CheckCatalogIds names the ids that exist nowhere; ListStarterTools gives credential-free tools, built-ins before demo ones", async () => {
    const catalog = client(s.stack.ports.catalog);
    const tool = (await call(s, "GET", "/tools/name/word_count", { agent })).body;
    const unknown = "00000000-0000-4000-8000-000000000000";
    const res = await catalog.checkCatalogIds({
      serviceIds: [tool.service_id, unknown, "not-a-uuid"],
      toolIds: [tool.id, unknown],
    });
    expect(res.unknownServiceIds).toEqual([unknown, "not-a-uuid"]);
    expect(res.unknownToolIds).toEqual([unknown]);

    const { tools } = await catalog.listStarterTools({});
    expect(tools).toHaveLength(3);
    expect(new Set(tools.map((t) => t.service)).size).toBe(3);
    for (const t of tools) {
      expect(fromJsonBytes(t.parametersJson)).toMatchObject({ type: "object" });
      expect(fromJsonBytes(t.exampleInputJson)).toEqual(expect.any(Object));
    }
    const services = (await call(s, "GET", "/services/public")).body as { name: string; is_demo: boolean }[];
    const demoName = services.find((x) => x.is_demo)?.name;
    expect(tools[tools.length - 1]?.service).toBe(demoName);
  });

  it("FindServicesOnDomain finds public services whose API is served on a domain or its subdomains", async () => {
    const publish = async (baseUrl: string, visibility: string) => {
      const res = await call(s, "POST", "/services", {
        agent,
        body: { api: { document_text: petstore, base_url: baseUrl }, visibility },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.service as { id: string; name: string };
    };
    const onApex = await publish("https://weather-find.example/v1", "public");
    const onSub = await publish("https://api.weather-find.example/v2", "public");
    await publish("https://hidden.weather-find.example/", "private");
    await publish("https://notweather-find.example/", "public");
    const catalog = client(s.stack.ports.catalog);
    const found = (await catalog.findServicesOnDomain({ domain: "Weather-Find.example" })).services.map((x) => x.id);
    expect(found.sort()).toEqual([onApex.id, onSub.id].sort());
    expect((await catalog.findServicesOnDomain({ domain: "find.example" })).services).toEqual([]);
    expect((await catalog.findServicesOnDomain({ domain: "%" })).services).toEqual([]);
  });

  it("authenticated RPCs see the principal in metadata; ReindexSearch is for platform admins", async () => {
    const catalog = client(s.stack.ports.catalog);
    const principal = create(PrincipalSchema, { accountId: agent.id, organizationId: "org-x", isPlatformAdmin: false });
    const err = await catalog.reindexSearch({}, { headers: principalHeader(principal) }).catch((e) => e);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    const admin = create(PrincipalSchema, { accountId: "admin", organizationId: "org-x", isPlatformAdmin: true });
    const done = await catalog.reindexSearch({}, { headers: principalHeader(admin) });
    expect(done.engine).toBe("embedded");
    expect(Number(done.indexedTools)).toBeGreaterThanOrEqual(15);
  });
});
