/**
 * Workflow run retention (services/content workflows/pruner.ts) on the real content role and Postgres:
 * runs that ended longer ago than CONTENT_WORKFLOW_RETENTION_DAYS are deleted with their steps, in
 * batches of CONTENT_WORKFLOW_PRUNE_BATCH; runs still going (running, awaiting confirmation) and runs
 * that ended recently stay. The rows are inserted straight into the content database, aged as needed.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../harness/stack.js";

describe("workflow run retention", () => {
  let stack: Stack;
  let db: pg.Client;

  beforeAll(async () => {
    stack = await startStack(["content"], {
      CONTENT_WORKFLOW_RETENTION_DAYS: "7",
      CONTENT_WORKFLOW_PRUNE_INTERVAL_MS: "1000",
      CONTENT_WORKFLOW_PRUNE_BATCH: "3",
    });
    db = new pg.Client({ connectionString: stack.env.CONTENT_DATABASE_URL });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stopAll();
  });

  /** A run of two steps, in `status`, started and (unless still going) finished `ageDays` ago. */
  async function insertRun(status: string, ageDays: number): Promise<string> {
    const id = randomUUID();
    const ended = status === "completed" || status === "failed";
    await db.query(
      `INSERT INTO workflow_runs (id, workflow_id, workflow_name, runner_id, organization_id, principal, status, steps,
         inputs, max_response_chars, started_at, finished_at)
       VALUES ($1, $2, 'old', $3, $4, '\\x00', $5, '[]', '{}', 1000,
         now() - make_interval(days => $6), CASE WHEN $7 THEN now() - make_interval(days => $6) END)`,
      [id, randomUUID(), randomUUID(), randomUUID(), status, ageDays, ended],
    );
    for (const step of [1, 2]) {
      await db.query(
        `INSERT INTO workflow_run_steps (run_id, step_number, status, tool_id, tool_name)
         VALUES ($1, $2, 'completed', 'tool', 'tool')`,
        [id, step],
      );
    }
    return id;
  }

  it("deletes runs that ended before the retention, with their steps, in batches; keeps the rest", {
    timeout: 60_000,
  }, async () => {
    // Eight old finished runs: three batches of 3 (the last one short) in one pass.
    const old: string[] = [];
    for (let i = 0; i < 8; i++) old.push(await insertRun(i % 2 === 0 ? "completed" : "failed", 8 + i));
    const kept = [
      await insertRun("completed", 6), // ended within the retention
      await insertRun("running", 30), // started long ago, still going
      await insertRun("awaiting_confirmation", 30),
    ];
    const remaining = async () =>
      (await db.query<{ id: string }>("SELECT id FROM workflow_runs WHERE id = ANY ($1)", [[...old, ...kept]])).rows.map(
        (r) => r.id,
      );

    await expect.poll(async () => (await remaining()).sort(), { timeout: 30_000, interval: 250 }).toEqual([...kept].sort());
    const steps = await db.query<{ run_id: string; n: string }>(
      "SELECT run_id, count(*) AS n FROM workflow_run_steps WHERE run_id = ANY ($1) GROUP BY run_id",
      [[...old, ...kept]],
    );
    expect(Object.fromEntries(steps.rows.map((r) => [r.run_id, Number(r.n)]))).toEqual(
      Object.fromEntries(kept.map((id) => [id, 2])),
    );
    // The job said what it did: eight runs in all (one pass, or more if a pass came between the inserts).
    const reported = (await stack.log("content"))
      .split("\n")
      .filter((line) => line.includes("pruned finished workflow runs"))
      .map((line) => (JSON.parse(line) as { deleted: number }).deleted);
    expect(reported.reduce((a, b) => a + b, 0)).toBe(8);
  });
});
