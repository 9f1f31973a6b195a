/**
 * What a pair of allow-lists lets through (POST /v1/api-keys/callable-tools, the console's live count)
 * at catalog size: the catalog's own statement (services/catalog/src/store/catalog-store.ts
 * `callableTools`) on a real Postgres holding `--tools` tools (default 10,000 and 50,000, measured in
 * the same run) in services of 10, half of them public and half private to other organizations.
 *
 *   node --conditions=@toolport/source --import tsx test/bench/callable-tools.ts [--tools 10000,50000] [--rounds 30]
 *
 * For each catalog size and each kind of allow-list it prints p50 and p99 over the rounds, and the
 * ratio of the largest catalog's p50 to the smallest's, side by side: the work must follow what the
 * lists let through, not the size of the catalog (except with no list at all, which counts every tool).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createPool, ensureDatabase, kitMigrationsDir, migrate, type Pool } from "@toolport/kit/pg";
import { callableTools } from "../../services/catalog/src/store/catalog-store.js";
import { percentile } from "./search-common.js";
// @ts-expect-error: plain JavaScript helpers shared by the benchmarks
import { benchPostgres, stopServers } from "./servers.mjs";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const sizes = option("--tools", "10000,50000")
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const rounds = Number(option("--rounds", "30"));
const catalogMigrations = fileURLToPath(new URL("../../services/catalog/migrations", import.meta.url));
const callerOrg = "bench-org-caller";

/** A catalog of `count` tools in services of 10; services alternate public and private (another organization). */
async function seed(pool: Pool, count: number): Promise<void> {
  await pool.query("TRUNCATE services CASCADE");
  await pool.query(
    `INSERT INTO services (id, slug, name, service_type, visibility, organization_id)
     SELECT md5('s' || i)::uuid, 'svc-' || i, 'Service ' || lpad(i::text, 6, '0'), 'api',
            CASE WHEN i % 2 = 0 THEN 'public' ELSE 'private' END,
            CASE WHEN i % 2 = 0 THEN NULL ELSE 'bench-org-' || i END
       FROM generate_series(1, $1::int) AS i`,
    [Math.ceil(count / 10)],
  );
  await pool.query(
    `INSERT INTO tools (id, service_id, slug, name, source_key)
     SELECT md5('t' || i)::uuid, md5('s' || (1 + (i - 1) / 10))::uuid, 'tool-' || i, 'tool_' || lpad(i::text, 7, '0'), 'op-' || i
       FROM generate_series(1, $1::int) AS i`,
    [count],
  );
  await pool.query("ANALYZE services; ANALYZE tools");
}

const serviceId = (i: number) => async (pool: Pool) =>
  (await pool.query<{ id: string }>("SELECT md5('s' || $1::text)::uuid::text AS id", [i])).rows[0]!.id;
const toolId = (i: number) => async (pool: Pool) =>
  (await pool.query<{ id: string }>("SELECT md5('t' || $1::text)::uuid::text AS id", [i])).rows[0]!.id;

interface Case {
  name: string;
  lists(pool: Pool, count: number): Promise<{ services: string[] | null; tools: string[] | null }>;
}

const cases: Case[] = [
  { name: "no lists (every visible tool)", lists: async () => ({ services: null, tools: null }) },
  {
    name: "1 service",
    lists: async (pool, count) => ({ services: [await serviceId(Math.ceil(count / 20) * 2)(pool)], tools: null }),
  },
  {
    name: "20 tools",
    lists: async (pool, count) => ({ services: null, tools: await spreadTools(pool, count) }),
  },
  {
    name: "20 tools x 5 services",
    lists: async (pool, count) => ({
      services: await Promise.all(Array.from({ length: 5 }, (_, i) => serviceId((i + 1) * 2)(pool))),
      // 10 tools inside the listed services (tools 11-20 are service 2's), 10 spread outside them.
      tools: [
        ...(await Promise.all(Array.from({ length: 10 }, (_, i) => toolId(11 + i)(pool)))),
        ...(await spreadTools(pool, count)).slice(10),
      ],
    }),
  },
];

/** 20 tools spread over the catalog, each in a public service (tool 20k + 11 is in service 2k + 2). */
async function spreadTools(pool: Pool, count: number): Promise<string[]> {
  const step = Math.floor(count / 20 / 20);
  return Promise.all(Array.from({ length: 20 }, (_, i) => toolId(20 * step * i + 11)(pool)));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolport-bench-callable-"));
  const results = new Map<string, Map<number, { p50: number; p99: number; count: bigint }>>();
  try {
    console.error(`starting Postgres in ${dir}`);
    const pg = await benchPostgres(dir, "postgres", { fast: true });
    const url = pg.url.replace(/\/postgres$/, "/bench_catalog");
    await ensureDatabase(url);
    const pool = createPool(url, 2);
    await migrate(pool, [
      { dir: kitMigrationsDir, namespace: "kit" },
      { dir: catalogMigrations, namespace: "catalog" },
    ]);
    for (const size of sizes) {
      console.error(`seeding ${size.toLocaleString("en-US")} tools`);
      await seed(pool, size);
      for (const c of cases) {
        const lists = await c.lists(pool, size);
        const samples: number[] = [];
        let count = 0n;
        for (let round = 0; round < rounds + 3; round++) {
          const started = performance.now();
          const found = await callableTools(
            pool,
            { organizationId: callerOrg, isPlatformAdmin: false },
            lists.services,
            lists.tools,
            20,
          );
          if (round >= 3) samples.push(performance.now() - started);
          count = found.count;
        }
        samples.sort((a, b) => a - b);
        const byCase = results.get(c.name) ?? new Map();
        byCase.set(size, { p50: percentile(samples, 50), p99: percentile(samples, 99), count });
        results.set(c.name, byCase);
      }
    }
    await pool.end();
  } finally {
    await stopServers();
  }

  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  console.log(`callable tools: p50 / p99 over ${rounds} rounds (after 3 warm-up), callable count`);
  const header = ["allow-lists".padEnd(32), ...sizes.map((s) => `${s.toLocaleString("en-US")} tools`.padEnd(34))];
  console.log(`${header.join(" ")} p50 ratio ${sizes.at(-1)!.toLocaleString("en-US")}/${sizes[0]!.toLocaleString("en-US")}`);
  for (const [name, bySize] of results) {
    const cells = sizes.map((s) => {
      const r = bySize.get(s)!;
      return `${fmt(r.p50)} / ${fmt(r.p99)} (${r.count})`.padEnd(34);
    });
    const ratio = bySize.get(sizes.at(-1)!)!.p50 / bySize.get(sizes[0]!)!.p50;
    console.log(`${name.padEnd(32)} ${cells.join(" ")} ${ratio.toFixed(2)}`);
  }
}

await main();
