// MCP authorization benchmark (issue 32), one run, side by side.
// Section 1, what checking a token costs per MCP request: the same 2026-07-28 raw tools/call of
// batch_execute_tools (one word_count call) through /mcp,
//   (k) with the agent's API key in svc-api-key (the MCP server sends it on; the gateway authenticates it),
//   (o) with an OAuth access token of the same account's grant in Authorization: Bearer (the MCP server
//       checks it with GET /v1/oauth/token-info, one more hop through the gateway to identity, then sends
//       it on; the gateway authenticates it as the grant's key),
// at concurrency 1 and at load, in alternating rounds; it prints each row, (o)'s added p50 over (k) and its
// throughput as a ratio of (k)'s, and the CPU each process spent per call.
// Section 2, how long a first connection takes end to end: a new v2 SDK client (its own OAuth support) with
// no tokens connects: 401, protected resource metadata, authorization server metadata, dynamic registration
// (the bench has no https host for a client metadata document), the authorization redirect, the person's
// decision (the consent page's API call, by a person already signed in: their reading time is not the
// machine's), the code exchanged for tokens, the reconnect and tools/list. Repeated `connections` times with
// fresh clients; prints the median and the 90th percentile, and the same client reconnecting with its tokens.
// Postgres and NATS are started here on free ports in a temporary folder; processes run from dist/.
// Usage: node test/bench/mcp-oauth.mjs [requests=2000] [concurrency=16] [connections=20]   (build first)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";
import { cleanup, cpuLine, fmt, profiled, request, row, runRounds, start as startProcess, summary, track } from "./lib.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [requests = 2000, concurrency = 16, connections = 20] = process.argv.slice(2).map(Number);
const MODERN = "2026-07-28";
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-oauth-"));
const quiet = { info() {}, warn() {}, error: console.error };
const start = (name, argv, env) => startProcess(name, argv, { env, cwd: root, ready: /listening/ });

