/**
 * Migrations with a credential of their own, the runtime one with rows only (components/migration-job,
 * deploy/k8s/README.md "Migrations"), against the run's real Postgres:
 *
 * 1. two database users as the README has them: a migration user that may create databases, and a runtime
 *    user with no rights of its own;
 * 2. the migration Job as the production overlay renders it (its container's args and ConfigMap settings),
 *    run with the migration user's URL: it creates and migrates every service's database;
 * 3. the component's runtime-grants.sql, run in each database as the migration user;
 * 4. the runtime user can change no table (no CREATE, ALTER, DROP), and every service starts with it, no
 *    init container, and serves a register -> publish -> fund -> call round trip through the gateway, its
 *    rows written by that user.
 *
 * The processes run the built dist/ (the test command builds first).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createPool, type Pool } from "@toolport/kit/pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverUrl } from "../harness/db.js";
import { IMAGE, imageName, k8sDir, render, repoRoot, requireKubectl } from "../harness/k8s.js";
import { type ServiceName, serviceNames } from "../harness/stack.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { type ExecStack, echoApiDocument, fund, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";

const tag = randomBytes(3).toString("hex");
const MIGRATOR = `m${tag}_migrate`;
const RUNTIME = `m${tag}_app`;
const database = (service: ServiceName) => `m${tag}_${service}`;

/** The run's Postgres server URL as `user`, on `db` (the harness's server trusts 127.0.0.1: no password). */
function urlAs(user: string, db = "postgres"): string {
  const url = new URL(serverUrl());
  url.username = user;
  url.password = "";
  url.pathname = `/${db}`;
  return url.toString();
}

/** DATABASE_URL and every <SERVICE>_DATABASE_URL as `user`. */
function databaseEnv(user: string): Record<string, string> {
  const env: Record<string, string> = { DATABASE_URL: urlAs(user) };
  for (const s of serviceNames) env[`${s.toUpperCase()}_DATABASE_URL`] = urlAs(user, database(s));
  return env;
}

async function query(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs the image's entry point (the host package's dist/main.js) with `args` and `env`; resolves with its exit code and output. */
function runHost(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, "services/host/dist/main.js"), ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("migrations as the Job, with their own user; the services on a user with DML rights only", () => {
  let admin: Pool;
  let api: Upstream | undefined;
  let s: ExecStack | undefined;
  let jobArgs: string[] = [];

  beforeAll(async () => {
    requireKubectl();
    admin = createPool(serverUrl(), 2);
    await admin.query(`CREATE ROLE ${MIGRATOR} LOGIN CREATEDB`);
    await admin.query(`CREATE ROLE ${RUNTIME} LOGIN`);

    // The Job as production renders it: its args, and its settings from the ConfigMap (the Secret's
    // database URLs are the operator's: the migration user's here).
    const production = render(path.join(k8sDir, "overlays/production"));
    const job = production.of("Job").find((o) => o.metadata.name === "toolport-migrate");
    expect(job, "the production overlay has the migration Job").toBeDefined();
    const container = (
      job!.spec as { template: { spec: { containers: Array<{ image?: string; args?: string[] }> } } }
    ).template.spec.containers.find((c) => imageName(c.image) === IMAGE)!;
    jobArgs = container.args ?? [];
    const settings: Record<string, string> = {};
    for (const [key, source] of production.env(container as never)) {
      const value = production.value(source);
      if (value !== undefined && source.from !== "secret") settings[key] = value;
    }
    const migration = await runHost(jobArgs, { ...settings, HOST: "127.0.0.1", ...databaseEnv(MIGRATOR) });
    expect(migration.code, migration.output).toBe(0);

    const grants = readFileSync(path.join(k8sDir, "components/migration-job/runtime-grants.sql"), "utf8")
      .replace(/\btoolport_app\b/g, RUNTIME)
      .replace(/\btoolport_migrate\b/g, MIGRATOR);
    for (const service of serviceNames) await query(urlAs(MIGRATOR, database(service)), grants);
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
    await api?.close();
    if (admin) {
      for (const service of serviceNames) await admin.query(`DROP DATABASE IF EXISTS ${database(service)} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${RUNTIME}`);
      await admin.query(`DROP ROLE IF EXISTS ${MIGRATOR}`);
      await admin.end();
    }
  });

  it("migrates every service's database, owned by the migration user", async () => {
    expect(jobArgs).toEqual([`--roles=${serviceNames.join(",")}`, "--migrate"]);
    for (const service of serviceNames) {
      const client = new pg.Client({ connectionString: urlAs(MIGRATOR, database(service)) });
      await client.connect();
      try {
        const { rows } = await client.query<{ owner: string; applied: number }>(
          "SELECT pg_get_userbyid(d.datdba) AS owner, (SELECT count(*)::int FROM schema_migrations) AS applied FROM pg_database d WHERE d.datname = current_database()",
        );
        expect(rows[0], service).toEqual({ owner: MIGRATOR, applied: expect.any(Number) });
        expect(rows[0]!.applied, service).toBeGreaterThan(0);
      } finally {
        await client.end();
      }
    }
  });

  it("gives the runtime user rows and no DDL", async () => {
    const runtime = new pg.Client({ connectionString: urlAs(RUNTIME, database("execution")) });
    await runtime.connect();
    try {
      const refused = async (sql: string) => {
        const err = await runtime.query(sql).then(
          () => undefined,
          (e: { code?: string }) => e,
        );
        return err?.code;
      };
      expect(await refused("CREATE TABLE intruder (id int)")).toBe("42501");
      expect(await refused("ALTER TABLE schema_migrations ADD COLUMN intruder int")).toBe("42501");
      expect(await refused("DROP TABLE schema_migrations")).toBe("42501");
      expect(await refused("TRUNCATE schema_migrations")).toBe("42501");
      // Rows it may read (and write: the round trip below).
      const { rows } = await runtime.query("SELECT count(*)::int AS n FROM schema_migrations");
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await runtime.end();
    }
  });

  it("starts every service with the runtime user and serves register, publish, fund and call", async () => {
    api = await startEchoApi();
    s = await startExecStack([`127.0.0.1:${api.port}`], databaseEnv(RUNTIME), [...serviceNames, "gateway"]);
    for (const service of serviceNames) {
      expect(s.stack.env[`${service.toUpperCase()}_DATABASE_URL`]).toBe(urlAs(RUNTIME, database(service)));
    }
    const agent = await registerAgent(s);
    const echo = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    await fund(s, agent, 500);
    const call = await s.call("POST", `/tools/call/${echo.tools.echo_item}`, {
      key: agent.key,
      body: { tool_input: { item_id: "dml-only", title: "hello" } },
    });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.success).toBe(true);
    expect(call.body.result.body).toEqual({ title: "hello" });

    // The execution's row, written by the runtime user, in the database the migration user made.
    const runtime = new pg.Client({ connectionString: urlAs(RUNTIME, database("execution")) });
    await runtime.connect();
    try {
      const { rows } = await runtime.query("SELECT count(*)::int AS n FROM executions WHERE id = $1", [call.body.execution_id]);
      expect(rows[0].n).toBe(1);
    } finally {
      await runtime.end();
    }
  });
});
