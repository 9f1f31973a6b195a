/**
 * The catalog's read side in SQL: visibility, listability, readiness order, filters and paging happen
 * in the statement, and only the rows of the page asked for come back, so no request reads the whole
 * catalog into memory however large it grows (issue 30; test/e2e/catalog-bounded-reads.test.ts counts
 * the rows each route reads, test/bench/catalog-scale.ts times them at 100,000 tools).
 *
 * Pages are keyset pages: the cursor carries the last row's sort key, so a page never repeats or skips a
 * tool when services are added or removed between pages (a tool whose own sort key changes in between,
 * e.g. by turning ready, may move across the cursor: the price of not holding a snapshot).
 */
import { invalidArgument } from "@toolport/kit/errors";
import type { ServiceRecord, ToolRecord, ToolWithService } from "../domain/model.js";
import type { Page, Reader, ToolListFilter, UsableFilter } from "../domain/ports.js";
import { isUuid } from "../domain/slug.js";
import type { PageCache } from "./page-cache.js";
import { LIGHT_TOOL_JSON, prepared, type Queryable, SMALL_TOOL_JSON, serviceFromRow, toolFromRow } from "./rows.js";

/** Active tools of live services, not past their sunset date (the listable ones). */
const LISTABLE = "t.status = 'active' AND s.status <> 'retired' AND (t.sunset_date IS NULL OR t.sunset_date > now())";

/** The tool's parameters as an object (always, in practice; a guard for jsonb_each). */
const PARAMETERS = "jsonb_each(CASE WHEN jsonb_typeof(t.parameters) = 'object' THEN t.parameters ELSE '{}'::jsonb END)";
/**
 * What a page of the Tool shape needs (handlers/convert.ts toolToProto): the row without the input schema,
 * request body schema and example, which the shape does not carry (at 100 directory tools a page, 3.1 MB
 * of rows become 1.6 MB), and its service without its description (repeated on every row). The output and
 * each parameter's JSON Schema, most of what is left, come apart as text (`output_text`,
 * `parameter_schemas`), which the catalog and the gateway hand on without parsing it (ToolRecord.rawJson).
 * The small columns are named (SMALL_TOOL_JSON): `to_jsonb(t) - ...` read and converted the large ones only
 * to drop them, 25-35 ms of a 20-tool GET /tools page against 5 (EXPLAIN ANALYZE at 100,085 tools).
 */
const PAGE_TOOL = `${SMALL_TOOL_JSON}
    || jsonb_build_object('parameters', (SELECT coalesce(jsonb_object_agg(p.key, p.value - 'jsonSchema'), '{}'::jsonb) FROM ${PARAMETERS} AS p))
  AS tool,
  t.output::text AS output_text,
  (SELECT jsonb_object_agg(p.key, (p.value -> 'jsonSchema')::text) FROM ${PARAMETERS} AS p WHERE p.value ? 'jsonSchema') AS parameter_schemas`;
const PAGE_SERVICE = "to_jsonb(s) - 'description'";

/** Builds one statement's parameters and the SQL fragments that use them. */
class Statement {
  readonly params: unknown[] = [];
  readonly where: string[] = [];

