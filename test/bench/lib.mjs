// Helpers shared by the HTTP benchmarks (execution-gateway.mjs, mcp-server.mjs, workflow-run.mjs): starting processes and
// waiting until they say they listen, stopping them, a keep-alive request helper, CPU accounting per named
// process (a Postgres server counted with all its backends) and the load loop with alternating rounds.
// Node built-ins only.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";

// ---------------------------------------------------------------------------------------------
// Processes

/** Every child started through `start` (or handed to `adopt`), stopped by `cleanup`. */
const children = [];

/**
 * Starts `node ...argv` (in `cwd`) as process `name` and resolves with the child once a line of its
 * stdout matches `ready` (default: "ready" or "listening"); rejects if it exits first. The name is
 * tracked for `cpuSnapshot`. Only the start-up output is searched: what follows (an access line per
 * request) is drained, not kept, so the benchmark does not take CPU from what it measures.
 * BENCH_VERBOSE=1 forwards the output to stderr.
 */
export function start(name, argv, { env = {}, cwd, ready = /ready|listening/ } = {}) {
  const child = spawn(process.execPath, argv, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  track(name, child.pid);
  return new Promise((resolve, reject) => {
    let seen = "";
    let done = false;
    child.stdout.on("data", (chunk) => {
      if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
      if (done) return;
      seen += chunk;
      if (ready.test(seen)) {
        done = true;
        seen = "";
        resolve(child);
      }
    });
    child.once("exit", (code, signal) => {
      if (done) return;
      done = true;
      reject(new Error(`${name} exited with ${signal ?? code} before it was ready`));
    });
  });
}

/** A child started some other way (e.g. nginx) that `cleanup` must stop too. */
export function adopt(name, child) {
  children.push(child);
  if (name) track(name, child.pid);
  return child;
}

/** SIGTERM to every child still running, then wait until all have exited. */
export async function cleanup() {
  const live = children.filter((c) => c.exitCode === null && c.signalCode === null);
  for (const c of live) c.kill("SIGTERM");
  await Promise.all(
    live.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once("exit", r)) : null)),
  );
  children.length = 0;
}

