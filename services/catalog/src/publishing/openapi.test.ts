/**
 * OpenAPI import of two real public documents (test/fixtures: the Swagger Petstore 3.0 document and
 * Bump.sh's Train Travel API 3.1 document, written out from their published versions) and of broken
 * documents, which must be refused naming where they are wrong.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importOpenApi, parseDocumentText, validateDocument } from "./openapi.js";

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), "utf8");
const load = async (text: string, options?: { documentUrl?: string }) =>
  importOpenApi(await validateDocument(parseDocumentText(text)), options);

async function refusal(text: string): Promise<{ message: string; details: Record<string, unknown> }> {
  try {
    await validateDocument(parseDocumentText(text));
  } catch (err) {
    const e = err as { message: string; details: Record<string, unknown>; reason: string };
    expect(e.reason).toBe("invalid_openapi_document");
    return e;
  }
  throw new Error("document was accepted");
}

describe("OpenAPI 3.0: Swagger Petstore (JSON)", () => {
  it("imports one tool per operation with method, path, parameters, body, output and security", async () => {
    const api = await load(fixture("petstore-3.0.json"), { documentUrl: "https://petstore3.swagger.io/api/v3/openapi.json" });
    expect(api.title).toBe("Swagger Petstore - OpenAPI 3.0");
    expect(api.version).toBe("1.0.27");
    expect(api.tools).toHaveLength(19);
    // The relative server URL resolves against where the document came from.
    expect(api.baseUrl).toBe("https://petstore3.swagger.io/api/v3");
    expect(api.securitySchemes.map((s) => s.name)).toEqual(["petstore_auth", "api_key"]);
    expect(api.securitySchemes[1]).toMatchObject({ type: "apiKey", location: "header", parameterName: "api_key" });

    const byStatus = api.tools.find((t) => t.name === "findPetsByStatus");
    expect(byStatus).toMatchObject({ method: "GET", path: "/pet/findByStatus", tags: ["pet"], security: ["petstore_auth"] });
    expect(byStatus?.parameters.status).toEqual({
      name: "status",
      location: "query",
      description: "Status values that need to be considered for filter",
      type: "string",
      required: true,
      default: "available",
      enum: ["available", "pending", "sold"],
    });
    expect(byStatus?.output).toMatchObject({ type: "array", items: { type: "object", required: ["name", "photoUrls"] } });

    const getPet = api.tools.find((t) => t.name === "getPetById");
    expect(getPet?.parameters.petId).toMatchObject({
      location: "path",
      type: "integer",
      required: true,
      jsonSchema: { format: "int64" },
    });
    expect(getPet?.security).toEqual(["api_key", "petstore_auth"]);

    const deletePet = api.tools.find((t) => t.name === "deletePet");
    expect(deletePet?.parameters.api_key).toMatchObject({ location: "header", required: false });

    const addPet = api.tools.find((t) => t.name === "addPet");
    expect(addPet).toMatchObject({ method: "POST", path: "/pet", requestBodyContentType: "application/json" });
    expect(addPet?.parameters.name).toMatchObject({ location: "body", type: "string", required: true });
    expect(addPet?.parameters.photoUrls).toMatchObject({ location: "body", type: "array", required: true });
    expect(addPet?.parameters.category).toMatchObject({ location: "body", type: "object", required: false });
    expect(addPet?.inputSchema.required).toEqual(["name", "photoUrls"]);

    // A body that is not an object (an array of users) is one `body` parameter.
    const createWithList = api.tools.find((t) => t.name === "createUsersWithListInput");
    expect(createWithList?.parameters.body).toMatchObject({ location: "body", type: "array" });

    // Operations without security need no credential.
    expect(api.tools.find((t) => t.name === "placeOrder")?.security).toEqual([]);
    const cookieOrHeaderLocations = new Set(api.tools.flatMap((t) => Object.values(t.parameters).map((p) => p.location)));
    expect([...cookieOrHeaderLocations].sort()).toEqual(["body", "header", "path", "query"]);
  });

  it("keeps a relative server URL with a warning when the document came inline", async () => {
    const api = await load(fixture("petstore-3.0.json"));
    expect(api.baseUrl).toBe("/api/v3");
    expect(api.warnings.join("\n")).toContain("relative");
  });
});

describe("OpenAPI 3.1: Train Travel API (YAML)", () => {
  it("imports operations, path-level parameters, $ref'd parameters and 3.1 schemas", async () => {
    const api = await load(fixture("train-travel-3.1.yaml"));
    expect(api.title).toBe("Train Travel API");
    expect(api.baseUrl).toBe("https://try.microcks.io/rest/Train+Travel+API/1.0.0");
    expect(api.contact).toEqual({ name: "Train Support", url: "https://example.com/support", email: "support@example.com" });
    // Webhooks are not operations the catalog calls.
    expect(api.tools.map((t) => t.name).sort()).toEqual([
      "create-booking",
      "create-booking-payment",
      "delete-booking",
      "get-booking",
      "get-bookings",
      "get-stations",
      "get-trips",
    ]);
    const trips = api.tools.find((t) => t.name === "get-trips");
    expect(trips?.parameters.limit).toMatchObject({ location: "query", type: "integer", minimum: 1, maximum: 100, default: 10 });
    expect(trips?.parameters.origin).toMatchObject({ required: true, jsonSchema: { format: "uuid" } });
    expect(trips?.inputSchema.required).toEqual(["origin", "destination", "date"]);
    expect(trips?.security).toEqual(["OAuth2"]);
    // OAuth scopes per tool come from the requirements (the document's global one here, an operation's own below);
    // the scheme keeps its flow's URLs and scope names for the OAuth client registration.
    expect(trips?.securityScopes).toEqual({ OAuth2: ["read"] });
    expect(api.tools.find((t) => t.name === "create-booking")?.securityScopes).toEqual({ OAuth2: ["write"] });
    expect(api.securitySchemes).toEqual([
      {
        name: "OAuth2",
        type: "oauth2",
        description: "OAuth 2.0 authorization code following RFC8725 best practices.",
        oauthFlows: {
          authorizationCode: {
            authorizationUrl: "https://example.com/oauth/authorize",
            tokenUrl: "https://example.com/oauth/token",
            refreshUrl: "",
            scopes: ["read", "write"],
          },
        },
      },
    ]);
    expect(api.warnings.join("\n")).not.toContain("OAuth");

    const pay = api.tools.find((t) => t.name === "create-booking-payment");
    expect(pay?.parameters.bookingId).toMatchObject({ location: "path", required: true });
    expect(pay?.parameters.currency?.enum).toContain("eur");
    // readOnly properties are response-only, never inputs.
    expect(pay?.parameters.id).toBeUndefined();
    expect(pay?.parameters.status).toBeUndefined();
    expect(pay?.parameters.source).toMatchObject({ location: "body", type: "object" });
    expect(api.tools.find((t) => t.name === "delete-booking")).toMatchObject({ method: "DELETE", path: "/bookings/{bookingId}" });
  });
});

describe("Swagger 2.0: converted to OpenAPI 3.0 (corpus.test.ts imports Slack's)", () => {
  const swagger = (paths: Record<string, unknown>) =>
    JSON.stringify({ swagger: "2.0", info: { title: "t", version: "1" }, host: "api.example.com", schemes: ["https"], paths });

  it("patches small defects and warns about what it could not carry over, naming where", async () => {
    const api = await load(
      swagger({
        "/items/{id}": {
          get: {
            operationId: "getItem",
            // Not marked required (a path parameter must be) and a response without a description.
            parameters: [
              { name: "id", in: "path", type: "string" },
              { name: "tags", in: "query", type: "array", items: { type: "string" }, collectionFormat: "tsv" },
            ],
            responses: { "200": { schema: { type: "object", properties: { id: { type: "string" } } } } },
          },
        },
      }),
    );
    expect(api.baseUrl).toBe("https://api.example.com");
    expect(api.warnings[0]).toMatch(
      /^converted from Swagger 2\.0 to OpenAPI 3\.0 \(swagger2openapi\); \d+ small defects patched$/,
    );
    expect(api.warnings).toContain(
      "Swagger 2.0 conversion, #/paths/~1items~1{id}/get/parameters/1: collectionFormat:tsv is no longer supported",
    );
    const tool = api.tools.find((t) => t.name === "getItem");
    expect(tool?.parameters.id).toMatchObject({ location: "path", required: true, type: "string" });
    expect(tool?.parameters.tags).toMatchObject({ location: "query", type: "array" });
    expect(JSON.stringify(tool)).not.toContain("x-s2o-warning");
  });

  it("refuses a converted document that fails validation, saying where that is", async () => {
    const e = await refusal(
      swagger({ "/a": { get: { responses: { "200": { description: "ok", schema: { $ref: "#/definitions/Nope" } } } } } }),
    );
    expect(e.message).toContain(
      'cannot resolve $ref "#/components/schemas/Nope" (in the OpenAPI 3.0 document converted from Swagger 2.0)',
    );
  });
});

describe("lenient where other importers are: a query string in a path key (APIs.guru's Medium, Flickr, Weatherbit)", () => {
  const base = { openapi: "3.0.3", info: { title: "t", version: "1" }, servers: [{ url: "https://api.example.com" }] };
  const ok = { "200": { description: "ok" } };
  const q = (name: string, where = "query") => ({ name, in: where, required: true, schema: { type: "string" } });

  it("calls the path before the `?`, a template fills the query parameter it follows, fixed pairs become constants", async () => {
    const api = await load(
      JSON.stringify({
        ...base,
        paths: {
          // Declared in the query (Medium) or in the path (Weatherbit): either way sent as a query parameter.
          "/search/articles?query={query}": { get: { operationId: "search", parameters: [q("query")], responses: ok } },
          "/alerts?lat={lat}&lon={lon}": {
            get: { operationId: "alerts", parameters: [q("lat", "path"), q("lon", "path")], responses: ok },
          },
          // Learnifier: the template's name differs from the query parameter's.
          "/users/{id}/pic?key={APIKEY}": {
            get: { operationId: "pic", parameters: [q("id", "path"), q("APIKEY", "path")], responses: ok },
          },
          // Flickr: one endpoint, the method fixed in the query string; two operations share the path before `?`.
          "/rest?method=flickr.photos.search": { get: { operationId: "photos", responses: ok } },
          "/rest?method=flickr.people.getInfo": { get: { operationId: "people", responses: ok } },
        },
      }),
    );
    const tool = (name: string) => api.tools.find((t) => t.name === name);
    expect(tool("search")).toMatchObject({ path: "/search/articles", sourceKey: "GET /search/articles?query={query}" });
    expect(tool("search")?.parameters.query).toMatchObject({ name: "query", location: "query", required: true });
    expect(tool("alerts")?.path).toBe("/alerts");
    expect(tool("alerts")?.parameters.lat).toMatchObject({ name: "lat", location: "query", required: true });
    expect(tool("pic")?.path).toBe("/users/{id}/pic");
    expect(tool("pic")?.parameters.id).toMatchObject({ location: "path" });
    expect(tool("pic")?.parameters.APIKEY).toMatchObject({ name: "key", location: "query", required: true });
    expect(tool("photos")).toMatchObject({ path: "/rest", sourceKey: "GET /rest?method=flickr.photos.search" });
    expect(tool("photos")?.parameters.method).toMatchObject({
      name: "method",
      location: "query",
      required: false,
      default: "flickr.photos.search",
      enum: ["flickr.photos.search"],
    });
    expect(tool("people")?.parameters.method?.default).toBe("flickr.people.getInfo");
    expect(api.warnings).toContain(
      "path /users/{id}/pic?key={APIKEY} carries a query string: its tools call /users/{id}/pic with the query parameters key={APIKEY}",
    );
  });

  it("still refuses a template where a query parameter's name belongs, and an undeclared template in the path itself", async () => {
    const weird = await refusal(
      JSON.stringify({
        ...base,
        paths: {
          "/numbers/{country}?{search}=1": { get: { parameters: [q("country", "path"), q("search", "path")], responses: ok } },
        },
      }),
    );
    expect(weird.message).toContain("path parameter {search} stands where a query parameter's name belongs in ?{search}=1");
    expect(weird.details.location).toBe("#/paths/~1numbers~1{country}?{search}=1/get");
    const undeclared = await refusal(
      JSON.stringify({ ...base, paths: { "/a/{id}?x={x}": { get: { parameters: [q("x")], responses: ok } } } }),
    );
    expect(undeclared.message).toContain("path parameter {id} is not declared");
  });
});

describe("lenient where the specification or other importers are: fields that are ignored", () => {
  const base = { openapi: "3.0.3", info: { title: "t", version: "1" }, servers: [{ url: "https://api.example.com" }] };
  const json = (schema: unknown) => ({ "200": { description: "ok", content: { "application/json": { schema } } } });

  it("drops fields beside a $ref in OpenAPI 3.0 (xero.com, cloudmersive.com), with a warning naming each", async () => {
    const api = await load(
      JSON.stringify({
        ...base,
        paths: {
          "/accounts": {
            // Swagger-style `type` beside a parameter's $ref; a media type as a schema's `type` beside its $ref.
            parameters: [{ $ref: "#/components/parameters/tenant", type: "string" }],
            get: { operationId: "accounts", responses: json({ $ref: "#/components/schemas/Account", type: "application/json" }) },
          },
        },
        components: {
          parameters: { tenant: { name: "tenant", in: "header", required: true, schema: { type: "string", format: "uuid" } } },
          schemas: { Account: { type: "object", properties: { id: { type: "string" } } } },
        },
      }),
    );
    const tool = api.tools[0];
    expect(tool?.parameters.tenant).toMatchObject({ location: "header", required: true, type: "string" });
    expect(tool?.output).toMatchObject({ type: "object", properties: { id: { type: "string" } } });
    expect(api.warnings).toContain(
      "ignored fields beside a $ref, which OpenAPI 3.0 says are ignored: #/paths/~1accounts/parameters/0/type, #/paths/~1accounts/get/responses/200/content/application~1json/schema/type",
    );
  });

  it("drops a field OpenAPI does not define (googleapis.com:cloudbuild's top-level `source`)", async () => {
    const api = await load(
      JSON.stringify({
        ...base,
        source: { url: {} },
        paths: { "/a": { get: { operationId: "a", responses: json({ type: "string" }) } } },
      }),
    );
    expect(api.tools).toHaveLength(1);
    expect(api.warnings).toContain("ignored fields OpenAPI does not define: #/source");
  });

  it("still refuses what is broken: a keyword of the wrong type, a field other $refs point into, a scheme of no known shape", async () => {
    // api.video: `pattern: 0`.
    const pattern = await refusal(
      JSON.stringify({ ...base, paths: { "/a": { get: { responses: json({ type: "string", pattern: 0 }) } } } }),
    );
    expect(pattern.message).toContain("must be string");
    expect(pattern.details.location).toBe("#/paths/~1a/get/responses/200/content/application~1json/schema/pattern");
    // dnd5eapi.co: an `allOf` object beside a $ref, which another $ref points into: dropping it would break that one.
    const allOf = await refusal(
      JSON.stringify({
        ...base,
        paths: {
          "/a": { get: { responses: json({ $ref: "#/components/schemas/S", allOf: { "0": { type: "object" } } }) } },
          "/b": { get: { responses: json({ $ref: "#/paths/~1a/get/responses/200/content/application~1json/schema/allOf/0" }) } },
        },
        components: { schemas: { S: { type: "object" } } },
      }),
    );
    expect(allOf.message).toContain("must be array");
    expect(allOf.details.location).toBe("#/paths/~1a/get/responses/200/content/application~1json/schema/allOf");
    // An apiKey scheme without `in`: the other scheme shapes call its fields unknown, which must not make them droppable.
    const scheme = await refusal(
      JSON.stringify({
        ...base,
        paths: { "/a": { get: { responses: json({ type: "string" }) } } },
        components: { securitySchemes: { key: { type: "apiKey", name: "X-Key" } } },
      }),
    );
    expect(scheme.details.location).toMatch(/^#\/components\/securitySchemes\/key/);
  });
});

describe("invalid documents are refused naming where they are wrong", () => {
  const base = { openapi: "3.0.3", info: { title: "t", version: "1" } };

  it("a YAML syntax error names its line and column", async () => {
    const e = await refusal("openapi: 3.0.0\ninfo:\n  title: x\n   version: 1\npaths: {}");
    expect(e.details.location).toBe("line 3, column 10");
  });

  it("a JSON syntax error names its line and column too", async () => {
    const e = await refusal('{\n  "openapi": "3.0.3",\n  "info": {"title": "x" "version": "1"}\n}');
    expect(e.details.location).toBe("line 3, column 25");
  });

  it("a schema violation names the JSON pointer", async () => {
    const e = await refusal(JSON.stringify({ ...base, paths: { "/a": { get: { responses: { "200": {} } } } } }));
    expect(e.details.location).toBe("#/paths/~1a/get/responses/200");
    expect(e.message).toContain("description");
  });

  it("an unresolvable $ref names the pointer", async () => {
    const schema = { $ref: "#/components/schemas/Nope" };
    const e = await refusal(
      JSON.stringify({
        ...base,
        paths: { "/a": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema } } } } } } },
      }),
    );
    expect(e.message).toContain("#/components/schemas/Nope");
  });

  it("an external $ref is not followed", async () => {
    const schema = { $ref: "file:///etc/passwd" };
    const e = await refusal(
      JSON.stringify({
        ...base,
        paths: { "/a": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema } } } } } } },
      }),
    );
    expect(e.message).toContain("external $ref");
  });

  it("an undeclared path parameter, a duplicate operationId, a Swagger version other than 2.0 and a missing version", async () => {
    expect(
      (await refusal(JSON.stringify({ ...base, paths: { "/a/{id}": { get: { responses: { "200": { description: "ok" } } } } } })))
        .details.location,
    ).toBe("#/paths/~1a~1{id}/get");
    const op = (id: string) => ({ get: { operationId: id, responses: { "200": { description: "ok" } } } });
    expect((await refusal(JSON.stringify({ ...base, paths: { "/a": op("x"), "/b": op("x") } }))).message).toContain(
      "operationId x",
    );
    // Swagger 2.0 is converted (corpus.test.ts); other Swagger versions are refused, and so is a 2.0
    // document without the objects the converter would otherwise invent.
    expect((await refusal(JSON.stringify({ swagger: "1.2", info: base.info, paths: {} }))).details.location).toBe("#/swagger");
    expect((await refusal(JSON.stringify({ swagger: "2.0" }))).details.location).toBe("#/info");
    expect((await refusal(JSON.stringify({ info: {} }))).details.location).toBe("#/openapi");
  });
});

describe('a document without paths (issue 33: swagger-parser\'s "[object Object] is not a valid Openapi API definition")', () => {
  const info = { title: "No paths", version: "1" };

  it("an OpenAPI 3.0 document without `paths` is refused naming #/paths, in words", async () => {
    const e = await refusal("openapi: 3.0.3\ninfo:\n  title: No paths\n  version: '1'\n");
    expect(e.message).not.toContain("[object Object]");
    expect(e.message).toBe("invalid OpenAPI document at #/paths: an OpenAPI 3.0 document needs a `paths` object");
    expect(e.details.location).toBe("#/paths");
  });

  it("an OpenAPI 3.1 document with none of paths, webhooks or components is refused; with components only it imports no tools", async () => {
    const e = await refusal(JSON.stringify({ openapi: "3.1.0", info }));
    expect(e.message).not.toContain("[object Object]");
    expect(e.message).toContain("needs at least one of `paths`, `webhooks` or `components`");
    expect(e.details.location).toBe("#/");
    const api = await load(JSON.stringify({ openapi: "3.1.0", info, components: { schemas: { A: { type: "string" } } } }));
    expect(api.tools).toEqual([]);
    expect(api.warnings).toContain("the document has no operations under `paths`; no tools were imported");
  });
});
