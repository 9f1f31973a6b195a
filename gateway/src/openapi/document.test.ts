/**
 * The description of /v1 (GET /v1/openapi.json) against the routes the gateway registers: every route is
 * described and every described operation is a route, and the document is valid OpenAPI 3.1 by a
 * maintained validator (@apidevtools/swagger-parser, which checks it against the 3.1 schema and resolves
 * every $ref).
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { createLogger } from "@toolport/kit/logger";
import { describe, expect, it } from "vitest";
import { v1Routes } from "../app.js";
import { createServiceClients } from "../clients.js";
import { loadGatewayConfig } from "../config.js";
import { buildDocument, openApiPath } from "./document.js";
import { apiMarkdown, llmsTxt } from "./llms.js";

// Clients connect on first use only: nothing here calls a service.
const config = loadGatewayConfig({ PUBLIC_URL: "https://api.example.test" });
const api = v1Routes({ config, clients: createServiceClients(config), log: createLogger("test", "silent") });
const document = buildDocument(api.operations, { serverUrl: config.PUBLIC_URL });

describe("the API description", () => {
  it("describes every /v1 route the gateway registers, and nothing else", () => {
    const registered = api.router.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== "HEAD").map((m) => `${m} ${openApiPath(String(layer.path))}`),
    );
    const described = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(registered.filter((r) => !described.includes(r))).toEqual([]);
    expect(described.filter((d) => !registered.includes(d))).toEqual([]);
    expect(described.length).toBeGreaterThan(3);
  });

  it("is valid OpenAPI 3.1, version 1.0.0, with unique operation ids", async () => {
    expect(document.openapi).toBe("3.1.0");
    expect((document.info as { version: string }).version).toBe("1.0.0");
    const ids = Object.values(document.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId as string));
    expect(new Set(ids).size).toBe(ids.length);
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it("says who may call each route, as its auth middleware decides", () => {
    const health = document.paths["/v1/health"]!.get!;
    expect(health.security).toEqual([]);
    const schemes = (document.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
    expect(schemes.ApiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "svc-api-key" }));
    expect(schemes.BearerJwt).toEqual(expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }));
  });

  it("refuses to register a route whose path parameters are not described, or an operation id twice", () => {
    const doc = { operationId: "x", summary: "x", tags: ["System"], responses: { 200: { description: "ok" } } };
    expect(() => api.get("/things/:thing_id", doc, () => {})).toThrow(/path parameters thing_id are described as/);
    expect(() => api.get("/other", systemOpsHealthId(), () => {})).toThrow(/operationId getHealth is taken/);
  });

  it("writes llms.txt and the skill file's API section from the document: every operation, linked to the reference", () => {
    const text = llmsTxt(document, "https://api.example.test");
    const skill = apiMarkdown(document, "https://api.example.test").join("\n");
    expect(text.startsWith("# Toolport API\n\n> ")).toBe(true);
    expect(text).toContain("https://api.example.test/v1/openapi.json");
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${path}`;
        const tag = (op.tags as string[])[0]!;
        expect(text, route).toContain(`[${route}](https://api.example.test/docs#/${tag}/${op.operationId}): ${op.summary}`);
        expect(skill, route).toContain(`\`${route}\`: ${op.summary}`);
      }
    }
  });

  it("catches an invalid document", async () => {
    const broken = structuredClone(document) as Record<string, unknown>;
    (broken.paths as Record<string, unknown>)["/v1/health"] = { get: { responses: { 200: { content: {} } } } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });
});

function systemOpsHealthId() {
  return { operationId: "getHealth", summary: "x", tags: ["System"], responses: { 200: { description: "ok" } } };
}
