// Idle benchmark: what the stack costs when nobody calls it. Runs the launcher as `npm start` would but
// without installing (deploy/local/start.mjs --no-install: packages installed and dist/ built beforehand)
// on free ports with its own data folder, waits until the gateway's and the MCP server's health are green,
// lets it settle 10 s, then measures the CPU time over a window (default 60 s) of every process the
// launcher runs, from /proc: the Node process(es) (with what they re-executed as), Postgres with all its
// backends (and those that exited in the window, through the parent's cutime/cstime), NATS, and the
// launcher itself. Prints % of one core per process group and the total, and the verdict against the goal:
// under 1% of a core.
// --per-role: the per-role layout (a Node process per role, each its own group).
// --statements: also log every statement Postgres runs in the window (log_min_duration_statement=0, set
//   for this data folder only) and print them by count, so what the idle roles ask Postgres shows (the
//   logging costs Postgres CPU itself: take the CPU figures from a run without it).
// Usage: node test/bench/idle.mjs [window seconds=60] [--per-role] [--statements]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { greenAt, sleep, startLauncher } from "./lib.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const args = process.argv.slice(2);
const windowSeconds = Number(args.find((a) => /^\d+(\.\d+)?$/.test(a)) ?? 60);
const perRole = args.includes("--per-role");
const statements = args.includes("--statements");
const SETTLE_SECONDS = 10;
const GOAL_PERCENT = 1;

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
} catch {}

/** Every live process: pid -> { ppid, ticks }, ticks being its own user + system time and its reaped children's. */
function processTable() {
  const table = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      table.set(Number(entry), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {}
  }
  return table;
}

/** CPU seconds so far of each root's tree: the live descendants' own time plus what each has reaped. */
function treeSeconds(roots) {
  const table = processTable();
  const rootOf = new Map(roots.filter((pid) => table.has(pid)).map((pid) => [pid, pid]));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, { ppid }] of table) {
      if (!rootOf.has(pid) && rootOf.has(ppid)) {
        rootOf.set(pid, rootOf.get(ppid));
        grew = true;
      }
    }
  }
  const seconds = new Map(roots.map((pid) => [pid, 0]));
  for (const [pid, rootPid] of rootOf) seconds.set(rootPid, seconds.get(rootPid) + table.get(pid).ticks / ticksPerSecond);
  return seconds;
}

/** A root process's group name: postgres, nats, or the role a Node process runs (its dist/main.js's folder). */
function groupOf(pid) {
  let comm = "?";
  try {
    comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {}
  if (comm.startsWith("postgres")) return "postgres";
  if (comm.startsWith("nats")) return "nats";
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const main = argv.find((a) => a.endsWith("dist/main.js"));
    if (main) return path.basename(path.dirname(path.dirname(main))); // services/catalog/dist/main.js -> catalog
  } catch {}
  return comm;
}

/** The statement of each "duration: ... ms  statement|execute <name>: <text>" line, with parameters as $n. */
function statementCounts(logText) {
  const counts = new Map();
  for (const line of logText.split("\n")) {
    const m = /duration: [\d.]+ ms\s+(?:statement|execute [^:]*): (.*)$/.exec(line);
    if (!m) continue;
    const text = m[1].replace(/\s+/g, " ").trim().slice(0, 140);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

function psql(url, sql) {
  return execFileSync("psql", [url, "-X", "-q", "-t", "-A", "-c", sql], { encoding: "utf8" });
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), "toolport-idle-"));
const { child, env, output, stop } = await startLauncher(root, dataDir, perRole ? ["--per-role"] : []);

try {
  await Promise.all([
    greenAt(`http://127.0.0.1:${env.GATEWAY_PORT}/v1/health`, child),
    greenAt(`http://127.0.0.1:${env.MCP_PORT}/mcp/health`, child),
  ]);
  while (!/^pids: [\d,]+$/m.test(output())) {
    if (child.exitCode !== null) throw new Error(`the launcher exited:\n${output()}`);
    await sleep(20);
  }
  const pids = /^pids: ([\d,]+)$/m.exec(output())[1].split(",").map(Number);
  const pgUrl = `postgres://toolport@127.0.0.1:${env.PGPORT}/postgres`;
  const pgLog = path.join(dataDir, "logs", "postgres.log");
  console.log(
    `idle stack: deploy/local/start.mjs --no-install${perRole ? " --per-role" : ""} (npm start without install and build); green, settling ${SETTLE_SECONDS} s, then a ${windowSeconds} s window; ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  if (statements) {
    psql(pgUrl, "ALTER SYSTEM SET log_min_duration_statement = 0");
    psql(pgUrl, "SELECT pg_reload_conf()");
  }
  await sleep(SETTLE_SECONDS * 1000);
  const logStart = statements ? statSync(pgLog).size : 0;
  const roots = [...pids, child.pid];
  const before = treeSeconds(roots);
  const t0 = performance.now();
  await sleep(windowSeconds * 1000);
  const after = treeSeconds(roots);
  const elapsed = (performance.now() - t0) / 1000;
  if (child.exitCode !== null) throw new Error(`the launcher exited during the window:\n${output()}`);

  const groups = new Map();
  for (const pid of roots) {
    const name = pid === child.pid ? "launcher" : groupOf(pid);
    groups.set(name, (groups.get(name) ?? 0) + (after.get(pid) - before.get(pid)));
  }
  const percent = (s) => (100 * s) / elapsed;
  const total = [...groups.values()].reduce((a, b) => a + b, 0);
  console.log(`\nCPU over ${elapsed.toFixed(1)} s, % of one core (CPU seconds):`);
  for (const [name, s] of [...groups].sort((a, b) => b[1] - a[1]))
    console.log(`  ${name.padEnd(12)} ${percent(s).toFixed(3).padStart(7)} %   (${s.toFixed(2)} s)`);
  console.log(`  ${"total".padEnd(12)} ${percent(total).toFixed(3).padStart(7)} %   (${total.toFixed(2)} s)`);
  console.log(
    `goal: an idle stack under ${GOAL_PERCENT}% of a core: ${percent(total) < GOAL_PERCENT ? "meets" : "MISSES"} (${percent(total).toFixed(2)}%)`,
  );

  if (statements) {
    const text = readFileSync(pgLog, "utf8").slice(logStart);
    const counts = statementCounts(text);
    const sum = counts.reduce((a, [, n]) => a + n, 0);
    console.log(`\nPostgres statements in the window: ${sum} (${(sum / elapsed).toFixed(2)}/s), by count:`);
    for (const [sql, n] of counts.slice(0, 25))
      console.log(`  ${String(n).padStart(6)}  ${(n / elapsed).toFixed(2).padStart(6)}/s  ${sql}`);
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
}
