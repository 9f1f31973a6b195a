// MCP server benchmark, one run, side by side, in both protocol revisions that mcp-server serves at one /mcp.
// Section 1: one `batch_execute_tools` call of the built-in word_count (no upstream, no credential) through the
// MCP server at /mcp, against the same call straight to the gateway (POST /v1/tools/call/batch with the same
// body), at concurrency 1 (added latency) and at load:
//   (a) gateway: the batch body over keep-alive node:http, as the other benchmarks send it;
//   (b) 2025-11-25, SDK client: the official v2 client (@modelcontextprotocol/client, `versionNegotiation`
//       "legacy": the initialize handshake) over Streamable HTTP, one client per concurrent worker, each
//       connected and listed (tools/list, so callTool validates the structuredContent against the output
//       schema, as a client that read the tool list does) before the clock starts; a row times
//       `client.callTool(...)` round trips;
//   (c) 2025-11-25, raw JSON-RPC: the same tools/call POST (the headers the SDK client sends after
//       initialize, `mcp-protocol-version: 2025-11-25`; the answer read whole, JSON or SSE) over the node:http
//       agent of row (a): the server's part of (b) without the SDK client's own cost;
//   (d) the floor of any MCP layer in Node: a bare HTTP server that parses the JSON-RPC POST of (c), forwards
//       the calls to the gateway over an undici Pool (as mcp-server's GatewayClient does) and answers the
//       same result as one JSON body; no SDK. (d) - (a) is what the extra hop alone costs on this machine;
//   (e) 2026-07-28, SDK client: the same v2 client with `versionNegotiation` "auto", which probes with
//       server/discover and speaks 2026-07-28 (stateless: no handshake, no session); checked before timing;
//   (f) 2026-07-28, raw JSON-RPC: the tools/call POST of that revision over the agent of (a): `params._meta`
//       with the protocol version, client capabilities and client info, the headers MCP-Protocol-Version,
//       Mcp-Method and Mcp-Name; the answer must carry `resultType: "complete"`.
// For each level it prints requests/s, p50 and p99 per row, each row's added p50 over (a) and its throughput
// ratio to (a), PASS/FAIL against the goals (under 1 ms added p50 at concurrency 1; at least 0.85 of the
// gateway's throughput at load), the CPU each process spent per call, and at the end the goals per revision,
// judged on its raw row ((c), (f): the same HTTP client as (a), so the difference is the server's alone;
// its SDK row is shown beside it).
// Section 2 times, in process, what the MCP server builds per request without its pool: createMcpServer from
// mcp-server/dist/server.js (the v2 McpServer with its eleven tools).
// Section 3, a peer: one upstream MCP server (mcp-peer.mjs: Streamable HTTP with sessions, one tool
// count_words) registered in Toolport as an MCP service (POST /v1/services with `mcp_server`) and in mcp-hub's
// config (MCP_HUB_PACKAGE from the npm registry, installed on demand into the bench cache), the same
// count_words call through each, every row with the v2 SDK client:
//   (u) the upstream directly (2025-11-25: the upstream speaks no 2026-07-28);
//   (h) mcp-hub: its /mcp (HTTP+SSE, the only transport it serves there; it answers the "legacy" client with
//       2025-06-18, the newest revision its SDK knows), the tool as `upstream__count_words`;
//   (t) Toolport at 2025-11-25: `batch_execute_tools` with the imported tool's id, through the MCP server,
//       gateway and execution (which keeps one session to the upstream);
//   (v) Toolport at 2026-07-28: the same call from the "auto" client of (e).
// It prints, for (t) and (v), the throughput and the added p50 over (u) as ratios to (h)'s. If mcp-hub cannot
// be installed or started, it says what was run and what failed and runs (u), (t) and (v) alone.
// Rows run in alternating rounds so that drift (JIT, table growth) falls on all alike.
// Postgres and NATS are started here on free ports in a temporary folder; processes run from dist/.
// Usage: node test/bench/mcp-server.mjs [requests=2000] [concurrency=16]   (build first)
//   BENCH_VERBOSE=1 forwards the processes' logs; BENCH_PROFILE=<process>[,<process>...] (e.g. mcp-server,
//   gateway, floor, upstream, mcp-hub) writes a CPU profile of each named process to /tmp/toolport-prof/<process>;
//   BENCH_LEVELS=1 (or 1,16 ...) only those concurrencies; BENCH_SECTIONS=1 (or 2, 3, 1,2 ...) only those
//   sections (default 1,2,3; leaving 3 out skips the peer: no upstream, no mcp-hub install);
//   TOOLPORT_BENCH_CACHE: where mcp-hub is installed (default node_modules/.cache/toolport-bench).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";
import {
  agent,
  cleanup,
  cpuLine,
  fmt,
  profiled,
  request,
  row,
  runRounds,
  start as startProcess,
  summary,
  track,
} from "./lib.mjs";
import { COUNT_WORDS, PeerSetupError, startMcpHub } from "./mcp-peer.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [requests = 2000, concurrency = 16] = process.argv.slice(2).map(Number);
const levels = process.env.BENCH_LEVELS ? process.env.BENCH_LEVELS.split(",").map(Number) : [1, concurrency];
const sections = (process.env.BENCH_SECTIONS ?? "1,2,3").split(",");
const ROUNDS = 3;
const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
/** The goals of issue 31, per revision. */
const GOAL_ADDED_MS = 1;
const GOAL_RATIO = 0.85;
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-mcp-"));
const quiet = { info() {}, warn() {}, error: console.error };
const peerScript = fileURLToPath(new URL("./mcp-peer.mjs", import.meta.url));
const WIDTH = 38;

