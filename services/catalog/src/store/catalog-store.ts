/**
 * SQL over services and tools. Reads return domain records; writes take a transaction client so the
 * caller can enqueue the matching events in the same transaction.
 */
import { randomUUID } from "node:crypto";
import type { PoolClient } from "@toolport/kit/pg";
import type { ServiceRecord, ToolDraft, ToolRecord, ToolWithService } from "../domain/model.js";
import type {
  CallableTool,
  NewService,
  ServiceStats,
  ToolFilter,
  ToolInsertOptions,
  ToolPatch,
  Viewer,
} from "../domain/ports.js";
import { isUuid, slugify, slugSuffixPrefixes, uniqueSlug } from "../domain/slug.js";
import { LIGHT_TOOL_JSON, type Queryable, serviceFromRow, toolFromRow } from "./rows.js";

/** search_parameters (generated, for the search index's rebuild) repeats what `parameters` holds. */
const TOOL_WITH_SERVICE =
  "SELECT to_jsonb(t) - 'search_parameters' AS tool, to_jsonb(s) AS service FROM tools t JOIN services s ON s.id = t.service_id";
/** Without the large schema columns: enough to filter, rank and render a trimmed tool. */
const LIGHT_TOOL_WITH_SERVICE = `SELECT ${LIGHT_TOOL_JSON} AS tool, to_jsonb(s) AS service FROM tools t JOIN services s ON s.id = t.service_id`;

const pair = (r: { tool: Record<string, unknown>; service: Record<string, unknown> }): ToolWithService => ({
  tool: toolFromRow(r.tool),
  service: serviceFromRow(r.service),
});

export async function listToolsWithService(q: Queryable, filter: ToolFilter = {}): Promise<ToolWithService[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.serviceId) {
    params.push(filter.serviceId);
    where.push(`t.service_id = $${params.length}`);
  }
  if (filter.toolIds) {
    params.push(filter.toolIds.filter(isUuid));
    where.push(`t.id = ANY($${params.length}::uuid[])`);
  }
  if (!filter.includeUnavailable) where.push("t.status = 'active' AND s.status <> 'retired'");
  const sql = `${filter.light ? LIGHT_TOOL_WITH_SERVICE : TOOL_WITH_SERVICE}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY s.is_demo, s.name, t.name, t.id`;
  const { rows } = await q.query(sql, params);
  return rows.map(pair);
}

export async function findTool(q: Queryable, idOrSlug: string): Promise<ToolWithService | null> {
  const { rows } = isUuid(idOrSlug)
    ? await q.query(`${TOOL_WITH_SERVICE} WHERE t.id = $1`, [idOrSlug])
    : await q.query(`${TOOL_WITH_SERVICE} WHERE t.slug = $1`, [idOrSlug.toLowerCase()]);
  return rows[0] ? pair(rows[0]) : null;
}

export async function findService(q: Queryable, idOrSlug: string): Promise<ServiceRecord | null> {
  const { rows } = isUuid(idOrSlug)
    ? await q.query("SELECT * FROM services WHERE id = $1", [idOrSlug])
    : await q.query("SELECT * FROM services WHERE slug = $1", [idOrSlug.toLowerCase()]);
  return rows[0] ? serviceFromRow(rows[0]) : null;
}

export async function listServices(
  q: Queryable,
  filter: { organizationId?: string; visibility?: string } = {},
): Promise<ServiceRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.organizationId !== undefined) {
    params.push(filter.organizationId);
    where.push(`organization_id = $${params.length}`);
  }
  if (filter.visibility !== undefined) {
    params.push(filter.visibility);
    where.push(`visibility = $${params.length}`);
  }
  const { rows } = await q.query(
    `SELECT * FROM services${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY is_demo, name, id`,
    params,
  );
  return rows.map(serviceFromRow);
}

