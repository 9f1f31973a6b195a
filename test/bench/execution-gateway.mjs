// Execution benchmark, one run, side by side:
//  1. the same small JSON upstream called (a) directly, (b) through nginx as a plain reverse proxy (Debian
//     package `nginx`), (c) through POST /v1/tools/call/{id} on a running stack (gateway -> identity ->
//     execution -> catalog -> upstream, with the result stored and the event written to the outbox);
//     throughput and p50/p99 for each at concurrency 1 (added latency) and at moderate load, and (c)/(b);
//  2. capping a 2 MB result to 32,000 characters (the cap alone, in process, and a 2 MB upstream answer
//     through the gateway);
//  3. a batch of 10 calls to a 100 ms upstream (expected about 100 ms, not 1 s).
// Row (d) of section 1 is the floor of the layout DESIGN.md fixes (execution-floor.mjs: Koa, one connect gRPC
// hop, the upstream call and one Postgres INSERT, nothing else), so (d)/(b) shows how far (c)/(b) can go here.
// Postgres and NATS are started here on free ports in a temporary folder; services run from dist/.
// Usage: node test/bench/execution-gateway.mjs [requests=3000] [concurrency=16]   (build first)
//   BENCH_VERBOSE=1 forwards the services' logs; BENCH_PROFILE=<service>[,<service>...] (gateway included)
//   writes a CPU profile of each named process to /tmp/toolport-prof/<service>.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [requests = 3000, concurrency = 16] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-exec-"));
const quiet = { info() {}, warn() {}, error: console.error };
const children = [];
// Postgres runs with fsync and synchronous_commit off unless BENCH_PG_DURABLE=1 (production settings).
// BENCH_SECTIONS=1 (or 1,3 ...) runs only those sections; BENCH_LEVELS=16 only that concurrency in section 1.
const sections = (process.env.BENCH_SECTIONS ?? "1,2,3").split(",");
const profiles = (process.env.BENCH_PROFILE ?? "").split(",").filter(Boolean);
const profiled = (name) => (profiles.includes(name) ? ["--cpu-prof", `--cpu-prof-dir=/tmp/toolport-prof/${name}`] : []);