  /** `$n` for the value. */
  bind(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /**
   * What the reader sees (domain/access.ts canSee, as SQL): anonymous callers and the public surface see
   * public services; a signed-in caller also internal ones and its organization's; a platform admin all.
   */
  visibleTo(reader: Reader | null, publicOnly = false): this {
    if (reader === null || publicOnly) this.where.push("s.visibility = 'public'");
    else
      this.where.push(
        `(s.visibility IN ('public', 'internal') OR s.organization_id = ${this.bind(reader.organizationId)} OR ${this.bind(reader.isPlatformAdmin)})`,
      );
    return this;
  }

  listable(): this {
    this.where.push(LISTABLE);
    return this;
  }

  /**
   * 1 when the signed-in reader cannot call the tool now (domain/readiness.ts for listable tools: its
   * key's allow-lists leave it out, or it needs a credential nobody connected for the reader or its
   * organization), else 0; always 0 for anonymous readers, whose order ignores readiness.
   */
  notReady(reader: Reader | null): string {
    if (reader === null) return "0";
    const services = this.bind(reader.allowedServices?.filter(isUuid) ?? null);
    const tools = this.bind(reader.allowedTools?.filter(isUuid) ?? null);
    const account = this.bind(reader.accountId);
    const organization = this.bind(reader.organizationId);
    return `CASE WHEN NOT ((${services}::uuid[] IS NULL OR s.id = ANY(${services}::uuid[]))
                          AND (${tools}::uuid[] IS NULL OR t.id = ANY(${tools}::uuid[]))) THEN 1
                 WHEN cardinality(t.security) > 0 AND NOT EXISTS (
                        SELECT 1 FROM credentials c
                         WHERE c.service_id = s.id AND c.status = 'active'
                           AND ((c.scope = 'caller' AND c.owner_id = ${account})
                             OR (c.scope = 'organization' AND c.owner_id = ${organization}))) THEN 1
                 ELSE 0 END`;
  }

  where_(): string {
    return this.where.length ? `WHERE ${this.where.join(" AND ")}` : "";
  }
}

// ---- cursors ----------------------------------------------------------------------------------

type Key = (string | number | boolean)[];

/** An opaque cursor: which list it pages and the last row's sort key. */
function encodeCursor(list: string, key: Key): string {
  return Buffer.from(JSON.stringify([list, ...key])).toString("base64url");
}

const invalidCursor = () =>
  invalidArgument("invalid_cursor", "cursor: not a cursor this list returned (pass the one from the Link header)", {
    details: { field: "cursor" },
  });

/** The sort key in a cursor of `list`, checked against the key's shape (`types`); anything else is a 400. */
function decodeCursor(list: string, cursor: string, types: ("string" | "number" | "boolean" | "uuid")[]): Key {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed[0] !== list || parsed.length !== types.length + 1) throw invalidCursor();
  const key = parsed.slice(1) as Key;
  types.forEach((type, i) => {
    const v = key[i];
    const ok = type === "uuid" ? typeof v === "string" && isUuid(v) : typeof v === type;
    if (!ok) throw invalidCursor();
  });
  return key;
}

/** Splits `rows` (read with limit + 1) into the page and the next cursor. */
function pageOf<R, T>(rows: R[], limit: number, keyOf: (row: R) => string, map: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), next: more && last !== undefined ? keyOf(last) : undefined };
}

// ---- tools ------------------------------------------------------------------------------------

/** A row of PAGE_TOOL. */
interface PageToolRow {
  tool: Record<string, unknown>;
  output_text: string | null;
  parameter_schemas: Record<string, string> | null;
  version: string;
}

/** The key of a page's row: the tool's and its service's ids and versions (see page-cache.ts). */
interface PageKeyRow {
  id: string;
  tool_version: string;
  service_id: string;
  service_version: string;
}

interface ToolKeyRow extends PageKeyRow {
  is_demo: boolean;
  not_ready: number;
  service_name: string;
  tool_name: string;
}

/** SQL: the version columns of PageKeyRow for the tool `t` and its service `s`. */
const PAGE_KEY = "t.id::text AS id, t.xmin::text AS tool_version, s.id::text AS service_id, s.xmin::text AS service_version";

const toPair = (r: { tool: Record<string, unknown>; service: Record<string, unknown> }): ToolWithService => ({
  tool: toolFromRow(r.tool),
  service: serviceFromRow(r.service),
});

const pageTool = (r: PageToolRow): ToolRecord => ({
  ...toolFromRow(r.tool),
  rawJson: { output: r.output_text, schemas: r.parameter_schemas ?? {} },
});

/**
 * The Tool shape's records of the rows `keys` name, from the cache where it holds the version the key
 * saw, else read (one statement per table) and kept. A row changed since the key was read comes back
 * as it is now; one deleted since is left out.
 */
