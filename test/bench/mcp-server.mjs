// MCP server benchmark, one run, side by side: one `batch_execute_tools` call of the built-in word_count
// (no upstream, no credential) through the MCP server at /mcp, against the same call straight to the gateway
// (POST /v1/tools/call/batch with the same body), at concurrency 1 (added latency) and at load:
//   (a) gateway: the batch body over keep-alive node:http, as the other benchmarks send it;
//   (b) MCP, SDK client: @modelcontextprotocol/sdk `Client` with StreamableHTTPClientTransport, one client per
//       concurrent worker, each connected (initialize) and listed (tools/list, so callTool validates the
//       structuredContent against the output schema, as a client that read the tool list does) before
//       the clock starts; a row times `client.callTool(...)` round trips;
//   (c) MCP, raw JSON-RPC: the same tools/call POST (the headers the SDK client sends after initialize,
//       the answer read whole, JSON or SSE) over the node:http agent of row (a): the server's part of (b) without
//       the SDK client's own cost;
//   (d) the floor of any MCP layer in Node: a bare HTTP server that parses the same JSON-RPC POST, forwards
//       the calls to the gateway over an undici Pool (as mcp-server's GatewayClient does) and answers the
//       same result as one JSON body; no SDK. (d) - (a) is what the extra hop alone costs on this machine.
// Rows run in alternating rounds so that drift (JIT, table growth) falls on all alike. For each level it
// prints requests/s, p50 and p99 per row, each MCP row's added p50 over (a) and its throughput ratio to
// (a) against the goal (under 1 ms added p50 at concurrency 1, at least 0.8 of the gateway's throughput),
// and the CPU each process spent per call. Section 2 times, in process, what the MCP server builds per
// request without the pool: an McpServer with its ten tools.
// Postgres and NATS are started here on free ports in a temporary folder; processes run from dist/.
// Usage: node test/bench/mcp-server.mjs [requests=2000] [concurrency=16]   (build first)
//   BENCH_VERBOSE=1 forwards the processes' logs; BENCH_PROFILE=<process>[,<process>...] (e.g. mcp-server,
//   gateway) writes a CPU profile of each named process to /tmp/toolport-prof/<process>;
//   BENCH_LEVELS=1 (or 1,16 ...) only those concurrencies; BENCH_SECTIONS=1 (or 2) only those sections.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
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

const root = fileURLToPath(new URL("../../", import.meta.url));
const [requests = 2000, concurrency = 16] = process.argv.slice(2).map(Number);
const levels = process.env.BENCH_LEVELS ? process.env.BENCH_LEVELS.split(",").map(Number) : [1, concurrency];
const sections = (process.env.BENCH_SECTIONS ?? "1,2").split(",");
const ROUNDS = 3;
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-mcp-"));
const quiet = { info() {}, warn() {}, error: console.error };

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
  const ports = Object.fromEntries(await Promise.all([...services, "gateway", "mcp"].map(async (n) => [n, await freePort()])));
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

  const calls = [{ tool_id: toolId, tool_input: { text: "The quick brown fox jumps over the lazy dog. It barked!" } }];
  const batchBody = JSON.stringify({ calls });
  const gatewayCall = async () => {
    const res = await request(`${gw}/tools/call/batch`, { method: "POST", headers: keyed, body: batchBody });
    return res.status === 200 && JSON.parse(res.body).results[0]?.success === true;
  };

  // (b): one SDK client per worker, connected and listed before any row is timed.
  const maxConc = Math.max(...levels);
  async function sdkClients(url) {
    const list = [];
    for (let i = 0; i < maxConc; i++) {
      const client = new Client({ name: "toolport-bench", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { "svc-api-key": apiKey } } }),
      );
      await client.listTools();
      list.push(client);
    }
    clients.push(...list);
    return list;
  }
  const sdkCaller = (list) => async (worker) => {
    const res = await list[worker].callTool({ name: "batch_execute_tools", arguments: { calls } });
    return !res.isError && res.structuredContent?.results?.[0]?.success === true;
  };
  const sdkCall = sdkCaller(await sdkClients(mcpUrl));

  // (c), (d): the POST the SDK client sends for callTool after initialize; an SSE answer is read whole.
  let rpcId = 0;
  const mcpHeaders = {
    ...json,
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
    "svc-api-key": apiKey,
  };
  const rawCaller = (url) => async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: ++rpcId,
      method: "tools/call",
      params: { name: "batch_execute_tools", arguments: { calls } },
    });
    const res = await request(url, { method: "POST", headers: mcpHeaders, body });
    if (res.status !== 200) return false;
    const data = res.body.split("\n").find((line) => line.startsWith("data: "));
    const message = JSON.parse(data ? data.slice(6) : res.body);
    return !message.result?.isError && message.result?.structuredContent?.results?.[0]?.success === true;
  };
  const rowsAt = (conc) =>
    [
      { label: `(a) gateway batch, concurrency ${conc}`, make: gatewayCall },
      { label: `(b) MCP, SDK client, concurrency ${conc}`, make: sdkCall },
      { label: `(c) MCP, raw JSON-RPC, concurrency ${conc}`, make: rawCaller(mcpUrl) },
      { label: `(d) bare Node hop, raw, conc. ${conc}`, make: rawCaller(floorUrl) },
    ]
      .filter(Boolean)
      .map((r) => row(r.label, r.make));
  for (const r of rowsAt(1))
    if (!(await r.make(0))) throw new Error(`row ${r.label.slice(0, 3)}: the first call did not succeed`);

  if (sections.includes("1")) {
    console.log(
      `\n1. batch_execute_tools, one word_count call (${requests} requests per row at load, ${Math.min(requests, 1000)} at concurrency 1, in ${ROUNDS} alternating rounds; ${os.cpus().length} CPUs, Node ${process.version})`,
    );
    for (const conc of levels) {
      const n = conc === 1 ? Math.min(requests, 1000) : requests;
      const rows = await runRounds(rowsAt(conc), { calls: n, conc, rounds: ROUNDS, warmup: 300 });
      const results = rows.map((r) => summary(r.label, r));
      for (const r of results) console.log(fmt(r));
      for (const r of rows) console.log(cpuLine(r.label.slice(0, 3), r.cpu, r.latencies.length));
      const [a, ...layers] = results;
      const verdict = (added, ratio) =>
        conc === 1 ? (added < 1 ? "meets < 1 ms" : "misses < 1 ms") : ratio >= 0.8 ? "meets >= 0.8" : "misses >= 0.8";
      for (const r of layers) {
        const added = r.p50 - a.p50;
        const ratio = r.rps / a.rps;
        console.log(
          `    ${r.label.slice(0, 3)} over (a): added p50 ${added.toFixed(2)} ms, throughput ${ratio.toFixed(3)} of the gateway's (${verdict(added, ratio)})`,
        );
      }
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
    console.log(`   createMcpServer (McpServer + ten registerTool): ${time(() => createMcpServer(gateway))}`);
    await gateway.close();
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
