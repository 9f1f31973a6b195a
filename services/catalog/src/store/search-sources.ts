/**
 * What the search index is built from, read lean for the rebuild on start: only the columns a search
 * document is made of (never the schema columns, never to_jsonb of whole rows), tools a page at a time
 * in id order (keyset paging on the primary key), and each service's fields once rather than with each
 * of its tools. At 100,000 tools the whole-row read held every schema in memory at once (gigabytes) and
 * spent most of the restart serializing them in Postgres.
 */
import type { ServiceRecord, ToolParameterInfo, ToolRecord } from "../domain/model.js";
import type { Queryable } from "./rows.js";

/** A service's fields that its tools' search documents carry. */
export type ServiceSearchFields = Pick<
  ServiceRecord,
  "id" | "name" | "slug" | "summary" | "description" | "isDemo" | "status" | "visibility" | "organizationId"
>;

/** A tool's fields that its search document is made of (its parameters by name, with their descriptions only). */
export type ToolSearchFields = Pick<
  ToolRecord,
  "id" | "slug" | "name" | "description" | "tags" | "status" | "sunsetDate" | "revision"
> & {
  serviceId: string;
  parameters: Record<string, Pick<ToolParameterInfo, "description">>;
};

const SERVICE_FIELDS =
  "SELECT id::text AS id, name, slug, summary, description, is_demo, status, visibility, organization_id FROM services";

const serviceFields = (r: Record<string, unknown>): ServiceSearchFields => ({
  id: String(r.id),
  name: String(r.name),
  slug: String(r.slug),
  summary: String(r.summary ?? ""),
  description: String(r.description ?? ""),
  isDemo: Boolean(r.is_demo),
  status: r.status as ServiceRecord["status"],
  visibility: r.visibility as ServiceRecord["visibility"],
  organizationId: r.organization_id === null || r.organization_id === undefined ? null : String(r.organization_id),
});

/** Every service's search fields, or those of `ids`, by id. */
export async function serviceSearchFields(q: Queryable, ids?: string[]): Promise<Map<string, ServiceSearchFields>> {
  const { rows } = ids ? await q.query(`${SERVICE_FIELDS} WHERE id = ANY($1::uuid[])`, [ids]) : await q.query(SERVICE_FIELDS);
  return new Map(rows.map((r) => [String(r.id), serviceFields(r)]));
}

/**
 * One page of tools' search fields after `afterId` (null: from the start), in id order. Parameters
 * keep only their descriptions (the generated column `search_parameters`, migration 0005): a
 * parameter's json_schema can be as large as the tool's input schema. A parameter without a
 * description stays without one, as the whole record has it.
 */
export async function toolSearchFieldsPage(q: Queryable, afterId: string | null, limit: number): Promise<ToolSearchFields[]> {
  const { rows } = await q.query(
    `SELECT t.id::text AS id, t.service_id::text AS service_id, t.slug, t.name, t.description, t.tags, t.status, t.sunset_date,
            t.revision, t.search_parameters AS parameters
       FROM tools t
      WHERE $1::uuid IS NULL OR t.id > $1::uuid
      ORDER BY t.id
      LIMIT $2`,
    [afterId, limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    serviceId: String(r.service_id),
    slug: String(r.slug),
    name: String(r.name),
    description: String(r.description ?? ""),
    tags: (r.tags as string[]) ?? [],
    status: r.status as ToolRecord["status"],
    sunsetDate: r.sunset_date === null || r.sunset_date === undefined ? null : new Date(r.sunset_date as string | Date),
    revision: BigInt(r.revision as string),
    parameters: r.parameters as ToolSearchFields["parameters"],
  }));
}

/** What a tool's search document depends on, besides its service: see search/index-snapshot.ts. */
export interface ToolVersionFields {
  id: string;
  serviceId: string;
  revision: bigint;
  sunsetDate: Date | null;
}

/** Every tool's version fields: a narrow read (about 60 bytes a tool), for checking a snapshot against Postgres. */
export async function toolVersionFields(q: Queryable): Promise<ToolVersionFields[]> {
  const { rows } = await q.query("SELECT id::text AS id, service_id::text AS service_id, revision, sunset_date FROM tools");
  return rows.map((r) => ({
    id: String(r.id),
    serviceId: String(r.service_id),
    revision: BigInt(r.revision as string),
    sunsetDate: r.sunset_date === null || r.sunset_date === undefined ? null : new Date(r.sunset_date as string | Date),
  }));
}