async function pagePairs(q: Queryable, cache: PageCache, keys: PageKeyRow[]): Promise<Map<string, ToolWithService>> {
  const tools = new Map<string, ToolRecord>();
  const services = new Map<string, ServiceRecord>();
  const missingTools: string[] = [];
  const missingServices = new Set<string>();
  for (const k of keys) {
    const tool = cache.tool({ id: k.id, version: k.tool_version });
    if (tool) tools.set(k.id, tool);
    else missingTools.push(k.id);
    if (services.has(k.service_id) || missingServices.has(k.service_id)) continue;
    const service = cache.service({ id: k.service_id, version: k.service_version });
    if (service) services.set(k.service_id, service);
    else missingServices.add(k.service_id);
  }
  const [toolRows, serviceRows] = await Promise.all([
    missingTools.length === 0
      ? []
      : prepared<PageToolRow>(q, `SELECT ${PAGE_TOOL}, t.xmin::text AS version FROM tools t WHERE t.id = ANY($1::uuid[])`, [
          missingTools,
        ]).then((r) => r.rows),
    missingServices.size === 0
      ? []
      : prepared<{ service: Record<string, unknown>; version: string }>(
          q,
          `SELECT ${PAGE_SERVICE} AS service, s.xmin::text AS version FROM services s WHERE s.id = ANY($1::uuid[])`,
          [[...missingServices]],
        ).then((r) => r.rows),
  ]);
  for (const r of toolRows) {
    const tool = pageTool(r);
    cache.putTool({ id: tool.id, version: r.version }, tool);
    tools.set(tool.id, tool);
  }
  for (const r of serviceRows) {
    const service = serviceFromRow(r.service);
    cache.putService({ id: service.id, version: r.version }, service);
    services.set(service.id, service);
  }
  const out = new Map<string, ToolWithService>();
  for (const k of keys) {
    const tool = tools.get(k.id);
    const service = tool && services.get(tool.serviceId);
    if (tool && service) out.set(k.id, { tool, service });
  }
  return out;
}

/** The page of `rows` (read with limit + 1) as the Tool shape's records (see pagePairs), in their order. */
async function pageFrom<K extends PageKeyRow>(
  q: Queryable,
  cache: PageCache,
  rows: K[],
  limit: number,
  keyOf: (row: K) => string,
): Promise<Page<ToolWithService>> {
  const keys = pageOf(rows, limit, keyOf, (row) => row);
  const pairs = await pagePairs(q, cache, keys.items);
  return {
    items: keys.items.map((k) => pairs.get(k.id)).filter((p): p is ToolWithService => p !== undefined),
    next: keys.next,
  };
}

/**
 * One page of the listable tools the reader sees, in the list order (GET /tools, blank search): real
 * services before sample-data ones, then, for a signed-in reader, tools it can call now first, then by
 * service name, tool name and id. Only the page's rows are read, without what the Tool shape leaves out.
 */
export async function listToolPage(
  q: Queryable,
  cache: PageCache,
  reader: Reader | null,
  filter: ToolListFilter,
  page: { limit: number; cursor?: string },
): Promise<Page<ToolWithService>> {
  const st = new Statement().visibleTo(reader, filter.publicOnly).listable();
  const notReady = st.notReady(filter.publicOnly ? null : reader);
  if (filter.serviceId) st.where.push(`s.id = ${st.bind(filter.serviceId)}::uuid`);
  if (filter.tags?.length) st.where.push(`t.tags @> ${st.bind(filter.tags)}::text[]`);
  const outer: string[] = [];
  if (filter.readyOnly) outer.push("k.not_ready = 0");
  if (page.cursor) {
    const [demo, nr, sname, tname, id] = decodeCursor("tools", page.cursor, ["boolean", "number", "string", "string", "uuid"]);
    outer.push(
      `(k.is_demo, k.not_ready, k.service_name, k.tool_name, k.id) > (${st.bind(demo)}::boolean, ${st.bind(nr)}::int, ${st.bind(sname)}::text, ${st.bind(tname)}::text, ${st.bind(id)}::uuid)`,
    );
  }
  const { rows } = await prepared<ToolKeyRow>(
    q,
    `WITH k AS (
       SELECT t.id, t.xmin::text AS tool_version, s.id::text AS service_id, s.xmin::text AS service_version,
              s.is_demo, ${notReady} AS not_ready, s.name AS service_name, t.name AS tool_name
         FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()})
     SELECT * FROM k ${outer.length ? `WHERE ${outer.join(" AND ")}` : ""}
      ORDER BY k.is_demo, k.not_ready, k.service_name, k.tool_name, k.id LIMIT ${st.bind(page.limit + 1)}`,
    st.params,
  );
  return pageFrom(q, cache, rows, page.limit, (r) =>
    encodeCursor("tools", [r.is_demo, r.not_ready, r.service_name, r.tool_name, r.id]),
  );
}