// Row (d), in its own process (CommonJS, run in mcp-server/ so that undici resolves as it does for the server).
const floorSource = `
const http = require("node:http");
// An exit on SIGTERM, so that --cpu-prof (BENCH_PROFILE=floor) writes its profile.
process.on("SIGTERM", () => process.exit(0));
const { Pool } = require("undici");
const pool = new Pool(new URL(process.env.GATEWAY_URL).origin, { connections: 64, keepAliveTimeout: 30000 });
http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const reply = await pool.request({
      method: "POST",
      path: "/v1/tools/call/batch",
      headers: { accept: "application/json", "content-type": "application/json", "svc-api-key": req.headers["svc-api-key"] },
      body: JSON.stringify({ calls: message.params.arguments.calls }),
    });
    const structured = { results: JSON.parse(await reply.body.text()).results };
    const result = { structuredContent: structured, content: [{ type: "text", text: JSON.stringify(structured) }] };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
  });
}).listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("floor listening\\n"));
`;

/** Starts `node ...argv` (in `cwd`) and resolves once it logs that it listens. */
const start = (name, argv, env, cwd = root) => startProcess(name, argv, { env, cwd, ready: /listening/ });

const pass = (ok) => (ok ? "PASS" : "FAIL");

let pg;
let nats;
const clients = [];
try {
  pg = await startPostgres({
    dataDir: path.join(dir, "pg"),
    port: await freePort(),
    log: quiet,
    fast: !process.env.BENCH_PG_DURABLE,
  });
  track("postgres", pg.pid, { tree: true });
  nats = await startNats({ storeDir: path.join(dir, "nats"), port: await freePort(), log: quiet });
  track("nats", nats.pid);
  const services = ["catalog", "execution", "billing", "identity"];
  const ports = Object.fromEntries(
    await Promise.all([...services, "gateway", "mcp", "upstream", "hub"].map(async (n) => [n, await freePort()])),
  );
  const peer = sections.includes("3");
  const upstreamUrl = `http://127.0.0.1:${ports.upstream}/mcp`;
  // Section 3's upstream starts first: the catalog (import) and execution (calls) may dial only what
  // their *_OUTBOUND_ALLOW names on loopback.
  if (peer) await start("upstream", [...profiled("upstream"), peerScript, "upstream"], { PORT: String(ports.upstream) });
  const upstreamHost = `127.0.0.1:${ports.upstream}`;
  const common = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    LOG_LEVEL: "info",
    CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    EXECUTION_URL: `http://127.0.0.1:${ports.execution}`,
    BILLING_URL: `http://127.0.0.1:${ports.billing}`,
    IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
    GATEWAY_URL: `http://127.0.0.1:${ports.gateway}`,
    CATALOG_SECRET_KEY: "a".repeat(64),
    TOOL_CALLS_PER_MINUTE: "100000000",
    FREE_TIER_CALLS_PER_MONTH: "100000000",
    STRIPE_WEBHOOK_SECRET: "whsec_bench",
    STRIPE_SECRET_KEY: "sk_test_bench",
    ...(peer ? { CATALOG_OUTBOUND_ALLOW: upstreamHost, EXECUTION_OUTBOUND_ALLOW: upstreamHost } : {}),
  };
  const main = (name, file) => [...profiled(name), path.join(root, file)];
  await Promise.all(services.map((n) => start(n, main(n, `services/${n}/dist/main.js`), { ...common, PORT: String(ports[n]) })));
  await start("gateway", main("gateway", "gateway/dist/main.js"), { ...common, PORT: String(ports.gateway) });
  await start("mcp-server", main("mcp-server", "mcp-server/dist/main.js"), { ...common, PORT: String(ports.mcp) });
  const mcpDir = path.join(root, "mcp-server");
  const floorPort = await freePort();
  await start(
    "floor",
    [...profiled("floor"), "-e", floorSource],
    { GATEWAY_URL: common.GATEWAY_URL, PORT: String(floorPort) },
    mcpDir,
  );
  const gw = `http://127.0.0.1:${ports.gateway}/v1`;
  const mcpUrl = `http://127.0.0.1:${ports.mcp}/mcp`;
  const floorUrl = `http://127.0.0.1:${floorPort}/mcp`;
  const json = { "content-type": "application/json" };

  const reg = await request(`${gw}/agents`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: "bench", operator_email: "bench@example.com" }),
  });
  if (reg.status !== 200) throw new Error(`registration failed: ${reg.status} ${reg.body}`);
  const apiKey = JSON.parse(reg.body).api_key;
  const keyed = { ...json, "svc-api-key": apiKey };
  // The built-in tools are seeded when the catalog starts; wait until search finds word_count.
  let toolId;
  for (let i = 0; i < 100 && !toolId; i++) {
    const found = await request(`${gw}/tools/public/search?query=count%20words&limit=10`, { headers: keyed });
    if (found.status === 200) toolId = JSON.parse(found.body).find((t) => t.name === "word_count")?.id;
    if (!toolId) await new Promise((r) => setTimeout(r, 100));
  }
  if (!toolId) throw new Error("word_count not found by search");

  const text = "The quick brown fox jumps over the lazy dog. It barked!";
  const calls = [{ tool_id: toolId, tool_input: { text } }];
  const batchBody = JSON.stringify({ calls });
  const gatewayCall = async () => {
    const res = await request(`${gw}/tools/call/batch`, { method: "POST", headers: keyed, body: batchBody });
    return res.status === 200 && JSON.parse(res.body).results[0]?.success === true;
  };

  // (b), (e) and the peer's rows: one v2 SDK client per worker, connected and listed before any row is timed.
  const maxConc = Math.max(...levels);
  /**
   * `maxConc` clients of `mode` at `url` (Streamable HTTP, or HTTP+SSE with `sse`), each checked to have
   * negotiated `revision` when one is given; the list carries the revision the last one negotiated.
   */
  async function sdkClients(url, { mode, revision, headers = { "svc-api-key": apiKey }, sse = false }) {
    const list = [];
    for (let i = 0; i < maxConc; i++) {
      const client = new Client({ name: "toolport-bench", version: "1.0.0" }, { versionNegotiation: { mode } });
      clients.push(client);
      const Transport = sse ? SSEClientTransport : StreamableHTTPClientTransport;
      await client.connect(new Transport(new URL(url), { requestInit: { headers } }));
      const negotiated = client.getNegotiatedProtocolVersion();
      if (revision && negotiated !== revision)
        throw new Error(`${url}: a "${mode}" client negotiated ${negotiated}, not ${revision}`);
      await client.listTools();
      list.push(client);
      list.revision = negotiated;
    }
    return list;
  }
  /** A row's call: `name(args)` on the worker's client, judged by `ok(result)`. */
  const sdkCaller = (list, name, args, ok) => async (worker) => {
    const res = await list[worker].callTool({ name, arguments: args });
    return !res.isError && ok(res);
  };
  const batchOk = (res) => res.structuredContent?.results?.[0]?.success === true;
  const legacyClients = await sdkClients(mcpUrl, { mode: "legacy", revision: LEGACY });
  const modernClients = await sdkClients(mcpUrl, { mode: "auto", revision: MODERN });

  // (c), (d), (f): a tools/call POST of either revision; an SSE answer is read whole.
  let rpcId = 0;
  const rawHeaders = {
    [LEGACY]: { ...json, accept: "application/json, text/event-stream", "mcp-protocol-version": LEGACY, "svc-api-key": apiKey },
    [MODERN]: {
      ...json,
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "batch_execute_tools",
      "svc-api-key": apiKey,
    },
  };
  // 2026-07-28 carries what the handshake used to settle in every request's _meta.
  const modernMeta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "toolport-bench", version: "1.0.0" },
  };
  const rawCaller = (url, revision) => async () => {
    const params = { name: "batch_execute_tools", arguments: { calls } };
    if (revision === MODERN) params._meta = modernMeta;
    const body = JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params });
    const res = await request(url, { method: "POST", headers: rawHeaders[revision], body });
    if (res.status !== 200) return false;
    const data = res.body.split("\n").find((line) => line.startsWith("data: "));
    const result = JSON.parse(data ? data.slice(6) : res.body).result;
    if (revision === MODERN && result?.resultType !== "complete") return false;
    return !result?.isError && batchOk(result ?? {});
  };
  const batch = { calls };
  const rowsAt = (conc) =>
    [
      { label: `(a) gateway batch, concurrency ${conc}`, make: gatewayCall },
      { label: `(b) ${LEGACY} SDK client, conc. ${conc}`, make: sdkCaller(legacyClients, "batch_execute_tools", batch, batchOk) },
      { label: `(c) ${LEGACY} raw JSON-RPC, conc. ${conc}`, make: rawCaller(mcpUrl, LEGACY) },
      { label: `(d) bare Node hop, raw, conc. ${conc}`, make: rawCaller(floorUrl, LEGACY) },
      { label: `(e) ${MODERN} SDK client, conc. ${conc}`, make: sdkCaller(modernClients, "batch_execute_tools", batch, batchOk) },
      { label: `(f) ${MODERN} raw JSON-RPC, conc. ${conc}`, make: rawCaller(mcpUrl, MODERN) },
    ].map((r) => row(r.label, r.make));
  const tag = (r) => r.label.slice(0, 3);
  /** Each row's first call must succeed before any is timed. */
  const checkFirst = async (rows) => {
    for (const r of rows) if (!(await r.make(0))) throw new Error(`row ${tag(r)}: the first call did not succeed`);
  };
  await checkFirst(rowsAt(1));
  const loadCalls = (conc) => (conc === 1 ? Math.min(requests, 1000) : requests);

  if (sections.includes("1")) {
    console.log(
      `\n1. batch_execute_tools, one word_count call (${requests} requests per row at load, ${Math.min(requests, 1000)} at concurrency 1, in ${ROUNDS} alternating rounds; ${os.cpus().length} CPUs, Node ${process.version})`,
    );
    /** "<tag> <level>" -> { added, ratio }, for the goals per revision. */
    const measured = {};
    for (const conc of levels) {
      const rows = await runRounds(rowsAt(conc), { calls: loadCalls(conc), conc, rounds: ROUNDS, warmup: 300 });
      const results = rows.map((r) => summary(r.label, r));
      for (const r of results) console.log(fmt(r, WIDTH));
      for (const r of rows) console.log(cpuLine(tag(r), r.cpu, r.latencies.length));
      const [a, ...layers] = results;
      for (const r of layers) {
        const added = r.p50 - a.p50;
        const ratio = r.rps / a.rps;
        measured[`${tag(r)} ${conc}`] = { added, ratio };
        const goal =
          tag(r) === "(d)"
            ? "the floor"
            : conc === 1
              ? `${pass(added < GOAL_ADDED_MS)} < ${GOAL_ADDED_MS} ms`
              : `${pass(ratio >= GOAL_RATIO)} >= ${GOAL_RATIO}`;
        console.log(
          `    ${tag(r)} over (a): added p50 ${added.toFixed(2)} ms, throughput ${ratio.toFixed(3)} of the gateway's (${goal})`,
        );
      }
    }
    const load = levels.find((l) => l > 1);
    console.log(
      `\n   Goals per revision: under ${GOAL_ADDED_MS} ms added p50 at concurrency 1, at least ${GOAL_RATIO} of the gateway's throughput at ${load ?? "load"}; judged on the raw row (its SDK row beside it)`,
    );
    const goalText = (t) => {
      const one = measured[`${t} 1`];
      const atLoad = measured[`${t} ${load}`];
      const latency = one ? `added p50 ${one.added.toFixed(2)} ms ${pass(one.added < GOAL_ADDED_MS)}` : "concurrency 1 not run";
      const throughput = atLoad ? `throughput ${atLoad.ratio.toFixed(3)} ${pass(atLoad.ratio >= GOAL_RATIO)}` : "load not run";
      return { latency, throughput, ok: one && atLoad ? one.added < GOAL_ADDED_MS && atLoad.ratio >= GOAL_RATIO : undefined };
    };
    for (const [revision, raw, sdk] of [
      [LEGACY, "(c)", "(b)"],
      [MODERN, "(f)", "(e)"],
    ]) {
      const r = goalText(raw);
      const s = goalText(sdk);
      const verdict = r.ok === undefined ? "incomplete" : pass(r.ok);
      console.log(
        `   ${revision}: ${verdict}   raw ${raw}: ${r.latency}, ${r.throughput}   SDK ${sdk}: ${s.latency}, ${s.throughput}`,
      );
    }
  }

  if (sections.includes("2")) {
    // What a server costs to build (the pool saves it per POST; the transport itself is a small object).
    console.log("\n2. Per-request construction in the MCP server, in process (median of 2000, after 500 warm-up)");
    const { createMcpServer } = await import(path.join(root, "mcp-server/dist/server.js"));
    const { GatewayClient } = await import(path.join(root, "mcp-server/dist/gateway-client.js"));
    const gateway = new GatewayClient(`http://127.0.0.1:${ports.gateway}`);
    const time = (f) => {
      for (let i = 0; i < 500; i++) f();
      const t = [];
      for (let i = 0; i < 2000; i++) {
        const s = performance.now();
        f();
        t.push(performance.now() - s);
      }
      t.sort((x, y) => x - y);
      return `median ${(t[1000] * 1000).toFixed(0)} µs, p99 ${(t[1980] * 1000).toFixed(0)} µs`;
    };
    console.log(`   createMcpServer (v2 McpServer + eleven registerTool): ${time(() => createMcpServer(gateway))}`);
    await gateway.close();
  }

  if (peer) {
    console.log(
      `\n3. A peer: one count_words call to one upstream MCP server, directly, through mcp-hub and through Toolport (${requests} requests per row at load, ${Math.min(requests, 1000)} at concurrency 1, in ${ROUNDS} alternating rounds)`,
    );
    // Toolport: the upstream imported as an MCP service of the bench's agent.
    const imported = await request(`${gw}/services`, {
      method: "POST",
      headers: keyed,
      body: JSON.stringify({ mcp_server: { url: upstreamUrl } }),
    });
    if (imported.status !== 201)
      throw new Error(`POST /v1/services (mcp_server): ${imported.status} ${imported.body.slice(0, 500)}`);
    const upstreamToolId = JSON.parse(imported.body).tools.find((t) => t.name === COUNT_WORDS.name)?.id;
    if (!upstreamToolId) throw new Error(`POST /v1/services imported no ${COUNT_WORDS.name}: ${imported.body.slice(0, 500)}`);
    const viaToolport = { calls: [{ tool_id: upstreamToolId, tool_input: { text } }] };
    const counted = (res) => JSON.parse(res.content?.[0]?.text ?? "{}").words === 11;

    const direct = await sdkClients(upstreamUrl, { mode: "legacy", revision: LEGACY, headers: {} });
    let hub;
    try {
      const started = await startMcpHub({
        dir: path.join(dir, "mcp-hub"),
        port: ports.hub,
        upstreamUrl,
        profile: profiled("mcp-hub"),
      });
      // Its /mcp answers an initialize with the newest revision its SDK knows, older than 2025-11-25.
      const list = await sdkClients(started.url, { mode: "legacy", headers: {}, sse: true });
      const make = sdkCaller(list, started.tool, { text }, counted);
      if (!(await make(0))) throw new PeerSetupError(`${started.tool} through ${started.url} did not answer the count`);
      hub = { ...started, make };
      console.log(`   mcp-hub ${started.version} at ${started.url} (HTTP+SSE, ${list.revision}), the tool as ${started.tool}`);
    } catch (err) {
      console.log(`   mcp-hub could not be used, so no ratios: ${err.message}`);
    }
    const peerRows = (conc) =>
      [
        { label: `(u) upstream directly, conc. ${conc}`, make: sdkCaller(direct, COUNT_WORDS.name, { text }, counted) },
        hub && { label: `(h) mcp-hub, conc. ${conc}`, make: hub.make },
        {
          label: `(t) Toolport ${LEGACY}, conc. ${conc}`,
          make: sdkCaller(legacyClients, "batch_execute_tools", viaToolport, batchOk),
        },
        {
          label: `(v) Toolport ${MODERN}, conc. ${conc}`,
          make: sdkCaller(modernClients, "batch_execute_tools", viaToolport, batchOk),
        },
      ]
        .filter(Boolean)
        .map((r) => row(r.label, r.make));
    await checkFirst(peerRows(1));
    for (const conc of levels) {
      const rows = await runRounds(peerRows(conc), { calls: loadCalls(conc), conc, rounds: ROUNDS, warmup: 300 });
      const results = rows.map((r) => summary(r.label, r));
      for (const r of results) console.log(fmt(r, WIDTH));
      for (const r of rows) console.log(cpuLine(tag(r), r.cpu, r.latencies.length));
      const byTag = Object.fromEntries(results.map((r) => [tag(r), r]));
      const u = byTag["(u)"];
      const h = byTag["(h)"];
      if (h)
        console.log(
          `    (h) over (u): added p50 ${(h.p50 - u.p50).toFixed(2)} ms, throughput ${(h.rps / u.rps).toFixed(3)} of the direct's`,
        );
      for (const t of ["(t)", "(v)"]) {
        const r = byTag[t];
        const added = r.p50 - u.p50;
        const vsPeer = h
          ? `; against mcp-hub: throughput ${(r.rps / h.rps).toFixed(2)}x, added p50 ${(added / (h.p50 - u.p50)).toFixed(2)}x`
          : "";
        console.log(
          `    ${t} over (u): added p50 ${added.toFixed(2)} ms, throughput ${(r.rps / u.rps).toFixed(3)} of the direct's${vsPeer}`,
        );
      }
    }
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await cleanup();
  // Whatever happened, leave no Postgres or NATS behind.
  await nats?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
  agent.destroy();
}
