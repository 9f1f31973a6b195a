/**
 * SQL over directory_imports (migrations/0004): which catalog service was imported from which entry of
 * the APIs.guru directory. The row is written in the publishing transaction of the service itself, so a
 * service and its mark are stored together or not at all.
 */
import type { PoolClient } from "@toolport/kit/pg";
import type { Queryable } from "./rows.js";

/**
 * Marks `serviceId` as imported from `entry`; false when another service already holds the entry (the
 * unique index waits for a concurrent import of the same entry to commit or roll back first).
 */
export async function recordDirectoryImport(
  client: PoolClient,
  serviceId: string,
  entry: string,
  version: string,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `INSERT INTO directory_imports (service_id, entry, directory_version) VALUES ($1, $2, $3)
     ON CONFLICT (entry) DO NOTHING`,
    [serviceId, entry, version],
  );
  return (rowCount ?? 0) > 0;
}

/** The service imported from each of `entries` that has one (entry -> service id). */
export async function directoryImports(q: Queryable, entries: readonly string[]): Promise<Map<string, string>> {
  if (entries.length === 0) return new Map();
  const { rows } = await q.query<{ entry: string; service_id: string }>(
    "SELECT entry, service_id FROM directory_imports WHERE entry = ANY($1::text[])",
    [entries],
  );
  return new Map(rows.map((r) => [r.entry, r.service_id]));
}
