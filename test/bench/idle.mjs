// Idle benchmark: what the stack costs when nobody calls it. Runs the launcher as `npm start` would but
// without installing (deploy/local/start.mjs --no-install: packages installed and dist/ built beforehand)
// on free ports with its own data folder, waits until the gateway's and the MCP server's health are green,
// lets it settle (default 60 s, --settle=<seconds>), then measures the CPU time over a window (default 60 s) of every process the
// launcher runs, from /proc: the Node process(es) (with what they re-executed as), Postgres with all its
// backends (and those that exited in the window, through the parent's cutime/cstime), NATS, and the
// launcher itself. Prints % of one core per process group and the total, and the verdict against the goal:
// under 1% of a core. Then the wake-ups per minute of each group, which unlike CPU % hardly depend on
// what else the machine runs: the voluntary context switches (a thread going to sleep, so woken before
// it) of the event loop (a Node process's main thread) and of every thread of the group (libuv's pool,
// V8's and Node's own threads; Postgres's processes, NATS's threads), over the processes alive at the
// end of the window.
// --per-role: the per-role layout (a Node process per role, each its own group).
// --statements: also log every statement Postgres runs in the window (log_min_duration_statement=0, set
//   for this data folder only) and print them by count, so what the idle roles ask Postgres shows (the
//   logging costs Postgres CPU itself, and the launcher, which reads Postgres's log, wakes for each line:
//   take the CPU and wake-up figures from a run without it).
// Why 60 s of settling: about 30 s after start V8 collects the heap the start-up left (its memory reducer,
// on the host's GC helper threads: about 0.4 s of CPU once); with 10 s of settling that one-off collection
// fell inside the window and read as 0.7% of a core of "idle" (per-thread ticks of the host, 10 s windows
// from start: 4, 1, 41 (main 12, four helper threads 29), 1, 3).
// Usage: node test/bench/idle.mjs [window seconds=60] [--settle=<seconds>] [--per-role] [--statements]
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
const SETTLE_SECONDS = Number(args.find((a) => a.startsWith("--settle="))?.slice("--settle=".length) ?? 60);
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

/** The process table, and for each live pid under one of `roots` (the roots included) the root it is under. */
function processTree(roots) {
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
  return { table, rootOf };
}

/** CPU seconds so far of each root's tree: the live descendants' own time plus what each has reaped. */
function treeSeconds(roots) {
  const { table, rootOf } = processTree(roots);
  const seconds = new Map(roots.map((pid) => [pid, 0]));
  for (const [pid, rootPid] of rootOf) seconds.set(rootPid, seconds.get(rootPid) + table.get(pid).ticks / ticksPerSecond);
  return seconds;
}

/**
 * A process's threads' voluntary context switches: { main: its main thread's, all: every thread's,
 * node: whether it is a Node process (then the main thread is its event loop) }.
 */
function switches(pid) {
  const count = (tid) => {
    try {
      return Number(
        /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"))?.[1] ?? 0,
      );
    } catch {
      return 0;
    }
  };
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {}
  let node = false;
  let title = "";
  try {
    node = readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "node";
    // A Postgres process's title: "postgres: checkpointer", "postgres: toolport catalog 127.0.0.1(5123) idle".
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {}
  return { main: count(String(pid)), all: tids.reduce((t, tid) => t + count(tid), 0), node, title };
}

/**
 * Voluntary context switches so far of each root's tree, by pid: Node's main thread, every thread.
 * Compared over a window pid by pid, so processes that started or ended in it count only from when both
 * readings have them.
 */
function treeSwitches(roots) {
  const { rootOf } = processTree(roots);
  return new Map([...rootOf].map(([pid, root]) => [pid, { root, ...switches(pid) }]));
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
  const switchesBefore = treeSwitches(roots);
  const t0 = performance.now();
  await sleep(windowSeconds * 1000);
  const after = treeSeconds(roots);
  const switchesAfter = treeSwitches(roots);
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

  const wakeups = new Map();
  for (const [pid, { root, main, all, node }] of switchesAfter) {
    const was = switchesBefore.get(pid);
    if (!was) continue;
    const name = root === child.pid ? "launcher" : groupOf(root);
    const w = wakeups.get(name) ?? { main: 0, all: 0, node: false };
    if (node) {
      w.main += main - was.main;
      w.node = true;
    }
    w.all += all - was.all;
    wakeups.set(name, w);
  }
  const perMinute = (n) => ((60 * n) / elapsed).toFixed(0).padStart(7);
  console.log("\nWake-ups per minute (voluntary context switches): the event loop (Node), every thread of the group:");
  for (const [name, w] of [...wakeups].sort((a, b) => b[1].all - a[1].all))
    console.log(`  ${name.padEnd(12)} ${w.node ? perMinute(w.main) : "      -"}  ${perMinute(w.all)}`);
  // Postgres's processes by title (a backend's: user, database, state; its client's port left out), and
  // the backends that started in the window (connections opened).
  const byTitle = new Map();
  let started = 0;
  for (const [pid, { root, all, title }] of switchesAfter) {
    if (groupOf(root) !== "postgres") continue;
    const was = switchesBefore.get(pid);
    if (!was) started += 1;
    const key = title.replace(/ [\d.]+\(\d+\)/, "").replace(/^postgres: /, "");
    byTitle.set(key, (byTitle.get(key) ?? 0) + all - (was?.all ?? 0));
  }
  const wakeTotal = [...wakeups.values()].reduce((t, w) => ({ main: t.main + (w.node ? w.main : 0), all: t.all + w.all }), {
    main: 0,
    all: 0,
  });
  console.log(`  ${"total".padEnd(12)} ${perMinute(wakeTotal.main)}  ${perMinute(wakeTotal.all)}`);
  console.log(`  postgres's processes (${started} started in the window), by title:`);
  for (const [title, n] of [...byTitle].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${perMinute(n)}  ${title}`);

  if (statements) {
    const text = readFileSync(pgLog, "utf8").slice(logStart);
    const counts = statementCounts(text);
    const sum = counts.reduce((a, [, n]) => a + n, 0);
    console.log(`\nPostgres statements in the window: ${sum} (${perMinute(sum).trim()} a minute), by count:`);
    for (const [sql, n] of counts.slice(0, 25)) console.log(`  ${String(n).padStart(6)}  ${perMinute(n)}/min  ${sql}`);
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
}