/** One page of a service's listable tools by name (GET /services/public/{id}/tools). */
export async function serviceToolPage(
  q: Queryable,
  cache: PageCache,
  serviceId: string,
  page: { limit: number; cursor?: string },
): Promise<Page<ToolWithService>> {
  const st = new Statement().listable();
  st.where.push(`t.service_id = ${st.bind(serviceId)}::uuid`);
  if (page.cursor) {
    const [name, id] = decodeCursor("service_tools", page.cursor, ["string", "uuid"]);
    st.where.push(`(t.name, t.id) > (${st.bind(name)}::text, ${st.bind(id)}::uuid)`);
  }
  const { rows } = await prepared<PageKeyRow & { name: string }>(
    q,
    `SELECT ${PAGE_KEY}, t.name
       FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()}
      ORDER BY t.name, t.id LIMIT ${st.bind(page.limit + 1)}`,
    st.params,
  );
  return pageFrom(q, cache, rows, page.limit, (r) => encodeCursor("service_tools", [r.name, r.id]));
}

/** One page of public services by the list order: real before sample-data ones, then name and id. */
export async function publicServicePage(q: Queryable, page: { limit: number; cursor?: string }): Promise<Page<ServiceRecord>> {
  const st = new Statement();
  st.where.push("visibility = 'public'");
  if (page.cursor) {
    const [demo, name, id] = decodeCursor("services", page.cursor, ["boolean", "string", "uuid"]);
    st.where.push(`(is_demo, name, id) > (${st.bind(demo)}::boolean, ${st.bind(name)}::text, ${st.bind(id)}::uuid)`);
  }
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT * FROM services ${st.where_()} ORDER BY is_demo, name, id LIMIT ${st.bind(page.limit + 1)}`,
    st.params,
  );
  return pageOf(
    rows,
    page.limit,
    (r) => encodeCursor("services", [Boolean(r.is_demo), String(r.name), String(r.id)]),
    serviceFromRow,
  );
}

// ---- bounded lookups (recommendations, starters) ---------------------------------------------

/**
 * At most `limit` listable tools the reader sees that pass the filter, in the list order (real services
 * first, then service name, tool name), as light rows; with `toolIds`, in no particular order.
 */
export async function usableTools(
  q: Queryable,
  reader: Reader | null,
  filter: UsableFilter,
  limit: number,
): Promise<ToolWithService[]> {
  if (limit <= 0) return [];
  const st = new Statement().visibleTo(reader).listable();
  if (filter.toolIds) st.where.push(`t.id = ANY(${st.bind(filter.toolIds.filter(isUuid))}::uuid[])`);
  if (filter.serviceIds) st.where.push(`t.service_id = ANY(${st.bind(filter.serviceIds.filter(isUuid))}::uuid[])`);
  if (filter.anyTag) st.where.push(`t.tags && ${st.bind(filter.anyTag)}::text[]`);
  if (filter.credentialFree) st.where.push("cardinality(t.security) = 0 AND t.price_per_call_cents = 0");
  if (filter.exceptIds?.length) st.where.push(`NOT (t.id = ANY(${st.bind(filter.exceptIds.filter(isUuid))}::uuid[]))`);
  const { rows } = await q.query(
    `SELECT ${LIGHT_TOOL_JSON} AS tool, to_jsonb(s) AS service FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()}
      ORDER BY s.is_demo, s.name, t.name, t.id LIMIT ${st.bind(limit)}`,
    st.params,
  );
  return rows.map(toPair);
}

/** These tools as a page of the Tool shape reads them (PAGE_TOOL), in no order; the caller chose them. */
export async function pageToolsByIds(q: Queryable, cache: PageCache, ids: string[]): Promise<ToolWithService[]> {
  if (ids.length === 0) return [];
  const { rows } = await prepared<PageKeyRow>(
    q,
    `SELECT ${PAGE_KEY} FROM tools t JOIN services s ON s.id = t.service_id WHERE t.id = ANY($1::uuid[])`,
    [ids.filter(isUuid)],
  );
  return [...(await pagePairs(q, cache, rows)).values()];
}

/**
 * Up to `limit` credential-free, free, public, not deprecated tools for a new agent's first call, one per
 * service first: built-in tools (real, then sample-data ones), then verified services', then the rest;
 * within each, the most used (`popular`, most used first) then the oldest. Full rows (the example input
 * comes from the schema).
 */
export async function starterTools(q: Queryable, popular: string[], limit: number): Promise<ToolWithService[]> {
  const st = new Statement().visibleTo(null).listable();
  st.where.push("cardinality(t.security) = 0 AND t.price_per_call_cents = 0 AND NOT t.deprecated");
  const rank = `CASE WHEN s.service_type = 'internal' THEN (CASE WHEN s.is_demo THEN 1 ELSE 0 END)
                     WHEN s.verification_tier <> 'unverified' THEN 2 ELSE 3 END`;
  const pop = `coalesce(array_position(${st.bind(popular.filter(isUuid))}::uuid[], t.id), 1000000000)`;
  const { rows } = await q.query(
    `SELECT to_jsonb(t) - 'search_parameters' AS tool, to_jsonb(s) AS service FROM (
       SELECT t.id, ${rank} AS rank, ${pop} AS pop, t.created_at,
              row_number() OVER (PARTITION BY s.id ORDER BY ${rank}, ${pop}, t.created_at, t.id) AS nth
         FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()}
        ORDER BY (row_number() OVER (PARTITION BY s.id ORDER BY ${rank}, ${pop}, t.created_at, t.id) > 1), 2, 3, 4, 1
        LIMIT ${st.bind(limit)}) c
       JOIN tools t ON t.id = c.id JOIN services s ON s.id = t.service_id
      ORDER BY (c.nth > 1), c.rank, c.pop, c.created_at, c.id`,
    st.params,
  );
  return rows.map(toPair);
}

/**
 * The tool named `name` (case-insensitive) that the reader sees, not past its sunset date: an active tool
 * of a live service before others, a real service's before a sample-data one's, then the oldest.
 */
export async function toolNamed(q: Queryable, reader: Reader | null, name: string): Promise<ToolWithService | null> {
  const st = new Statement().visibleTo(reader);
  st.where.push(`lower(t.name) = lower(${st.bind(name.trim())})`, "(t.sunset_date IS NULL OR t.sunset_date > now())");
  const { rows } = await q.query(
    `SELECT to_jsonb(t) - 'search_parameters' AS tool, to_jsonb(s) AS service FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()}
      ORDER BY NOT (t.status = 'active' AND s.status <> 'retired'), s.is_demo, t.created_at, t.id LIMIT 1`,
    st.params,
  );
  return rows[0] ? toPair(rows[0]) : null;
}

/** Ids of at most `limit` listable tools the reader sees named exactly `query` (case-insensitive) or slugged so. */
export async function exactMatchIds(
  q: Queryable,
  reader: Reader | null,
  publicOnly: boolean,
  query: string,
  limit: number,
): Promise<string[]> {
  const st = new Statement().visibleTo(reader, publicOnly).listable();
  const text = st.bind(query.trim());
  st.where.push(`(lower(t.name) = lower(${text}) OR t.slug = lower(${text}))`);
  const { rows } = await q.query<{ id: string }>(
    `SELECT t.id::text AS id FROM tools t JOIN services s ON s.id = t.service_id ${st.where_()}
      ORDER BY s.is_demo, t.created_at, t.id LIMIT ${st.bind(limit)}`,
    st.params,
  );
  return rows.map((r) => r.id);
}
