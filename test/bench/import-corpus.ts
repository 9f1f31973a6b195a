/**
 * OpenAPI import benchmark on the real API descriptions in ../shared/openapi-corpus (beside the
 * repository): each document is parsed, converted when it is Swagger 2.0, validated and imported in
 * process, `runs` times (default 5), as the catalog does on POST /v1/services. Each document runs in a
 * child process of its own, so its memory figures are its own. Prints per document the median time of
 * each phase (and the first run's total, which includes swagger-parser compiling its schemas), the peak
 * heap growth and peak RSS growth over the process before the first import, and the heap the imported
 * result keeps.
 *
 *   node --conditions=@toolport/source --import tsx --expose-gc test/bench/import-corpus.ts [runs=5]
 *
 * Peak RSS comes from the OS (getrusage maxrss); peak heap is sampled at every phase boundary and every
 * millisecond the event loop is free, so it is a lower bound within the synchronous phases.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { importOpenApi, parseDocumentText, validateDocument } from "../../services/catalog/src/publishing/openapi.js";
import { BOX, corpusText, SLACK } from "../harness/corpus.js";

const documents = [BOX, SLACK];
const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
const MB = 1024 * 1024;

interface Result {
  document: string;
  bytes: number;
  tools: number;
  toolBytes: number;
  firstMs: number;
  medianMs: { parse: number; validate: number; import: number; serialize: number; total: number };
  peakHeapMB: number;
  retainedHeapMB: number;
  peakRssMB: number;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

async function measure(name: string): Promise<Result> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc (see the header)");
  const text = corpusText(name);
  gc();
  const base = process.memoryUsage();
  let peakHeap = base.heapUsed;
  const sample = () => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(sample, 1);
  const phases = {
    parse: [] as number[],
    validate: [] as number[],
    import: [] as number[],
    serialize: [] as number[],
    total: [] as number[],
  };
  let api: ReturnType<typeof importOpenApi> | null = null;
  let toolBytes = 0;
  for (let i = 0; i < runs; i++) {
    api = null;
    const t0 = performance.now();
    const raw = parseDocumentText(text);
    const t1 = performance.now();
    sample();
    const validated = await validateDocument(raw);
    const t2 = performance.now();
    sample();
    api = importOpenApi(validated);
    const t3 = performance.now();
    sample();
    // What the store writes: each tool's JSON columns.
    toolBytes = api.tools.reduce((n, t) => n + JSON.stringify(t).length, 0);
    const t4 = performance.now();
    sample();
    phases.parse.push(t1 - t0);
    phases.validate.push(t2 - t1);
    phases.import.push(t3 - t2);
    phases.serialize.push(t4 - t3);
    phases.total.push(t4 - t0);
  }
  clearInterval(timer);
  gc();
  const retained = process.memoryUsage().heapUsed - base.heapUsed;
  const peakRss = process.resourceUsage().maxRSS * 1024 - base.rss;
  return {
    document: name,
    bytes: text.length,
    tools: api?.tools.length ?? 0,
    toolBytes,
    firstMs: phases.total[0] as number,
    medianMs: {
      parse: median(phases.parse),
      validate: median(phases.validate),
      import: median(phases.import),
      serialize: median(phases.serialize),
      total: median(phases.total),
    },
    peakHeapMB: (peakHeap - base.heapUsed) / MB,
    retainedHeapMB: retained / MB,
    peakRssMB: peakRss / MB,
  };
}

const childFor = process.argv.indexOf("--document");
if (childFor >= 0) {
  const name = process.argv[childFor + 1] as string;
  process.stdout.write(`${JSON.stringify(await measure(name))}\n`);
} else {
  for (const name of documents) {
    corpusText(name); // fails here, naming the path, when the corpus is missing
  }
  console.log(`import of shared/openapi-corpus, ${runs} runs per document, node ${process.version}`);
  for (const name of documents) {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), "--document", name, String(runs)],
      {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    if (child.status !== 0) throw new Error(`${name}: the measuring process exited with ${child.status}`);
    const r = JSON.parse(child.stdout.trim().split("\n").pop() as string) as Result;
    const ms = (x: number) => `${Math.round(x)} ms`;
    console.log(
      [
        `\n${r.document}: ${(r.bytes / MB).toFixed(2)} MB, ${r.tools} tools, ${(r.toolBytes / MB).toFixed(2)} MB of tool JSON`,
        `  median  parse ${ms(r.medianMs.parse)} | convert+validate ${ms(r.medianMs.validate)} | import ${ms(r.medianMs.import)} | serialize ${ms(r.medianMs.serialize)} | total ${ms(r.medianMs.total)}`,
        `  first run total ${ms(r.firstMs)}`,
        `  peak heap growth ${r.peakHeapMB.toFixed(1)} MB | heap kept by the result ${r.retainedHeapMB.toFixed(1)} MB | peak RSS growth ${r.peakRssMB.toFixed(1)} MB`,
      ].join("\n"),
    );
  }
}
