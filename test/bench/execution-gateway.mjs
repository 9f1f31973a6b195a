// Execution benchmark, one run, side by side:
//  1. the same small JSON upstream called, at concurrency 1 (added latency) and at load (default 16):
//     (a)   directly;
//     (b)   through nginx as a plain reverse proxy with upstream keep-alive (Debian package `nginx-light`
//           or `nginx`; the row is left out if /usr/sbin/nginx is missing);
//     (c1)  through POST /v1/tools/call/{id} on the one-process stack: `services/host/dist/main.js
//           --roles=catalog,execution,billing,identity,gateway` (gateway -> identity -> execution ->
//           catalog -> upstream, the result stored and the event written to the outbox, the roles calling
//           each other in process), on the Postgres server with production durability;
//     (c1r) the same one-process stack on a second Postgres server with fsync, synchronous_commit and
//           full_page_writes off ("one process, relaxed Postgres"), to show what durable commits cost;
//     (c1x) the one-process stack again, with the settings BENCH_C1X_ENV names (KEY=value,KEY=value) over
//           (c1)'s, and/or from the built checkout BENCH_C1X_ROOT names (another worktree, say at the commit
//           before a change), on the durable Postgres and its own NATS: a same-run A/B of a setting or of
//           code (only with either variable; its process is "toolport-c1x"), printed as its throughput and
//           CPU per call over (c1)'s;
//     (c2)  the same call on a stack with one process per role (services/<name>/dist/main.js and
//           gateway/dist/main.js, gRPC between them), on the durable Postgres server;
//     (d)   the floor of the layout DESIGN.md fixes (execution-floor.mjs: Koa, one connect gRPC hop, the
//           upstream call and one Postgres INSERT, nothing else), on the durable Postgres server;
//     (d1)  the floor of the one-process layout: the same without the hop (Koa, the upstream call and the
//           INSERT in one process), with its CPU per call at each concurrency (its process "floor-one" and
//           the durable Postgres), the yardstick of (c1)'s goals;
//     (d1e) (d1) with durable events kept, as barely as the promise allows (execution-floor.mjs one-events:
//           the INSERT and an outbox row in one statement, a relay publishing to JetStream with the event id
//           as message id, two durable consumers, as many as Toolport's execution events have, each applying
//           a batch with its inbox rows in one statement), on the durable Postgres and its own NATS
//           (nats-d1e): what the events alone cost, shown beside the goals, not one of them. Its CPU per
//           call over (d1)'s is what durable events add to the floor (under 1 when its group commit saves
//           more than they cost); (c1) over (d1e) is what Toolport adds to that.
//     Every row is warmed up (300 calls), then the rows take turns in 3 rounds so that drift (JIT, table
//     growth, other work on the machine) falls on all alike. Per row: requests/s, p50, p99; for every row
//     but (a) and (b) the CPU per call of each process (c1's Node process is "toolport", c1r's
//     "toolport-relaxed", c2's are catalog, execution, billing, identity, gateway, (d)'s floor-gateway and
//     floor-service, with (c2) over (d) beside the ratios; "postgres" is the
//     durable server and "postgres-relaxed" the other, each with all its backends; each stack has its own
//     NATS server, nats-c1, nats-c1r, nats-c2), summed over the stack's own processes (its Node
//     process(es), its Postgres server, its NATS), with the upstream and the bench shown beside the sum,
//     not in it; then the ratios to (b) and (d) and the verdicts against issue 36's goals (Toolport's own
//     work no larger than the bare work of a call), each line with its figures and their ratio:
//       (c1)/(d1) throughput at concurrency 16                                  >= 0.6
//       (c1) p50 minus (d1) p50 at concurrency 1                                <= 1 ms
//       (c1) CPU per call (toolport + postgres + nats-c1) over (d1)'s (floor-one + postgres)
//            at concurrency 16                                                  <= 1.5x
//            at concurrency 1                                                   <= 2x
//       (c2)/(d) throughput, at concurrency 1 and at 16                         >= 0.8
//     and, beside them, (d1e) against (d1) and (c1) against (d1e).
//     With another load concurrency than 16 the "at 16" goals are judged at it, and say so.
//  2. capping a 2 MB result to 32,000 characters (the cap alone, in process; the depth and NUL check every
//     answer gets, in process, beside a bare walk of the same value; and a 2 MB upstream answer through the
//     c1 gateway);
//  3. a batch of 10 calls to a 100 ms upstream through the c1 gateway (expected about 100 ms, not 1 s).
//     Without section 1, only the upstream, the durable Postgres and the c1 stack are started.
// Each stack (c1, c1r, c2) has its own databases on its Postgres server (bench_<stack>_<service>, through
// <SERVICE>_DATABASE_URL), its own NATS server and NATS_NAMESPACE (bench_<stack>; a shared NATS
// would have each stack's consumers record the other stacks' execution events too), publishes the bench
// upstream's OpenAPI document and registers its own agent. Both Postgres servers get max_connections=300
// (the pools of c1, c2 and the floor on one server can exceed the default 100). Postgres, NATS and nginx are started here on free ports in
// a temporary folder; Toolport runs from dist/ (build first).
// Usage: node test/bench/execution-gateway.mjs [requests=3000] [concurrency=16]
//   BENCH_LEVELS=16 (or 1,16 ...) only those concurrencies in section 1; BENCH_SECTIONS=1 (or 1,3 ...)
//   only those sections; BENCH_ROWS=c1 (or a,b,c1,c1r,c2,d,d1,d1e) only those rows of section 1, the ratios and
//   goals printed only where their rows ran; BENCH_C1X_ENV=KEY=value[,...] and/or BENCH_C1X_ROOT=<checkout> add row (c1x); BENCH_VERBOSE=1 forwards the processes' logs; BENCH_PROFILE=<process>[,...]
//   (toolport, toolport-relaxed, catalog, execution, billing, identity, gateway, floor-service,
//   floor-gateway, floor-one, floor-events) writes a CPU profile of each named process to /tmp/toolport-prof/<process>;
//   BENCH_STATEMENTS=1 loads pg_stat_statements into the durable Postgres and prints, per concurrency, the
//   statements (c1)'s databases (and (c2)'s and (d1e)'s) ran per call, warm-up included, by statement, with their
//   execution time and WAL per call (it costs some CPU: measure
//   CPU and latency in a run without it).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { freePort } from "../../deploy/local/infra.mjs";
import {
  adopt,
  agent,
  cleanup,
  cpuPerCall,
  fmt,
  profiled,
  request,
  row,
  runRounds,
  sleep,
  start,
  summary,
  track,
} from "./lib.mjs";
import { benchNats, benchPostgres, expectJson, stopServers } from "./servers.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [requests = 3000, concurrency = 16] = process.argv.slice(2).map(Number);
const sections = (process.env.BENCH_SECTIONS ?? "1,2,3").split(",");
const wanted = (id) => !process.env.BENCH_ROWS || process.env.BENCH_ROWS.split(",").includes(id);
const levels = process.env.BENCH_LEVELS ? process.env.BENCH_LEVELS.split(",").map(Number) : [1, concurrency];
const ROUNDS = 3;
const WARMUP = 300;
// Issue 36's goals: (c1) against the floor of its layout (d1), (c2) against the floor of its own (d).
const GOALS = { c1OverD1: 0.6, loadAt: 16, c1AddedP50Ms: 1, c1CpuOverD1: { 1: 2, load: 1.5 }, c2OverD: 0.8 };
const SERVICES = ["catalog", "execution", "billing", "identity"];
const countStatements = process.env.BENCH_STATEMENTS === "1";
/** Row (c1x)'s settings over (c1)'s, from BENCH_C1X_ENV (KEY=value,KEY=value); undefined without it. */
const c1xSettings = process.env.BENCH_C1X_ENV
  ? Object.fromEntries(
      process.env.BENCH_C1X_ENV.split(",").map((pair) => {
        const at = pair.indexOf("=");
        if (at < 1) throw new Error(`BENCH_C1X_ENV: "${pair}" is not KEY=value`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
    )
  : undefined;
/** Row (c1x)'s checkout, from BENCH_C1X_ROOT (built: its services/host/dist/main.js is run); this one without it. */
const c1xRoot = process.env.BENCH_C1X_ROOT ? path.resolve(process.env.BENCH_C1X_ROOT) : undefined;
if (c1xRoot && !existsSync(path.join(c1xRoot, "services/host/dist/main.js")))
  throw new Error(`BENCH_C1X_ROOT: ${c1xRoot} has no services/host/dist/main.js (install and build that checkout first)`);
/** What (c1x) differs from (c1) in, for its row's name. */
const c1xLabel = [process.env.BENCH_C1X_ENV, c1xRoot && `from ${c1xRoot}`].filter(Boolean).join(", ");
// Made after the variables above are checked, so a refused value leaves no folder behind.
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-exec-"));

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

const doc = {
  openapi: "3.0.3",
  info: { title: "Bench upstream", version: "1" },
  paths: {
    "/small": { get: { operationId: "small", responses: { 200: { description: "ok" } } } },
    "/slow": { get: { operationId: "slow", responses: { 200: { description: "ok" } } } },
    "/big": { get: { operationId: "big", responses: { 200: { description: "ok" } } } },
  },
};
const json = { "content-type": "application/json" };

/**
 * A Toolport stack `id` with the roles catalog, execution, billing, identity and gateway: `one` process
 * hosting them all, or a process per role; its own databases on `pg`, its own NATS server and consumer
 * prefix; the bench upstream published and an agent registered. Returns how to call it and the names of
 * its processes (for the CPU table).
 */
async function startStack({ id, layout, pg, upstreamPort, settings = {}, checkout = root }) {
  const nats = await benchNats(dir, `nats-${id}`);
  const ports = Object.fromEntries(await Promise.all([...SERVICES, "gateway"].map(async (n) => [n, await freePort()])));
  const database = (service) => {
    const url = new URL(pg.url);
    url.pathname = `/bench_${id}_${service}`;
    return url.toString();
  };
  const env = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: `bench_${id}`,
    LOG_LEVEL: "info",
    CATALOG_SECRET_KEY: "a".repeat(64),
    EXECUTION_OUTBOUND_ALLOW: `127.0.0.1:${upstreamPort}`,
    TOOL_CALLS_PER_MINUTE: "100000000",
    FREE_TIER_CALLS_PER_MONTH: "100000000",
    STRIPE_WEBHOOK_SECRET: "whsec_bench",
    STRIPE_SECRET_KEY: "sk_test_bench",
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    ...settings,
  };
  for (const n of SERVICES) {
    env[`${n.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[n]}`;
    env[`${n.toUpperCase()}_DATABASE_URL`] = database(n);
  }
  let processes;
  if (layout === "one") {
    const name = id === "c1" ? "toolport" : id === "c1r" ? "toolport-relaxed" : `toolport-${id}`;
    for (const n of [...SERVICES, "gateway"]) env[`${n.toUpperCase()}_PORT`] = String(ports[n]);
    await start(
      name,
      [...profiled(name), path.join(checkout, "services/host/dist/main.js"), `--roles=${[...SERVICES, "gateway"].join(",")}`],
      { env, ready: /toolport listening/ },
    );
    processes = [name];
  } else {
    await Promise.all(
      SERVICES.map((n) =>
        start(n, [...profiled(n), path.join(root, `services/${n}/dist/main.js`)], {
          env: { ...env, PORT: String(ports[n]) },
          ready: /listening/,
        }),
      ),
    );
    await start("gateway", [...profiled("gateway"), path.join(root, "gateway/dist/main.js")], {
      env: { ...env, PORT: String(ports.gateway) },
      ready: /listening/,
    });
    processes = [...SERVICES, "gateway"];
  }
  const gw = `http://127.0.0.1:${ports.gateway}/v1`;
  const reg = await expectJson(`${id}: registering the agent`, `${gw}/agents`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: `bench-${id}`, operator_email: `bench-${id}@example.com` }),
  });
  const key = { ...json, "svc-api-key": reg.api_key };
  const published = await expectJson(`${id}: publishing the upstream`, `${gw}/services`, {
    method: "POST",
    headers: key,
    body: JSON.stringify({ api: { document: doc, base_url: `http://127.0.0.1:${upstreamPort}` } }),
  });
  const tool = Object.fromEntries(published.tools.map((t) => [t.name, t.id]));
  const call = async () =>
    (await request(`${gw}/tools/call/${tool.small}`, { method: "POST", headers: key, body: "{}" })).status === 200;
  const first = await request(`${gw}/tools/call/${tool.small}`, { method: "POST", headers: key, body: "{}" });
  if (first.status !== 200)
    throw new Error(`${id}: the first tool call failed: HTTP ${first.status} ${first.body.slice(0, 500)}`);
  return { id, gw, key, tool, call, processes: [...processes, pg.name, nats.name] };
}

