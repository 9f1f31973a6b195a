// Start-up benchmark: runs the launcher (`npm start`, deploy/local/start.mjs, with --no-install: packages
// installed and dist/ built beforehand) in both layouts side by side, N times each, alternating:
//   one process:  the default, one Node process hosting every role, plus Postgres and NATS;
//   per role:     `--per-role`, a Node process per role (8), plus Postgres and NATS.
// Per run it prints the seconds from launch to every health green (the bench polls GET /v1/health of the
// gateway, green only when every service answers its gRPC health, and GET /mcp/health, every 25 ms; the
// launcher's own "ready in" beside it), then, after the stack has been idle for a few seconds, the
// proportional set size (PSS, /proc/<pid>/smaps_rollup: shared pages such as Postgres' shared buffers split
// among the processes mapping them, so the sum is what the stack costs) summed over everything the launcher
// runs: the Node process(es), Postgres with all its backends, NATS (not the launcher itself, shown apart),
// and the RSS sum for reference. Then the one-process/per-role ratios and the goals of the one-process
// default: PSS at most half of 404 MiB (<= 202 MiB) and start to healthy under 3 s. Each layout has its own
// data folder, so its run 1 includes initdb, migrations and stream creation; the goals count runs 2..N
// (data folder reused) unless --fresh, where no run counts for the time goal.
// Usage: node test/bench/startup.mjs [runs=3] [--fresh] [--idle=5]
//   --fresh: a new data folder per run (each run includes initdb); --idle=<s>: seconds idle before memory.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { greenAt, startLauncher } from "./lib.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const runs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 3);
const fresh = process.argv.includes("--fresh");
const idleSeconds = Number(/^--idle=(\d+(?:\.\d+)?)$/.exec(process.argv.find((a) => a.startsWith("--idle=")) ?? "")?.[1] ?? 5);
const GOALS = { pssMiB: 404 / 2, seconds: 3 };
const LAYOUTS = [
  { id: "one", label: "one process", args: [] },
  { id: "per-role", label: "per role", args: ["--per-role"] },
];

/** Proportional set size: shared pages (Postgres' shared buffers) split among the processes mapping them. */
function pssKiB(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function rssKiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function comm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** Each live pid whose ancestry reaches one of `roots`, with the root it descends from. */
function descendants(roots) {
  const parent = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(entry), ppid);
    } catch {}
  }
  const rootOf = new Map(roots.filter((pid) => parent.has(pid)).map((pid) => [pid, pid]));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (!rootOf.has(pid) && rootOf.has(ppid)) {
        rootOf.set(pid, rootOf.get(ppid));
        grew = true;
      }
    }
  }
  return rootOf;
}

async function once(layout, dataDir) {
  const { child, env, startedAt: started, output, stop } = await startLauncher(root, dataDir, layout.args);
  try {
    return await measure(layout, child, env, started, output);
  } finally {
    await stop();
  }
}