/** Active, not-sunset tool counts and execution figures per service. */
export async function serviceStats(q: Queryable, serviceIds: string[]): Promise<Map<string, ServiceStats>> {
  const out = new Map<string, ServiceStats>();
  for (const id of serviceIds) out.set(id, { toolCount: 0, totalExecutions: 0, successRate: 0, calls30d: 0 });
  if (serviceIds.length === 0) return out;
  const tools = await q.query<{ service_id: string; n: bigint }>(
    `SELECT service_id, count(*) AS n FROM tools
      WHERE service_id = ANY($1::uuid[]) AND status = 'active' AND (sunset_date IS NULL OR sunset_date > now())
      GROUP BY service_id`,
    [serviceIds],
  );
  for (const r of tools.rows) (out.get(r.service_id) as ServiceStats).toolCount = Number(r.n);
  // All-time figures, and the last 30 UTC days (today included), from the counts the executions consumer
  // keeps: one row per service and at most a month of day rows (the facts are pruned past the window).
  const calls = await q.query<{ service_id: string; total: bigint; successes: bigint; recent: bigint }>(
    `SELECT t.service_id, t.calls AS total, t.successes,
            (SELECT coalesce(sum(d.calls), 0) FROM service_calls d
              WHERE d.service_id = t.service_id AND d.day > (now() AT TIME ZONE 'UTC')::date - 30) AS recent
       FROM service_call_totals t WHERE t.service_id = ANY($1::text[])`,
    [serviceIds],
  );
  for (const r of calls.rows) {
    const s = out.get(r.service_id) as ServiceStats;
    s.totalExecutions = Number(r.total);
    s.successRate = Number(r.total) > 0 ? Number(r.successes) / Number(r.total) : 0;
    s.calls30d = Number(r.recent);
  }
  return out;
}

/** The services' slugs among `base` and its `base-N` forms (slugSuffixPrefixes), to pick a free one in memory. */
async function serviceSlugsLike(q: Queryable, base: string): Promise<Set<string>> {
  const { rows } = await q.query<{ slug: string }>("SELECT slug FROM services WHERE slug = $1 OR slug LIKE ANY($2::text[])", [
    base,
    slugSuffixPrefixes(base).map((prefix) => `${prefix.replace(/[%_\\]/g, "\\$&")}%`),
  ]);
  return new Set(rows.map((r) => r.slug));
}

/** Unique indexes on slugs, which a concurrent publish can race for (catalog migrations). */
const SLUG_INDEXES = new Set(["services_slug_key", "tools_slug_key"]);

/** A unique violation (23505) of a slug index: another transaction committed the slug first. */
export function isSlugRace(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23505" && SLUG_INDEXES.has(e.constraint ?? "");
}

export async function freeServiceSlug(q: Queryable, base: string): Promise<string> {
  const taken = await serviceSlugsLike(q, base);
  return uniqueSlug(base, (s) => taken.has(s));
}

export async function slugTaken(q: Queryable, table: "services" | "tools", slug: string, exceptId?: string): Promise<boolean> {
  const { rowCount } = await q.query(`SELECT 1 FROM ${table} WHERE slug = $1 AND id IS DISTINCT FROM $2::uuid`, [
    slug,
    exceptId ?? null,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function insertService(client: PoolClient, s: NewService): Promise<ServiceRecord> {
  const { rows } = await client.query(
    `INSERT INTO services (id, slug, name, summary, description, service_type, category, logo, contact, documentation_url,
        verification_tier, status, visibility, is_demo, version, organization_id, owner_account_id, base_url, mcp_server_url,
        openapi_document_url, security_schemes, imported_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22) RETURNING *`,
    [
      s.id,
      s.slug,
      s.name,
      s.summary,
      s.description,
      s.serviceType,
      s.category,
      s.logo,
      JSON.stringify(s.contact),
      s.documentationUrl,
      s.verificationTier,
      s.status,
      s.visibility,
      s.isDemo,
      s.version,
      s.organizationId,
      s.ownerAccountId,
      s.baseUrl,
      s.mcpServerUrl,
      s.openapiDocumentUrl,
      JSON.stringify(s.securitySchemes),
      s.importedAt,
    ],
  );
  return serviceFromRow(rows[0]);
}

const serviceColumns: Record<string, string> = {
  slug: "slug",
  name: "name",
  summary: "summary",
  description: "description",
  category: "category",
  logo: "logo",
  contact: "contact",
  documentationUrl: "documentation_url",
  verificationTier: "verification_tier",
  status: "status",
  visibility: "visibility",
  isDemo: "is_demo",
  version: "version",
  baseUrl: "base_url",
  mcpServerUrl: "mcp_server_url",
  openapiDocumentUrl: "openapi_document_url",
  securitySchemes: "security_schemes",
  importedAt: "imported_at",
};

export async function updateService(client: PoolClient, id: string, patch: Partial<NewService>): Promise<ServiceRecord> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [key, value] of Object.entries(patch)) {
    const column = serviceColumns[key];
    if (!column || value === undefined) continue;
    params.push(key === "contact" || key === "securitySchemes" ? JSON.stringify(value) : value);
    sets.push(`${column} = $${params.length}`);
  }
  const { rows } = await client.query(
    `UPDATE services SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING *`,
    params,
  );
  return serviceFromRow(rows[0]);
}

/**
 * Deletes a service and, by cascade, its tools, credentials and OAuth rows, in one statement; returns
 * the ids its tools had (the statement's snapshot still sees them).
 */
export async function deleteService(client: PoolClient, id: string): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    "WITH gone AS (DELETE FROM services WHERE id = $1) SELECT id FROM tools WHERE service_id = $1",
    [id],
  );
  return rows.map((r) => r.id);
}