/** nginx as a plain reverse proxy to the upstream, with upstream keep-alive; undefined when not installed. */
async function startNginx(upstreamPort) {
  const port = await freePort();
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `daemon off; worker_processes auto; pid ${dir}/nginx.pid; error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http { access_log off;
  client_body_temp_path ${dir}/nb; proxy_temp_path ${dir}/np; fastcgi_temp_path ${dir}/nf; uwsgi_temp_path ${dir}/nu; scgi_temp_path ${dir}/ns;
  upstream app { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  const bin = "/usr/sbin/nginx";
  try {
    execFileSync(bin, ["-t", "-c", conf, "-p", dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  const nginx = adopt(null, spawn(bin, ["-c", conf, "-p", dir], { stdio: "ignore" }));
  track("nginx", nginx.pid, { tree: true });
  for (let i = 0; i < 50; i++) {
    try {
      if ((await request(`http://127.0.0.1:${port}/small`)).status === 200) return port;
    } catch {}
    await sleep(100);
  }
  throw new Error("nginx did not answer");
}

const verdict = (meets, goal) => `(goal ${goal}: ${meets ? "meets" : "MISSES"})`;

/**
 * "CPU per call in (c1): 1.10 ms = toolport 0.80, postgres 0.25, nats-c1 0.05; beside the sum: upstream
 * 0.03, bench 0.10": summed over the stack's own processes; the upstream and the bench shown, not summed;
 * any other process that used CPU meanwhile (another stack's background work) as "elsewhere".
 */
