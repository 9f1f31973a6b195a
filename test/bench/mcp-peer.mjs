// The peer section of mcp-server.mjs: one upstream MCP server and mcp-hub (an MCP aggregator from the npm
// registry) in front of it, each in its own process so that its CPU is counted apart.
//
// The upstream: `node test/bench/mcp-peer.mjs upstream` (PORT from the environment; prints "listening"):
// Streamable HTTP at /mcp with sessions (an `initialize` opens one, its `mcp-session-id` routes the rest),
// the v1 SDK's low-level Server, one tool `count_words` as cheap as the built-in word_count. Each caller (a
// direct client, Toolport's execution service, mcp-hub) opens one session and reuses it, so the rows compare
// the layer in front, not how the upstream handshakes.
//
// mcp-hub (MCP_HUB_PACKAGE): installed on demand into the bench cache, never a workspace dependency. It reads
// a config file ({"mcpServers": {name: {url}}}), connects to each server once (Streamable HTTP, HTTP+SSE as a
// fallback), and serves every server's tools as `<name>__<tool>` at /mcp, which speaks only the older
// HTTP+SSE transport (GET /mcp opens the stream, POST /messages?sessionId= carries requests). It keeps logs
// and a workspace list under the XDG folders (pointed into the bench's temporary folder here), and at start
// it fetches its marketplace list from the web unless a fresh copy is cached: one is written first, since this
// machine reaches no web.
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { adopt, request, sleep } from "./lib.mjs";

/** The version the peer figures were measured with. */
export const MCP_HUB_PACKAGE = "mcp-hub@4.2.1";

/** The upstream's one tool, as tools/list gives it. */
export const COUNT_WORDS = {
  name: "count_words",
  title: "Count words",
  description: "Counts the words and characters of a text",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count" } },
    required: ["text"],
  },
  annotations: { readOnlyHint: true },
};

/** Where the benchmarks keep what they download (TOOLPORT_BENCH_CACHE, else node_modules/.cache), as search-common.ts. */
export function benchCache() {
  return process.env.TOOLPORT_BENCH_CACHE ?? fileURLToPath(new URL("../../node_modules/.cache/toolport-bench", import.meta.url));
}

// ---------------------------------------------------------------------------------------------
// The upstream

// The low-level Server with the tool's JSON Schema as is: McpServer.registerTool would need zod, which the
// test package does not depend on.
function upstreamServer() {
  const server = new Server({ name: "bench-upstream", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [COUNT_WORDS] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const text = params.arguments?.text;
    if (params.name !== COUNT_WORDS.name || typeof text !== "string")
      return { isError: true, content: [{ type: "text", text: "count_words takes {text: string}" }] };
    const counts = { words: text.split(/\s+/).filter(Boolean).length, characters: text.length };
    return { content: [{ type: "text", text: JSON.stringify(counts) }] };
  });
  return server;
}

function serveUpstream(port) {
  const sessions = new Map();
  http
    .createServer(async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = raw ? JSON.parse(raw) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        // Anything but an initialize without a known session is refused, as a sessionful server does (a
        // 2026-07-28 client's server/discover probe included: it falls back to the handshake).
        if (body?.method !== "initialize") {
          res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no session" }, id: null }));
          return;
        }
        const opened = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, opened),
        });
        opened.onclose = () => opened.sessionId && sessions.delete(opened.sessionId);
        transport = opened;
        await upstreamServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    })
    .listen(port, "127.0.0.1", () => process.stdout.write("upstream listening\n"));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "upstream") {
  // An exit on SIGTERM, so that --cpu-prof (BENCH_PROFILE=upstream) writes its profile.
  process.on("SIGTERM", () => process.exit(0));
  serveUpstream(Number(process.env.PORT));
}

// ---------------------------------------------------------------------------------------------
// mcp-hub

/** A step of the peer's set-up that failed: what was run and what it said. */
export class PeerSetupError extends Error {}