let pg;
let nats;
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
  const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  const mcpUrl = `http://127.0.0.1:${ports.mcp}/mcp`;
  const common = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    LOG_LEVEL: "info",
    CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    EXECUTION_URL: `http://127.0.0.1:${ports.execution}`,
    BILLING_URL: `http://127.0.0.1:${ports.billing}`,
    IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
    GATEWAY_URL: gatewayUrl,
    PUBLIC_URL: gatewayUrl,
    MCP_PUBLIC_URL: mcpUrl,
    OAUTH_DYNAMIC_REGISTRATION: "true",
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
  const json = { "content-type": "application/json" };
  const gw = `${gatewayUrl}/v1`;

  // A person (the grant's owner) and an API key of theirs: (k) and (o) act as the same account.
  const signup = await request(`${gw}/auth/signup`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: "bench@example.com", password: "a long enough password", name: "Bench" }),
  });
  if (signup.status >= 300) throw new Error(`signup failed: ${signup.status} ${signup.body}`);
  const jwt = JSON.parse(signup.body).access_token;
  const person = { ...json, authorization: `Bearer ${jwt}` };
  const created = await request(`${gw}/api-keys`, { method: "POST", headers: person, body: JSON.stringify({ name: "bench" }) });
  if (created.status !== 200) throw new Error(`key creation failed: ${created.status} ${created.body}`);
  const apiKey = JSON.parse(created.body).key;

  /** An MCP client's OAuth state (the SDK's provider interface), registering dynamically. */
  const redirectUrl = "http://127.0.0.1:9/callback";
  const provider = () => ({
    redirectUrl,
    clientMetadata: {
      client_name: "bench",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    clientInformation() {
      return this.info;
    },
    saveClientInformation(info) {
      this.info = info;
    },
    tokens() {
      return this.saved;
    },
    saveTokens(tokens) {
      this.saved = tokens;
    },
    redirectToAuthorization(url) {
      this.authorizationUrl = url;
    },
    saveCodeVerifier(v) {
      this.verifier = v;
    },
    codeVerifier() {
      return this.verifier;
    },
  });
  const clientOf = () => new Client({ name: "toolport-bench", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  /** The whole first connection; answers the connected client (closed by the caller). */
  async function firstConnection(p) {
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: p });
    try {
      await clientOf().connect(transport);
      throw new Error("connected without authorization");
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
    }
    const sent = await fetch(p.authorizationUrl, { redirect: "manual" });
    const requestId = new URL(sent.headers.get("location")).searchParams.get("request");
    const decided = await request(`${gw}/oauth/authorizations/${requestId}`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ allow: true }),
    });
    if (decided.status !== 200) throw new Error(`decision failed: ${decided.status} ${decided.body}`);
    await transport.finishAuth(new URL(JSON.parse(decided.body).redirect_to).searchParams);
    const client = clientOf();
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: p }));
    await client.listTools();
    return client;
  }

  const first = provider();
  await (await firstConnection(first)).close();
  const token = first.saved.access_token;

  let toolId;
  for (let i = 0; i < 100 && !toolId; i++) {
    const found = await request(`${gw}/tools/public/search?query=count%20words&limit=10`, { headers: { "svc-api-key": apiKey } });
    if (found.status === 200) toolId = JSON.parse(found.body).find((t) => t.name === "word_count")?.id;
    if (!toolId) await new Promise((r) => setTimeout(r, 100));
  }
  if (!toolId) throw new Error("word_count not found by search");
  const calls = [{ tool_id: toolId, tool_input: { text: "The quick brown fox jumps over the lazy dog." } }];
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "toolport-bench", version: "1.0.0" },
  };
  const headers = {
    ...json,
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "batch_execute_tools",
  };
  let id = 0;
  const caller = (credential) => async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name: "batch_execute_tools", arguments: { calls }, _meta: meta },
    });
    const res = await request(mcpUrl, { method: "POST", headers: { ...headers, ...credential }, body });
    if (res.status !== 200) return false;
    const result = JSON.parse(res.body).result;
    return result?.resultType === "complete" && result.structuredContent?.results?.[0]?.success === true;
  };
  const keyed = caller({ "svc-api-key": apiKey });
  const oauth = caller({ authorization: `Bearer ${token}` });
  if (!(await keyed()) || !(await oauth())) throw new Error("the first call of a row did not succeed");

  console.log(
    `\n1. What checking a token costs per MCP request: ${MODERN} tools/call of batch_execute_tools, one word_count call (${requests} requests per row at load, ${Math.min(requests, 1000)} at concurrency 1, 3 alternating rounds; ${os.cpus().length} CPUs, Node ${process.version})`,
  );
  for (const conc of [1, concurrency]) {
    const rows = await runRounds(
      [row(`(k) API key, concurrency ${conc}`, keyed), row(`(o) OAuth token, concurrency ${conc}`, oauth)],
      { calls: conc === 1 ? Math.min(requests, 1000) : requests, conc, rounds: 3, warmup: 200 },
    );
    const [k, o] = rows.map((r) => summary(r.label, r));
    for (const r of [k, o]) console.log(fmt(r, 34));
    for (const r of rows) console.log(cpuLine(r.label.slice(0, 3), r.cpu, r.latencies.length));
    console.log(
      `    (o) over (k): added p50 ${(o.p50 - k.p50).toFixed(2)} ms, throughput ${(o.rps / k.rps).toFixed(3)} of the key's`,
    );
  }

  console.log(
    `\n2. A first connection end to end (v2 SDK client, its own OAuth; ${connections} fresh clients, one after another)`,
  );
  const firsts = [];
  const again = [];
  for (let i = 0; i < connections; i++) {
    const p = provider();
    let t = performance.now();
    await (await firstConnection(p)).close();
    firsts.push(performance.now() - t);
    t = performance.now();
    const client = clientOf();
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: p }));
    await client.listTools();
    again.push(performance.now() - t);
    await client.close();
  }
  const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  console.log(
    `   first connection (401 -> discovery -> registration -> consent -> token -> tools/list): p50 ${q(firsts, 0.5).toFixed(1)} ms, p90 ${q(firsts, 0.9).toFixed(1)} ms`,
  );
  console.log(
    `   the same client again, with its tokens (connect -> tools/list): p50 ${q(again, 0.5).toFixed(1)} ms, p90 ${q(again, 0.9).toFixed(1)} ms`,
  );
} finally {
  await cleanup();
  await nats?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