function stackCpu(label, r, stack) {
  const calls = r.latencies.length;
  const own = Object.fromEntries(stack.processes.map((k) => [k, r.cpu[k] ?? 0]));
  const beside = { upstream: r.cpu.upstream ?? 0, bench: r.cpu.bench ?? 0 };
  const elsewhere = Object.entries(r.cpu)
    .filter(([k]) => !(k in own) && !(k in beside))
    .reduce((t, [, s]) => t + s, 0);
  // Every process of the stack is listed, even at 0.00; beside it only what used any CPU.
  const perCall = Object.entries(own)
    .map(([k, seconds]) => [k, (seconds * 1e3) / calls])
    .sort((x, y) => y[1] - x[1]);
  const sum = Object.values(own).reduce((t, s) => t + s, 0) * (1e3 / calls);
  const list = (xs) => xs.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ");
  const besideText = list(cpuPerCall(beside, calls));
  const elsewhereMs = (elsewhere * 1e3) / calls;
  console.log(
    `    CPU per call in ${label}: ${sum.toFixed(2)} ms = ${list(perCall)}; beside the sum: ${besideText || "-"}${elsewhereMs >= 0.005 ? `; other processes ${elsewhereMs.toFixed(2)}` : ""}`,
  );
  return sum;
}

/**
 * BENCH_STATEMENTS: the statements the databases named `prefix*` ran per call of the wrapped row, from
 * pg_stat_statements (reset before each concurrency), with how many calls each statement served.
 */
