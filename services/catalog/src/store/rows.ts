/** Row <-> domain record mapping for services and tools (rows arrive as jsonb objects). */
import { createHash } from "node:crypto";
import type { Pool } from "@toolport/kit/pg";
import type { ServiceRecord, ToolRecord } from "../domain/model.js";

export type Queryable = { query: Pool["query"] };

const statementNames = new Map<string, string>();

/**
 * Runs `text` as a named prepared statement (named by a digest of the text), which each connection
 * parses once and, after a few runs, plans once: for the read routes' statements whose planning costs
 * about as much as running them (the tool page's: 3 of its 10 ms at 100,000 tools, measured with
 * EXPLAIN on test/bench/catalog-scale.ts --hold). Only for texts from a small fixed set (a statement
 * stays prepared on every connection of the pool).
 */
export async function prepared<R>(q: Queryable, text: string, values: unknown[]): Promise<{ rows: R[] }> {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `catalog_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    if (statementNames.size < 1000) statementNames.set(text, name);
  }
  const { rows } = await q.query({ name, text, values });
  return { rows: rows as R[] };
}

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The tool columns toolFromRow reads, except the large JSON ones (parameters, schemas, output, example). */
const SMALL_TOOL_COLUMNS = [
  "id",
  "service_id",
  "slug",
  "source_key",
  "name",
  "description",
  "status",
  "tags",
  "method",
  "path",
  "request_body_content_type",
  "tips",
  "version",
  "price_per_call_cents",
  "side_effecting",
  "deprecated",
  "deprecation_message",
  "sunset_date",
  "passthrough_reason",
  "security",
  "security_scopes",
  "mcp_tool_name",
  "internal_handler",
  "revision",
  "created_at",
  "updated_at",
];

/**
 * SQL: the small columns of the tool `t` as one jsonb object, for toolFromRow. `to_jsonb(t) - 'input_schema'
 * - ...` reads and converts every large column before it drops them: on a page of 100 directory tools
 * that was half of the statement's time (86 ms against 40, side by side).
 */
export const SMALL_TOOL_JSON = `(SELECT to_jsonb(x) FROM (SELECT ${SMALL_TOOL_COLUMNS.map((c) => `t.${c}`).join(", ")}) AS x)`;

/** SQL: SMALL_TOOL_JSON with the parameters: enough to filter, rank and render a trimmed tool. */
export const LIGHT_TOOL_JSON = `${SMALL_TOOL_JSON} || jsonb_build_object('parameters', t.parameters)`;

export function serviceFromRow(r: Row): ServiceRecord {
  return {
    id: String(r.id),
    slug: String(r.slug),
    name: String(r.name),
    summary: String(r.summary ?? ""),
    description: String(r.description ?? ""),
    serviceType: r.service_type as ServiceRecord["serviceType"],
    category: String(r.category ?? ""),
    logo: String(r.logo ?? ""),
    contact: { name: "", url: "", email: "", ...((r.contact as object) ?? {}) },
    documentationUrl: String(r.documentation_url ?? ""),
    verificationTier: r.verification_tier as ServiceRecord["verificationTier"],
    status: r.status as ServiceRecord["status"],
    visibility: r.visibility as ServiceRecord["visibility"],
    isDemo: Boolean(r.is_demo),
    version: String(r.version ?? ""),
    organizationId: strOrNull(r.organization_id),
    ownerAccountId: strOrNull(r.owner_account_id),
    baseUrl: strOrNull(r.base_url),
    mcpServerUrl: strOrNull(r.mcp_server_url),
    openapiDocumentUrl: strOrNull(r.openapi_document_url),
    securitySchemes: (r.security_schemes as ServiceRecord["securitySchemes"]) ?? [],
    importedAt: dateOrNull(r.imported_at),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function toolFromRow(r: Row): ToolRecord {
  return {
    id: String(r.id),
    serviceId: String(r.service_id),
    slug: String(r.slug),
    sourceKey: String(r.source_key),
    name: String(r.name),
    description: String(r.description ?? ""),
    status: r.status as ToolRecord["status"],
    tags: (r.tags as string[]) ?? [],
    method: String(r.method ?? ""),
    path: String(r.path ?? ""),
    parameters: (r.parameters as ToolRecord["parameters"]) ?? {},
    inputSchema: (r.input_schema as ToolRecord["inputSchema"]) ?? { type: "object", properties: {} },
    requestBodySchema: (r.request_body_schema as ToolRecord["requestBodySchema"]) ?? null,
    requestBodyContentType: String(r.request_body_content_type ?? ""),
    output: (r.output as ToolRecord["output"]) ?? null,
    example: (r.example as ToolRecord["example"]) ?? null,
    tips: strOrNull(r.tips),
    version: String(r.version ?? ""),
    pricePerCallCents: BigInt(r.price_per_call_cents as string | number | bigint),
    sideEffecting: Boolean(r.side_effecting),
    deprecated: Boolean(r.deprecated),
    deprecationMessage: strOrNull(r.deprecation_message),
    sunsetDate: dateOrNull(r.sunset_date),
    passthroughReason: strOrNull(r.passthrough_reason),
    security: (r.security as string[]) ?? [],
    securityScopes: (r.security_scopes as Record<string, string[]>) ?? {},
    mcpToolName: String(r.mcp_tool_name ?? ""),
    internalHandler: String(r.internal_handler ?? ""),
    revision: BigInt(r.revision as string | number | bigint),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}
