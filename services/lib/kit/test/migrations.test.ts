import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../../test/harness/db.js";
import { createPool, kitMigrationsDir, migrate } from "../src/pg.js";

describe("migrations", () => {
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    db = await testDatabase("migrate");
    dir = await mkdtemp(path.join(os.tmpdir(), "toolport-migrations-"));
    await writeFile(path.join(dir, "0001_widgets.sql"), "CREATE TABLE widgets (id int PRIMARY KEY);");
    await writeFile(path.join(dir, "0002_seed.sql"), "INSERT INTO widgets VALUES (1), (2);");
  });
  afterAll(() => db.pool.end());

  const sources = () => [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir, namespace: "widgets" },
  ];

  it("applies every file once, in order, and a second run is a no-op", async () => {
    const first = await migrate(db.pool, sources());
    expect(first).toEqual([
      "kit/0001_events.sql",
      "kit/0002_outbox_claims.sql",
      "kit/0003_outbox_trace_context.sql",
      "kit/0004_inbox_applied_at.sql",
      "widgets/0001_widgets.sql",
      "widgets/0002_seed.sql",
    ]);
    const second = await migrate(db.pool, sources());
    expect(second).toEqual([]);
    // The seed ran once: a second application would have failed on the primary key or doubled rows.
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM widgets");
    expect(rows[0].n).toBe(2);
  });

  it("two replicas migrating at once apply each file exactly once", async () => {
    await writeFile(path.join(dir, "0003_more.sql"), "INSERT INTO widgets VALUES (3);");
    const results = await Promise.all([migrate(db.pool, sources()), migrate(db.pool, sources())]);
    expect(results.flat()).toEqual(["widgets/0003_more.sql"]);
  });

  it("refuses a migration whose file changed after it was applied", async () => {
    await writeFile(path.join(dir, "0002_seed.sql"), "INSERT INTO widgets VALUES (9);");
    await expect(migrate(db.pool, sources())).rejects.toThrow(/0002_seed.sql was changed after it was applied/);
  });

  it("rolls back a failing migration and records nothing for it", async () => {
    const bad = await mkdtemp(path.join(os.tmpdir(), "toolport-migrations-"));
    await writeFile(path.join(bad, "0001_half.sql"), "CREATE TABLE half (id int); SELECT * FROM missing_table;");
    await expect(migrate(db.pool, [{ dir: bad, namespace: "bad" }])).rejects.toThrow(/bad\/0001_half.sql failed/);
    const { rows } = await db.pool.query("SELECT to_regclass('half') AS t");
    expect(rows[0].t).toBeNull();
  });

  it("runs no DDL when every migration is applied, and tells a user without DDL rights to run --migrate when one is not", async () => {
    const user = `rows_${randomBytes(3).toString("hex")}`;
    await db.pool.query(`CREATE ROLE ${user} LOGIN`);
    await db.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${user}`);
    const url = new URL(db.url);
    url.username = user;
    const rowsOnly = createPool(url.toString(), 2);
    try {
      // The sources as applied above, with the changed seed put back: nothing pending, nothing to create.
      await writeFile(path.join(dir, "0002_seed.sql"), "INSERT INTO widgets VALUES (1), (2);");
      expect(await migrate(rowsOnly, sources())).toEqual([]);
      await writeFile(path.join(dir, "0004_gadgets.sql"), "CREATE TABLE gadgets (id int);");
      await expect(migrate(rowsOnly, sources())).rejects.toThrow(
        /migrations widgets\/0004_gadgets.sql are not applied and this database user may not apply them .*run `--migrate` with the migration credential/,
      );
      // The owner applies it, and the user starts again.
      expect(await migrate(db.pool, sources())).toEqual(["widgets/0004_gadgets.sql"]);
      expect(await migrate(rowsOnly, sources())).toEqual([]);
    } finally {
      await rowsOnly.end();
      await db.pool.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${user}`);
      await db.pool.query(`DROP ROLE ${user}`);
    }
  });
});