async function statementCounter(url, prefix) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  let calls = 0;
  return {
    counted: (call) => async () => {
      calls++;
      return call();
    },
    async reset() {
      calls = 0;
      await client.query("SELECT pg_stat_statements_reset()");
    },
    async print(label) {
      const { rows } = await client.query(
        `SELECT substring(d.datname FROM length($1) + 1) AS db, s.query, s.calls::int AS n,
                s.total_exec_time AS ms, s.wal_bytes::bigint AS wal
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
          WHERE d.datname LIKE $1 || '%' ORDER BY s.calls DESC`,
        [prefix],
      );
      const total = rows.reduce((t, r) => t + r.n, 0);
      const sum = (key) => rows.reduce((t, r) => t + Number(r[key]), 0) / calls;
      console.log(
        `    statements per call in ${label} (${calls} calls, warm-up included): ${(total / calls).toFixed(3)}, executing ${(sum("ms") * 1e3).toFixed(0)} µs, writing ${sum("wal").toFixed(0)} bytes of WAL; per statement, per call:`,
      );
      for (const r of rows.filter((r) => r.n / calls >= 0.005))
        console.log(
          `      ${(r.n / calls).toFixed(3).padStart(7)} ${`${((r.ms / calls) * 1e3).toFixed(0)} µs`.padStart(7)} ${`${(Number(r.wal) / calls).toFixed(0)} B`.padStart(7)}  ${r.db.padEnd(9)} ${r.query.replace(/\s+/g, " ").slice(0, 90)}`,
        );
    },
    close: () => client.end(),
  };
}

/** A database of its own for (d1e) on the server at `url`; returns its URL. */
async function floorDatabase(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("CREATE DATABASE bench_d1e");
  } finally {
    await client.end();
  }
  const own = new URL(url);
  own.pathname = "/bench_d1e";
  return own.toString();
}

/**
 * (d1e) is a yardstick only if its events really went through: every stored call's event published and
 * applied once by each consumer. Waits for its relay and consumers to catch up (10 s at most), prints the
 * counts, and fails the bench if they do not match.
 */
