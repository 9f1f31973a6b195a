/** A fresh database per test file on the run's shared Postgres server. */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createPool, ensureDatabase, kitMigrationsDir, migrate, type Pool } from "@toolport/kit/pg";
import { inject } from "vitest";

export interface TestDatabase {
  url: string;
  name: string;
  pool: Pool;
}

export async function testDatabase(prefix: string): Promise<TestDatabase> {
  const name = `t_${prefix}_${randomBytes(4).toString("hex")}`;
  const url = new URL(inject("pgUrl"));
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  return { url: url.toString(), name, pool: createPool(url.toString(), 5) };
}

/**
 * A fresh database with the kit's migrations (the outbox, the inbox) applied and, when `service` names
 * one (its folder under services/, which is also its migrations' namespace), that service's after them:
 * the tables a service's stores and handlers run on, as the service's start would leave them.
 */
export async function migratedDatabase(prefix: string, service?: string): Promise<TestDatabase> {
  const db = await testDatabase(prefix);
  const sources = [{ dir: kitMigrationsDir, namespace: "kit" }];
  if (service) {
    sources.push({ dir: fileURLToPath(new URL(`../../services/${service}/migrations`, import.meta.url)), namespace: service });
  }
  await migrate(db.pool, sources);
  return db;
}

/** The server URL (database `postgres`), as DATABASE_URL is given to services. */
export function serverUrl(): string {
  return inject("pgUrl");
}