/** Tools written per statement, and most JSON per statement: bounds a statement's JSON (and the
 * event-loop time to build it) under jsonb's 256 MB, which 250 tools with large schemas can pass. */
const TOOL_WRITE_CHUNK = 250;
const TOOL_WRITE_BYTES = 32 * 1024 * 1024;

/** The draft's columns that an insert and an update both write, as jsonb_to_recordset reads them. */
const DRAFT_COLUMNS = `name text, description text, tags text[], method text, path text, parameters jsonb, input_schema jsonb,
  request_body_schema jsonb, request_body_content_type text, output jsonb, tips text, example jsonb, version text,
  side_effecting boolean, security text[], mcp_tool_name text, internal_handler text, security_scopes jsonb,
  passthrough_reason text`;

/** A draft as one jsonb_to_recordset record (JSON null is SQL NULL there). */
function draftRecord(d: ToolDraft, path: string) {
  return {
    name: d.name,
    description: d.description,
    tags: d.tags,
    method: d.method,
    path,
    parameters: d.parameters,
    input_schema: d.inputSchema,
    request_body_schema: d.requestBodySchema,
    request_body_content_type: d.requestBodyContentType,
    output: d.output,
    tips: d.tips,
    example: d.example ? d.example : null,
    version: d.version,
    side_effecting: d.sideEffecting,
    security: d.security,
    mcp_tool_name: d.mcpToolName,
    internal_handler: d.internalHandler,
    security_scopes: d.securityScopes ?? {},
    passthrough_reason: d.passthroughReason ?? null,
  };
}

/**
 * Records (each already JSON) as the text of one jsonb parameter. JSON.stringify writes a lone UTF-16 surrogate (a
 * broken escape in a document) as `\udXXX`, which jsonb refuses; a text parameter would have gone
 * through as U+FFFD (UTF-8 encoding replaces it), and so it does here. JSON.stringify escapes only lone
 * surrogates, so every such escape not itself escaped (an odd run of backslashes) is one.
 */
