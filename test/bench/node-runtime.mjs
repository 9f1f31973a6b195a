// The image's process on Node 24 beside Node 20 (issue 34): the container runs `node /app/dist/main.js
// --roles=all` (deploy/Dockerfile, /app being the host package's deployed folder); this runs the same entry,
// services/host/dist/main.js --roles=all, with each Node binary in turn, N runs each, alternating, against
// one Postgres and one NATS JetStream started here (so only the Toolport process differs). Per run: the
// seconds from spawn until GET /v1/health (every role's gRPC health) and GET /mcp/health both answer 200,
// then, after the process has been idle for a few seconds, its memory summed over its process tree (the
// host may start itself again with a sized heap): RSS, PSS (shared pages split among the processes mapping
// them), USS (pages of this process alone) and anonymous memory (what the process allocated: the JS heap,
// native buffers; no file pages). Then the medians of runs 2..N (run 1 of each binary creates its
// databases and stream) and the Node 24 / Node 20 ratios.
// Read PSS and USS with care on a shared machine: the Node binary's pages (about 100-130 MB of file) are
// shared with every other process running the same binary, so a Node the test runner also runs looks
// smaller than one nobody else runs. Anonymous memory compares the runtimes fairly; RSS minus it is the
// binary and libraries paged in. In a container, one Node process alone, PSS and USS are close to RSS.
// Usage: node test/bench/node-runtime.mjs [runs=4] [--node20=<path>] [--node24=<path>] [--idle=5]
//   Defaults: the running node if it is Node 20, else `node` on PATH; .cache/node24/node_modules/.bin/node
//   (npm test installs it there).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { assignLauncherPorts, freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";
import { greenAt } from "./lib.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const runs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 4);
const idleSeconds = Number(arg("idle") ?? 5);
const binaries = [
  { id: "20", node: arg("node20") ?? (process.version.startsWith("v20.") ? process.execPath : "node") },
  { id: "24", node: arg("node24") ?? path.join(root, ".cache/node24/node_modules/.bin/node") },
];
for (const b of binaries) {
  b.version = spawnSync(b.node, ["--version"], { encoding: "utf8" }).stdout?.trim();
  if (!b.version?.startsWith(`v${b.id}.`))
    throw new Error(`--node${b.id}: ${b.node} is ${b.version || "not runnable"}, not Node ${b.id}`);
}

/** RSS, PSS and USS (private clean + dirty) of one process, in KiB, from /proc/<pid>/smaps_rollup. */
function memoryKiB(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
    return {
      rss: field("Rss"),
      pss: field("Pss"),
      uss: field("Private_Clean") + field("Private_Dirty"),
      anon: field("Anonymous"),
    };
  } catch {
    return { rss: 0, pss: 0, uss: 0, anon: 0 };
  }
}

/** `pid` and every live process descending from it. */
function tree(pid) {
  const parent = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const found = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of parent) {
      if (!found.has(p) && found.has(pp)) {
        found.add(p);
        grew = true;
      }
    }
  }
  return [...found];
}

async function once(binary, infra) {
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    DATABASE_URL: infra.pgUrl.replace(/\/[^/]*$/, `/node${binary.id}`),
    NATS_URL: infra.natsUrl,
    NATS_NAMESPACE: `node${binary.id}`,
  };
  await assignLauncherPorts(env);
  env.MCP_PORT = env.MCP_PORT ?? String(await freePort());
  const started = performance.now();
  const child = spawn(binary.node, [path.join(root, "services/host/dist/main.js"), "--roles=all"], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (c) => {
    err += c;
  });
  try {
    const green = await Promise.all([
      greenAt(`http://127.0.0.1:${env.GATEWAY_PORT}/v1/health`, child),
      greenAt(`http://127.0.0.1:${env.MCP_PORT}/mcp/health`, child),
    ]);
    const seconds = (Math.max(...green) - started) / 1000;
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const pids = tree(child.pid);
    const sum = { rss: 0, pss: 0, uss: 0, anon: 0 };
    for (const m of pids.map(memoryKiB)) for (const k of Object.keys(sum)) sum[k] += m[k] / 1024;
    return { seconds, ...sum, processes: pids.length };
  } catch (e) {
    throw new Error(`${e.message}\n${err}`);
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  }
}

const base = mkdtempSync(path.join(os.tmpdir(), "toolport-node-runtime-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(base, "pg"), port: await freePort(), log: quiet, fast: true });
const nats = await startNats({ storeDir: path.join(base, "nats"), port: await freePort(), log: quiet });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = { 20: [], 24: [] };
try {
  console.log(
    `services/host/dist/main.js --roles=all (the image's entry), ${runs} runs per Node, alternating; memory after ${idleSeconds} s idle; ${os.cpus().length} CPUs`,
  );
  for (const b of binaries) console.log(`  Node ${b.id}: ${b.version} (${path.relative(root, b.node) || b.node})`);
  console.log("run | node     | spawn -> healthy (s) | processes | anon (MiB) | USS (MiB) | PSS (MiB) | RSS (MiB)");
  for (let i = 1; i <= runs; i++) {
    for (const b of binaries) {
      const r = await once(b, { pgUrl: pg.url, natsUrl: nats.url });
      results[b.id].push(r);
      console.log(
        `${i}${i === 1 ? "*" : " "}  | ${b.version.padEnd(8)} | ${r.seconds.toFixed(2).padStart(20)} | ${String(r.processes).padStart(9)} | ${r.anon.toFixed(0).padStart(10)} | ${r.uss.toFixed(0).padStart(9)} | ${r.pss.toFixed(0).padStart(9)} | ${r.rss.toFixed(0).padStart(9)}`,
      );
    }
  }
  console.log("* run 1 of each creates its databases and stream: not in the medians");
  const counted = (id) => (runs > 1 ? results[id].slice(1) : results[id]);
  const med = Object.fromEntries(
    binaries.map((b) => [
      b.id,
      {
        seconds: median(counted(b.id).map((r) => r.seconds)),
        anon: median(counted(b.id).map((r) => r.anon)),
        uss: median(counted(b.id).map((r) => r.uss)),
        pss: median(counted(b.id).map((r) => r.pss)),
        rss: median(counted(b.id).map((r) => r.rss)),
      },
    ]),
  );
  console.log(`\nmedians over runs ${runs > 1 ? `2..${runs}` : "1"}:`);
  for (const b of binaries)
    console.log(
      `  Node ${b.id} (${b.version}): healthy in ${med[b.id].seconds.toFixed(2)} s, idle anon ${med[b.id].anon.toFixed(0)} MiB, USS ${med[b.id].uss.toFixed(0)} MiB, PSS ${med[b.id].pss.toFixed(0)} MiB, RSS ${med[b.id].rss.toFixed(0)} MiB`,
    );
  console.log(
    `  Node 24 / Node 20: start ${(med[24].seconds / med[20].seconds).toFixed(2)}x, anon ${(med[24].anon / med[20].anon).toFixed(2)}x, USS ${(med[24].uss / med[20].uss).toFixed(2)}x, PSS ${(med[24].pss / med[20].pss).toFixed(2)}x, RSS ${(med[24].rss / med[20].rss).toFixed(2)}x`,
  );
  const others = (id) =>
    spawnSync("pgrep", ["-c", "-f", binaries.find((b) => b.id === id).node], { encoding: "utf8" }).stdout.trim();
  console.log(
    `  (processes running each binary now, sharing its pages in PSS: Node 20 ${others("20")}, Node 24 ${others("24")})`,
  );
} finally {
  await nats.stop();
  await pg.stop();
  rmSync(base, { recursive: true, force: true });
}
