/**
 * Search latency with a large catalog: indexes the benchmark tools plus synthesized ones up to
 * `--tools` (default 10,000) in the embedded engine, then runs every query of the queries file three
 * times and prints p50/p99 of engine search, overall and for the first round (warm-up) apart.
 *
 *   node --conditions=@toolport/source --import tsx test/bench/search-latency.ts <tools.json> <queries.json> [--tools 10000]
 *
 * Synthesized tools combine real ones so their text has the vocabulary and lengths of real tools: the
 * name of one, the description of another, the parameters of a third, grouped into services of eight.
 */
import { performance } from "node:perf_hooks";
import { EmbeddedEngine } from "../../services/catalog/src/search/embedded.js";
import { createLogger } from "../../services/kit/src/logger.js";
import { type BenchQuery, type BenchTool, formatLatency, readJson, toSearchDocuments } from "./search-common.js";

const args = process.argv.slice(2);
const [toolsFile, queriesFile] = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--tools");
if (!toolsFile || !queriesFile) {
  console.error("usage: search-latency.ts <tools.json> <queries.json> [--tools 10000]");
  process.exit(2);
}
const target = Number(args[args.indexOf("--tools") + 1] ?? 10_000) || 10_000;
const real = readJson<BenchTool[]>(toolsFile);
const queries = readJson<BenchQuery[]>(queriesFile);

/** Deterministic pseudo-random picks, so every run measures the same catalog. */
let seed = 42;
const pick = <T>(list: T[]): T => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return list[seed % list.length] as T;
};

const tools: BenchTool[] = [...real];
for (let i = 0; tools.length < target; i++) {
  const a = pick(real);
  const b = pick(real);
  const c = pick(real);
  tools.push({
    id: `synthetic/${i}`,
    name: `${a.name} ${pick(real).name.split(/\s+/)[0] ?? ""}`.trim(),
    description: b.description,
    service: `${pick(real).service || a.name} ${Math.floor(i / 8)}`,
    parameters: c.parameters,
  });
}

const engine = new EmbeddedEngine(createLogger("bench", "silent"));
let t = performance.now();
await engine.replaceAll(toSearchDocuments(tools));
await engine.search("warm up", { limit: 10 });
console.log(`indexed ${tools.length} tools in ${(performance.now() - t).toFixed(0)} ms (embedded engine)`);

// Round 1 also measures the process warming up (JIT); later rounds are the steady state.
const rounds: number[][] = [];
for (let round = 0; round < 3; round++) {
  const latencies: number[] = [];
  for (const q of queries) {
    t = performance.now();
    await engine.search(q.query, { limit: 10 });
    latencies.push(performance.now() - t);
  }
  rounds.push(latencies);
}
console.log(`search latency with ${tools.length} tools: ${formatLatency(rounds.flat())}`);
console.log(`  first round (warming up): ${formatLatency(rounds[0] as number[])}`);
console.log(`  later rounds (steady): ${formatLatency(rounds.slice(1).flat())}`);