function recordsetJson(parts: string[]): string {
  const json = `[${parts.join(",")}]`;
  return json.includes("\\ud") ? json.replace(/(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g, "$1\\ufffd") : json;
}

/** The records as the JSON of one statement each: TOOL_WRITE_CHUNK records at most, and TOOL_WRITE_BYTES. */
function recordsetChunks(records: Record<string, unknown>[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let bytes = 0;
  for (const record of records) {
    const json = JSON.stringify(record);
    if (parts.length > 0 && (parts.length >= TOOL_WRITE_CHUNK || bytes + json.length > TOOL_WRITE_BYTES)) {
      out.push(recordsetJson(parts));
      parts = [];
      bytes = 0;
    }
    parts.push(json);
    bytes += json.length;
  }
  if (parts.length > 0) out.push(recordsetJson(parts));
  return out;
}

/**
 * The slugs already taken among `bases` and their `base-N` forms (slugSuffixPrefixes: a long base is
 * shortened to fit N). One statement however many bases: each base is looked up in the unique slug index
 * and each prefix as a byte-wise range (`base-` up to `base.`, exactly what LIKE 'base-%' matches) in the
 * text_pattern_ops index; a LIKE ANY over the array would read every tool of the catalog instead
 * (migration 0003).
 */
async function takenSlugs(client: PoolClient, bases: string[]): Promise<Set<string>> {
  const prefixes = [...new Set(bases.flatMap(slugSuffixPrefixes))];
  const { rows } = await client.query<{ slug: string }>(
    `SELECT slug FROM tools WHERE slug = ANY($1::text[])
     UNION ALL
     SELECT t.slug FROM unnest($2::text[]) AS p
       JOIN LATERAL (SELECT slug FROM tools WHERE slug ~>=~ p AND slug ~<~ (left(p, -1) || '.')) AS t ON true`,
    [[...new Set(bases)], prefixes],
  );
  return new Set(rows.map((r) => r.slug));
}

/**
 * Inserts new tools and updates existing ones matched by source key (their id, slug, price, status and
 * deprecation stay as they are). Returns the stored tools in the drafts' order and the ids of tools of
 * the service that the source no longer has. A statement per 250 tools (jsonb_to_recordset), not one
 * per tool: 500 round trips were most of a large publish.
 */
export async function upsertToolDrafts(
  client: PoolClient,
  drafts: (ToolDraft & { deprecated?: boolean })[],
  options: ToolInsertOptions,
): Promise<{ tools: ToolRecord[]; missing: string[] }> {
  const existing = await client.query<{ id: string; source_key: string }>(
    "SELECT id, source_key FROM tools WHERE service_id = $1",
    [options.serviceId],
  );
  const bySource = new Map(existing.rows.map((r) => [r.source_key, r.id]));
  const baseSlugs = drafts.map((d) => d.slug ?? slugify(`${options.serviceSlug} ${d.name}`));
  const taken = drafts.some((d) => !bySource.has(d.sourceKey)) ? await takenSlugs(client, baseSlugs) : new Set<string>();

  const order: string[] = [];
  const updates: Record<string, unknown>[] = [];
  const inserts: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const [i, d] of drafts.entries()) {
    if (seen.has(d.sourceKey)) continue;
    seen.add(d.sourceKey);
    const record = draftRecord(d, options.pathFor ? options.pathFor(d) : d.path);
    const existingId = bySource.get(d.sourceKey);
    if (existingId) {
      order.push(existingId);
      updates.push({ id: existingId, ...record });
      continue;
    }
    const slug = uniqueSlug(baseSlugs[i] as string, (s) => taken.has(s));
    taken.add(slug);
    const id = randomUUID();
    order.push(id);
    inserts.push({
      id,
      slug,
      source_key: d.sourceKey,
      deprecated: d.deprecated === true,
      deprecation_message: d.deprecated === true ? "deprecated in the source document" : null,
      ...record,
    });
  }

  const stored = new Map<string, ToolRecord>();
  for (const chunk of recordsetChunks(updates)) {
    const { rows } = await client.query(
      `UPDATE tools t SET name = d.name, description = d.description, tags = d.tags, method = d.method, path = d.path,
          parameters = d.parameters, input_schema = d.input_schema, request_body_schema = d.request_body_schema,
          request_body_content_type = d.request_body_content_type, output = d.output, tips = COALESCE(d.tips, t.tips),
          example = d.example, version = d.version, side_effecting = t.side_effecting OR d.side_effecting,
          security = d.security, mcp_tool_name = d.mcp_tool_name, internal_handler = d.internal_handler,
          security_scopes = d.security_scopes, passthrough_reason = COALESCE(d.passthrough_reason, t.passthrough_reason),
          revision = t.revision + 1, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS d(id uuid, ${DRAFT_COLUMNS})
        WHERE t.id = d.id RETURNING t.*`,
      [chunk],
    );
    for (const row of rows) stored.set(row.id, toolFromRow(row));
  }
  for (const chunk of recordsetChunks(inserts)) {
    const { rows } = await client.query(
      `INSERT INTO tools (id, service_id, slug, source_key, name, description, tags, method, path, parameters, input_schema,
          request_body_schema, request_body_content_type, output, tips, example, version, side_effecting, security, mcp_tool_name,
          internal_handler, security_scopes, price_per_call_cents, deprecated, deprecation_message, passthrough_reason)
       SELECT d.id, $2, d.slug, d.source_key, d.name, d.description, d.tags, d.method, d.path, d.parameters, d.input_schema,
          d.request_body_schema, d.request_body_content_type, d.output, d.tips, d.example, d.version, d.side_effecting,
          d.security, d.mcp_tool_name, d.internal_handler, d.security_scopes, $3, d.deprecated, d.deprecation_message,
          d.passthrough_reason
         FROM jsonb_to_recordset($1::jsonb) AS d(id uuid, slug text, source_key text, deprecated boolean,
          deprecation_message text, ${DRAFT_COLUMNS})
       RETURNING *`,
      [chunk, options.serviceId, options.pricePerCallCents],
    );
    for (const row of rows) stored.set(row.id, toolFromRow(row));
  }
  const tools = order.map((id) => stored.get(id) as ToolRecord);
  const missing = existing.rows.filter((r) => !seen.has(r.source_key)).map((r) => r.id);
  return { tools, missing };
}

const toolColumns: Record<keyof ToolPatch, string> = {
  name: "name",
  slug: "slug",
  description: "description",
  tips: "tips",
  tags: "tags",
  output: "output",
  version: "version",
  pricePerCallCents: "price_per_call_cents",
  sideEffecting: "side_effecting",
  status: "status",
  deprecated: "deprecated",
  deprecationMessage: "deprecation_message",
  sunsetDate: "sunset_date",
  passthroughReason: "passthrough_reason",
};

export async function updateTool(client: PoolClient, id: string, patch: ToolPatch): Promise<ToolRecord> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [key, value] of Object.entries(patch) as [keyof ToolPatch, unknown][]) {
    if (value === undefined) continue;
    params.push(key === "output" && value !== null ? JSON.stringify(value) : value);
    sets.push(`${toolColumns[key]} = $${params.length}`);
  }
  const { rows } = await client.query(
    `UPDATE tools SET ${[...sets, "revision = revision + 1", "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING *`,
    params,
  );
  return toolFromRow(rows[0]);
}

