/**
 * The embedded engine at catalog scale: index build time (replaceAll), the memory the index keeps, and
 * search latency inside the engine, with the benchmark tools plus the whole APIs.guru directory (see
 * search-retrieval.ts --distractors) indexed, topped up with synthesized tools to `--tools` (default
 * 100,000).
 *
 *   node --conditions=@toolport/source --import tsx --expose-gc test/bench/search-latency.ts <tools.json> <queries.json>
 *       [--distractors <dir>] [--no-distractors] [--tools 100000]
 *
 * Memory: heap (V8) and array buffers (typed arrays live outside the V8 heap) after a full gc, before
 * the documents are read, with them read, after the build, and after the documents are dropped (what
 * the engine alone keeps); RSS growth over the process before the documents were read (RSS includes
 * memory the allocator has not returned yet, so it is an upper bound) and the peak.
 *
 * Latency, p50/p99 over every query (three rounds, the first apart as warm-up), as wall time and as the
 * process's CPU time (on a shared machine the wall time includes waiting for a core): the queries file's own
 * (long, multi-part requests), short ones (two or three words of a benchmark tool's name: what a person
 * types into a search box), and what the catalog asks: limits 20 to 320 (limit x2 .. x32 candidates),
 * a service filter, a tag filter and a candidate list of 500 ids (a caller who may see a few hundred).
 *
 * Synthesized tools combine real ones so their text has the vocabulary and lengths of real tools: the
 * name of one, the description of another, the parameters of a third, grouped into services of eight.
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { EmbeddedEngine } from "../../services/catalog/src/search/embedded.js";
import { stopWords, words } from "../../services/catalog/src/search/text.js";
import type { SearchDocument, SearchOptions } from "../../services/catalog/src/search/types.js";
import { createLogger } from "../../services/lib/kit/src/logger.js";
import {
  type BenchQuery,
  type BenchTool,
  benchCache,
  directoryFolder,
  directorySearchDocuments,
  formatLatency,
  readJson,
  toSearchDocuments,
} from "./search-common.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  const value = i >= 0 ? args[i + 1] : undefined;
  return value && !value.startsWith("--") ? value : undefined;
};
const [toolsFile, queriesFile] = args.filter(
  (a, i) => !a.startsWith("--") && !["--tools", "--distractors"].includes(args[i - 1] ?? ""),
);
if (!toolsFile || !queriesFile) {
  console.error("usage: search-latency.ts <tools.json> <queries.json> [--distractors <dir>] [--no-distractors] [--tools 100000]");
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error("run with --expose-gc (see the header)");
  process.exit(2);
}
const target = Number(flag("--tools") ?? 100_000) || 100_000;
const MB = 1024 * 1024;
const memory = () => {
  gc();
  gc();
  return process.memoryUsage();
};
const show = (m: NodeJS.MemoryUsage) =>
  `heap ${(m.heapUsed / MB).toFixed(0)} MB + array buffers ${(m.arrayBuffers / MB).toFixed(0)} MB, RSS ${(m.rss / MB).toFixed(0)} MB`;

const before = memory();
const real = readJson<BenchTool[]>(toolsFile);
const queries = readJson<BenchQuery[]>(queriesFile);

let docs: SearchDocument[] | undefined = toSearchDocuments(real);
if (!args.includes("--no-distractors")) {
  const directory = await directorySearchDocuments(directoryFolder(flag("--distractors"), benchCache()), benchCache());
  for (const doc of directory.docs) docs.push(doc);
  console.log(`${directory.docs.length} directory tools in ${directory.documents - directory.refused} services`);
}

/** Deterministic pseudo-random picks, so every run measures the same catalog. */
let seed = 42;
const pick = <T>(list: T[]): T => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return list[seed % list.length] as T;
};
const synthetic: BenchTool[] = [];
for (let i = 0; docs.length + synthetic.length < target; i++) {
  const a = pick(real);
  const group = Math.floor(i / 8);
  synthetic.push({
    id: `synthetic/${i}`,
    name: `${a.name} ${pick(real).name.split(/\s+/)[0] ?? ""}`.trim(),
    description: pick(real).description,
    service: `${(real[(group * 7919) % real.length] as BenchTool).service || a.name} ${group}`,
    parameters: pick(real).parameters,
  });
}
for (const d of toSearchDocuments(synthetic)) docs.push({ ...d, serviceId: `synthetic-${d.serviceId}` });
const services = new Set(docs.map((d) => d.serviceId)).size;
console.log(`${docs.length} tools in ${services} services (${synthetic.length} synthesized)`);

// Filters the catalog passes: a tag the directory uses often, a benchmark service, 500 candidate ids.
const { tagCounts, commonTag, serviceOf, candidateIds } = ((all: SearchDocument[]) => {
  const tagCounts = new Map<string, number>();
  for (const d of all) for (const t of d.tags) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
  return {
    tagCounts,
    commonTag: [...tagCounts].sort((a, b) => b[1] - a[1])[0]?.[0],
    serviceOf: new Map(all.map((d) => [d.id, d.serviceId])),
    candidateIds: all.filter((_, i) => i % Math.floor(all.length / 500) === 0).map((d) => d.id),
  };
})(docs);