async function measure(layout, child, env, started, output) {
  const green = Promise.all([
    greenAt(`http://127.0.0.1:${env.GATEWAY_PORT}/v1/health`, child),
    greenAt(`http://127.0.0.1:${env.MCP_PORT}/mcp/health`, child),
  ]);
  green.catch(() => {});
  while (!/^pids: [\d,]+$/m.test(output())) {
    if (child.exitCode !== null) throw new Error(`the launcher (${layout.label}) exited:\n${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const out = output();
  const seconds = (Math.max(...(await green)) - started) / 1000;
  const launcherReady = Number(/ready in ([\d.]+)s/.exec(out)?.[1]);
  await new Promise((r) => setTimeout(r, idleSeconds * 1000)); // idle: let memory settle after start-up
  const pids = /^pids: ([\d,]+)$/m.exec(out)[1].split(",").map(Number);
  const rootOf = descendants(pids);
  const group = { node: 0, postgres: 0, nats: 0, other: 0 };
  let rss = 0;
  for (const [pid, rootPid] of rootOf) {
    const name = comm(rootPid);
    const key = name === "node" ? "node" : name.startsWith("postgres") ? "postgres" : name.startsWith("nats") ? "nats" : "other";
    group[key] += pssKiB(pid) / 1024;
    rss += rssKiB(pid) / 1024;
  }
  const pss = group.node + group.postgres + group.nats + group.other;
  const nodeProcesses = pids.filter((pid) => comm(pid) === "node").length;
  const launcherPss = pssKiB(child.pid) / 1024;
  return { seconds, launcherReady, processes: rootOf.size, nodeProcesses, pss, group, rss, launcherPss };
}

const base = mkdtempSync(path.join(os.tmpdir(), "toolport-startup-"));
/** The middle value; of an even count, the higher of the two middle ones. */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = Object.fromEntries(LAYOUTS.map((l) => [l.id, []]));
try {
  console.log(
    `launcher (deploy/local/start.mjs --no-install, i.e. npm start without install and build), ${runs} runs per layout, alternating; ${fresh ? "a fresh data folder each run" : "each layout's data folder reused after its run 1"}; memory after ${idleSeconds} s idle; ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  console.log(
    "run | layout      | launch -> all green (s) | launcher 'ready in' (s) | processes (Node) | PSS Node | PSS Postgres | PSS NATS | PSS sum (MiB) | RSS sum (MiB) | launcher PSS, not summed",
  );
  for (let i = 1; i <= runs; i++) {
    for (const layout of LAYOUTS) {
      const dataDir = fresh ? path.join(base, `${layout.id}-run${i}`) : path.join(base, layout.id);
      const r = await once(layout, dataDir);
      results[layout.id].push(r);
      console.log(
        `${i}${!fresh && i === 1 ? "*" : " "} | ${layout.label.padEnd(11)} | ${r.seconds.toFixed(2).padStart(23)} | ${r.launcherReady.toFixed(1).padStart(23)} | ${`${r.processes} (${r.nodeProcesses})`.padStart(16)} | ${r.group.node.toFixed(0).padStart(8)} | ${r.group.postgres.toFixed(0).padStart(12)} | ${r.group.nats.toFixed(0).padStart(8)} | ${r.pss.toFixed(0).padStart(13)} | ${r.rss.toFixed(0).padStart(13)} | ${r.launcherPss.toFixed(0)}`,
      );
    }
  }
  if (!fresh) console.log("* run 1 of each layout creates its data folder (initdb, migrations): not counted for the goals");

  // The goals count the runs with a reused data folder (2..N); with --fresh or one run, none counts for
  // time, and memory falls back to every run.
  const counted = (id) => (fresh ? [] : results[id].slice(1));
  const memoryRuns = (id) => (counted(id).length > 0 ? counted(id) : results[id]);
  const which = counted("one").length > 0 ? `runs 2..${runs}` : "every run (none with a reused data folder)";
  console.log(`\nmedians over ${which}:`);
  const med = {};
  for (const layout of LAYOUTS) {
    const rs = memoryRuns(layout.id);
    med[layout.id] = {
      seconds: median(rs.map((r) => r.seconds)),
      pss: median(rs.map((r) => r.pss)),
      rss: median(rs.map((r) => r.rss)),
    };
    const m = med[layout.id];
    console.log(
      `  ${layout.label.padEnd(11)}  ${m.seconds.toFixed(2)} s to all green, PSS sum ${m.pss.toFixed(0)} MiB, RSS sum ${m.rss.toFixed(0)} MiB`,
    );
  }
  console.log(
    `  one process / per role: PSS ${(med.one.pss / med["per-role"].pss).toFixed(3)}, RSS ${(med.one.rss / med["per-role"].rss).toFixed(3)}, time to green ${(med.one.seconds / med["per-role"].seconds).toFixed(3)}`,
  );
  console.log("goals (one-process default):");
  const pssOk = med.one.pss <= GOALS.pssMiB;
  console.log(
    `  PSS sum ${med.one.pss.toFixed(0)} MiB (median, ${which}) vs goal <= ${GOALS.pssMiB} MiB (half of 404): ${pssOk ? "meets" : "MISSES"}`,
  );
  const timed = counted("one");
  if (timed.length === 0) {
    console.log(
      `  start to healthy: no run counts (${fresh ? "--fresh: every run includes initdb" : "only run 1, which includes initdb"}); run with runs >= 2 and without --fresh`,
    );
  } else {
    const secs = timed.map((r) => r.seconds);
    const under = secs.filter((s) => s < GOALS.seconds).length;
    console.log(
      `  start to healthy ${median(secs).toFixed(2)} s (median of runs 2..${runs}; worst ${Math.max(...secs).toFixed(2)} s; ${under} of ${secs.length} under ${GOALS.seconds} s) vs goal < ${GOALS.seconds} s: ${median(secs) < GOALS.seconds ? "meets" : "MISSES"}`,
    );
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  rmSync(base, { recursive: true, force: true });
}