export async function setToolsStatus(client: PoolClient, ids: string[], status: "active" | "inactive"): Promise<ToolRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await client.query(
    "UPDATE tools SET status = $2, revision = revision + 1, updated_at = now() WHERE id = ANY($1::uuid[]) RETURNING *",
    [ids, status],
  );
  return rows.map(toolFromRow);
}

export async function deleteTool(client: PoolClient, id: string): Promise<void> {
  await client.query("DELETE FROM tools WHERE id = $1", [id]);
}

/** Ids of tools of a service (for the per-tool change events of a service edit). */
export async function toolIdsOfService(q: Queryable, serviceId: string): Promise<{ id: string; revision: bigint }[]> {
  const { rows } = await q.query<{ id: string; revision: bigint }>("SELECT id, revision FROM tools WHERE service_id = $1", [
    serviceId,
  ]);
  return rows;
}

/** Which of the given ids name no service / no tool. Non-UUIDs name nothing. */
export async function unknownIds(q: Queryable, table: "services" | "tools", ids: string[]): Promise<string[]> {
  const uuids = ids.filter(isUuid);
  const { rows } = await q.query<{ id: string }>(`SELECT id::text AS id FROM ${table} WHERE id = ANY($1::uuid[])`, [uuids]);
  const known = new Set(rows.map((r) => r.id.toLowerCase()));
  return ids.filter((id) => !known.has(id.toLowerCase()));
}

/** The OAuth scopes the active tools of a service name for one security scheme, without repeats. */
export async function scopesOfServiceTools(q: Queryable, serviceId: string, schemeName: string): Promise<string[]> {
  const { rows } = await q.query<{ scope: string }>(
    `SELECT DISTINCT jsonb_array_elements_text(COALESCE(security_scopes -> $2, '[]'::jsonb)) AS scope
       FROM tools WHERE service_id = $1 AND status = 'active' ORDER BY scope`,
    [serviceId, schemeName],
  );
  return rows.map((r) => r.scope);
}

