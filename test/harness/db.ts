/** A fresh database per test file on the run's shared Postgres server. */
import { randomBytes } from "node:crypto";
import { createPool, ensureDatabase, type Pool } from "@toolport/kit/pg";
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

/** The server URL (database `postgres`), as DATABASE_URL is given to services. */
export function serverUrl(): string {
  return inject("pgUrl");
}
