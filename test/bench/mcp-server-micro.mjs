// The MCP server's own CPU per tools/call, in one process, without the rest of the stack: the /mcp
// handler (mcp-server/dist/http.js, as the server runs it) in front of a canned gateway that answers every
// batch at once, driven by a keep-alive node:http client at concurrency 16; beside it, the same client
// posting straight to the canned gateway. The difference is what the MCP layer itself costs (the SDK's
// handler, the Web bridge, validation, the typed gateway client), the figure mcp-server.mjs's throughput
// goal turns on. Run with --cpu-prof to see where it goes.
// Usage: node test/bench/mcp-server-micro.mjs [calls=5000]   (build first)
import http from "node:http";
import { createLogger } from "@toolport/kit/logger";
import { GatewayClient } from "../../mcp-server/dist/gateway-client.js";
import { mcpHttpHandler } from "../../mcp-server/dist/http.js";

const canned = JSON.stringify({
  results: [
    {
      tool_id: "t1",
      success: true,
      result: { words: 9 },
      truncated: false,
      cursor: null,
      error: null,
      execution_id: "e1",
      _meta: {},
    },
  ],
});
const gw = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(canned);
  });
});
await new Promise((r) => gw.listen(0, "127.0.0.1", r));
const gateway = new GatewayClient(`http://127.0.0.1:${gw.address().port}`);
const server = http.createServer(mcpHttpHandler(createLogger("x", "silent"), gateway, { trustProxy: false }));
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/mcp`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const MODERN = "2026-07-28";
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: {
    name: "batch_execute_tools",
    arguments: { calls: [{ tool_id: "t1", tool_input: { text: "a" } }] },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "b", version: "1" },
    },
  },
});
const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": "batch_execute_tools",
  "svc-api-key": "tp_x",
};
function one() {
  return new Promise((resolve, reject) => {
    const r = http.request(url, { method: "POST", headers, agent }, (res) => {
      let t = "";
      res.on("data", (c) => (t += c));
      res.on("end", () => resolve([res.statusCode, t]));
    });
    r.on("error", reject);
    r.end(body);
  });
}
const [st, txt] = await one();
if (st !== 200 || !txt.includes('"complete"')) throw new Error(`the first call failed: ${st} ${txt.slice(0, 300)}`);
async function run(n, conc) {
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next++ < n) await one();
    }),
  );
}
await run(2000, 16);
const N = Number(process.argv[2] ?? 5000);
const c0 = process.cpuUsage();
const t0 = performance.now();
await run(N, 16);
const c = process.cpuUsage(c0);
const ms = performance.now() - t0;
console.log(
  `through /mcp (MCP server, canned gateway, client): ${((c.user + c.system) / 1000 / N).toFixed(3)} ms; ${(N / (ms / 1000)).toFixed(0)} req/s`,
);
const gwUrl = `http://127.0.0.1:${gw.address().port}/v1/tools/call/batch`;
function direct() {
  return new Promise((resolve, reject) => {
    const r = http.request(
      gwUrl,
      { method: "POST", headers: { "content-type": "application/json", "svc-api-key": "tp_x" }, agent },
      (res) => {
        let t = "";
        res.on("data", (c) => (t += c));
        res.on("end", () => resolve(t));
      },
    );
    r.on("error", reject);
    r.end(body);
  });
}
async function runD(n, conc) {
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next++ < n) await direct();
    }),
  );
}
await runD(2000, 16);
const d0 = process.cpuUsage();
await runD(N, 16);
const d = process.cpuUsage(d0);
console.log(
  `straight to the canned gateway (client, canned gateway): ${((d.user + d.system) / 1000 / N).toFixed(3)} ms per call`,
);
process.exit(0);