/** Node flags writing a CPU profile of process `name` to /tmp/toolport-prof/<name> when BENCH_PROFILE names it. */
export function profiled(name) {
  const profiles = (process.env.BENCH_PROFILE ?? "").split(",").filter(Boolean);
  return profiles.includes(name) ? ["--cpu-prof", `--cpu-prof-dir=/tmp/toolport-prof/${name}`] : [];
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the launcher as `npm start` runs it, without installing (deploy/local/start.mjs --no-install
 * ...args), on free ports with `dataDir` as its data folder, in a process group of its own. Answers the
 * child, its environment (the ports), when it was spawned (performance.now()), what it has printed so far, and `stop()`: SIGINT to the group, so
 * the launcher stops its processes, NATS and Postgres in order.
 */
export async function startLauncher(root, dataDir, args = []) {
  const { assignLauncherPorts } = await import("../../deploy/local/infra.mjs");
  const env = { ...process.env, TOOLPORT_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  delete env.PORT;
  await assignLauncherPorts(env);
  const startedAt = performance.now();
  const child = spawn(process.execPath, [`${root}/deploy/local/start.mjs`, "--no-install", ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  child.stderr.on("data", (c) => {
    out += c;
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    process.kill(-child.pid, "SIGINT");
    await exited;
  };
  return { child, env, startedAt, output: () => out, stop };
}

/** GETs `url` every 25 ms until it answers 200; resolves with when it first did (performance.now()). */
export async function greenAt(url, child) {
  while (child.exitCode === null) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now();
    } catch {}
    await sleep(25);
  }
  throw new Error(`the process exited before ${url} was green`);
}

// ---------------------------------------------------------------------------------------------
// HTTP

export const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request over the shared keep-alive agent; resolves with the status and the whole body as text. */
export function request(url, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// CPU

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
} catch {}

/** The fields of /proc/<pid>/stat after "(comm)": [0] state, [1] ppid, ... [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU seconds (user + system) used so far by one process; 0 when it is gone. */
export function cpuSeconds(pid) {
  try {
    const f = statFields(pid);
    return (Number(f[11]) + Number(f[12])) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** name -> { pid, tree }: the processes `cpuSnapshot` reports. */
const tracked = new Map();

/**
 * Reports process `pid` as `name` in `cpuSnapshot`. With `tree: true` (a Postgres server: the postmaster)
 * its children count too: the live ones (backends, checkpointer, WAL writer ...) and, through the
 * parent's cutime/cstime, those that have exited. Several servers can be tracked under their own names
 * (e.g. "postgres" and "postgres-relaxed").
 */
export function track(name, pid, { tree = false } = {}) {
  if (pid) tracked.set(name, { pid, tree });
}

/** CPU seconds used so far by each tracked process (trees summed) and by this process as `bench`. */
export function cpuSnapshot() {
  const snap = {};
  const trees = [...tracked.values()].filter((t) => t.tree);
  let byParent;
  if (trees.length > 0) {
    byParent = new Map();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const f = statFields(entry);
        const ppid = Number(f[1]);
        byParent.set(ppid, (byParent.get(ppid) ?? 0) + (Number(f[11]) + Number(f[12])) / ticksPerSecond);
      } catch {}
    }
  }
  for (const [name, { pid, tree }] of tracked) {
    if (!tree) {
      snap[name] = cpuSeconds(pid);
      continue;
    }
    try {
      const f = statFields(pid);
      const own = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / ticksPerSecond;
      snap[name] = own + (byParent.get(pid) ?? 0);
    } catch {
      snap[name] = 0;
    }
  }
  const usage = process.cpuUsage();
  snap.bench = (usage.user + usage.system) / 1e6;
  return snap;
}

/**
 * CPU milliseconds per call of each process, from `spent` (CPU seconds per process over `calls` calls),
 * largest first, those under 0.005 ms left out.
 */
export function cpuPerCall(spent, calls) {
  return Object.entries(spent)
    .map(([k, seconds]) => [k, (seconds * 1e3) / calls])
    .filter(([, ms]) => ms >= 0.005)
    .sort((x, y) => y[1] - x[1]);
}

/** "CPU per call in (c): 1.23 ms = gateway 0.50, ..." summed over every process in `spent`. */
export function cpuLine(label, spent, calls) {
  const perCall = cpuPerCall(spent, calls);
  const sum = perCall.reduce((t, [, ms]) => t + ms, 0);
  return `    CPU per call in ${label}: ${sum.toFixed(2)} ms = ${perCall.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ")}`;
}

// ---------------------------------------------------------------------------------------------
// Load

/** A row of a table: what `runRounds` and `load` fill in. `make(worker)` resolves true for a correct answer. */
export function row(label, make, extra = {}) {
  return { label, make, latencies: [], seconds: 0, failures: 0, cpu: {}, ...extra };
}

/**
 * `total` calls of `make(worker)` by `conc` workers; `make` resolves true for a correct answer. Latencies
 * and seconds are added to `into`, so rounds of one row sum up.
 */
export async function load(make, total, conc, into = row("", make)) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async (_, worker) => {
      while (next < total) {
        next++;
        const t = performance.now();
        let ok = false;
        try {
          ok = await make(worker);
        } catch {}
        into.latencies.push(performance.now() - t);
        if (!ok) into.failures++;
      }
    }),
  );
  into.seconds += (performance.now() - started) / 1000;
  return into;
}

/**
 * Warms every row up (`warmup` calls each), then runs `rounds` rounds in which each row in turn makes
 * its share of `calls` calls at concurrency `conc`, so that drift (JIT, table growth, other work on the
 * machine) falls on all rows alike. The CPU each tracked process spent during a row is added to its `cpu`.
 */
export async function runRounds(rows, { calls, conc, rounds = 3, warmup = 300 }) {
  for (const r of rows) if (warmup > 0) await load(r.make, warmup, conc, row("warm-up", r.make));
  const perRound = Math.ceil(calls / rounds);
  for (let round = 0; round < rounds; round++)
    for (const r of rows) {
      const before = cpuSnapshot();
      await load(r.make, perRound, conc, r);
      const after = cpuSnapshot();
      for (const k of Object.keys(after)) r.cpu[k] = (r.cpu[k] ?? 0) + after[k] - (before[k] ?? 0);
    }
  return rows;
}

/** Requests/s, p50 and p99 of a row. */
export function summary(label, r) {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { label, rps: sorted.length / r.seconds, p50: q(0.5), p99: q(0.99), failures: r.failures, calls: sorted.length };
}

/** One printed line of a summary, the label padded to `width`. */
export function fmt(r, width = 36) {
  return `${r.label.padEnd(width)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms${r.failures ? `   (${r.failures} failed)` : ""}`;
}
