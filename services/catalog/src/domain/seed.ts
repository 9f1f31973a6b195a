/**
 * The demo catalog: on every start the built-in services of @toolport/builtins are upserted by slug
 * (service_type `internal`, public, official, no organization) with their tools by handler, so a new
 * deployment's first agent finds credential-free tools that need no network. Idempotent; a tool that
 * left the library is deactivated. Replicas starting together serialize on an advisory lock.
 */
import { randomUUID } from "node:crypto";
import type { BuiltinService, BuiltinTool } from "@toolport/builtins/index";
import type { Logger } from "@toolport/kit/logger";
import { isObject, saysMore, schemaType } from "../publishing/json-schema.js";
import type { JsonSchema, ToolDraft, ToolParameterInfo } from "./model.js";
import type { CatalogStore } from "./ports.js";

const SEED_LOCK_ID = 7_401_2025;

export function draftFromBuiltin(tool: BuiltinTool, version: string): ToolDraft {
  const schema = tool.inputSchema;
  const properties = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const parameters: Record<string, ToolParameterInfo> = {};
  for (const [name, s] of Object.entries(properties)) {
    const p: ToolParameterInfo = {
      name,
      location: "body",
      description: typeof s.description === "string" ? s.description : "",
      type: schemaType(s),
      required: required.has(name),
    };
    if (s.default !== undefined) p.default = s.default;
    if (Array.isArray(s.enum)) p.enum = s.enum;
    if (typeof s.minimum === "number") p.minimum = s.minimum;
    if (typeof s.maximum === "number") p.maximum = s.maximum;
    if (saysMore(s)) p.jsonSchema = s;
    parameters[name] = p;
  }
  return {
    sourceKey: `builtin:${tool.handler}`,
    slug: tool.slug,
    name: tool.name,
    description: tool.description,
    tags: tool.tags,
    method: "",
    path: "",
    parameters,
    inputSchema: schema,
    requestBodySchema: null,
    requestBodyContentType: "",
    output: tool.output ? { type: "object", properties: tool.output } : null,
    example: tool.example,
    tips: tool.tips ?? null,
    version,
    sideEffecting: false,
    security: [],
    mcpToolName: "",
    internalHandler: tool.handler,
  };
}

export async function seedBuiltins(
  store: Pick<CatalogStore, "transaction">,
  services: readonly BuiltinService[],
  log: Logger,
): Promise<number> {
  let count = 0;
  await store.transaction(async (tx) => {
    await tx.exclusive(SEED_LOCK_ID);
    for (const b of services) {
      const facts = {
        name: b.name,
        summary: b.summary,
        description: b.description,
        category: b.category,
        isDemo: b.isDemo,
        version: b.version,
      };
      const existing = await tx.findService(b.slug);
      const service = existing
        ? await tx.updateService(existing.id, facts)
        : await tx.insertService({
            id: randomUUID(),
            slug: b.slug,
            ...facts,
            serviceType: "internal",
            logo: "",
            contact: { name: "Toolport", url: "", email: "" },
            documentationUrl: "",
            verificationTier: "official",
            status: "active",
            visibility: "public",
            organizationId: null,
            ownerAccountId: null,
            baseUrl: null,
            mcpServerUrl: null,
            openapiDocumentUrl: null,
            securitySchemes: [],
            importedAt: new Date(),
          });
      const { tools, missing } = await tx.upsertToolDrafts(
        b.tools.map((t) => draftFromBuiltin(t, b.version)),
        // Built-in tools have no HTTP path; like MCP-served tools they answer the spec's `<service_id>/` form.
        { serviceId: service.id, serviceSlug: service.slug, pricePerCallCents: 0n, pathFor: () => `${service.id}/` },
      );
      const retired = await tx.setToolsStatus(missing, "inactive");
      await tx.enqueueToolChanged([...tools, ...retired], "upsert");
      count += tools.length;
    }
  });
  log.info({ services: services.length, tools: count }, "built-in catalog seeded");
  return count;
}