/** The path of mcp-hub's CLI, installed into the bench cache first if it is not there. */
export function installMcpHub(cache = benchCache()) {
  const prefix = path.join(cache, "mcp-hub");
  const cli = path.join(prefix, "node_modules", "mcp-hub", "dist", "cli.js");
  const wanted = MCP_HUB_PACKAGE.slice(MCP_HUB_PACKAGE.lastIndexOf("@") + 1);
  const installed = existsSync(cli)
    ? JSON.parse(readFileSync(path.join(prefix, "node_modules", "mcp-hub", "package.json"), "utf8")).version
    : undefined;
  if (installed !== wanted) {
    const args = ["i", "--no-save", "--no-package-lock", "--ignore-scripts", MCP_HUB_PACKAGE, "--prefix", prefix];
    console.log(`installing ${MCP_HUB_PACKAGE} into ${prefix}`);
    mkdirSync(prefix, { recursive: true });
    const res = spawnSync("npm", args, { encoding: "utf8" });
    if (res.status !== 0 || !existsSync(cli))
      throw new PeerSetupError(
        `npm ${args.join(" ")} exited ${res.status ?? res.error}: ${(res.stderr ?? "").trim().slice(-800)}`,
      );
  }
  return cli;
}

/**
 * Starts mcp-hub (installed on demand) on `port` with one server, `name` at `upstreamUrl`, its state in
 * `dir`, and resolves once its health says it is ready with that server connected. Its output goes to
 * `dir`/mcp-hub.out (BENCH_VERBOSE=1: to stderr too). Resolves with its /mcp address, the name it gives the
 * upstream's count_words, and its version; rejects with a PeerSetupError that quotes the command and the
 * end of its output.
 */
export async function startMcpHub({ dir, port, upstreamUrl, name = "upstream", profile = [] }) {
  const cli = installMcpHub();
  const version = JSON.parse(readFileSync(path.join(path.dirname(path.dirname(cli)), "package.json"), "utf8")).version;
  const xdg = {
    XDG_DATA_HOME: path.join(dir, "data"),
    XDG_STATE_HOME: path.join(dir, "state"),
    XDG_CONFIG_HOME: path.join(dir, "config"),
  };
  // A fresh marketplace list (one placeholder entry: an empty list counts as stale), so that it fetches none.
  const marketplace = path.join(xdg.XDG_DATA_HOME, "mcp-hub", "cache");
  mkdirSync(marketplace, { recursive: true });
  const registry = { version: "bench", generatedAt: 0, totalServers: 1, servers: [{ id: "bench-none", name: "none" }] };
  writeFileSync(
    path.join(marketplace, "registry.json"),
    JSON.stringify({ registry, lastFetchedAt: Date.now(), serverDocumentation: {} }),
  );
  const config = path.join(dir, "mcp-hub.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { [name]: { url: upstreamUrl } } }));

  const argv = [...profile, cli, "--port", String(port), "--config", config];
  const out = path.join(dir, "mcp-hub.out");
  const log = createWriteStream(out);
  const child = adopt(
    "mcp-hub",
    spawn(process.execPath, argv, { env: { ...process.env, ...xdg }, stdio: ["ignore", "pipe", "pipe"] }),
  );
  for (const stream of [child.stdout, child.stderr])
    stream.on("data", (chunk) => {
      log.write(chunk);
      if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
    });
  const failed = (what) => {
    const tail = existsSync(out) ? readFileSync(out, "utf8").trim().split("\n").slice(-5).join("\n") : "";
    return new PeerSetupError(`node ${argv.join(" ")}: ${what}${tail ? `; its last output:\n${tail}` : ""}`);
  };
  let health;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null || child.signalCode !== null) throw failed(`exited with ${child.signalCode ?? child.exitCode}`);
    try {
      const res = await request(`http://127.0.0.1:${port}/api/health`);
      health = JSON.parse(res.body);
      if (health.state === "ready" && health.servers?.find((s) => s.name === name)?.status === "connected") {
        const tool = `${name.replace(/[^a-zA-Z0-9]/g, "_")}__${COUNT_WORDS.name}`;
        return { url: `http://127.0.0.1:${port}/mcp`, tool, version };
      }
    } catch {}
    await sleep(100);
  }
  const server = health?.servers?.find((s) => s.name === name);
  throw failed(`not ready after 30 s (state ${health?.state}, ${name}: ${server?.status} ${server?.error ?? ""})`);
}