async function floorEventsApplied(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let counts;
    const matched = () => [counts.published, counts.facts, counts.usage].every((n) => n === counts.stored);
    for (let i = 0; i < 100; i++) {
      ({
        rows: [counts],
      } = await client.query(
        `SELECT (SELECT count(*) FROM floor_results_e)::int AS stored,
                (SELECT count(*) FROM floor_outbox WHERE published_at IS NOT NULL)::int AS published,
                (SELECT count(*) FROM floor_facts)::int AS facts,
                (SELECT coalesce(sum(calls), 0) FROM floor_usage)::int AS usage`,
      ));
      if (matched()) break;
      await sleep(100);
    }
    const line = `(d1e): ${counts.stored} calls stored, ${counts.published} events published, applied ${counts.facts} times by one consumer and ${counts.usage} by the other`;
    console.log(`\n   ${line}`);
    if (!matched()) throw new Error(`the floor with events lost or repeated events: ${line}`);
  } finally {
    await client.end();
  }
}

const goalLines = [];
/** Beside the goals: the floor with durable events (d1e) against (d1), and (c1) against it. */
const eventLines = [];
/** BENCH_STATEMENTS: (c1)'s, (c2)'s and (d1e)'s statements per call (statementCounter). */
let statements;
let c2Statements;
let floorStatements;
try {
  // Sections 2 and 3 need only the upstream and the c1 stack.
  const all = sections.includes("1");
  const [pg, pgRelaxed] = await Promise.all([
    benchPostgres(dir, "postgres", {
      fast: false,
      settings: countStatements ? { shared_preload_libraries: "pg_stat_statements" } : {},
    }),
    all && wanted("c1r") ? benchPostgres(dir, "postgres-relaxed", { fast: true }) : null,
  ]);
  const upstreamPort = await freePort();
  await start("upstream", ["-e", upstreamSource], { env: { PORT: String(upstreamPort) } });

  const c1 = await startStack({ id: "c1", layout: "one", pg, upstreamPort });
  if (countStatements) statements = await statementCounter(pg.url, "bench_c1_");
  const c1r = all && wanted("c1r") ? await startStack({ id: "c1r", layout: "one", pg: pgRelaxed, upstreamPort }) : null;
  const c1x =
    all && (c1xSettings || c1xRoot)
      ? await startStack({ id: "c1x", layout: "one", pg, upstreamPort, settings: c1xSettings, checkout: c1xRoot })
      : null;
  const c2 = all && wanted("c2") ? await startStack({ id: "c2", layout: "per-role", pg, upstreamPort }) : null;
  if (c2 && countStatements) c2Statements = await statementCounter(pg.url, "bench_c2_");
  const nginxPort = all && wanted("b") ? await startNginx(upstreamPort) : undefined;

  // (d) the floor of the fixed layout (execution-floor.mjs): Koa -> one connect gRPC hop -> upstream + one INSERT.
  const floorPorts = {
    service: await freePort(),
    gateway: await freePort(),
    one: await freePort(),
    events: await freePort(),
  };
  const floorScript = path.join(root, "test/bench/execution-floor.mjs");
  /** One floor process `name`: execution-floor.mjs `role` on `port`, with the role's other arguments. */
  const startFloor = (name, role, port, ...args) => start(name, [...profiled(name), floorScript, role, String(port), ...args]);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  if (all && wanted("d1")) await startFloor("floor-one", "one", floorPorts.one, upstreamUrl, pg.url);
  // (d1e) in a database of its own, so that its statements can be told from (d1)'s.
  const floorEvents = all && wanted("d1e") ? { nats: await benchNats(dir, "nats-d1e"), url: await floorDatabase(pg.url) } : null;
  if (floorEvents && countStatements) floorStatements = await statementCounter(pg.url, "bench_d1e");
  if (floorEvents)
    await startFloor("floor-events", "one-events", floorPorts.events, upstreamUrl, floorEvents.url, floorEvents.nats.url);
  if (all && wanted("d")) {
    await startFloor("floor-service", "service", floorPorts.service, upstreamUrl, pg.url);
    await startFloor("floor-gateway", "gateway", floorPorts.gateway, `http://127.0.0.1:${floorPorts.service}`);
  }

  const ok = async (url, options) => (await request(url, options)).status === 200;
  const direct = () => ok(`http://127.0.0.1:${upstreamPort}/small`);
  const proxied = () => ok(`http://127.0.0.1:${nginxPort}/small`);
  const floor = () =>
    ok(`http://127.0.0.1:${floorPorts.gateway}/v1/tools/call/${c1.tool.small}`, { method: "POST", headers: json, body: "{}" });
  const floorOne = () =>
    ok(`http://127.0.0.1:${floorPorts.one}/v1/tools/call/${c1.tool.small}`, { method: "POST", headers: json, body: "{}" });
  const floorWithEvents = () =>
    ok(`http://127.0.0.1:${floorPorts.events}/v1/tools/call/${c1.tool.small}`, { method: "POST", headers: json, body: "{}" });

  if (sections.includes("1")) {
    console.log(
      `\n1. Same small JSON upstream (${requests} calls per row at load, ${Math.min(requests, 1000)} at concurrency 1, each row warmed up with ${WARMUP} calls, then in ${ROUNDS} alternating rounds; ${os.cpus().length} CPUs, Node ${process.version})`,
    );
    console.log(
      "   Postgres: (c1), (c2), (d) on one server with production durability (fsync, synchronous_commit on); (c1r) on a second with fsync, synchronous_commit, full_page_writes off",
    );
    for (const conc of levels) {
      const n = conc === 1 ? Math.min(requests, 1000) : requests;
      const rows = [
        row("(a) direct", direct, { id: "a" }),
        nginxPort ? row("(b) nginx", proxied, { id: "b" }) : null,
        row("(c1) one process", statements ? statements.counted(c1.call) : c1.call, { id: "c1" }),
        c1r ? row("(c1r) one process, relaxed Postgres", c1r.call, { id: "c1r" }) : null,
        c1x ? row(`(c1x) one process, ${c1xLabel}`, c1x.call, { id: "c1x" }) : null,
        c2 ? row("(c2) process per role", c2Statements ? c2Statements.counted(c2.call) : c2.call, { id: "c2" }) : null,
        wanted("d") ? row("(d) floor of the layout", floor, { id: "d" }) : null,
        wanted("d1") ? row("(d1) floor of one process", floorOne, { id: "d1" }) : null,
        floorEvents
          ? row(
              "(d1e) floor of one process, with events",
              floorStatements ? floorStatements.counted(floorWithEvents) : floorWithEvents,
              { id: "d1e" },
            )
          : null,
      ].filter((r) => r && (r.id === "c1x" || wanted(r.id)));
      await statements?.reset();
      await c2Statements?.reset();
      await floorStatements?.reset();
      await runRounds(rows, { calls: n, conc, rounds: ROUNDS, warmup: WARMUP });
      const s = Object.fromEntries(rows.map((r) => [r.id, summary(r.label, r)]));
      const raw = Object.fromEntries(rows.map((r) => [r.id, r]));
      console.log(`\n   concurrency ${conc}`);
      for (const r of Object.values(s)) console.log(fmt(r, 38));
      const cpu = {
        c1: raw.c1 && stackCpu("(c1)", raw.c1, c1),
        c1r: raw.c1r && stackCpu("(c1r)", raw.c1r, c1r),
        c1x: raw.c1x && stackCpu("(c1x)", raw.c1x, c1x),
        c2: raw.c2 && stackCpu("(c2)", raw.c2, c2),
        d: raw.d && stackCpu("(d)", raw.d, { processes: ["floor-gateway", "floor-service", pg.name] }),
        d1: raw.d1 && stackCpu("(d1)", raw.d1, { processes: ["floor-one", pg.name] }),
        d1e: raw.d1e && stackCpu("(d1e)", raw.d1e, { processes: ["floor-events", pg.name, floorEvents.nats.name] }),
      };
      if (raw.c1) await statements?.print("(c1)");
      if (raw.c2) await c2Statements?.print("(c2)");
      if (raw.d1e) await floorStatements?.print("(d1e)");
      const { a, b, c1: r1, c1r: r1r, c1x: r1x, c2: r2, d, d1, d1e } = s;
      const ref = b ?? a;
      const refName = b ? "(b)" : "(a)";
      const added = (r) =>
        `${a ? `${(r.p50 - a.p50).toFixed(2)} ms over (a)` : ""}${a && b ? ", " : ""}${b ? `${(r.p50 - b.p50).toFixed(2)} ms over (b)` : ""}`;
      for (const [label, r] of [
        ["(c1)", r1],
        ["(c1r)", r1r],
        ["(c2)", r2],
        ["(d)", d],
        ["(d1)", d1],
        ["(d1e)", d1e],
      ])
        if (r && ref)
          console.log(`    ${label.padEnd(5)} throughput ${(r.rps / ref.rps).toFixed(3)} of ${refName}; p50 added ${added(r)}`);
      const ratios = [
        r1 && r2 ? `(c1)/(c2) throughput ${(r1.rps / r2.rps).toFixed(3)}` : null,
        r1 && r1r ? `(c1r)/(c1) ${(r1r.rps / r1.rps).toFixed(3)}` : null,
        r1 && r1x ? `(c1x)/(c1) throughput ${(r1x.rps / r1.rps).toFixed(3)}, p50 ${(r1x.p50 - r1.p50).toFixed(2)} ms` : null,
        r1 && d ? `(c1)/(d) ${(r1.rps / d.rps).toFixed(3)}` : null,
        r1 && d1 ? `(c1)/(d1) ${(r1.rps / d1.rps).toFixed(3)}` : null,
      ].filter(Boolean);
      // (d1e) against (d1) and (c1) against (d1e): on the ratios line, and again beside this run's goals.
      const eventRatios = [
        d1e && d1 ? `(d1e)/(d1) throughput ${(d1e.rps / d1.rps).toFixed(3)}` : null,
        r1 && d1e ? `(c1)/(d1e) throughput ${(r1.rps / d1e.rps).toFixed(3)}` : null,
      ].filter(Boolean);
      ratios.push(...eventRatios);
      if (ratios.length) console.log(`    ${ratios.join("; ")}`);
      // What durable events alone cost (d1e over d1), and what is left of (c1)'s excess (c1 over d1e).
      const cpuRatios = [
        cpu.d1e !== undefined && cpu.d1 !== undefined
          ? `(d1e) over (d1) ${cpu.d1e.toFixed(2)} / ${cpu.d1.toFixed(2)} ms = ${(cpu.d1e / cpu.d1).toFixed(2)}x`
          : null,
        cpu.c1 !== undefined && cpu.c1x !== undefined
          ? `(c1x) over (c1) ${cpu.c1x.toFixed(2)} / ${cpu.c1.toFixed(2)} ms = ${(cpu.c1x / cpu.c1).toFixed(3)}x`
          : null,
        cpu.c1 !== undefined && cpu.d1e !== undefined
          ? `(c1) over (d1e) ${cpu.c1.toFixed(2)} / ${cpu.d1e.toFixed(2)} ms = ${(cpu.c1 / cpu.d1e).toFixed(2)}x`
          : null,
        cpu.c2 !== undefined && cpu.d !== undefined
          ? `(c2) over (d) ${cpu.c2.toFixed(2)} / ${cpu.d.toFixed(2)} ms = ${(cpu.c2 / cpu.d).toFixed(2)}x`
          : null,
      ].filter(Boolean);
      if (cpuRatios.length) console.log(`    CPU per call: ${cpuRatios.join("; ")}`);
      if (eventRatios.length)
        eventLines.push(
          `concurrency ${conc}: ${[...eventRatios, ...cpuRatios.map((text) => `CPU per call ${text}`)].join("; ")}`,
        );
      console.log("    goals:");
      const goal = (text) => {
        console.log(`      ${text}`);
        goalLines.push(text);
      };
      const at = `at concurrency ${conc}${conc === 1 || conc === GOALS.loadAt ? "" : ` (the goal is at ${GOALS.loadAt})`}`;
      if (r1 && d1 && conc === 1) {
        const added = r1.p50 - d1.p50;
        goal(
          `(c1) p50 minus (d1) p50 ${at}: ${r1.p50.toFixed(2)} - ${d1.p50.toFixed(2)} ms = ${added.toFixed(2)} ms, ${(r1.p50 / d1.p50).toFixed(2)}x ${verdict(added <= GOALS.c1AddedP50Ms, `<= ${GOALS.c1AddedP50Ms} ms`)}`,
        );
      } else if (r1 && d1) {
        const ratio = r1.rps / d1.rps;
        goal(
          `(c1)/(d1) throughput ${at}: ${r1.rps.toFixed(0)} / ${d1.rps.toFixed(0)} calls/s = ${ratio.toFixed(3)} ${verdict(ratio >= GOALS.c1OverD1, `>= ${GOALS.c1OverD1}`)}`,
        );
      }
      if (cpu.c1 !== undefined && cpu.d1 !== undefined) {
        const bound = conc === 1 ? GOALS.c1CpuOverD1[1] : GOALS.c1CpuOverD1.load;
        const ratio = cpu.c1 / cpu.d1;
        goal(
          `(c1) CPU per call ${at}, toolport + postgres + nats-c1 over (d1)'s floor-one + postgres: ${cpu.c1.toFixed(2)} / ${cpu.d1.toFixed(2)} ms = ${ratio.toFixed(2)}x ${verdict(ratio <= bound, `<= ${bound}x`)}`,
        );
      }
      if (r2 && d)
        goal(
          `(c2)/(d) throughput ${at}: ${r2.rps.toFixed(0)} / ${d.rps.toFixed(0)} calls/s = ${(r2.rps / d.rps).toFixed(3)} ${verdict(r2.rps / d.rps >= GOALS.c2OverD, `>= ${GOALS.c2OverD}`)}`,
        );
      if (Object.values(s).some((r) => r.failures > 0)) goal("some calls failed: see the rows above");
    }
    if (!nginxPort && wanted("b")) console.log("    (nginx not installed: apt-get install -y nginx-light)");
    if (floorEvents) await floorEventsApplied(floorEvents.url);
    console.log("\n   Goals, this run:");
    for (const line of goalLines) console.log(`     ${line}`);
    if (eventLines.length) {
      console.log("   Beside the goals, the floor with durable events (d1e):");
      for (const line of eventLines) console.log(`     ${line}`);
    }
  }

  if (sections.includes("2")) {
    console.log("\n2. Capping a 2 MB result to 32,000 characters");
    const { capJson } = await import(path.join(root, "services/execution/dist/domain/cap.js"));
    const bigValue = JSON.parse((await request(`http://127.0.0.1:${upstreamPort}/big`)).body);
    const size = JSON.stringify(bigValue).length;
    /** `fn`'s times over 20 runs, in process, fastest first. */
    const timed = (fn) => {
      const times = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        fn();
        times.push(performance.now() - t);
      }
      return times.sort((x, y) => x - y);
    };
    const times = timed(() => capJson(bigValue, 32_000));
    console.log(
      `   cap alone (in process, ${(size / 1e6).toFixed(2)} M chars -> 32,000): median ${times[10].toFixed(1)} ms, min ${times[0].toFixed(1)} ms`,
    );
    // The check every upstream answer gets (nesting depth and U+0000, with the place of a violation), beside a
    // bare walk of the same value that only measures its depth: the check's own cost per value walked.
    const { findJsonViolation, jsonDepth } = await import(path.join(root, "services/lib/kit/dist/json-guard.js"));
    const guarded = timed(() => findJsonViolation(bigValue, 64));
    const walked = timed(() => jsonDepth(bigValue));
    console.log(
      `   depth and NUL check alone (in process): median ${guarded[10].toFixed(1)} ms, a bare walk of the same value ${walked[10].toFixed(1)} ms, ${(guarded[10] / walked[10]).toFixed(2)}x`,
    );
    const through = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const res = await request(`${c1.gw}/tools/call/${c1.tool.big}`, { method: "POST", headers: c1.key, body: "{}" });
      through.push(performance.now() - t);
      if (i === 0) {
        const body = JSON.parse(res.body);
        console.log(
          `   through the (c1) gateway: truncated ${body.truncated}, result ${JSON.stringify(body.result).length} chars, dropped ${JSON.stringify(body.response_meta?.dropped_items)}`,
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
    console.log("\n3. A batch of 10 calls to a 100 ms upstream, through the (c1) gateway");
    const batchBody = JSON.stringify({ calls: Array.from({ length: 10 }, () => ({ tool_id: c1.tool.slow })) });
    const batch = [];
    for (let i = 0; i < 11; i++) {
      const t = performance.now();
      const res = await request(`${c1.gw}/tools/call/batch`, { method: "POST", headers: c1.key, body: batchBody });
      if (i > 0) batch.push(performance.now() - t);
      if (i === 0 && !JSON.parse(res.body).results.every((r) => r.success)) throw new Error(`batch failed: ${res.body}`);
    }
    batch.sort((x, y) => x - y);
    console.log(
      `   10 runs: median ${batch[5].toFixed(0)} ms, min ${batch[0].toFixed(0)} ms, max ${batch[9].toFixed(0)} ms (sequential would be >= 1000 ms)`,
    );
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await statements?.close().catch(() => {});
  await c2Statements?.close().catch(() => {});
  await floorStatements?.close().catch(() => {});
  await cleanup();
  // Whatever happened, leave no Postgres or NATS behind.
  await stopServers();
  rmSync(dir, { recursive: true, force: true });
  agent.destroy();
}