const loaded = memory();
const engine = new EmbeddedEngine(createLogger("bench", "silent"));
let t = performance.now();
let cpu = process.cpuUsage();
await engine.replaceAll(docs);
const buildMs = performance.now() - t;
const buildCpu = process.cpuUsage(cpu);
t = performance.now();
await engine.search("warm up", { limit: 10 });
const firstSearchMs = performance.now() - t;
const built = memory();
docs = undefined;
const kept = memory();
const peakRss = process.resourceUsage().maxRSS * 1024;
console.log(
  `replaceAll of ${serviceOf.size} tools: ${(buildMs / 1000).toFixed(2)} s, CPU ${((buildCpu.user + buildCpu.system) / 1e6).toFixed(2)} s ` +
    `(first search after it ${firstSearchMs.toFixed(0)} ms); ${JSON.stringify(engine.stats())}`,
);
console.log(`memory before reading the documents: ${show(before)}`);
console.log(`  documents read:                     ${show(loaded)}`);
console.log(`  index built (documents still held): ${show(built)}`);
console.log(`  documents dropped (engine alone):   ${show(kept)}`);
console.log(
  `engine keeps: heap ${((kept.heapUsed - before.heapUsed) / MB).toFixed(0)} MB + array buffers ` +
    `${((kept.arrayBuffers - before.arrayBuffers) / MB).toFixed(0)} MB; RSS growth over the start ` +
    `${((kept.rss - before.rss) / MB).toFixed(0)} MB, peak RSS ${(peakRss / MB).toFixed(0)} MB`,
);

/** Two or three content words of a benchmark tool's name, as typed into a search box. */
const shortQueries = real
  .filter((_, i) => i % 10 === 0)
  .map((tool) => words(`${tool.name} ${tool.description}`).filter((w) => !stopWords.has(w) && w.length > 2))
  .filter((w) => w.length >= 2)
  .map((w, i) => w.slice(0, 2 + (i % 2)).join(" "));

/**
 * Wall time and the process's CPU time of each search: on a machine shared with other work the wall
 * time includes waiting for a core, the CPU time is what the engine itself spends.
 */
async function measure(label: string, list: string[], options: (i: number) => SearchOptions): Promise<void> {
  const rounds: number[][] = [];
  const cpuTimes: number[] = [];
  for (let round = 0; round < 3; round++) {
    const latencies: number[] = [];
    for (const [i, q] of list.entries()) {
      const o = options(i);
      const start = performance.now();
      cpu = process.cpuUsage();
      await engine.search(q, o);
      const used = process.cpuUsage(cpu);
      latencies.push(performance.now() - start);
      if (round > 0) cpuTimes.push((used.user + used.system) / 1000);
    }
    rounds.push(latencies);
  }
  console.log(`${label}:`);
  console.log(`    wall ${formatLatency(rounds.slice(1).flat())}; CPU ${formatLatency(cpuTimes)}`);
  console.log(`    first round (warming up), wall ${formatLatency(rounds[0] as number[])}`);
}

const long = queries.map((q) => q.query);
console.log(`search latency inside the engine, ${serviceOf.size} tools (later rounds; first round apart):`);
await measure("long queries, limit 10", long, () => ({ limit: 10 }));
await measure("short queries, limit 10", shortQueries, () => ({ limit: 10 }));
for (const limit of [20, 80, 320]) await measure(`long queries, limit ${limit}`, long, () => ({ limit }));
await measure("short queries, limit 320", shortQueries, () => ({ limit: 320 }));
await measure("long queries, service filter", long, (i) => ({
  limit: 10,
  serviceId: serviceOf.get(queries[i]?.relevant[0] ?? ""),
}));
if (commonTag) {
  await measure(`long queries, tag filter (${commonTag}, ${tagCounts.get(commonTag)} tools)`, long, () => ({
    limit: 10,
    tags: [commonTag],
  }));
}
await measure("long queries, 500 candidate ids, limit 320", long, () => ({ limit: 320, candidateIds }));
await measure("short queries, 500 candidate ids, limit 320", shortQueries, () => ({ limit: 320, candidateIds }));

// The persisted index (services/catalog/src/search/index-snapshot.ts): what a restart reads instead of
// analysing every tool again. Written, read back into a new engine, and checked to answer the same.
{
  t = performance.now();
  const bytes = v8.serialize(engine.snapshot());
  const writeMs = performance.now() - t;
  t = performance.now();
  const restored = new EmbeddedEngine(createLogger("bench", "silent"));
  restored.restore(v8.deserialize(bytes));
  const readMs = performance.now() - t;
  let same = 0;
  for (const q of [...long, ...shortQueries]) {
    const a = await engine.search(q, { limit: 10 });
    const b = await restored.search(q, { limit: 10 });
    if (JSON.stringify(a) === JSON.stringify(b)) same++;
  }
  console.log(
    `snapshot of the index: ${(bytes.length / MB).toFixed(0)} MB, serialized in ${writeMs.toFixed(0)} ms, ` +
      `deserialized and restored in ${readMs.toFixed(0)} ms; ${same} of ${long.length + shortQueries.length} queries answer the same`,
  );
}
