/**
 * A fingerprint of everything a stack has stored: one md5 per table of every service database, over
 * the table's rows in a fixed order, so two fingerprints differ exactly when some table's contents did.
 * A few columns and one table are left out (IGNORED_COLUMNS, IGNORED_TABLES): each is bookkeeping that
 * changes without any request, or on a request whatever its answer, and the comment beside it says why.
 */
import { createPool, type Pool } from "@toolport/kit/pg";
import { type Stack, serviceNames } from "../../harness/stack.js";

/**
 * Columns left out of a table's fingerprint, by table name. Only these (and IGNORED_TABLES): every
 * other column of every table counts.
 */
const IGNORED_COLUMNS: Record<string, string[]> = {
  // The outbox relay marks a row published when NATS took it (kit/outbox): the row itself, written in
  // the request's own transaction, still counts; its relay bookkeeping is asynchronous.
  outbox: ["published_at", "attempts", "last_error", "claimed_until"],
  // Authentication records when a key was last used (throttled, identity's lease_call_allowance): a
  // request refused after its key authenticated (a bad body, an unknown id) did use the key.
  api_keys: ["last_used_at"],
};

/**
 * Tables left out whole. rate_limit_windows (identity) counts attempts per client IP or key in a
 * window: failed logins, registrations, public searches and tool calls count whatever the answer, which
 * is what lets a limit stop a client hammering a route with bad requests.
 */
const IGNORED_TABLES = new Set(["rate_limit_windows"]);

export type Fingerprint = Map<string, string>;

export interface StateProbe {
  /** Every table's hash, keyed `<service>.<table>`. */
  fingerprint(): Promise<Fingerprint>;
  close(): Promise<void>;
}

interface Database {
  service: string;
  pool: Pool;
  query: string;
}

/** The tables of the service's database, and one statement hashing them all. */
async function prepareDatabase(service: string, url: string): Promise<Database> {
  const pool = createPool(url, 2);
  const tables = await pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY 1, 2`,
  );
  const columns = await pool.query<{ name: string; column: string }>(
    `SELECT table_name AS name, column_name AS column FROM information_schema.columns
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const present = new Set(columns.rows.map((c) => `${c.name}.${c.column}`));
  const parts = tables.rows
    .filter(({ name }) => !IGNORED_TABLES.has(name))
    .map(({ schema, name }) => {
      const drop = (IGNORED_COLUMNS[name] ?? []).filter((c) => present.has(`${name}.${c}`));
      const row = drop.length ? `(to_jsonb(t) - ARRAY[${drop.map((c) => `'${c}'`).join(",")}]::text[])::text` : "t::text";
      const id = `${schema}.${name}`;
      return `SELECT '${id}' AS name, (SELECT md5(coalesce(string_agg(${row}, E'\\n' ORDER BY ${row}), '')) FROM "${schema}"."${name}" t) AS hash`;
    });
  const query = parts.length ? parts.join(" UNION ALL ") : "SELECT NULL::text AS name, NULL::text AS hash WHERE false";
  return { service, pool, query };
}

export async function stateProbe(stack: Stack): Promise<StateProbe> {
  const databases = await Promise.all(serviceNames.map((s) => prepareDatabase(s, stack.env[`${s.toUpperCase()}_DATABASE_URL`]!)));
  return {
    async fingerprint() {
      const all = await Promise.all(
        databases.map(async (d) => {
          const res = await d.pool.query<{ name: string; hash: string }>(d.query);
          return res.rows.map((r) => [`${d.service}.${r.name}`, r.hash] as const);
        }),
      );
      return new Map(all.flat());
    },
    async close() {
      await Promise.all(databases.map((d) => d.pool.end()));
    },
  };
}

/** The tables whose hash differs between two fingerprints (tables that appeared or vanished too). */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}