/**
 * The services `s` a signed-in caller sees (domain/access.ts `canSee`, as SQL): public and internal
 * ones, its organization's, and all for a platform admin. $1 is the caller's organization, $2 the
 * platform-admin flag.
 */
const SEEN_BY_CALLER = "(s.visibility IN ('public', 'internal') OR s.organization_id = $1 OR $2)";
const viewerParams = (who: Viewer) => [who.organizationId, who.isPlatformAdmin];

const CALLABLE_ROW = "t.id::text AS id, t.name, s.id::text AS service_id, s.name AS service_name";

interface CallableRow {
  id: string;
  name: string;
  service_id: string;
  service_name: string;
}

const callable = (r: CallableRow): CallableTool => ({
  id: r.id,
  name: r.name,
  serviceId: r.service_id,
  serviceName: r.service_name,
});

/**
 * The active, unsunset tools of live services the caller sees that pass both allow-lists (null = all),
 * counted, and the first `limit` by service name then tool name. One statement that reads only the rows
 * the lists and the visibility let through, never the whole catalog into memory (test/bench/callable-tools.ts).
 */
export async function callableTools(
  q: Queryable,
  who: Viewer,
  services: string[] | null,
  tools: string[] | null,
  limit: number,
): Promise<{ count: bigint; tools: CallableTool[] }> {
  const { rows } = await q.query<CallableRow & { total: string }>(
    `SELECT ${CALLABLE_ROW}, count(*) OVER ()::text AS total
       FROM tools t JOIN services s ON s.id = t.service_id
      WHERE ${SEEN_BY_CALLER}
        AND t.status = 'active' AND s.status <> 'retired' AND (t.sunset_date IS NULL OR t.sunset_date > now())
        AND ($3::uuid[] IS NULL OR s.id = ANY($3::uuid[]))
        AND ($4::uuid[] IS NULL OR t.id = ANY($4::uuid[]))
      ORDER BY s.name, t.name, t.id LIMIT $5`,
    [...viewerParams(who), services?.filter(isUuid) ?? null, tools?.filter(isUuid) ?? null, limit],
  );
  return { count: BigInt(rows[0]?.total ?? "0"), tools: rows.map(callable) };
}

/** The listed tools the caller sees, each with its service (for the allow-lists' warnings). */
export async function toolsWithServices(q: Queryable, who: Viewer, ids: string[]): Promise<CallableTool[]> {
  const { rows } = await q.query<CallableRow>(
    `SELECT ${CALLABLE_ROW} FROM tools t JOIN services s ON s.id = t.service_id
      WHERE ${SEEN_BY_CALLER} AND t.id = ANY($3::uuid[])`,
    [...viewerParams(who), ids.filter(isUuid)],
  );
  return rows.map(callable);
}

/** Names of the listed services the caller sees, by id (lower case). */
export async function serviceNamesById(q: Queryable, who: Viewer, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await q.query<{ id: string; name: string }>(
    `SELECT s.id::text AS id, s.name FROM services s WHERE ${SEEN_BY_CALLER} AND s.id = ANY($3::uuid[])`,
    [...viewerParams(who), ids.filter(isUuid)],
  );
  return new Map(rows.map((r) => [r.id.toLowerCase(), r.name]));
}

/**
 * Public, not retired services whose documentation URL or base URL has `domain` (lower case) as its host
 * or a parent of it, by name, at most 50.
 */
export async function servicesOnDomain(q: Queryable, domain: string): Promise<{ id: string; name: string }[]> {
  const { rows } = await q.query<{ id: string; name: string }>(
    `SELECT id, name FROM (
       SELECT id, name,
              lower(substring(documentation_url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)')) AS docs_host,
              lower(substring(coalesce(base_url, '') FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)')) AS api_host
         FROM services WHERE visibility = 'public' AND status <> 'retired') s
      WHERE docs_host = $1 OR docs_host LIKE '%.' || $1 OR api_host = $1 OR api_host LIKE '%.' || $1
      ORDER BY name, id LIMIT 50`,
    [domain],
  );
  return rows;
}