// The upstream, in its own process: /small (a small JSON object), /slow (100 ms), /big (2 MB JSON).
const upstreamSource = `
const http = require("node:http");
const small = JSON.stringify({ id: 42, name: "widget", tags: ["a", "b"], price: { amount: 1999, currency: "USD" } });
const big = JSON.stringify({ results: Array.from({ length: 12000 }, (_, i) => ({ id: i, title: "Result number " + i, body: "lorem ipsum ".repeat(10) })), next_cursor: "c2" });
http.createServer((req, res) => {
  const send = (body) => { res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }); res.end(body); };
  if (req.url.startsWith("/slow")) setTimeout(() => send(small), 100);
  else if (req.url.startsWith("/big")) send(big);
  else send(small);
}).listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

// CPU seconds used so far by each process we started (Postgres: the postmaster and all its backends), so
// row (c) can say where the time of one call goes.
const named = new Map();
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return 0;
  }
}
function cpuSnapshot() {
  const snap = {};
  for (const [name, pid] of named) snap[name] = cpuSeconds(pid);
  if (pg?.pid) {
    let total = cpuSeconds(pg.pid);
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1].split(" ")[1]);
        if (ppid === pg.pid) total += cpuSeconds(entry);
      } catch {}
    }
    snap.postgres = total;
  }
  if (nats?.pid) snap.nats = cpuSeconds(nats.pid);
  snap.bench = process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
  return snap;
}

function start(name, file, env, args = [], scriptArgs = []) {
  const child = spawn(process.execPath, [...args, file, ...scriptArgs], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  named.set(name, child.pid);
  return new Promise((resolve, reject) => {
    // Only the start-up lines are searched: the logs that follow (an access line per request) are
    // drained, not kept, so the benchmark itself does not take CPU from the stack it measures.
    let seen = "";
    let ready = false;
    child.stdout.on("data", (chunk) => {
      if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
      if (ready) return;
      seen += chunk;
      if (/ready|listening/.test(seen)) {
        ready = true;
        seen = "";
        resolve(child);
      }
    });
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

async function cleanup() {
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null)));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
function request(url, { method = "GET", headers = {}, body } = {}) {
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

async function load(label, make, total, conc) {
  const latencies = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < total) {
        next++;
        const t = performance.now();
        const res = await make();
        latencies.push(performance.now() - t);
        if (res.status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { label, rps: total / seconds, p50: q(0.5), p99: q(0.99), failures };
}

const fmt = (r) =>
  `${r.label.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms${r.failures ? `   (${r.failures} non-200)` : ""}`;

let pg;
let nats;
try {
  pg = await startPostgres({
    dataDir: path.join(dir, "pg"),
    port: await freePort(),
    log: quiet,
    fast: !process.env.BENCH_PG_DURABLE,
  });
  nats = await startNats({ storeDir: path.join(dir, "nats"), port: await freePort(), log: quiet });
  const upstreamPort = await freePort();
  await start("upstream", "-", { PORT: String(upstreamPort) }, ["-e", upstreamSource]);

  const ports = Object.fromEntries(
    await Promise.all(["catalog", "execution", "billing", "identity", "gateway"].map(async (n) => [n, await freePort()])),
  );
  const common = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    LOG_LEVEL: "info",
    CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    EXECUTION_URL: `http://127.0.0.1:${ports.execution}`,
    BILLING_URL: `http://127.0.0.1:${ports.billing}`,
    IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
    CATALOG_SECRET_KEY: "a".repeat(64),
    EXECUTION_OUTBOUND_ALLOW: `127.0.0.1:${upstreamPort}`,
    TOOL_CALLS_PER_MINUTE: "100000000",
    FREE_TIER_CALLS_PER_MONTH: "100000000",
    STRIPE_WEBHOOK_SECRET: "whsec_bench",
    STRIPE_SECRET_KEY: "sk_test_bench",
  };
  await Promise.all(
    ["catalog", "execution", "billing", "identity"].map((n) =>
      start(n, path.join(root, `services/${n}/dist/main.js`), { ...common, PORT: String(ports[n]) }, profiled(n)),
    ),
  );
  await start(
    "gateway",
    path.join(root, "gateway/dist/main.js"),
    { ...common, PORT: String(ports.gateway) },
    profiled("gateway"),
  );
  const gw = `http://127.0.0.1:${ports.gateway}/v1`;
  const json = { "content-type": "application/json" };

  const reg = JSON.parse(
    (
      await request(`${gw}/agents`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ name: "bench", operator_email: "bench@example.com" }),
      })
    ).body,
  );
  const key = { ...json, "svc-api-key": reg.api_key };
  const doc = {
    openapi: "3.0.3",
    info: { title: "Bench upstream", version: "1" },
    paths: {
      "/small": { get: { operationId: "small", responses: { 200: { description: "ok" } } } },
      "/slow": { get: { operationId: "slow", responses: { 200: { description: "ok" } } } },
      "/big": { get: { operationId: "big", responses: { 200: { description: "ok" } } } },
    },
  };
  const published = JSON.parse(
    (
      await request(`${gw}/services`, {
        method: "POST",
        headers: key,
        body: JSON.stringify({ api: { document: doc, base_url: `http://127.0.0.1:${upstreamPort}` } }),
      })
    ).body,
  );
  const tool = Object.fromEntries(published.tools.map((t) => [t.name, t.id]));

  // nginx as a plain reverse proxy with upstream keep-alive.
  const nginxPort = await freePort();
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `daemon off; worker_processes auto; pid ${dir}/nginx.pid; error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http { access_log off;
  client_body_temp_path ${dir}/nb; proxy_temp_path ${dir}/np; fastcgi_temp_path ${dir}/nf; uwsgi_temp_path ${dir}/nu; scgi_temp_path ${dir}/ns;
  upstream app { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${nginxPort}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  let nginxBin = "/usr/sbin/nginx";
  try {
    execFileSync(nginxBin, ["-t", "-c", conf, "-p", dir], { stdio: "ignore" });
  } catch {
    nginxBin = undefined;
  }
  if (nginxBin) {
    const nginx = spawn(nginxBin, ["-c", conf, "-p", dir], { stdio: "ignore" });
    children.push(nginx);
    for (let i = 0; i < 50; i++) {
      try {
        await request(`http://127.0.0.1:${nginxPort}/small`);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  // (d) the floor of the fixed layout (execution-floor.mjs): Koa -> one connect gRPC hop -> upstream + one INSERT.
  const floorPorts = { service: await freePort(), gateway: await freePort() };
  const floorScript = path.join(root, "test/bench/execution-floor.mjs");
  await start(
    "floor-service",
    floorScript,
    {},
    [],
    ["service", String(floorPorts.service), `http://127.0.0.1:${upstreamPort}`, pg.url],
  );
  await start(
    "floor-gateway",
    floorScript,
    {},
    [],
    ["gateway", String(floorPorts.gateway), `http://127.0.0.1:${floorPorts.service}`],
  );

  const direct = () => request(`http://127.0.0.1:${upstreamPort}/small`);
  const proxied = () => request(`http://127.0.0.1:${nginxPort}/small`);
  const gateway = () => request(`${gw}/tools/call/${tool.small}`, { method: "POST", headers: key, body: "{}" });
  const floor = () =>
    request(`http://127.0.0.1:${floorPorts.gateway}/v1/tools/call/${tool.small}`, { method: "POST", headers: json, body: "{}" });

  console.log(`\n1. Same small JSON upstream (${requests} requests per row; ${os.cpus().length} CPUs, Node ${process.version})`);
  const levels = process.env.BENCH_LEVELS ? process.env.BENCH_LEVELS.split(",").map(Number) : [1, concurrency];
  if (sections.includes("1"))
    for (const conc of levels) {
      const n = conc === 1 ? Math.min(requests, 1000) : requests;
      for (const f of [direct, nginxBin ? proxied : null, gateway, floor]) if (f) await load("warm-up", f, 300, conc);
      const a = await load(`(a) direct, concurrency ${conc}`, direct, n, conc);
      const b = nginxBin ? await load(`(b) nginx, concurrency ${conc}`, proxied, n, conc) : undefined;
      const before = cpuSnapshot();
      const c = await load(`(c) gateway call, concurrency ${conc}`, gateway, n, conc);
      const after = cpuSnapshot();
      const d = await load(`(d) floor of the layout, conc. ${conc}`, floor, n, conc);
      for (const r of [a, b, c, d]) if (r) console.log(fmt(r));
      const perCall = Object.keys(after)
        .map((k) => [k, ((after[k] - before[k]) * 1e3) / n])
        .filter(([, ms]) => ms >= 0.005)
        .sort((x, y) => y[1] - x[1]);
      const sum = perCall.reduce((t, [, ms]) => t + ms, 0);
      console.log(
        `    CPU per call in (c): ${sum.toFixed(2)} ms = ${perCall.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ")}`,
      );
      if (b)
        console.log(
          `    (c)/(b) throughput ${(c.rps / b.rps).toFixed(3)}; p50 added by the gateway over direct ${(c.p50 - a.p50).toFixed(2)} ms, over nginx ${(c.p50 - b.p50).toFixed(2)} ms; floor (d)/(b) ${(d.rps / b.rps).toFixed(3)}, p50 added ${(d.p50 - b.p50).toFixed(2)} ms; (c)/(d) ${(c.rps / d.rps).toFixed(3)}`,
        );
    }
  if (!nginxBin) console.log("    (nginx not installed: apt-get install -y nginx)");

  if (sections.includes("2")) {
    console.log("\n2. Capping a 2 MB result to 32,000 characters");
    const { capJson } = await import(path.join(root, "services/execution/dist/domain/cap.js"));
    const bigValue = JSON.parse((await request(`http://127.0.0.1:${upstreamPort}/big`)).body);
    const size = JSON.stringify(bigValue).length;
    const times = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      capJson(bigValue, 32_000);
      times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    console.log(
      `   cap alone (in process, ${(size / 1e6).toFixed(2)} M chars -> 32,000): median ${times[10].toFixed(1)} ms, min ${times[0].toFixed(1)} ms`,
    );
    const through = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const res = await request(`${gw}/tools/call/${tool.big}`, { method: "POST", headers: key, body: "{}" });
      through.push(performance.now() - t);
      if (i === 0) {
        const body = JSON.parse(res.body);
        console.log(
          `   through the gateway: truncated ${body.truncated}, result ${JSON.stringify(body.result).length} chars, dropped ${JSON.stringify(body.response_meta.dropped_items)}`,
        );
      }
    }
    through.sort((x, y) => x - y);
    const directBig = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      await request(`http://127.0.0.1:${upstreamPort}/big`);
      directBig.push(performance.now() - t);
    }
    directBig.sort((x, y) => x - y);
    console.log(
      `   2 MB call end to end (fetch, parse, redact, store 2 MB, cap, return): median ${through[5].toFixed(0)} ms (the upstream alone: ${directBig[5].toFixed(0)} ms)`,
    );
  }
  if (sections.includes("3")) {
    console.log("\n3. A batch of 10 calls to a 100 ms upstream");
    const batchBody = JSON.stringify({ calls: Array.from({ length: 10 }, () => ({ tool_id: tool.slow })) });
    const batch = [];
    for (let i = 0; i < 11; i++) {
      const t = performance.now();
      const res = await request(`${gw}/tools/call/batch`, { method: "POST", headers: key, body: batchBody });
      if (i > 0) batch.push(performance.now() - t);
      if (i === 0 && !JSON.parse(res.body).results.every((r) => r.success)) throw new Error(`batch failed: ${res.body}`);
    }
    batch.sort((x, y) => x - y);
    console.log(
      `   10 runs: median ${batch[5].toFixed(0)} ms, min ${batch[0].toFixed(0)} ms, max ${batch[9].toFixed(0)} ms (sequential would be >= 1000 ms)`,
    );
  }
  await cleanup();
} catch (err) {
  console.error(err);
  await cleanup();
  process.exitCode = 1;
} finally {
  // Whatever happened, leave no Postgres or NATS behind.
  await nats?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
  agent.destroy();
}
