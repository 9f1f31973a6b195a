// The webhook sender's reads with a large backlog (a receiver that is down leaves many deliveries
// pending), side by side in one run: the sender's next-due time (services/webhooks store/claim.ts
// nextDueInMs, its idle poll's look) against the single pass over the pending deliveries it replaced, and
// the claim (claimDue, then handed back so every round sees the same backlog). Each is timed over rounds
// that take turns after a warm-up; median and p90 per call, and the ratio of the two next-due reads.
// Set-up: Postgres with production durability on a free port in a temporary folder, the kit's and the
// webhooks service's migrations, W webhooks, P pending deliveries spread over them, a quarter due now and
// the rest later (retries waiting), and each webhook's cap of deliveries leased (in flight).
// Usage: node test/bench/webhooks-backlog.mjs [pending=220000] [webhooks=21] [rounds=20]
//   (build first: pnpm run build; runs the webhooks store from services/webhooks/dist)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPool, ensureDatabase, kitMigrationsDir, migrate } from "@toolport/kit/pg";
import { freePort, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const { claimDue, handBack, nextDueInMs } = await import(path.join(root, "services/webhooks/dist/store/claim.js"));
const [pending = 220_000, webhooks = 21, rounds = 20] = process.argv.slice(2).map(Number);
const CAP = 10;

// The query nextDueInMs ran before issue 36's change: one pass over every pending delivery.
const SINGLE_PASS = `SELECT (EXTRACT(EPOCH FROM min(greatest(next_attempt_at, coalesce(locked_until, next_attempt_at))) - now()) * 1000)::float8
                       AS due_in_ms FROM deliveries WHERE status = 'pending'`;

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-webhooks-backlog-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(dir, "pg"), port: await freePort(), log: quiet });
let pool;
try {
  const url = new URL(pg.url);
  url.pathname = "/bench_webhooks";
  await ensureDatabase(url.toString());
  pool = createPool(url.toString(), 2);
  await migrate(pool, [
    { dir: kitMigrationsDir, namespace: "kit" },
    { dir: path.join(root, "services/webhooks/migrations"), namespace: "webhooks" },
  ]);
  console.log(`backlog: ${pending} pending deliveries over ${webhooks} webhooks, ${CAP} of each in flight`);
  await pool.query(
    `INSERT INTO webhooks (id, owner_id, url, events, is_active, secret)
     SELECT gen_random_uuid(), gen_random_uuid(), 'https://receiver.example/hook', ARRAY['execution.completed'], true, '\\x00'
       FROM generate_series(1, $1)`,
    [webhooks],
  );
  await pool.query(
    `INSERT INTO deliveries (id, webhook_id, event, event_id, body, next_attempt_at)
     SELECT gen_random_uuid(), w.id, 'execution.completed', 'e' || n, '{}',
            now() + make_interval(secs => CASE WHEN n % 4 = 0 THEN -60 ELSE 60 + n % 3600 END)
       FROM generate_series(1, $1) n
       JOIN (SELECT id, row_number() OVER () - 1 AS k FROM webhooks) w ON w.k = n % $2`,
    [pending, webhooks],
  );
  // Each webhook at its cap: its earliest due deliveries leased, as a sender's attempts in flight.
  await pool.query(
    `UPDATE deliveries SET locked_until = now() + interval '30 seconds'
      WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at) AS r
                                     FROM deliveries WHERE status = 'pending') x WHERE r <= $1)`,
    [CAP],
  );
  await pool.query("VACUUM ANALYZE deliveries");

  const reads = {
    "next due (index probes)": () => nextDueInMs(pool),
    "next due (one pass, before)": async () => (await pool.query(SINGLE_PASS)).rows[0].due_in_ms,
    "claim (cap reached: none)": () => claimDue(pool, { limit: 100, perWebhook: CAP, leaseSeconds: 30 }),
    "claim (20 of each, handed back)": async () => {
      const claimed = await claimDue(pool, { limit: 100, perWebhook: CAP + 20, leaseSeconds: 30 });
      await handBack(
        pool,
        claimed.map((d) => d.id),
      );
      return claimed.length;
    },
  };
  // The two next-due reads must agree (to the millisecond, both against now()).
  const [probes, pass] = [await reads["next due (index probes)"](), await reads["next due (one pass, before)"]()];
  if (Math.abs(probes - pass) > 50) throw new Error(`the next-due reads disagree: ${probes} vs ${pass} ms`);
  const times = Object.fromEntries(Object.keys(reads).map((k) => [k, []]));
  for (const read of Object.values(reads)) await read(); // warm-up (plans, caches)
  for (let round = 0; round < rounds; round++) {
    for (const [name, read] of Object.entries(reads)) {
      const started = performance.now();
      await read();
      times[name].push(performance.now() - started);
    }
  }
  const at = (list, q) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))];
  for (const [name, list] of Object.entries(times)) {
    console.log(
      `${name.padEnd(34)} median ${at(list, 0.5).toFixed(2).padStart(8)} ms   p90 ${at(list, 0.9).toFixed(2).padStart(8)} ms`,
    );
  }
  const ratio = at(times["next due (one pass, before)"], 0.5) / at(times["next due (index probes)"], 0.5);
  console.log(`next due: the single pass takes ${ratio.toFixed(1)}x the index probes (medians)`);
} finally {
  await pool?.end();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
