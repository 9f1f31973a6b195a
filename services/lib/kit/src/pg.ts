/**
 * Postgres: one pool per service on the service's own database, created if missing, with versioned
 * SQL migrations applied at start under an advisory lock so replicas starting together are safe.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Logger } from "./logger.js";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// Postgres BIGINT (int8) arrives as a string by default; money and counters are bigint here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

/** The kit's own tables (outbox, inbox, dead letters), applied before a service's migrations. */
export const kitMigrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/**
 * The database URL a service uses: `<SERVICE>_DATABASE_URL` when given, otherwise the server in
 * `DATABASE_URL` with the database name replaced by `toolport_<service>`.
 */
export function serviceDatabaseUrl(service: string, serverUrl: string, override?: string): string {
  if (override) return override;
  const url = new URL(serverUrl);
  url.pathname = `/toolport_${service.replace(/-/g, "_")}`;
  return url.toString();
}

/**
 * Creates the database named in `databaseUrl` when it does not exist (local and test setups). A database
 * that exists is only connected to, so a credential without rights on the `postgres` database (a runtime
 * role when migrations run as another) passes.
 */
export async function ensureDatabase(databaseUrl: string, log?: Logger): Promise<void> {
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return;
  } catch (err) {
    // 3D000: the database does not exist; anything else is for the caller to see.
    if ((err as { code?: string }).code !== "3D000") throw err;
  } finally {
    await probe.end().catch(() => {});
  }
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
        log?.info({ database: name }, "created database");
      } catch (err) {
        // Another replica created it between our check and our CREATE: that is fine. Postgres says so
        // with 42P04 (duplicate_database) when that CREATE had committed, and with 23505 (a unique
        // violation on pg_database's name index) when both ran at once (found by two replicas starting
        // together, test/soak/replicas.test.ts).
        const code = (err as { code?: string }).code;
        if (code !== "42P04" && code !== "23505") throw err;
      }
    }
  } finally {
    await client.end();
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A pool on `databaseUrl`. `synchronousCommit: false` gives sessions whose commits do not wait for the
 * WAL flush (synchronous_commit = off): a Postgres crash may forget their last few hundred milliseconds
 * of commits (up to 3 x wal_writer_delay), never corrupt them. For writes whose loss is safe by design.
 */
export function createPool(databaseUrl: string, max = 10, options: { synchronousCommit?: boolean } = {}): Pool {
  let connectionString = databaseUrl;
  if (options.synchronousCommit === false) {
    const url = new URL(databaseUrl);
    url.searchParams.set("options", "-c synchronous_commit=off");
    connectionString = url.toString();
  }
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // Nor may a checked-out one between queries (a LISTEN connection, a transaction awaiting other work)
  // when Postgres ends it, e.g. at a restart: its next query fails instead, and the pool drops it on release.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/**
 * Deletes the rows of `table` that `where` selects (its parameters in `values`, numbered from $1), at most
 * `chunk` a statement, so each transaction stays short however far behind a prune is; returns how many.
 * For the prunes of tables that pile up (catalog's execution facts, a consumer's inbox): give `where` an
 * index to use.
 */
export async function deleteInChunks(
  q: { query: Pool["query"] },
  table: string,
  where: string,
  values: unknown[],
  chunk = 10_000,
): Promise<number> {
  const name = quoteIdent(table);
  let deleted = 0;
  for (;;) {
    const { rowCount } = await q.query(
      `DELETE FROM ${name} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${name} WHERE ${where} LIMIT $${values.length + 1}))`,
      [...values, chunk],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < chunk) return deleted;
  }
}

/** Postgres codes of a transaction that lost a deadlock or a serialization conflict: safe to run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * Runs `fn` in a transaction. With `attempts` > 1, a transaction Postgres rolled back as a deadlock
 * victim or for a serialization conflict is run again from the start (so `fn` must be re-runnable).
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  { attempts = 1 }: { attempts?: number } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      if (attempt < attempts && RETRYABLE.has((err as { code?: string } | null)?.code ?? "")) continue;
      throw err;
    } finally {
      client.release();
    }
  }
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

async function readMigrations(dir: string, namespace: string): Promise<MigrationFile[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    // A service with no tables of its own yet has no migrations folder.
    if ((err as { code?: string }).code === "ENOENT") return [];
    throw err;
  }
  const files = entries.filter((f) => f.endsWith(".sql")).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), "utf8");
      return { name: `${namespace}/${file}`, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

// Arbitrary constant: every Toolport service takes the same lock id within its own database.
const MIGRATION_LOCK_ID = 7_401_2024;

/**
 * Applies every migration not yet recorded, each in its own transaction, in file-name order.
 * Running it again is a no-op; a recorded migration whose file changed is refused, because the
 * database no longer matches what the file says.
 */
export async function migrate(pool: Pool, sources: { dir: string; namespace: string }[], log?: Logger): Promise<string[]> {
  const migrations = (await Promise.all(sources.map((s) => readMigrations(s.dir, s.namespace)))).flat();
  // Every migration applied already (the usual start): nothing to lock or create, so a runtime credential
  // with no DDL rights starts when a migration Job applied them with another.
  const pending = await pendingMigrations(pool, migrations);
  if (pending.length === 0) return [];
  try {
    return await applyMigrations(pool, migrations, log);
  } catch (err) {
    if ((err as { code?: string }).code === "42501" || (err as { cause?: { code?: string } }).cause?.code === "42501") {
      throw new Error(
        `migrations ${pending.join(", ")} are not applied and this database user may not apply them ` +
          `(${(err as Error).message}): run \`--migrate\` with the migration credential first (deploy/k8s: the migration Job)`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** The migrations not recorded as applied (all of them when the record table does not exist yet), read without a lock. */
async function pendingMigrations(pool: Pool, migrations: MigrationFile[]): Promise<string[]> {
  const { rows: found } = await pool.query<{ table: string | null }>("SELECT to_regclass('schema_migrations')::text AS table");
  if (!found[0]?.table) return migrations.map((m) => m.name);
  const { rows } = await pool.query<{ name: string; checksum: string }>("SELECT name, checksum FROM schema_migrations");
  const done = new Map(rows.map((r) => [r.name, r.checksum]));
  // A changed file counts as pending: applyMigrations refuses it with its own message.
  return migrations.filter((m) => done.get(m.name) !== m.checksum).map((m) => m.name);
}

async function applyMigrations(pool: Pool, migrations: MigrationFile[], log?: Logger): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ name: string; checksum: string }>("SELECT name, checksum FROM schema_migrations");
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const m of migrations) {
      const recorded = done.get(m.name);
      if (recorded !== undefined) {
        if (recorded !== m.checksum) {
          throw new Error(`migration ${m.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)", [m.name, m.checksum]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.name);
      log?.info({ migration: m.name }, "applied migration");
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}
