/**
 * Starts one Postgres and one NATS JetStream for the whole integration run, on free ports in a
 * temporary folder, and removes them afterwards. Tests get their URLs through `inject()` and
 * create their own databases on that server (see `testDatabase`), so files never share state.
 * It runs beside a running `npm start`: nothing here uses the launcher's ports or `.data/`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
    natsUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const root = await mkdtemp(path.join(os.tmpdir(), "toolport-test-"));
  const quiet = { info() {}, warn() {}, error: console.error };
  // Two test files run at once, each with whole stacks (six services' pools, up to 10 connections each)
  // and, in the matrices, a pool per database to fingerprint them: more than Postgres' default 100.
  const pg = await startPostgres({
    dataDir: path.join(root, "pg"),
    port: await freePort(),
    log: quiet,
    fast: true,
    // pg_stat_statements: test/e2e/catalog-bounded-reads.test.ts counts the rows each route reads.
    settings: { max_connections: 300, shared_preload_libraries: "pg_stat_statements" },
  });
  const nats = await startNats({ storeDir: path.join(root, "nats"), port: await freePort(), log: quiet });
  project.provide("pgUrl", pg.url);
  project.provide("natsUrl", nats.url);
  return async () => {
    await nats.stop();
    await pg.stop();
    await rm(root, { recursive: true, force: true });
  };
}
