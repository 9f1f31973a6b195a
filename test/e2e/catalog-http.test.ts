/**
 * The catalog through the gateway, on real processes (catalog, identity, billing, gateway), Postgres and
 * NATS: the spec's catalog endpoints and shapes, auth per the endpoint table, bad input, publishing,
 * credentials and readiness, private visibility, search ordering, deprecation, reliability from real
 * execution events, and recommendations.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  type Body,
  type CatalogStack,
  call,
  expectError,
  PUBLIC_TOOL_KEYS,
  publishExecutions,
  RELIABILITY_KEYS,
  registerAgent,
  SERVICE_KEYS,
  startCatalogStack,
  TOOL_KEYS,
} from "../harness/catalog-stack.js";

const petstore = readFileSync(new URL("../../services/catalog/test/fixtures/petstore-3.0.json", import.meta.url), "utf8");
const trainTravel = readFileSync(new URL("../../services/catalog/test/fixtures/train-travel-3.1.yaml", import.meta.url), "utf8");

let s: CatalogStack;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  s = await startCatalogStack(["catalog", "identity", "billing", "gateway"], { PUBLIC_SEARCHES_PER_MINUTE: "100000" });
  alice = await registerAgent(s, "alice");
  bob = await registerAgent(s, "bob");
});
afterAll(() => s?.stop());

const publicSearch = (query: string, extra = "", agent?: Agent) =>
  call(s, "GET", `/tools/public/search?query=${encodeURIComponent(query)}${extra}`, { agent });

describe("the demo catalog on first start", () => {
  it("holds at least three public services and fifteen credential-free tools, in the spec's Service shape", async () => {
    const res = await call(s, "GET", "/services/public");
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.length).toBeGreaterThanOrEqual(3);
    for (const service of res.body) expect(Object.keys(service).sort()).toEqual(SERVICE_KEYS);
    expect(res.body.some((x: { is_demo: boolean }) => x.is_demo)).toBe(true);
    expect(res.body.every((x: { service_type: string }) => x.service_type === "internal")).toBe(true);
    const total = res.body.reduce((n: number, x: { tool_count: number }) => n + x.tool_count, 0);
    expect(total).toBeGreaterThanOrEqual(15);

    const anyService = res.body[0];
    const one = await call(s, "GET", `/services/public/${anyService.slug}`);
    expect(one.body.id).toBe(anyService.id);
    const tools = await call(s, "GET", `/services/public/${anyService.id}/tools`);
    expect(tools.status).toBe(200);
    expect(tools.body).toHaveLength(anyService.tool_count);
    for (const t of tools.body) {
      expect(Object.keys(t).sort()).toEqual(TOOL_KEYS);
      expect(t.readiness).toBe("ready");
      expect(t.configuration_url).toBeNull();
    }
  });

  it("answers unknown services with 404 in the error shape", async () => {
    expectError(await call(s, "GET", "/services/public/00000000-0000-4000-8000-000000000000"), 404, "service_not_found");
    expectError(await call(s, "GET", "/services/public/no-such-service/tools"), 404, "service_not_found");
  });
});

describe("auth per the endpoint table", () => {
  it("refuses key-only routes without a key or with a bad key (401)", async () => {
    for (const p of ["/tools", "/tools/search?query=x", "/tools/word_count", "/tools/name/word_count"]) {
      expectError(await call(s, "GET", p), 401, "unauthenticated");
      expectError(await call(s, "GET", p, { headers: { "svc-api-key": "tp_not_a_real_key" } }), 401);
    }
  });

  it("serves public search, public services and recommendations without credentials", async () => {
    expect((await publicSearch("word count")).status).toBe(200);
    expect((await call(s, "GET", "/services/public")).status).toBe(200);
    expect((await call(s, "GET", "/tools/recommended")).status).toBe(200);
  });
});

describe("tools: list, get by id, slug and name, describe", () => {
  it("lists every tool in the full shape, gets one by id, by slug and by name, and describes it", async () => {
    const list = await call(s, "GET", "/tools", { agent: alice });
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThanOrEqual(15);
    const tool = list.body.find((t: { name: string }) => t.name === "word_count");
    expect(Object.keys(tool).sort()).toEqual(TOOL_KEYS);
    expect(tool).toMatchObject({
      status: "active",
      // Always strings (spec "Tool (full shape)"): no HTTP method, and the `<service_id>/` path form.
      method: "",
      path: `${tool.service_id}/`,
      is_paid: false,
      price_per_call_cents: 0,
      readiness: "ready",
    });
    expect(tool.parameters.text).toMatchObject({ name: "text", location: "body", type: "string", required: true });

    expect((await call(s, "GET", `/tools/${tool.id}`, { agent: alice })).body.id).toBe(tool.id);
    expect((await call(s, "GET", `/tools/${tool.slug}`, { agent: alice })).body.id).toBe(tool.id);
    expect((await call(s, "GET", "/tools/name/word_count", { agent: alice })).body.id).toBe(tool.id);

    const d = await call(s, "GET", `/tools/${tool.slug}/describe`, { agent: alice });
    expect(d.status).toBe(200);
    expect(d.body.tool.id).toBe(tool.id);
    expect(d.body.input_schema).toMatchObject({ type: "object", required: ["text"] });
    expect(d.body.example_call.tool_input.text).toEqual(expect.any(String));
    expect(d.body).toMatchObject({
      readiness: "ready",
      missing: [],
      requires_confirmation: false,
      configuration_url: null,
      security_schemes: [],
    });
    expect(d.body.execute.url).toContain(`/v1/tools/call/${tool.id}`);
    expect(d.body.service).toMatchObject({ id: tool.service_id, name: expect.any(String) });
  });

  it("answers unknown ids, slugs and names with 404", async () => {
    expectError(await call(s, "GET", "/tools/00000000-0000-4000-8000-000000000000", { agent: alice }), 404, "tool_not_found");
    expectError(await call(s, "GET", "/tools/no-such-slug", { agent: alice }), 404, "tool_not_found");
    expectError(await call(s, "GET", "/tools/name/no_such_tool", { agent: alice }), 404, "tool_not_found");
    expectError(await call(s, "GET", "/tools/no-such-slug/describe", { agent: alice }), 404, "tool_not_found");
  });
});

describe("public search", () => {
  it("returns [] for an empty or whitespace query", async () => {
    expect((await publicSearch("")).body).toEqual([]);
    expect((await publicSearch("   ")).body).toEqual([]);
    expect((await call(s, "GET", "/tools/public/search")).body).toEqual([]);
  });

  it("returns trimmed tools, the exact name match first", async () => {
    const res = await publicSearch("word_count");
    expect(res.status).toBe(200);
    expect(res.body[0].name).toBe("word_count");
    for (const t of res.body) expect(Object.keys(t).sort()).toEqual(PUBLIC_TOOL_KEYS);
  });

  it("refuses a non-numeric or negative limit and a min_success_rate outside 0..1 (400)", async () => {
    expectError(await publicSearch("text", "&limit=abc"), 400, "invalid_limit");
    expectError(await publicSearch("text", "&limit=-1"), 400, "invalid_limit");
    expectError(await publicSearch("text", "&min_success_rate=1.5"), 400, "invalid_min_success_rate");
    expectError(await publicSearch("text", "&min_success_rate=-0.1"), 400, "invalid_min_success_rate");
    expectError(await publicSearch("text", "&min_success_rate=high"), 400, "invalid_min_success_rate");
    expectError(await publicSearch("text", "&ready_only=maybe"), 400);
  });

  it("defaults to 20 matches, honours a smaller limit and never returns more than 30", async () => {
    // Enough public tools that a broad query matches more than 30.
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      paths[`/things/${i}`] = {
        get: { operationId: `listThings${i}`, summary: `List gadgets batch ${i}`, responses: { "200": { description: "ok" } } },
      };
    }
    const doc = {
      openapi: "3.0.3",
      info: { title: "Gadget Registry", version: "1" },
      servers: [{ url: "https://things.example.com" }],
      paths,
    };
    const created = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc }, visibility: "public" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await publicSearch("gadgets")).body).toHaveLength(20);
    expect((await publicSearch("gadgets", "&limit=5")).body).toHaveLength(5);
    expect((await publicSearch("gadgets", "&limit=100")).body).toHaveLength(30);
    expect((await publicSearch("gadgets", "&limit=0")).body).toEqual([]);
    const only = await publicSearch("gadgets", `&service_id=${created.body.service.id}&limit=30`);
    expect(only.body.every((t: { service_id: string }) => t.service_id === created.body.service.id)).toBe(true);
  });

  it("authenticated search and GET /tools answer 20 by default, honour limit, and search stops at 50", async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) {
      paths[`/widgets/${i}`] = {
        get: { operationId: `getWidget${i}`, summary: `Read sprocket widget ${i}`, responses: { "200": { description: "ok" } } },
      };
    }
    const doc = {
      openapi: "3.0.3",
      info: { title: "Sprocket Widgets", version: "1" },
      servers: [{ url: "https://w.example.com" }],
      paths,
    };
    const created = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const service = created.body.service.id as string;
    const search = (q: string) => call(s, "GET", `/tools/search?${q}`, { agent: alice });
    expect((await search("query=sprocket%20widget")).body).toHaveLength(20);
    expect((await search("query=sprocket%20widget&limit=7")).body).toHaveLength(7);
    expect((await search("query=sprocket%20widget&limit=500")).body).toHaveLength(50);
    expect((await search("query=sprocket%20widget&limit=0")).body).toEqual([]);
    expectError(await search("query=sprocket%20widget&limit=-1"), 400, "invalid_limit");
    // Without a query: the first tools of the list order, as many as asked.
    expect((await search(`service_id=${service}`)).body).toHaveLength(20);
    expect((await search(`service_id=${service}&limit=3`)).body).toHaveLength(3);

    const page = await call(s, "GET", `/tools?service_id=${service}`, { agent: alice });
    expect(page.body).toHaveLength(20);
    expect(page.headers.get("link")).toMatch(/[?&]cursor=[^>]+>; rel="next"/);
    expect((await call(s, "GET", `/tools?service_id=${service}&limit=60`, { agent: alice })).body).toHaveLength(60);
  });
});

describe("publishing from OpenAPI, credentials and readiness", () => {
  let petService: { id: string; slug: string };
  let findByStatus: { id: string; slug: string };

  beforeAll(async () => {
    const res = await call(s, "POST", "/services", {
      agent: alice,
      body: { api: { document_text: petstore, base_url: "https://petstore3.swagger.io/api/v3" }, visibility: "public" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    petService = res.body.service;
    findByStatus = res.body.tools.find((t: { name: string }) => t.name === "findPetsByStatus");
  });

  it("creates the service and one tool per operation, with readable unique slugs", async () => {
    const res = await call(s, "GET", `/services/${petService.id}`, { agent: alice });
    expect(res.status).toBe(200);
    expect(res.body.service).toMatchObject({
      slug: "swagger-petstore-openapi-3-0",
      service_type: "api",
      visibility: "public",
      tool_count: 19,
      verification_tier: "unverified",
    });
    expect(res.body.publishing).toMatchObject({ base_url: "https://petstore3.swagger.io/api/v3" });
    expect(res.body.publishing.security_schemes.map((x: { name: string }) => x.name)).toEqual(["petstore_auth", "api_key"]);
    expect(findByStatus.slug).toBe("swagger-petstore-openapi-3-0-find-pets-by-status");

    // The same document again: a second service with its own slugs.
    const again = await call(s, "POST", "/services", { agent: alice, body: { api: { document_text: petstore } } });
    expect(again.body.service.slug).toBe("swagger-petstore-openapi-3-0-2");
    expect(again.body.tools.find((t: { name: string }) => t.name === "findPetsByStatus").slug).toBe(
      "swagger-petstore-openapi-3-0-2-find-pets-by-status",
    );
    expect(again.body.warnings.join(" ")).toContain("relative");
  });

  it("gives a name too long for a suffix its own shortened slugs, publish after publish", async () => {
    // An 80-character slug (the most) has no room for "-2": the suffixed forms shorten it, and the lookup
    // of the taken ones must find those too (the APIs.guru directory's long Azure titles answered 500).
    const title = `${"ab".repeat(32)}c listssloptions`;
    const op = (id: string) => ({ get: { operationId: id, responses: { "200": { description: "ok" } } } });
    const document = { openapi: "3.0.3", info: { title, version: "1" }, paths: { "/a": op("readAll"), "/b": op("readOne") } };
    const services: string[] = [];
    const tools: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(s, "POST", "/services", { agent: alice, body: { api: { document } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      services.push(res.body.service.slug);
      tools.push(...res.body.tools.map((t: { slug: string }) => t.slug));
    }
    expect(new Set(services).size).toBe(3);
    expect(new Set(tools).size).toBe(6);
    for (const slug of [...services, ...tools]) expect(slug.length).toBeLessThanOrEqual(80);
  });

  it("imports the 3.1 Train Travel document from YAML, inline", async () => {
    const res = await call(s, "POST", "/services", { agent: alice, body: { api: trainTravel, name: "Train Travel" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.tools).toHaveLength(7);
    const trips = res.body.tools.find((t: { name: string }) => t.name === "get-trips");
    expect(trips).toMatchObject({ method: "GET", path: "/trips", readiness: "needs_credential" });
    expect(trips.parameters.origin).toMatchObject({ location: "query", required: true, json_schema: { format: "uuid" } });
  });

  it("refuses an invalid document with 400 naming where it is wrong", async () => {
    const bad = { openapi: "3.0.3", info: { title: "x", version: "1" }, paths: { "/a": { get: { responses: { "200": {} } } } } };
    const res = await call(s, "POST", "/services", { agent: alice, body: { api: { document: bad } } });
    expectError(res, 400, "invalid_openapi_document");
    expect(res.body.error.details.location).toBe("#/paths/~1a/get/responses/200");
    expectError(await call(s, "POST", "/services", { agent: alice, body: {} }), 400, "missing_source");
    expectError(
      await call(s, "POST", "/services", { agent: alice, body: { api: { document_text: "{" } } }),
      400,
      "invalid_openapi_document",
    );
    expectError(await call(s, "POST", "/services", { body: { api: { document: bad } } }), 401);
  });

  it("anonymous callers see needs_credential with a configuration URL; connecting a credential makes it ready for that caller only", async () => {
    const anon = await publicSearch("findPetsByStatus");
    const hit = anon.body.find((t: { id: string }) => t.id === findByStatus.id);
    expect(hit).toMatchObject({
      readiness: "needs_credential",
      configuration_url: `${s.stack.env.PUBLIC_URL}/console/services/${petService.id}/connect`,
    });

    expect((await call(s, "GET", `/tools/${findByStatus.id}`, { agent: bob })).body.readiness).toBe("needs_credential");
    const d = await call(s, "GET", `/tools/${findByStatus.id}/describe`, { agent: bob });
    expect(d.body.readiness).toBe("needs_credential");
    expect(d.body.missing[0]).toMatchObject({
      kind: "credential",
      configuration_url: `${s.stack.env.PUBLIC_URL}/console/services/${petService.id}/connect`,
      message: expect.stringContaining(`PUT /v1/services/${petService.id}/credentials`),
    });
    // What to connect, for any caller who sees the service (the publishing facts are its managers' only).
    expect(d.body.security_schemes).toEqual([
      expect.objectContaining({ name: "petstore_auth", type: "oauth2", scheme: null, parameter_name: null }),
    ]);
    const byKey = await call(s, "GET", `/tools/${petService.slug}-get-pet-by-id/describe`, { agent: bob });
    expect(byKey.body.security_schemes.map((x: { name: string }) => x.name).sort()).toEqual(["api_key", "petstore_auth"]);
    expect(byKey.body.security_schemes).toContainEqual(
      expect.objectContaining({ name: "api_key", type: "apiKey", location: "header", parameter_name: "api_key" }),
    );

    const put = await call(s, "PUT", `/services/${petService.id}/credentials`, {
      agent: bob,
      body: { credential: { bearer: { token: "pet-token-0123456789" } } },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.credential).toMatchObject({ scope: "caller", type: "bearer", is_reference: false, hint: "6789" });
    expect(JSON.stringify(put.body)).not.toContain("pet-token-0123456789");

    expect((await call(s, "GET", `/tools/${findByStatus.id}`, { agent: bob })).body).toMatchObject({
      readiness: "ready",
      configuration_url: null,
    });
    expect((await call(s, "GET", `/tools/${findByStatus.id}`, { agent: alice })).body.readiness).toBe("needs_credential");

    // Readiness changes ranking and ready_only for the signed-in caller.
    const bobs = await call(s, "GET", `/tools/search?query=pets&ready_only=true&service_id=${petService.id}`, { agent: bob });
    expect(bobs.body.length).toBeGreaterThan(0);
    expect(bobs.body.every((t: { readiness: string }) => t.readiness === "ready")).toBe(true);
    expect(bobs.body.map((t: { id: string }) => t.id)).toContain(findByStatus.id);
    const alices = await call(s, "GET", `/tools/search?query=pets&ready_only=true&service_id=${petService.id}`, { agent: alice });
    expect(alices.body.map((t: { id: string }) => t.id)).not.toContain(findByStatus.id);
    expect(alices.body.every((t: { readiness: string }) => t.readiness === "ready")).toBe(true);
    const publicReadyOnly = await publicSearch("pets", `&ready_only=true&service_id=${petService.id}&limit=30`);
    expect(publicReadyOnly.body.map((t: { id: string }) => t.id)).not.toContain(findByStatus.id);
    // Ready tools rank first for a signed-in caller.
    const ranked = (await call(s, "GET", `/tools/search?query=pet&service_id=${petService.id}`, { agent: bob })).body as {
      readiness: string;
    }[];
    const firstNotReady = ranked.findIndex((t) => t.readiness !== "ready");
    expect(firstNotReady === -1 || ranked.slice(firstNotReady).every((t) => t.readiness !== "ready")).toBe(true);

    // References are accepted and stored as references; malformed ones are refused.
    const ref = await call(s, "PUT", `/services/${petService.id}/credentials`, {
      agent: alice,
      body: { api_key: "env://PETSTORE_KEY" },
    });
    expect(ref.body.credential).toMatchObject({ type: "api_key", is_reference: true, hint: null });
    expectError(
      await call(s, "PUT", `/services/${petService.id}/credentials`, { agent: alice, body: { api_key: "env://not valid" } }),
      400,
      "invalid_reference",
    );
    expectError(
      await call(s, "PUT", `/services/${petService.id}/credentials`, { agent: alice, body: {} }),
      400,
      "missing_credential",
    );
    expect((await call(s, "GET", `/services/${petService.id}/credentials`, { agent: alice })).body).toHaveLength(1);
  });

  it("lets only the owner edit, price, deactivate and delete", async () => {
    expectError(
      await call(s, "PATCH", `/tools/${findByStatus.id}`, { agent: bob, body: { price_per_call_cents: 5 } }),
      403,
      "not_service_owner",
    );
    const priced = await call(s, "PATCH", `/tools/${findByStatus.id}`, {
      agent: alice,
      body: { price_per_call_cents: 5, side_effecting: true, tags: ["pets", "search"] },
    });
    expect(priced.body).toMatchObject({ is_paid: true, price_per_call_cents: 5, tags: ["pets", "search"] });
    expectError(await call(s, "PATCH", `/tools/${findByStatus.id}`, { agent: alice, body: { price_per_call_cents: -1 } }), 400);
    expectError(
      await call(s, "PATCH", `/tools/${findByStatus.id}`, { agent: alice, body: { status: "paused" } }),
      400,
      "invalid_status",
    );

    const getInventory = (await call(s, "GET", `/services/${petService.id}/tools`, { agent: alice })).body.find(
      (t: { name: string }) => t.name === "getInventory",
    );
    expect(
      (await call(s, "PATCH", `/tools/${getInventory.id}`, { agent: alice, body: { status: "inactive" } })).body.status,
    ).toBe("inactive");
    const listed = (await call(s, "GET", "/tools", { agent: alice })).body.map((t: { id: string }) => t.id);
    expect(listed).not.toContain(getInventory.id);
    expect((await call(s, "GET", `/tools/${getInventory.id}`, { agent: alice })).body.readiness).toBe("unavailable");

    expectError(await call(s, "DELETE", `/tools/${getInventory.id}`, { agent: bob }), 403);
    expect((await call(s, "DELETE", `/tools/${getInventory.id}`, { agent: alice })).body).toEqual({ deleted: true });
    expectError(await call(s, "GET", `/tools/${getInventory.id}`, { agent: alice }), 404);
  });
});

describe("service edits", () => {
  it("renames, retires (tools unavailable and out of search) and refuses verification_tier to non-admins", async () => {
    const doc = {
      openapi: "3.0.3",
      info: { title: "Retiring Translator", version: "1" },
      servers: [{ url: "https://tr.example.com" }],
      paths: {
        "/translate": {
          post: {
            operationId: "translateParagraph",
            summary: "Translate a paragraph of text",
            responses: { "200": { description: "ok" } },
          },
        },
      },
    };
    const created = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc }, visibility: "public" } });
    const id = created.body.service.id;
    const tool = created.body.tools[0];
    expect((await call(s, "GET", "/services", { agent: alice })).body.map((x: { id: string }) => x.id)).toContain(id);
    expect((await call(s, "GET", "/services", { agent: bob })).body.map((x: { id: string }) => x.id)).not.toContain(id);
    expectError(await call(s, "PATCH", `/services/${id}`, { agent: bob, body: { name: "x" } }), 403, "not_service_owner");
    expectError(
      await call(s, "PATCH", `/services/${id}`, { agent: alice, body: { verification_tier: "official" } }),
      403,
      "platform_admin_only",
    );
    expectError(
      await call(s, "PATCH", `/services/${id}`, { agent: alice, body: { visibility: "everyone" } }),
      400,
      "invalid_visibility",
    );

    const renamed = await call(s, "PATCH", `/services/${id}`, {
      agent: alice,
      body: { name: "Paragraph Translator", summary: "Translates" },
    });
    expect(renamed.body.service).toMatchObject({
      name: "Paragraph Translator",
      summary: "Translates",
      slug: created.body.service.slug,
    });
    expect((await publicSearch("translate paragraph")).body.map((t: { id: string }) => t.id)).toContain(tool.id);

    const retired = await call(s, "PATCH", `/services/${id}`, { agent: alice, body: { status: "retired" } });
    expect(retired.body.service.status).toBe("retired");
    expect((await call(s, "GET", `/tools/${tool.id}`, { agent: alice })).body.readiness).toBe("unavailable");
    expect((await publicSearch("translate paragraph")).body.map((t: { id: string }) => t.id)).not.toContain(tool.id);
    expect((await call(s, "GET", `/services/public/${id}`)).body.status).toBe("retired");

    expect((await call(s, "DELETE", `/services/${id}`, { agent: alice })).body).toEqual({ deleted: true });
    expectError(await call(s, "GET", `/tools/${tool.id}`, { agent: alice }), 404);
  });
});

describe("private services", () => {
  it("are visible only to their organization", async () => {
    const res = await call(s, "POST", "/services", {
      agent: alice,
      body: { api: { document_text: petstore }, name: "Alice Private Pets", slug: "alice-private-pets" },
    });
    expect(res.body.service.visibility).toBe("private");
    const tool = res.body.tools[0];
    expect((await call(s, "GET", `/tools/${tool.id}`, { agent: alice })).status).toBe(200);
    expectError(await call(s, "GET", `/tools/${tool.id}`, { agent: bob }), 404);
    expect((await call(s, "GET", "/tools", { agent: bob })).body.map((t: { id: string }) => t.id)).not.toContain(tool.id);
    expect(
      (await call(s, "GET", "/tools/search?query=alice%20private%20pets&limit=50", { agent: bob })).body.map(
        (t: { id: string }) => t.id,
      ),
    ).not.toContain(tool.id);
    expect(
      (await call(s, "GET", "/tools/search?query=alice%20private%20pets&limit=50", { agent: alice })).body.map(
        (t: { id: string }) => t.id,
      ),
    ).toContain(tool.id);
    expect((await publicSearch("alice private pets")).body.map((t: { id: string }) => t.id)).not.toContain(tool.id);
    expectError(await call(s, "GET", "/services/public/alice-private-pets"), 404);
    expectError(await call(s, "GET", `/services/${res.body.service.id}`, { agent: bob }), 404);
    expectError(
      await call(s, "POST", "/services", {
        agent: alice,
        body: { api: { document_text: petstore }, slug: "alice-private-pets" },
      }),
      409,
      "slug_taken",
    );
  });
});

describe("ordering: demo services behind real ones", () => {
  it("puts a real service's tools before the sample-data service's, unless the query names it", async () => {
    const demo = (await call(s, "GET", "/services/public")).body.find((x: { is_demo: boolean }) => x.is_demo);
    const demoTools = (await call(s, "GET", `/services/public/${demo.id}/tools`)).body;
    const target = demoTools[0];
    // A real public service with a tool described in the same words as a demo tool.
    const doc = {
      openapi: "3.0.3",
      info: { title: "Real Commerce", version: "1" },
      servers: [{ url: "https://commerce.example.com" }],
      paths: {
        "/x": {
          get: { operationId: "realCounterpart", summary: target.description, responses: { "200": { description: "ok" } } },
        },
      },
    };
    const real = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc }, visibility: "public" } });
    expect(real.status).toBe(201);
    const query = target.description.split(/\s+/).slice(0, 6).join(" ");
    const res = (await publicSearch(query, "&limit=30")).body as { service_id: string }[];
    const firstDemo = res.findIndex((t) => t.service_id === demo.id);
    const lastReal = res.map((t) => t.service_id !== demo.id).lastIndexOf(true);
    expect(firstDemo).toBeGreaterThanOrEqual(0);
    expect(lastReal).toBeLessThan(firstDemo);

    const named = (await publicSearch(`${demo.name} ${query}`, "&limit=30")).body as { service_id: string }[];
    expect(named[0]?.service_id).toBe(demo.id);
  });
});

describe("deprecation", () => {
  it("keeps a deprecated tool listed with its message until the sunset date, then removes it everywhere", async () => {
    const doc = {
      openapi: "3.0.3",
      info: { title: "Sunset Weather", version: "1" },
      servers: [{ url: "https://weather.example.com" }],
      paths: {
        "/forecast": {
          get: { operationId: "legacyForecast", summary: "Legacy weather forecast", responses: { "200": { description: "ok" } } },
        },
      },
    };
    const created = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc }, visibility: "public" } });
    const tool = created.body.tools[0];
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const dep = await call(s, "PATCH", `/tools/${tool.id}`, {
      agent: alice,
      body: { deprecated: true, deprecation_message: "use forecast v2", sunset_date: future },
    });
    expect(dep.body).toMatchObject({ deprecated: true, deprecation_message: "use forecast v2", sunset_date: future });
    const listed = (await publicSearch("legacy weather forecast")).body.find((t: { id: string }) => t.id === tool.id);
    expect(listed).toMatchObject({ deprecated: true, deprecation_message: "use forecast v2", sunset_date: future });

    expectError(
      await call(s, "PATCH", `/tools/${tool.id}`, { agent: alice, body: { deprecated: false, sunset_date: future } }),
      400,
      "invalid_deprecation",
    );

    const past = new Date(Date.now() - 1000).toISOString();
    await call(s, "PATCH", `/tools/${tool.id}`, { agent: alice, body: { sunset_date: past } });
    expect((await publicSearch("legacy weather forecast")).body.map((t: { id: string }) => t.id)).not.toContain(tool.id);
    expect((await call(s, "GET", "/tools", { agent: alice })).body.map((t: { id: string }) => t.id)).not.toContain(tool.id);
    expectError(await call(s, "GET", `/tools/${tool.id}`, { agent: alice }), 404, "tool_not_found");
    // The publisher still sees it in its own list.
    expect((await call(s, "GET", `/services/${created.body.service.id}/tools`, { agent: alice })).body[0].id).toBe(tool.id);

    // Un-deprecating clears message and date.
    const back = await call(s, "PATCH", `/tools/${tool.id}`, { agent: alice, body: { deprecated: false } });
    expect(back.body).toMatchObject({ deprecated: false, deprecation_message: null, sunset_date: null });
  });
});

describe("pages after changes", () => {
  // The catalog keeps the Tool shape's rows between requests (store/page-cache.ts); each page checks them
  // against the row versions it reads, so every change shows on the next read, whoever made it.
  it("answers GET /tools, a service's public tools and search with the tool as it is now after an edit and a re-import", async () => {
    const doc = (summary: string, param: string) => ({
      openapi: "3.0.3",
      info: { title: "Cached Tides", version: "1" },
      servers: [{ url: "https://tides.example.com" }],
      paths: {
        "/tides": {
          get: {
            operationId: "tideTable",
            summary,
            parameters: [{ name: param, in: "query", schema: { type: "string", description: `the ${param}` } }],
            responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "object" } } } } },
          },
        },
      },
    });
    const created = await call(s, "POST", "/services", {
      agent: alice,
      body: { api: { document: doc("Tide table for a harbour", "harbour") }, visibility: "public" },
    });
    expect(created.status).toBe(201);
    const serviceId = created.body.service.id as string;
    const toolId = created.body.tools[0].id as string;
    const reads = async () => {
      const listed = (await call(s, "GET", `/tools?service_id=${serviceId}`, { agent: alice })).body;
      const publicPage = (await call(s, "GET", `/services/public/${serviceId}/tools`)).body;
      const searched = (await call(s, "GET", "/tools/search?q=tide%20table%20harbour%20port", { agent: alice })).body;
      return [listed, publicPage, searched].map((page: Body[]) => page.find((t: Body) => t.id === toolId));
    };
    for (const t of await reads()) expect(t).toMatchObject({ description: "Tide table for a harbour", deprecated: false });
    for (const t of await reads()) expect(Object.keys(t.parameters)).toEqual(["harbour"]); // now from the kept rows

    await call(s, "PATCH", `/tools/${toolId}`, { agent: alice, body: { deprecated: true, deprecation_message: "use v2" } });
    for (const t of await reads()) expect(t).toMatchObject({ deprecated: true, deprecation_message: "use v2" });

    const reimported = await call(s, "POST", `/services/${serviceId}/reimport`, {
      agent: alice,
      body: { api: { document: doc("Tide table for a port", "port") } },
    });
    expect(reimported.status).toBe(200);
    for (const t of await reads()) {
      expect(t.description).toBe("Tide table for a port");
      expect(Object.keys(t.parameters)).toEqual(["port"]);
      expect(t.parameters.port.description).toBe("the port");
    }
  });
});

describe("reliability and recommendations from execution events", () => {
  it("builds the reliability block, flags low success, filters min_success_rate, and recommends", async () => {
    const doc = {
      openapi: "3.0.3",
      info: { title: "Flaky Geocoder", version: "1" },
      servers: [{ url: "https://geo.example.com" }],
      paths: {
        "/geocode": {
          get: {
            operationId: "geocodeAddress",
            summary: "Geocode a street address to coordinates",
            responses: { "200": { description: "ok" } },
          },
        },
        "/reverse": {
          get: {
            operationId: "reverseGeocode",
            summary: "Reverse geocode coordinates to a street address",
            responses: { "200": { description: "ok" } },
          },
        },
      },
    };
    const created = await call(s, "POST", "/services", { agent: alice, body: { api: { document: doc }, visibility: "public" } });
    const [geocode, reverse] = ["geocodeAddress", "reverseGeocode"].map((n) =>
      created.body.tools.find((t: { name: string }) => t.name === n),
    );
    const serviceId = created.body.service.id;

    expect((await call(s, "GET", `/tools/${geocode.id}`, { agent: alice })).body.reliability).toBeNull();

    // 4 successes and 6 failures (auth, caller, platform, 3 upstream) by two callers; reverse used by both too.
    const events = [
      ...Array.from({ length: 4 }, () => ({ toolId: geocode.id, serviceId, accountId: alice.id, success: true, seconds: 0.5 })),
      { toolId: geocode.id, serviceId, accountId: alice.id, success: false, errorClass: 1, errorType: "http_401" },
      { toolId: geocode.id, serviceId, accountId: bob.id, success: false, errorClass: 2, errorType: "http_400" },
      { toolId: geocode.id, serviceId, accountId: bob.id, success: false, errorClass: 3, errorType: "internal" },
      ...Array.from({ length: 3 }, () => ({
        toolId: geocode.id,
        serviceId,
        accountId: bob.id,
        success: false,
        errorClass: 4,
        errorType: "timeout",
        seconds: 2,
      })),
      { toolId: reverse.id, serviceId, accountId: alice.id, success: true },
      { toolId: reverse.id, serviceId, accountId: bob.id, success: true },
    ];
    await publishExecutions(s, events);

    await expect
      .poll(async () => (await call(s, "GET", `/tools/${geocode.id}`, { agent: alice })).body.reliability?.calls_30d, {
        timeout: 10_000,
      })
      .toBe(10);
    const r = (await call(s, "GET", `/tools/${geocode.id}`, { agent: alice })).body.reliability;
    expect(Object.keys(r).sort()).toEqual(RELIABILITY_KEYS);
    expect(r).toMatchObject({
      window_days: 30,
      calls_7d: 10,
      calls_30d: 10,
      success_rate_30d: 0.4,
      auth_failures_30d: 1,
      caller_failures_30d: 1,
      danube_failures_30d: 1,
      upstream_failures_30d: 3,
      distinct_callers_30d: 2,
      flagged: true,
      error_classes: { auth: 1, caller: 1, platform: 1, upstream: 3 },
      faults: { http_401: 1, http_400: 1, internal: 1, timeout: 3 },
    });
    expect(r.p50_seconds).toBeGreaterThan(0);
    expect(r.p95_seconds).toBeGreaterThanOrEqual(r.p50_seconds);
    expect(r.last_success_at).toEqual(expect.any(String));
    expect(r.refreshed_at).toEqual(expect.any(String));

    // Below 10 calls the rate is unknown and never filters.
    const rev = await call(s, "GET", `/tools/${reverse.id}`, { agent: alice });
    await expect
      .poll(async () => (await call(s, "GET", `/tools/${reverse.id}`, { agent: alice })).body.reliability?.calls_30d)
      .toBe(2);
    expect(rev.status).toBe(200);
    const filtered = (await publicSearch("geocode", `&service_id=${serviceId}&min_success_rate=0.5`)).body.map(
      (t: { id: string }) => t.id,
    );
    expect(filtered).toContain(reverse.id);
    expect(filtered).not.toContain(geocode.id);
    expect(
      (await publicSearch("geocode", `&service_id=${serviceId}&min_success_rate=0.4`)).body.map((t: { id: string }) => t.id),
    ).toContain(geocode.id);

    // Redelivery of the same event changes nothing (the inbox).
    const services = (await call(s, "GET", `/services/public/${serviceId}`)).body;
    expect(services).toMatchObject({ total_executions: 12 });

    // Recommendations: with tool_id, used together by the same callers first.
    const rec = await call(s, "GET", `/tools/recommended?tool_id=${geocode.id}`);
    expect(rec.status).toBe(200);
    expect(rec.body[0]).toEqual({
      tool_id: reverse.id,
      tool_name: "reverseGeocode",
      description: expect.any(String),
      service_id: serviceId,
      service_name: "Flaky Geocoder",
      service_logo: null,
      reason: expect.stringContaining("Used together with geocodeAddress"),
      score: expect.any(Number),
    });
    const scores = rec.body.map((x: { score: number }) => x.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Default limit 5; popular tools without tool_id; personalised for a signed-in caller.
    expect((await call(s, "GET", "/tools/recommended")).body.length).toBeLessThanOrEqual(5);
    const popular = (await call(s, "GET", "/tools/recommended?limit=10")).body;
    expect(popular[0]).toMatchObject({ tool_id: geocode.id, reason: expect.stringContaining("Popular") });
    const personal = (await call(s, "GET", "/tools/recommended", { agent: alice })).body;
    expect(personal.map((x: { tool_id: string }) => x.tool_id)).not.toContain(geocode.id);
    expectError(await call(s, "GET", "/tools/recommended?limit=-2"), 400, "invalid_limit");
    expectError(await call(s, "GET", "/tools/recommended?tool_id=00000000-0000-4000-8000-000000000000"), 404, "tool_not_found");
  });
});
