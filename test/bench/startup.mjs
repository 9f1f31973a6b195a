// Start-up benchmark: runs `npm start` (packages already installed) N times and prints, per run, the
// seconds from launch to every health green and the resident memory of the whole stack (every
// process the launcher started and all their descendants: the 8 Node processes, Postgres with its
// backends, NATS). Usage: node test/bench/startup.mjs [runs=3] [--fresh]
//   --fresh: a new data folder per run (includes initdb); default reuses one folder after run 1.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 3);
const fresh = process.argv.includes("--fresh");

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

/** Every live pid whose ancestry reaches one of `roots`. */
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
  const set = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (!set.has(pid) && set.has(ppid)) {
        set.add(pid);
        grew = true;
      }
    }
  }
  return [...set].filter((pid) => parent.has(pid));
}

async function once(dataDir) {
  const env = { ...process.env, TOOLPORT_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  for (const v of [
    "GATEWAY_PORT",
    "MCP_PORT",
    "CATALOG_PORT",
    "EXECUTION_PORT",
    "BILLING_PORT",
    "IDENTITY_PORT",
    "CONTENT_PORT",
    "WEBHOOKS_PORT",
    "PGPORT",
    "NATS_PORT",
  ]) {
    env[v] = String(await freePort());
  }
  const started = performance.now();
  const child = spawn("npm", ["start"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  child.stderr.on("data", (c) => {
    out += c;
  });
  while (!/^pids: [\d,]+$/m.test(out)) {
    if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const launcherReady = Number(/ready in ([\d.]+)s/.exec(out)?.[1]);
  await new Promise((r) => setTimeout(r, 2000)); // let memory settle after start-up
  const pids = /^pids: ([\d,]+)$/m.exec(out)[1].split(",").map(Number);
  const all = descendants(pids);
  const totalMiB = all.reduce((sum, pid) => sum + rssKiB(pid), 0) / 1024;
  const pssMiB = all.reduce((sum, pid) => sum + pssKiB(pid), 0) / 1024;
  const nodeMiB = pids.slice(0, 8).reduce((s, p) => s + rssKiB(p), 0) / 1024;
  process.kill(-child.pid, "SIGINT");
  await new Promise((r) => child.once("exit", r));
  return { seconds, launcherReady, processes: all.length, totalMiB, pssMiB, nodeMiB };
}

const base = mkdtempSync(path.join(os.tmpdir(), "toolport-startup-"));
console.log(`npm start, ${runs} runs, ${fresh ? "fresh data folder each run" : "data folder reused after run 1"}`);
console.log(
  "run | npm start -> all green (s) | launcher's own 'ready in' (s) | processes | RSS sum (MiB) | PSS sum (MiB) | RSS 8 Node procs (MiB)",
);
const results = [];
for (let i = 1; i <= runs; i++) {
  const r = await once(fresh ? path.join(base, `run${i}`) : path.join(base, "data"));
  results.push(r);
  console.log(
    `${i} | ${r.seconds.toFixed(2)} | ${r.launcherReady.toFixed(2)} | ${r.processes} | ${r.totalMiB.toFixed(0)} | ${r.pssMiB.toFixed(0)} | ${r.nodeMiB.toFixed(0)}`,
  );
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `median: ${median(results.map((r) => r.seconds)).toFixed(2)} s to green, ${median(results.map((r) => r.totalMiB)).toFixed(0)} MiB RSS sum, ${median(results.map((r) => r.pssMiB)).toFixed(0)} MiB PSS sum`,
);
rmSync(base, { recursive: true, force: true });
