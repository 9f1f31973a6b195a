/**
 * The soak under faults (issue 18), shared by the short version in `npm test` (soak.test.ts) and the
 * long one (run.ts). It owns its Postgres and NATS JetStream (deploy/local/infra.mjs, in a temporary
 * folder) because it stops them, and runs every role as its own process (per-role layout) so one
 * process can be killed with SIGKILL and started again. Real upstreams run in this process: the echo
 * API (free and priced tools, batches, a two-step workflow) and an HTTPS receiver for webhooks.
 *
 * While a moderate mixed load runs (single calls, batches, priced calls from several funded agents,
 * calls of a human whose webhook listens to call events, workflow runs, site crawls of a small site served
 * here, which the content role reads on its extraction threads), a fault is injected on a
 * schedule: a service process (or the gateway) killed and restarted, NATS stopped and restarted once,
 * Postgres stopped and restarted once (same port, same data folder). Each fault is printed with how
 * long the stack took to answer GET /v1/health with 200 again. Requests that fail meanwhile are
 * counted by kind and outcome; a failure must be clean: an HTTP error in the spec's error shape (or a
 * refused connection while the gateway is down), never a hang past the client's timeout.
 *
 * After the load stops the stack settles (polled conditions: outboxes published, consumers caught up,
 * no delivery pending, no settlement pending, no hold open past its TTL), then the checks run on a
 * snapshot read from the services' databases. Each check is a pure function of that snapshot, so a
 * test can feed it a doctored copy and see it fail:
 *   1. ledger: every transaction's entries sum to zero (two entries at least), every wallet account's
 *      cached balance equals the sum of its entries, no balance below zero, all entries sum to zero;
 *   2. priced calls: every hold is booked once and settled once (one capture, or one release, never
 *      both), agrees with the execution's settlement; every priced call a client saw succeed is captured;
 *      nothing is charged without an execution;
 *   3. events: every execution event in execution's outbox is published and applied by each of its
 *      consumers: every execution has its row in catalog's stats and, when a key made it, in identity's
 *      key usage (those consumers keep no inbox: their rows are keyed by execution), and its event is in
 *      webhooks' inbox (fan-out); every workflow event of content in webhooks' inbox, one event per
 *      execution, no dead letters;
 *   4. webhooks: every delivery ended (succeeded or failed; none pending or in flight), every succeeded
 *      one was received;
 *   5. holds: none still open after its TTL;
 *   5b. site crawls: every site record submitted ended live (a crawl the content process was killed in
 *      the middle of is claimed again once its lease runs out), none pending, crawling or failed;
 *   6. memory: each process instance's resident memory (VmRSS from /proc, sampled) flat after warm-up:
 *      the median of the last quarter of its samples after warm-up is at most (1 + margin) times the
 *      highest sample of the first half after warm-up. Instances with too few samples after warm-up are
 *      listed, not judged; every role must have at least one judged instance.
 */
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createPool, type Pool } from "@toolport/kit/pg";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";
import {
  type AgentKey,
  connectCredential,
  createKey,
  type ExecStack,
  echoApiDocument,
  fund,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "../e2e/execution-support.js";
import { type Receiver, startHttpsReceiver, testCertificates } from "../harness/https-receiver.js";
import { signupHuman } from "../harness/identity-http.js";
import { checkReply } from "../harness/shapes.js";
import { type ProcessName, repoRoot, serviceNames } from "../harness/stack.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";

export interface SoakOptions {
  /** How long the load runs. */
  durationMs: number;
  /**
   * "each-once": every process, NATS and Postgres once each, in a random order, evenly over the run
   * (the short version). "every-minute": a random process every `faultEveryMs`, NATS at about a third
   * of the run and Postgres at about two thirds, each instead of that tick's process (the long one).
   * "replicas": one replica of every role killed in turn (a random one of the two), then started again,
   * round after round for as long as the run lasts, evenly spaced; NATS and Postgres stay up.
   */
  faultPlan: "each-once" | "every-minute" | "replicas";
  faultEveryMs: number;
  /** How long NATS and Postgres stay down. */
  infraDownMs: number;
  memory: { sampleEveryMs: number; warmupMs: number; margin: number };
  /** Load loops running at once, and the pause each takes between requests. */
  workers: number;
  pauseMs: number;
  /** Processes per role (per-role layout; 1 unless given). */
  replicas?: number;
  log: (line: string) => void;
}

const PROCESSES: ProcessName[] = [...serviceNames, "gateway", "mcp-server"];
const CLIENT_TIMEOUT_MS = 30_000;
/** Holds live this long (BILLING_HOLD_TTL_SECONDS): far longer than any fault keeps billing away. */
const HOLD_TTL_SECONDS = 40;
const PRICE_CENTS = 1;
/**
 * The limits under test (identity's TOOL_CALLS_PER_MINUTE per key, FREE_TIER_CALLS_PER_MONTH per account):
 * low enough that the limit loop's two callers reach them, while every other caller of the load stays
 * under them (its calls go to tools that need a credential, outside the free tier, spread over keys).
 */
export const RATE_LIMIT_PER_MINUTE = 120;
export const FREE_TIER_CALLS = 150;
const ECHO_SCHEME = { scheme: { type: "apiKey", in: "header", name: "X-Api-Key" } };

// ---------------------------------------------------------------------------------------------------------
// Infrastructure of the soak's own

interface Infra {
  root: string;
  pgUrl: string;
  natsUrl: string;
  restartPostgres(downMs: number): Promise<void>;
  restartNats(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

const quiet = { info() {}, warn() {}, error: console.error };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Postgres and a NATS JetStream on free ports in a temporary folder, each stoppable and restartable in place. */
async function startInfra(): Promise<Infra> {
  const root = await mkdtemp(path.join(os.tmpdir(), "toolport-soak-"));
  const pgOptions = { dataDir: path.join(root, "pg"), port: await freePort(), log: quiet, fast: true };
  const natsOptions = { storeDir: path.join(root, "nats"), port: await freePort(), log: quiet };
  let pg = await startPostgres(pgOptions);
  let nats = await startNats(natsOptions);
  return {
    root,
    pgUrl: pg.url,
    natsUrl: nats.url,
    async restartPostgres(downMs) {
      await pg.stop();
      await sleep(downMs);
      pg = await startPostgres(pgOptions);
    },
    async restartNats(downMs) {
      await nats.stop();
      await sleep(downMs);
      nats = await startNats(natsOptions);
    },
    async stop() {
      await nats.stop();
      await pg.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The stack and its actors

interface World {
  s: ExecStack;
  echo: Upstream;
  receiver: Receiver;
  /** Serves the OAuth client's metadata document (HTTPS, as identity requires). */
  documents: Receiver;
  /** Single calls and batches: one agent, its calls spread over three keys (the rate limit is per key). */
  agent: AgentKey;
  agentKeys: string[];
  tools: Record<string, string>;
  /** An agent that only runs the workflow, so its executions are exactly the workflow's steps. */
  flow: AgentKey;
  workflowId: string;
  /** An agent that only makes calls with an Idempotency-Key, retried after a fault with the same key. */
  idem: { agent: AgentKey; tool: string };
  /** Agents paying for their own priced tools: one that answers, one whose upstream fails (its hold is released). */
  payers: Array<{ agent: AgentKey; tool: string; failing: string }>;
  /** A human whose webhook listens to its call events, the tool it calls with its key and, over MCP, by OAuth. */
  human: { accountId: string; key: string; token: string; tool: string };
  /** The limit loop's callers: an agent with one key past the rate limit, one account past the free tier. */
  limits: { rate: { agent: AgentKey; tool: string }; free: { agent: AgentKey; keys: string[]; tool: string } };
  oauth: OAuthClient;
  /** A small HTML site the load has crawled (content's site records). */
  site: { url: string; close(): Promise<void> };
}

/** An MCP client's OAuth grants (two chains of tokens, each refreshed with rotation) as the load keeps them. */
interface OAuthClient {
  clientId: string;
  redirectUri: string;
  chains: OAuthChain[];
}

interface OAuthChain {
  access: string;
  refresh: string;
  /** The last refresh went unanswered (or failed with a fault): it may have rotated the tokens all the same. */
  uncertain: boolean;
  /**
   * The refresh under way: a client refreshes one chain at a time (two refreshes with one refresh token
   * are a reuse, which revokes the grant by design).
   */
  refreshing?: Promise<void>;
}

/** Three pages of HTML and a robots.txt on 127.0.0.1: what a crawl of the load reads. */
async function startSite(): Promise<{ port: number; url: string; close(): Promise<void> }> {
  const pages: Record<string, string> = {
    "/": '<!doctype html><title>Soak site</title><main><h1>Soak site</h1><a href="/about">About</a> <a href="/contact">Contact</a></main>',
    "/about": "<!doctype html><title>About</title><main><h1>About us</h1><p>We soak.</p></main>",
    "/contact": '<!doctype html><title>Contact</title><main><a href="mailto:soak@example.com">Write</a></main>',
  };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/robots.txt") return void res.writeHead(200, { "content-type": "text/plain" }).end("User-agent: *\nAllow: /\n");
    const page = pages[path];
    if (page === undefined) return void res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Publishes the echo API for `owner` behind an API key it connects: calls of it are outside the free tier. */
async function publishSecured(s: ExecStack, owner: AgentKey, echo: Upstream): Promise<Record<string, string>> {
  const { serviceId, tools } = await publishOpenApi(s, owner, echoApiDocument(ECHO_SCHEME), echo.url);
  await connectCredential(s, owner, serviceId, { api_key: `soak-${randomBytes(4).toString("hex")}` });
  return tools;
}

async function startWorld(infra: Infra, replicas: number): Promise<World> {
  const ca = await testCertificates();
  const receiver = await startHttpsReceiver();
  const documents = await startHttpsReceiver();
  const echo = await startEchoApi();
  const site = await startSite();
  const s = await startExecStack(
    [`127.0.0.1:${echo.port}`],
    {
      NODE_EXTRA_CA_CERTS: ca.caFile,
      WEBHOOKS_OUTBOUND_ALLOW: `127.0.0.1:${receiver.port}`,
      IDENTITY_OUTBOUND_ALLOW: `127.0.0.1:${documents.port}`,
      WEBHOOKS_POLL_MS: "500",
      BILLING_HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS),
      BILLING_HOLD_SWEEP_INTERVAL_MS: "1000",
      EXECUTION_SETTLEMENT_SWEEP_MS: "1000",
      TOOL_CALLS_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      // The world registers nine agents and a person.
      REGISTRATIONS_PER_MINUTE: "100",
      FREE_TIER_CALLS_PER_MONTH: String(FREE_TIER_CALLS),
      CONTENT_OUTBOUND_ALLOW: `127.0.0.1:${site.port}`,
      CONTENT_CRAWL_POLL_MS: "500",
      // A crawl the content process was killed in is claimed again this soon after.
      CONTENT_CRAWL_LEASE_MS: "3000",
    },
    PROCESSES,
    { layout: "per-role", infra: { pgUrl: infra.pgUrl, natsUrl: infra.natsUrl }, replicas },
  );
  const agent = await registerAgent(s, "soak-agent");
  const agentKeys = [agent.key, await createKey(s, agent, null), await createKey(s, agent, null)];
  const tools = await publishSecured(s, agent, echo);

  const flow = await registerAgent(s, "soak-flow");
  const flowTools = await publishSecured(s, flow, echo);
  const workflow = await s.call("POST", "/workflows", {
    key: flow.key,
    body: {
      name: "Soak digest",
      steps: [
        { tool_id: flowTools.list_items, input_mapping: { n: "{{inputs.n}}" } },
        { tool_id: flowTools.echo_item, input_mapping: { item_id: "{{steps.1.result.next_cursor}}", title: "soak" } },
      ],
    },
  });
  if (workflow.status !== 200) throw new Error(`creating the workflow: ${workflow.status} ${JSON.stringify(workflow.body)}`);

  const idemAgent = await registerAgent(s, "soak-idempotent");
  const idemTool = (await publishSecured(s, idemAgent, echo)).echo_item as string;

  const payers: World["payers"] = [];
  for (let i = 0; i < 3; i++) {
    const payer = await registerAgent(s, `soak-payer-${i}`);
    const { tools } = await publishOpenApi(s, payer, echoApiDocument(), echo.url);
    for (const tool of [tools.list_items, tools.status]) {
      const priced = await s.call("PATCH", `/tools/${tool}`, { key: payer.key, body: { price_per_call_cents: PRICE_CENTS } });
      if (priced.status !== 200) throw new Error(`pricing a tool: ${priced.status} ${JSON.stringify(priced.body)}`);
    }
    await fund(s, payer, 100_000);
    payers.push({ agent: payer, tool: tools.list_items as string, failing: tools.status as string });
  }

  const person = await signupHuman(s.call, "soak-hooks");
  const key = await s.call("POST", "/api-keys", { token: person.token, body: { name: "soak calls" } });
  if (key.status !== 200) throw new Error(`creating the human's key: ${key.status} ${JSON.stringify(key.body)}`);
  const humanTool = (await publishSecured(s, { id: person.accountId, key: key.body.key }, echo)).list_items as string;
  const hook = await s.call("POST", "/webhooks", {
    token: person.token,
    body: { url: `${receiver.url}/soak`, events: ["tool.execution.completed", "tool.execution.failed"] },
  });
  if (hook.status !== 200) throw new Error(`registering the webhook: ${hook.status} ${JSON.stringify(hook.body)}`);

  const rateAgent = await registerAgent(s, "soak-rate");
  const rateTool = (await publishSecured(s, rateAgent, echo)).list_items as string;
  const freeAgent = await registerAgent(s, "soak-free");
  const freeKeys = [freeAgent.key, await createKey(s, freeAgent, null), await createKey(s, freeAgent, null)];
  const freeTool = (await publishOpenApi(s, freeAgent, echoApiDocument(), echo.url)).tools.list_items as string;

  const clientId = `${documents.url}/client.json`;
  const redirectUri = "http://127.0.0.1:9/callback";
  documents.respond(() => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_id: clientId,
      client_name: "Soak Assistant",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  }));
  const w: World = {
    s,
    echo,
    receiver,
    documents,
    agent,
    agentKeys,
    tools,
    flow,
    workflowId: workflow.body.id,
    idem: { agent: idemAgent, tool: idemTool },
    payers,
    human: { accountId: person.accountId, key: key.body.key, token: person.token, tool: humanTool },
    limits: { rate: { agent: rateAgent, tool: rateTool }, free: { agent: freeAgent, keys: freeKeys, tool: freeTool } },
    oauth: { clientId, redirectUri, chains: [] },
    site,
  };
  for (let i = 0; i < 2; i++) w.oauth.chains.push(await authorize(w));
  return w;
}

/** The person grants the MCP client access (as the console's consent page does): a new chain of tokens. */
async function authorize(w: World): Promise<OAuthChain> {
  const { gatewayUrl, mcpUrl } = w.s.stack;
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(`${gatewayUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: w.oauth.clientId,
    redirect_uri: w.oauth.redirectUri,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: mcpUrl,
    scope: "mcp",
  }))
    url.searchParams.set(k, v);
  const consent = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
  const requestId = new URL(consent.headers.get("location") ?? "http://x/").searchParams.get("request");
  if (consent.status !== 302 || !requestId) throw new Error(`authorize: ${consent.status} ${await consent.text()}`);
  const decided = await w.s.call("POST", `/oauth/authorizations/${requestId}`, { token: w.human.token, body: { allow: true } });
  if (decided.status !== 200) throw new Error(`consent: ${decided.status} ${JSON.stringify(decided.body)}`);
  const code = new URL(decided.body.redirect_to).searchParams.get("code") as string;
  const tokens = await tokenRequest(gatewayUrl, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    client_id: w.oauth.clientId,
    redirect_uri: w.oauth.redirectUri,
    resource: mcpUrl,
  });
  if (!("status" in tokens) || tokens.status !== 200) throw new Error(`token: ${JSON.stringify(tokens)}`);
  return { access: tokens.body.access_token, refresh: tokens.body.refresh_token, uncertain: false };
}

async function tokenRequest(
  gatewayUrl: string,
  fields: Record<string, string>,
  // biome-ignore lint/suspicious/noExplicitAny: the load reads arbitrary JSON replies
): Promise<{ status: number; body: any } | { failure: string }> {
  try {
    const res = await fetch(`${gatewayUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body };
  } catch (err) {
    return { failure: failureOf(err) };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Load

export type LoadKind =
  | "call"
  | "batch"
  | "priced"
  | "webhook_call"
  | "workflow"
  | "crawl"
  | "idempotent"
  | "mcp"
  | "refresh"
  | "rate_limit"
  | "free_tier";
export const LOAD_KINDS: LoadKind[] = [
  "call",
  "batch",
  "priced",
  "webhook_call",
  "workflow",
  "crawl",
  "idempotent",
  "mcp",
  "refresh",
];

/** What the clients saw: outcome counts per kind, and the priced calls that returned 2xx. */
export interface LoadRecord {
  outcomes: Map<string, number>;
  /** Execution ids of priced calls answered 2xx, and whether the call succeeded. */
  pricedSeen: Array<{ executionId: string; success: boolean }>;
  /** Each execution id an Idempotency-Key was answered with (first answer and replays alike). */
  idempotentSeen: Array<{ key: string; executionId: string }>;
  /** Replies that were not clean: a hang past the client timeout, a non-2xx without the error shape, a 2xx of the wrong shape. */
  unclean: string[];
}

/** Every kind the load sends: the workers' round and the limit loop's two. */
export const ALL_KINDS: LoadKind[] = [...LOAD_KINDS, "rate_limit", "free_tier"];

export const emptyRecord = (): LoadRecord => ({ outcomes: new Map(), pricedSeen: [], idempotentSeen: [], unclean: [] });

/** Statuses a request may fail with while a process, NATS or Postgres is down. */
const FAULT_STATUSES = new Set([502, 503, 504]);

function failureOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string } };
  if (e.name === "TimeoutError") return "timeout";
  return e.cause?.code === "ECONNREFUSED" ? "refused" : `connection ${e.cause?.code ?? e.message}`;
}

async function send(
  gatewayUrl: string,
  method: string,
  route: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: the load reads arbitrary JSON replies
): Promise<{ status: number; body: any } | { failure: string }> {
  try {
    const res = await fetch(`${gatewayUrl}/v1${route}`, {
      method,
      headers: { "svc-api-key": key, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed };
  } catch (err) {
    return { failure: failureOf(err) };
  }
}

const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)] as T;
let idempotencyCounter = 0;

/** One request of a kind; returns its outcome label and adds what must be remembered to `record`. */
async function oneRequest(w: World, kind: LoadKind, record: LoadRecord): Promise<string> {
  if (kind === "idempotent") return idempotentCall(w, record);
  if (kind === "mcp") return mcpCall(w, record);
  if (kind === "refresh") return refresh(w, record);
  const url = w.s.stack.gatewayUrl;
  let route: string;
  let key: string;
  let body: unknown;
  const payer = pick(w.payers);
  switch (kind) {
    case "call":
      [route, key, body] = [`/tools/call/${w.tools.list_items}`, pick(w.agentKeys), { n: 3 }];
      break;
    case "batch":
      route = "/tools/call/batch";
      key = pick(w.agentKeys);
      body = {
        calls: [
          { tool_id: w.tools.list_items, tool_input: { n: 2 } },
          { tool_id: w.tools.echo_item, tool_input: { item_id: "b", title: "soak" } },
          { tool_id: w.tools.status, tool_input: { code: 502 } },
        ],
      };
      break;
    case "priced":
      // One in four fails upstream: its hold must be released, not charged.
      [route, key, body] =
        Math.random() < 0.25
          ? [`/tools/call/${payer.failing}`, payer.agent.key, { code: 502 }]
          : [`/tools/call/${payer.tool}`, payer.agent.key, { n: 1 }];
      break;
    case "webhook_call":
      [route, key, body] = [`/tools/call/${w.human.tool}`, w.human.key, { n: 1 }];
      break;
    case "workflow":
      [route, key, body] = [`/workflows/${w.workflowId}/run`, w.flow.key, { inputs: { n: 2 } }];
      break;
    case "crawl":
      [route, key, body] = ["/agent-sites", w.agent.key, { url: w.site.url, visibility: "private" }];
      break;
    case "rate_limit":
      [route, key, body] = [`/tools/call/${w.limits.rate.tool}`, w.limits.rate.agent.key, { n: 1 }];
      break;
    case "free_tier":
      [route, key, body] = [`/tools/call/${w.limits.free.tool}`, pick(w.limits.free.keys), { n: 1 }];
      break;
  }
  const reply = await send(url, "POST", route, key, body);
  if ("failure" in reply) {
    if (reply.failure === "timeout") record.unclean.push(`${kind}: no answer within ${CLIENT_TIMEOUT_MS} ms`);
    return reply.failure;
  }
  const { status } = reply;
  if (status >= 200 && status < 300) {
    try {
      checkReply({ method: "POST", path: route, status, body: reply.body, requestBody: body });
    } catch (err) {
      record.unclean.push(`${kind}: ${(err as Error).message.slice(0, 300)}`);
    }
    if (kind === "priced") record.pricedSeen.push({ executionId: reply.body.execution_id, success: reply.body.success === true });
    if (kind === "workflow" || kind === "crawl") return `${status} ${reply.body.status}`;
    if (kind === "batch") {
      const ok = (reply.body.results as Array<{ success: boolean }>).filter((r) => r.success).length;
      return `${status} ${ok}/3 succeeded`;
    }
    return `${status} ${reply.body.success ? "success" : "failed"}`;
  }
  const code = reply.body?.error?.code;
  const limitRefusal =
    status === 429 &&
    ((kind === "rate_limit" && code === "rate_limited") ||
      (kind === "free_tier" && (code === "usage_limit_reached" || code === "rate_limited")));
  if (typeof code !== "string" || typeof reply.body?.error?.message !== "string" || reply.body?.detail === undefined) {
    record.unclean.push(`${kind}: ${status} not in the error shape: ${JSON.stringify(reply.body).slice(0, 200)}`);
  } else if (!FAULT_STATUSES.has(status) && !limitRefusal) {
    record.unclean.push(`${kind}: ${status} ${code}: ${JSON.stringify(reply.body).slice(0, 300)}`);
  }
  return `${status} ${code ?? "?"}`;
}

/**
 * A call with an Idempotency-Key, sent again with the same key after a fault (no answer, 502-504, or 412
 * while the first is still running) up to five times: however often it is sent, it runs at most once.
 */
async function idempotentCall(w: World, record: LoadRecord): Promise<string> {
  const key = `soak-${process.pid}-${++idempotencyCounter}`;
  const route = `/tools/call/${w.idem.tool}`;
  const body = { item_id: key, title: "once" };
  // What each attempt got: the last one is the outcome, and a timeout names the ones before it.
  const got: string[] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    const reply = await send(w.s.stack.gatewayUrl, "POST", route, w.idem.agent.key, body, { "idempotency-key": key });
    if ("failure" in reply) {
      if (reply.failure === "timeout") {
        // A wait for a first attempt that died shows here as timeouts after 412s.
        const history = got.length ? `, after ${got.join(", ")}` : "";
        record.unclean.push(`idempotent: no answer within ${CLIENT_TIMEOUT_MS} ms (attempt ${attempt}${history})`);
      }
      got.push(reply.failure);
    } else if (reply.status === 200) {
      record.idempotentSeen.push({ key, executionId: reply.body.execution_id });
      return `200 ${attempt === 1 ? "first answer" : "after a retry"}${reply.body.replayed ? " (replayed)" : ""}`;
    } else {
      const code = reply.body?.error?.code;
      const outcome = `${reply.status} ${code ?? "?"}`;
      got.push(outcome);
      if (!FAULT_STATUSES.has(reply.status) && !(reply.status === 412 && code === "idempotency_key_in_flight")) {
        record.unclean.push(`idempotent: ${outcome}: ${JSON.stringify(reply.body).slice(0, 300)}`);
        return outcome;
      }
    }
    await sleep(1_000 * attempt);
  }
  return `gave up after 5 (${got.at(-1)})`;
}

/** A JSON-RPC message from a Streamable HTTP answer: the body, or the first `data:` of an event stream. */
function jsonRpcOf(contentType: string, text: string): { result?: { isError?: boolean }; error?: { code: number } } | null {
  try {
    if (!contentType.includes("text/event-stream")) return JSON.parse(text);
    const data = text.split("\n").find((line) => line.startsWith("data:"));
    return data ? JSON.parse(data.slice(5)) : null;
  } catch {
    return null;
  }
}

/** A tool call over MCP (2025-11-25, stateless) with a chain's OAuth access token, as a connector makes it. */
async function mcpCall(w: World, record: LoadRecord): Promise<string> {
  const chain = pick(w.oauth.chains);
  let res: Response;
  let text: string;
  try {
    res = await fetch(w.s.stack.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        authorization: `Bearer ${chain.access}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "batch_execute_tools", arguments: { calls: [{ tool_id: w.human.tool, tool_input: { n: 1 } }] } },
      }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    text = await res.text();
  } catch (err) {
    const failure = failureOf(err);
    if (failure === "timeout") record.unclean.push(`mcp: no answer within ${CLIENT_TIMEOUT_MS} ms`);
    return failure;
  }
  if (res.status === 200) {
    const message = jsonRpcOf(res.headers.get("content-type") ?? "", text);
    if (message?.result) return `200 ${message.result.isError ? "tool error" : "result"}`;
    if (message?.error) return `200 JSON-RPC error ${message.error.code}`;
    record.unclean.push(`mcp: 200 without a JSON-RPC answer: ${text.slice(0, 200)}`);
    return "200 ?";
  }
  // A token whose grant went with a refresh answer lost in a fault (a reused refresh token revokes the
  // grant): the client authorizes again, as an assistant asks its person to.
  if (res.status === 401 && chain.uncertain) return "401 (grant lost with an unanswered refresh)";
  if (!FAULT_STATUSES.has(res.status)) record.unclean.push(`mcp: ${res.status}: ${text.slice(0, 300)}`);
  return String(res.status);
}

/**
 * A refresh of one chain's tokens (rotation: the old refresh token stops working). An answer lost in a
 * fault leaves the client with a refresh token that may already be spent; presenting it again is then
 * refused with invalid_grant and revokes the grant (reuse detection), and the client authorizes again.
 * Any other refusal is unclean.
 */
async function refresh(w: World, record: LoadRecord): Promise<string> {
  const chain = pick(w.oauth.chains);
  while (chain.refreshing) await chain.refreshing;
  let done = () => {};
  chain.refreshing = new Promise<void>((resolve) => {
    done = resolve;
  });
  try {
    return await refreshChain(w, chain, record);
  } finally {
    chain.refreshing = undefined;
    done();
  }
}

async function refreshChain(w: World, chain: OAuthChain, record: LoadRecord): Promise<string> {
  const reply = await tokenRequest(w.s.stack.gatewayUrl, {
    grant_type: "refresh_token",
    refresh_token: chain.refresh,
    client_id: w.oauth.clientId,
  });
  if ("failure" in reply) {
    if (reply.failure === "timeout") record.unclean.push(`refresh: no answer within ${CLIENT_TIMEOUT_MS} ms`);
    chain.uncertain = true;
    return reply.failure;
  }
  if (reply.status === 200 && typeof reply.body?.access_token === "string" && typeof reply.body?.refresh_token === "string") {
    Object.assign(chain, { access: reply.body.access_token, refresh: reply.body.refresh_token, uncertain: false });
    return "200 rotated";
  }
  if (FAULT_STATUSES.has(reply.status)) {
    chain.uncertain = true;
    return String(reply.status);
  }
  if (reply.status === 400 && reply.body?.error === "invalid_grant" && chain.uncertain) {
    try {
      Object.assign(chain, await authorize(w));
      return "400 invalid_grant after a lost answer, authorized again";
    } catch (err) {
      return `400 invalid_grant after a lost answer, authorizing again failed: ${(err as Error).message.slice(0, 80)}`;
    }
  }
  record.unclean.push(`refresh: ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
  return `${reply.status} ${reply.body?.error ?? "?"}`;
}

async function runLoad(w: World, options: SoakOptions, until: number, record: LoadRecord): Promise<void> {
  const count = (kind: LoadKind, outcome: string) => {
    const label = `${kind}\t${outcome}`;
    record.outcomes.set(label, (record.outcomes.get(label) ?? 0) + 1);
  };
  const loop = async (worker: number) => {
    for (let i = worker; Date.now() < until; i++) {
      const kind = LOAD_KINDS[i % LOAD_KINDS.length] as LoadKind;
      count(kind, await oneRequest(w, kind, record));
      await sleep(options.pauseMs * (0.5 + Math.random()));
    }
  };
  // The limit loops: one key calling four or more times a second (twice its rate limit at least), one
  // account past its free tier within the first minute.
  const limit = async (kind: LoadKind, pauseMs: number) => {
    while (Date.now() < until) {
      count(kind, await oneRequest(w, kind, record));
      await sleep(pauseMs);
    }
  };
  const limits = () => Promise.all([limit("rate_limit", 100), limit("free_tier", 250)]);
  await Promise.all([...Array.from({ length: options.workers }, (_, i) => loop(i)), limits()]);
}

// ---------------------------------------------------------------------------------------------------------
// Faults

export type FaultKind = ProcessName | "nats" | "postgres";

export interface FaultRecord {
  atS: number;
  what: FaultKind;
  /** The replica killed (with replicas). */
  replica?: number;
  /** From the kill (or stop) until GET /v1/health answered 200 again. */
  recoveryMs: number;
}

/** null when GET /v1/health answers 200, else what it said (or why it did not answer). */
async function unhealthy(gatewayUrl: string): Promise<string | null> {
  try {
    const res = await fetch(`${gatewayUrl}/v1/health`, { signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    return res.status === 200 ? null : `${res.status} ${text.slice(0, 200)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

async function untilHealthy(gatewayUrl: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let why = await unhealthy(gatewayUrl); why !== null; why = await unhealthy(gatewayUrl)) {
    if (Date.now() > deadline) throw new Error(`the stack was not healthy again within ${timeoutMs / 1000} s: ${why}`);
    await sleep(200);
  }
}

async function injectFault(w: World, infra: Infra, what: FaultKind, downMs: number, replica?: number): Promise<void> {
  if (what === "nats") return infra.restartNats(downMs);
  if (what === "postgres") return infra.restartPostgres(downMs);
  await w.s.stack.stop(what, "SIGKILL", replica);
  await w.s.stack.start(what, replica);
}

const shuffled = <T>(list: T[]) =>
  list
    .map((x) => [Math.random(), x] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, x]) => x);

function faultSchedule(options: SoakOptions): FaultKind[] {
  if (options.faultPlan === "each-once") return shuffled<FaultKind>([...PROCESSES, "nats", "postgres"]);
  if (options.faultPlan === "replicas") {
    const rounds = Math.max(1, Math.floor(options.durationMs / (options.faultEveryMs * PROCESSES.length)));
    return Array.from({ length: rounds }, () => shuffled<FaultKind>(PROCESSES)).flat();
  }
  const ticks = Math.max(2, Math.floor(options.durationMs / options.faultEveryMs) - 1);
  const plan: FaultKind[] = Array.from(
    { length: ticks },
    () => PROCESSES[Math.floor(Math.random() * PROCESSES.length)] as FaultKind,
  );
  plan[Math.floor(ticks / 3)] = "nats";
  plan[Math.floor((2 * ticks) / 3)] = "postgres";
  return plan;
}

async function runFaults(w: World, infra: Infra, options: SoakOptions, started: number, until: number): Promise<FaultRecord[]> {
  const plan = faultSchedule(options);
  const every = options.faultPlan === "every-minute" ? options.faultEveryMs : options.durationMs / (plan.length + 1);
  const replicas = w.s.stack.replicas;
  const done: FaultRecord[] = [];
  for (const [i, what] of plan.entries()) {
    const due = started + (i + 1) * every;
    if (due > until) break;
    await sleep(Math.max(0, due - Date.now()));
    const at = Date.now();
    const replica = replicas > 1 ? Math.floor(Math.random() * replicas) : undefined;
    const named = replica === undefined ? what : `${what} replica ${replica}`;
    options.log(
      `t+${Math.round((at - started) / 1000)} s fault: ${what === "nats" || what === "postgres" ? `stopping ${what} for ${options.infraDownMs / 1000} s` : `kill -9 ${named}, then start it`}`,
    );
    await injectFault(w, infra, what, options.infraDownMs, replica);
    await untilHealthy(w.s.stack.gatewayUrl);
    const fault = { atS: Math.round((at - started) / 1000), what, replica, recoveryMs: Date.now() - at };
    done.push(fault);
    options.log(`  ${named} healthy again after ${(fault.recoveryMs / 1000).toFixed(1)} s`);
  }
  return done;
}

// ---------------------------------------------------------------------------------------------------------
// Memory

export interface MemorySeries {
  process: ProcessName;
  pid: number;
  /** [ms since the instance was first seen, VmRSS in kB] */
  samples: Array<[number, number]>;
}

const entryFile = (name: ProcessName) =>
  path.join(repoRoot, name === "gateway" || name === "mcp-server" ? `${name}/dist/main.js` : `services/${name}/dist/main.js`);

/** Each of this process's children running a role's entry file, with its pid (from /proc). */
function rolePids(): Array<[ProcessName, number]> {
  const found: Array<[ProcessName, number]> = [];
  for (const dir of readdirSync("/proc")) {
    if (!/^\d+$/.test(dir)) continue;
    try {
      const stat = readFileSync(`/proc/${dir}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      const cmdline = readFileSync(`/proc/${dir}/cmdline`, "utf8").split("\0");
      const name = PROCESSES.find((p) => cmdline.includes(entryFile(p)));
      if (name) found.push([name, Number(dir)]);
    } catch {}
  }
  return found;
}

function rssKb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function startSampler(everyMs: number): { series: MemorySeries[]; stop(): void } {
  const byPid = new Map<number, MemorySeries & { firstSeen: number }>();
  const sample = () => {
    for (const [name, pid] of rolePids()) {
      const kb = rssKb(pid);
      if (kb === null) continue;
      const s = byPid.get(pid) ?? { process: name, pid, samples: [], firstSeen: Date.now() };
      byPid.set(pid, s);
      s.samples.push([Date.now() - s.firstSeen, kb]);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    get series() {
      return [...byPid.values()].map(({ firstSeen: _, ...s }) => s);
    },
    stop: () => clearInterval(timer),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The snapshot the checks read

export interface Snapshot {
  accounts: Array<{ id: string; kind: string; wallet_id: string | null; balance: string | null }>;
  transactions: Array<{ id: string; kind: string; reference: string }>;
  entries: Array<{ transaction_id: string; account_id: string; amount: string }>;
  holds: Array<{ execution_id: string; status: string; expired: boolean }>;
  /** Executions that took a hold (settlement other than none). */
  pricedExecutions: Array<{ id: string; settlement: string; cost_cents: string }>;
  pricedSeen: LoadRecord["pricedSeen"];
  executionEvents: Array<{ id: string; published: boolean }>;
  workflowEvents: Array<{ id: string; published: boolean }>;
  /** Event ids in each consumer's inbox, by durable name, for the consumers that keep one (webhooks'). */
  inbox: Record<string, string[]>;
  /**
   * Executions (not refused: a refused call is a row of the call log, never an event), and whether a key
   * made them (each is then a row of identity's key usage).
   */
  executions: Array<{ id: string; keyed: boolean }>;
  /** What the execution events' consumers without an inbox wrote, by execution id: catalog's stats rows, identity's key usage. */
  applied: { catalog: string[]; keyUsage: string[] };
  deadLetters: number;
  deliveries: Array<{ id: string; status: string; in_flight: boolean }>;
  received: string[];
  sites: Array<{ id: string; status: string; error: string | null }>;
  /** Executions (not refused) of the human's account: each is one event its webhook gets a delivery of. */
  humanExecutions: number;
  /** The idempotent caller's keys as execution stored them, its executions, and what its client was answered. */
  idempotency: {
    keys: Array<{ key: string; execution_id: string; state: string }>;
    executions: string[];
    seen: LoadRecord["idempotentSeen"];
  };
  /** The workflow agent's runs, their steps, and its executions (nothing else of it runs). */
  workflows: {
    runs: Array<{ id: string; status: string; steps: number }>;
    steps: Array<{ run_id: string; step_number: number; status: string; execution_id: string | null }>;
    executions: string[];
  };
  /** Calls that ran, per minute window, of the rate-limited key; credential-free calls that ran of the free-tier account. */
  limits: {
    ratePerWindow: Array<{ window: string; n: number }>;
    freeCalls: number;
    rateLimit: number;
    freeLimit: number;
    /** 429s the limit loop's clients were answered. */
    refused: { rate: number; free: number };
  };
  memory: MemorySeries[];
}

/** The consumers of execution events that keep an inbox (catalog's and identity's are checked by their rows). */
const EXECUTION_INBOX_CONSUMERS = ["webhooks-executions"];

interface Databases {
  pools: Record<(typeof serviceNames)[number], Pool>;
  end(): Promise<void>;
}

function openDatabases(w: World): Databases {
  const pools = Object.fromEntries(
    serviceNames.map((n) => [n, createPool(w.s.stack.env[`${n.toUpperCase()}_DATABASE_URL`] as string, 2)]),
  ) as Databases["pools"];
  return { pools, end: () => Promise.all(Object.values(pools).map((p) => p.end())).then(() => {}) };
}

async function readSnapshot(w: World, db: Databases, record: LoadRecord, memory: MemorySeries[]): Promise<Snapshot> {
  const { billing, execution, content, catalog, identity, webhooks } = db.pools;
  const rows = async <T>(pool: Pool, sql: string): Promise<T[]> => (await pool.query(sql)).rows as T[];
  const inbox: Record<string, string[]> = {};
  for (const [consumer, pool] of [
    ["webhooks-executions", webhooks],
    ["webhooks-workflows", webhooks],
  ] as const) {
    inbox[consumer] = (
      await pool.query<{ event_id: string }>("SELECT event_id FROM inbox WHERE consumer = $1", [consumer])
    ).rows.map((r) => r.event_id);
  }
  let deadLetters = 0;
  for (const pool of Object.values(db.pools)) {
    const has = await pool.query("SELECT 1 FROM pg_tables WHERE tablename = 'dead_letters'");
    if (has.rowCount) deadLetters += Number((await pool.query("SELECT count(*) AS n FROM dead_letters")).rows[0].n);
  }
  const events = (pool: Pool, like: string) =>
    rows<{ id: string; published: boolean }>(
      pool,
      `SELECT id::text, published_at IS NOT NULL AS published FROM outbox WHERE subject LIKE '${like}'`,
    );
  return {
    accounts: await rows(billing, "SELECT id::text, kind, wallet_id::text, balance::text FROM ledger_accounts"),
    transactions: await rows(billing, "SELECT id::text, kind, reference FROM ledger_transactions"),
    entries: await rows(billing, "SELECT transaction_id::text, account_id::text, amount::text FROM ledger_entries"),
    holds: await rows(billing, "SELECT execution_id, status, expires_at < now() AS expired FROM holds"),
    pricedExecutions: await rows(
      execution,
      "SELECT id::text, settlement, cost_cents::text FROM executions WHERE settlement <> 'none'",
    ),
    // Refused calls are rows too (the call log's), never published as execution events.
    pricedSeen: record.pricedSeen,
    executionEvents: await events(execution, "toolport.execution.%"),
    executions: await rows(execution, "SELECT id::text, key_id IS NOT NULL AS keyed FROM executions WHERE status <> 'refused'"),
    applied: {
      catalog: (await rows<{ id: string }>(catalog, "SELECT execution_id AS id FROM executions")).map((r) => r.id),
      keyUsage: (await rows<{ id: string }>(identity, "SELECT execution_id AS id FROM key_usage")).map((r) => r.id),
    },
    workflowEvents: await events(content, "toolport.workflow.%"),
    inbox,
    deadLetters,
    deliveries: await rows(
      webhooks,
      "SELECT id::text, status, locked_until IS NOT NULL AND locked_until > now() AS in_flight FROM deliveries",
    ),
    received: w.receiver.requests.map((r) => String(r.headers["x-svc-delivery"])),
    sites: await rows(content, "SELECT id::text, status, error FROM sites"),
    humanExecutions: await countOf(
      execution,
      "SELECT count(*) AS n FROM executions WHERE account_id = $1 AND status <> 'refused'",
      [w.human.accountId],
    ),
    idempotency: {
      keys: await rowsOf(
        execution,
        "SELECT idempotency_key AS key, execution_id::text, state FROM idempotency_keys WHERE account_id = $1",
        [w.idem.agent.id],
      ),
      executions: await idsOf(execution, w.idem.agent.id),
      seen: record.idempotentSeen,
    },
    workflows: {
      runs: await rowsOf(
        content,
        "SELECT id::text, status, jsonb_array_length(steps) AS steps FROM workflow_runs WHERE runner_id = $1",
        [w.flow.id],
      ),
      steps: await rowsOf(
        content,
        `SELECT s.run_id::text, s.step_number, s.status, s.execution_id::text
           FROM workflow_run_steps s JOIN workflow_runs r ON r.id = s.run_id WHERE r.runner_id = $1`,
        [w.flow.id],
      ),
      executions: await idsOf(execution, w.flow.id),
    },
    limits: {
      ratePerWindow: await rowsOf(
        execution,
        `SELECT to_char(date_trunc('minute', executed_at), 'HH24:MI') AS window, count(*)::int AS n
           FROM executions WHERE account_id = $1 AND status <> 'refused' GROUP BY 1 ORDER BY 1`,
        [w.limits.rate.agent.id],
      ),
      freeCalls: await countOf(execution, "SELECT count(*) AS n FROM executions WHERE account_id = $1 AND status <> 'refused'", [
        w.limits.free.agent.id,
      ]),
      rateLimit: RATE_LIMIT_PER_MINUTE,
      freeLimit: FREE_TIER_CALLS,
      refused: {
        rate: countOutcomes(record, "rate_limit\t429"),
        free: countOutcomes(record, "free_tier\t429"),
      },
    },
    memory,
  };
}

const countOutcomes = (record: LoadRecord, prefix: string) =>
  [...record.outcomes].filter(([label]) => label.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
const rowsOf = async <T>(pool: Pool, sql: string, values: unknown[]): Promise<T[]> => (await pool.query(sql, values)).rows as T[];
const countOf = async (pool: Pool, sql: string, values: unknown[]) => Number((await pool.query(sql, values)).rows[0].n);
/** Ids of an account's executions that ran (refused ones are rows of the call log too). */
const idsOf = async (pool: Pool, accountId: string) =>
  (
    await pool.query<{ id: string }>("SELECT id::text FROM executions WHERE account_id = $1 AND status <> 'refused'", [accountId])
  ).rows.map((r) => r.id);

// ---------------------------------------------------------------------------------------------------------
// Checks

export interface CheckResult {
  name: string;
  figures: Record<string, number | string>;
  problems: string[];
}

const sumOf = (values: string[]) => values.reduce((sum, v) => sum + BigInt(v), 0n);
const first = (problems: string[], limit = 5) =>
  problems.length > limit ? [...problems.slice(0, limit), `... and ${problems.length - limit} more`] : problems;

export function checkLedger(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const byTx = new Map<string, string[]>();
  const byAccount = new Map<string, string[]>();
  for (const e of s.entries) {
    byTx.set(e.transaction_id, [...(byTx.get(e.transaction_id) ?? []), e.amount]);
    byAccount.set(e.account_id, [...(byAccount.get(e.account_id) ?? []), e.amount]);
  }
  for (const tx of s.transactions) {
    const amounts = byTx.get(tx.id) ?? [];
    if (amounts.length < 2 || sumOf(amounts) !== 0n) {
      problems.push(`transaction ${tx.id} (${tx.kind} ${tx.reference}): ${amounts.length} entries summing to ${sumOf(amounts)}`);
    }
  }
  let walletAccounts = 0;
  for (const a of s.accounts) {
    if (a.balance === null) continue;
    walletAccounts++;
    const total = sumOf(byAccount.get(a.id) ?? []);
    if (BigInt(a.balance) !== total) problems.push(`account ${a.id} (${a.kind}): balance ${a.balance}, entries sum to ${total}`);
    if (BigInt(a.balance) < 0n) problems.push(`account ${a.id} (${a.kind}): negative balance ${a.balance}`);
  }
  const all = sumOf(s.entries.map((e) => e.amount));
  if (all !== 0n) problems.push(`all entries sum to ${all}, not 0`);
  return {
    name: "1. ledger balances",
    figures: {
      transactions: s.transactions.length,
      entries: s.entries.length,
      wallet_accounts: walletAccounts,
      sum_of_all: String(all),
    },
    problems: first(problems),
  };
}

export function checkPricedCalls(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const txs = new Map<string, string[]>();
  for (const t of s.transactions) {
    if (["hold", "capture", "release"].includes(t.kind)) txs.set(t.reference, [...(txs.get(t.reference) ?? []), t.kind]);
  }
  const count = (ref: string, kind: string) => (txs.get(ref) ?? []).filter((k) => k === kind).length;
  const holds = new Map(s.holds.map((h) => [h.execution_id, h]));
  const executions = new Map(s.pricedExecutions.map((e) => [e.id, e]));
  const tally = { captured: 0, released: 0, expired: 0 };
  for (const h of s.holds) {
    const [held, captures, releases] = [
      count(h.execution_id, "hold"),
      count(h.execution_id, "capture"),
      count(h.execution_id, "release"),
    ];
    if (held !== 1) problems.push(`hold ${h.execution_id}: booked ${held} times`);
    if (h.status === "captured") {
      tally.captured++;
      if (captures !== 1 || releases !== 0)
        problems.push(`hold ${h.execution_id} captured: ${captures} captures, ${releases} releases`);
      const e = executions.get(h.execution_id);
      if (e?.settlement !== "captured")
        problems.push(`hold ${h.execution_id} charged, execution settlement ${e?.settlement ?? "(no execution)"}`);
    } else if (h.status === "released" || h.status === "expired") {
      tally[h.status]++;
      if (captures !== 0 || releases !== 1)
        problems.push(`hold ${h.execution_id} ${h.status}: ${captures} captures, ${releases} releases`);
    } else {
      problems.push(`hold ${h.execution_id} still ${h.status}`);
    }
  }
  for (const e of s.pricedExecutions) {
    const h = holds.get(e.id);
    const agrees =
      (e.settlement === "captured" && h?.status === "captured") ||
      (e.settlement === "released" && (h?.status === "released" || h?.status === "expired"));
    if (!agrees) problems.push(`execution ${e.id}: settlement ${e.settlement}, hold ${h?.status ?? "(none)"}`);
  }
  let seenCharged = 0;
  for (const seen of s.pricedSeen) {
    const h = holds.get(seen.executionId);
    if (seen.success) {
      if (h?.status === "captured" && count(seen.executionId, "capture") === 1) seenCharged++;
      else problems.push(`priced call ${seen.executionId} succeeded for its client but its hold is ${h?.status ?? "(none)"}`);
    } else if (h?.status === "captured") problems.push(`priced call ${seen.executionId} failed for its client but was charged`);
  }
  return {
    name: "2. priced calls charged once or released",
    figures: {
      holds: s.holds.length,
      ...tally,
      priced_executions: s.pricedExecutions.length,
      client_2xx_priced: s.pricedSeen.length,
      client_success_charged: seenCharged,
    },
    problems: first(problems),
  };
}

export function checkEvents(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const inboxes = Object.fromEntries(Object.entries(s.inbox).map(([c, ids]) => [c, new Set(ids)]));
  const missing: Record<string, number> = {};
  const look = (events: Snapshot["executionEvents"], consumers: string[]) => {
    for (const e of events) {
      if (!e.published) problems.push(`event ${e.id} never published`);
      for (const c of consumers) {
        if (!inboxes[c]?.has(e.id)) {
          missing[c] = (missing[c] ?? 0) + 1;
          problems.push(`event ${e.id} not applied by ${c}`);
        }
      }
    }
  };
  look(s.executionEvents, EXECUTION_INBOX_CONSUMERS);
  const catalogRows = new Set(s.applied.catalog);
  const keyUsageRows = new Set(s.applied.keyUsage);
  for (const x of s.executions) {
    for (const [consumer, has] of [
      ["catalog-executions", catalogRows.has(x.id)],
      ["identity-key-usage", !x.keyed || keyUsageRows.has(x.id)],
    ] as const) {
      if (has) continue;
      missing[consumer] = (missing[consumer] ?? 0) + 1;
      problems.push(`execution ${x.id} not applied by ${consumer}`);
    }
  }
  look(s.workflowEvents, ["webhooks-workflows"]);
  if (s.executionEvents.length !== s.executions.length) {
    problems.push(`${s.executions.length} executions but ${s.executionEvents.length} execution events`);
  }
  if (s.deadLetters > 0) problems.push(`${s.deadLetters} dead letters`);
  return {
    name: "3. every event applied by its consumers",
    figures: {
      executions: s.executions.length,
      execution_events: s.executionEvents.length,
      workflow_events: s.workflowEvents.length,
      not_applied: Object.values(missing).reduce((a, b) => a + b, 0),
      dead_letters: s.deadLetters,
    },
    problems: first(problems),
  };
}

export function checkDeliveries(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const received = new Set(s.received);
  const tally: Record<string, number> = { succeeded: 0, failed: 0, pending: 0 };
  for (const d of s.deliveries) {
    tally[d.status] = (tally[d.status] ?? 0) + 1;
    if (d.status !== "succeeded" && d.status !== "failed") problems.push(`delivery ${d.id} still ${d.status}`);
    if (d.in_flight) problems.push(`delivery ${d.id} still in flight`);
    if (d.status === "succeeded" && !received.has(d.id)) problems.push(`delivery ${d.id} succeeded but never arrived`);
  }
  // The webhook listens to every call of the human's account: one delivery per execution, none missing.
  if (s.deliveries.length !== s.humanExecutions) {
    problems.push(`${s.humanExecutions} executions of the webhook's account, ${s.deliveries.length} deliveries`);
  }
  return {
    name: "4. every webhook delivery ended, none missing",
    figures: {
      deliveries: s.deliveries.length,
      executions_listened_to: s.humanExecutions,
      ...tally,
      requests_received: s.received.length,
    },
    problems: first(problems),
  };
}

export function checkHolds(s: Snapshot): CheckResult {
  const open = s.holds.filter((h) => h.status === "held");
  const stuck = open.filter((h) => h.expired);
  return {
    name: "5. no stuck holds",
    figures: { holds: s.holds.length, open: open.length, open_past_ttl: stuck.length },
    problems: first([...open.map((h) => `hold ${h.execution_id} still held${h.expired ? " past its TTL" : ""}`)]),
  };
}

export function checkSites(s: Snapshot): CheckResult {
  const tally: Record<string, number> = {};
  for (const site of s.sites) tally[site.status] = (tally[site.status] ?? 0) + 1;
  return {
    name: "5b. every site crawl ended live",
    figures: { sites: s.sites.length, ...tally },
    problems: first(
      s.sites
        .filter((site) => site.status !== "live")
        .map((site) => `site ${site.id} ${site.status}${site.error ? `: ${site.error}` : ""}`),
    ),
  };
}

export function checkMemory(s: Snapshot, rule: { warmupMs: number; margin: number; minSamples: number }): CheckResult {
  const problems: string[] = [];
  const judged = new Set<string>();
  let instances = 0;
  let tooShort = 0;
  let worst = 0;
  for (const series of s.memory) {
    instances++;
    const after = series.samples.filter(([t]) => t >= rule.warmupMs).map(([, kb]) => kb);
    if (after.length < rule.minSamples) {
      tooShort++;
      continue;
    }
    judged.add(series.process);
    const baseline = Math.max(...after.slice(0, Math.ceil(after.length / 2)));
    const tail = after.slice(Math.floor((after.length * 3) / 4)).sort((a, b) => a - b);
    const end = tail[Math.floor(tail.length / 2)] as number;
    worst = Math.max(worst, end / baseline - 1);
    if (end > baseline * (1 + rule.margin)) {
      problems.push(
        `${series.process} (pid ${series.pid}): ${end} kB at the end, ${baseline} kB after warm-up (+${Math.round((end / baseline - 1) * 100)}%)`,
      );
    }
  }
  for (const p of PROCESSES) if (!judged.has(p)) problems.push(`${p}: no instance lived long enough to judge`);
  return {
    name: "6. memory flat after warm-up",
    figures: {
      instances,
      judged: instances - tooShort,
      too_short: tooShort,
      worst_growth: `${Math.round(worst * 100)}%`,
      margin: `${Math.round(rule.margin * 100)}%`,
      warmup_s: rule.warmupMs / 1000,
    },
    problems: first(problems),
  };
}

/** 7. However often a call was sent with one Idempotency-Key, it ran once and every answer named that run. */
export function checkStoredOnce(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const byKey = new Map(s.idempotency.keys.map((k) => [k.key, k]));
  const referenced = new Map<string, number>();
  for (const k of s.idempotency.keys) referenced.set(k.execution_id, (referenced.get(k.execution_id) ?? 0) + 1);
  for (const id of s.idempotency.executions) {
    const n = referenced.get(id) ?? 0;
    if (n !== 1) problems.push(`execution ${id} of the idempotent caller is named by ${n} idempotency keys`);
  }
  const stored = new Set(s.idempotency.executions);
  let answers = 0;
  for (const seen of s.idempotency.seen) {
    answers++;
    const k = byKey.get(seen.key);
    if (!k) problems.push(`key ${seen.key} was answered ${seen.executionId} but is not stored`);
    else if (k.execution_id !== seen.executionId)
      problems.push(`key ${seen.key} was answered ${seen.executionId}, stored ${k.execution_id}`);
    else if (!stored.has(seen.executionId)) problems.push(`key ${seen.key}: execution ${seen.executionId} not stored`);
  }
  if (s.idempotency.executions.length > s.idempotency.keys.length) {
    problems.push(`${s.idempotency.executions.length} executions for ${s.idempotency.keys.length} idempotency keys`);
  }
  return {
    name: "7. every call with an Idempotency-Key ran once",
    figures: {
      keys: s.idempotency.keys.length,
      executions: s.idempotency.executions.length,
      answers_2xx: answers,
      distinct_answered: new Set(s.idempotency.seen.map((x) => x.key)).size,
    },
    problems: first(problems),
  };
}

/** 8. Every workflow run ended, each of its steps ran exactly once, and nothing else of the runner ran. */
export function checkWorkflowSteps(s: Snapshot): CheckResult {
  const problems: string[] = [];
  const { runs, steps, executions } = s.workflows;
  const stored = new Set(executions);
  const stepsOf = new Map<string, number>();
  const byExecution = new Map<string, number>();
  for (const step of steps) {
    stepsOf.set(step.run_id, (stepsOf.get(step.run_id) ?? 0) + 1);
    if (step.execution_id === null) continue;
    byExecution.set(step.execution_id, (byExecution.get(step.execution_id) ?? 0) + 1);
    if (!stored.has(step.execution_id))
      problems.push(`run ${step.run_id} step ${step.step_number}: execution ${step.execution_id} not stored`);
  }
  for (const [id, n] of byExecution) if (n > 1) problems.push(`execution ${id} recorded by ${n} steps`);
  for (const id of executions)
    if (!byExecution.has(id)) problems.push(`execution ${id} of the runner belongs to no step: a step ran twice`);
  const tally: Record<string, number> = {};
  for (const run of runs) {
    tally[run.status] = (tally[run.status] ?? 0) + 1;
    if (run.status !== "completed" && run.status !== "failed") problems.push(`run ${run.id} still ${run.status}`);
    if (run.status === "completed" && stepsOf.get(run.id) !== run.steps)
      problems.push(`run ${run.id} completed with ${stepsOf.get(run.id) ?? 0} of ${run.steps} steps recorded`);
  }
  return {
    name: "8. every workflow step ran exactly once",
    figures: { runs: runs.length, ...tally, steps: steps.length, runner_executions: executions.length },
    problems: first(problems),
  };
}

/** 9. The rate limit (calls per key and minute) and the free tier (calls per account and month) never exceeded, and both were reached. */
export function checkLimits(s: Snapshot): CheckResult {
  const { ratePerWindow, freeCalls, rateLimit, freeLimit, refused } = s.limits;
  const problems: string[] = [];
  for (const w of ratePerWindow)
    if (w.n > rateLimit) problems.push(`${w.n} calls ran in the minute from ${w.window}, limit ${rateLimit}`);
  if (freeCalls > freeLimit) problems.push(`${freeCalls} free-tier calls ran, limit ${freeLimit}`);
  if (refused.rate === 0) problems.push("the rate-limited key was never refused: the limit was not under test");
  if (refused.free === 0) problems.push("the free-tier account was never refused: the limit was not under test");
  return {
    name: "9. rate and free-tier limits never exceeded",
    figures: {
      busiest_minute: Math.max(0, ...ratePerWindow.map((w) => w.n)),
      rate_limit: rateLimit,
      free_tier_calls: freeCalls,
      free_tier_limit: freeLimit,
      refused_429_rate: refused.rate,
      refused_429_free: refused.free,
    },
    problems: first(problems),
  };
}

export function runChecks(s: Snapshot, memoryRule: Parameters<typeof checkMemory>[1]): CheckResult[] {
  return [
    checkLedger(s),
    checkPricedCalls(s),
    checkEvents(s),
    checkDeliveries(s),
    checkHolds(s),
    checkSites(s),
    checkStoredOnce(s),
    checkWorkflowSteps(s),
    checkLimits(s),
    checkMemory(s, memoryRule),
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Settling

/** Whether the stack has nothing left in flight: the conditions polled before the checks. */
async function settledYet(db: Databases, w: World): Promise<string | null> {
  const one = async (pool: Pool, sql: string) => Number((await pool.query(sql)).rows[0].n);
  for (const [name, pool] of Object.entries(db.pools)) {
    const has = await pool.query("SELECT 1 FROM pg_tables WHERE tablename = 'outbox'");
    if (has.rowCount && (await one(pool, "SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")) > 0) {
      return `${name}'s outbox not yet published`;
    }
  }
  const { execution, billing, webhooks } = db.pools;
  if ((await one(execution, "SELECT count(*) AS n FROM executions WHERE settlement LIKE '%_pending'")) > 0) {
    return "settlements pending";
  }
  if ((await one(billing, "SELECT count(*) AS n FROM holds WHERE status = 'held'")) > 0) return "holds open";
  if ((await one(webhooks, "SELECT count(*) AS n FROM deliveries WHERE status = 'pending'")) > 0) return "deliveries pending";
  if ((await one(db.pools.content, "SELECT count(*) AS n FROM sites WHERE status IN ('pending', 'crawling')")) > 0) {
    return "site crawls under way";
  }
  if ((await one(db.pools.content, "SELECT count(*) AS n FROM workflow_runs WHERE status = 'running'")) > 0) {
    return "workflow runs under way";
  }
  const snapshot = await readSnapshot(w, db, emptyRecord(), []);
  if (checkEvents(snapshot).problems.length > 0) return "consumers not caught up";
  return null;
}

async function settle(db: Databases, w: World, log: SoakOptions["log"], timeoutMs: number): Promise<number> {
  const started = Date.now();
  let last: string | null = "";
  while (true) {
    const waiting = await settledYet(db, w).catch((err: Error) => `reading the databases: ${err.message}`);
    if (waiting === null) return Date.now() - started;
    if (waiting !== last) log(`settling: ${waiting} (t+${Math.round((Date.now() - started) / 1000)} s)`);
    last = waiting;
    if (Date.now() - started > timeoutMs) return Date.now() - started;
    await sleep(1_000);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The run

export interface SoakReport {
  durationS: number;
  settleS: number;
  load: LoadRecord;
  faults: FaultRecord[];
  checks: CheckResult[];
  snapshot: Snapshot;
  memoryRule: Parameters<typeof checkMemory>[1];
  /** Connections each replica of a role was handed (with replicas). */
  connections: Record<string, number[]>;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const infra = await startInfra();
  let world: World | undefined;
  let sampler: ReturnType<typeof startSampler> | undefined;
  try {
    options.log(`infra: ${infra.pgUrl}, ${infra.natsUrl} (in ${infra.root})`);
    world = await startWorld(infra, options.replicas ?? 1);
    const w = world;
    options.log(
      `stack up (per-role, ${w.s.stack.replicas} process(es) per role, gateway ${w.s.stack.gatewayUrl}, logs in ${w.s.stack.logDir}); load for ${options.durationMs / 1000} s`,
    );
    sampler = startSampler(options.memory.sampleEveryMs);
    const record = emptyRecord();
    const started = Date.now();
    const until = started + options.durationMs;
    const progress = setInterval(() => {
      const total = [...record.outcomes.values()].reduce((a, b) => a + b, 0);
      options.log(`t+${Math.round((Date.now() - started) / 1000)} s: ${total} requests`);
    }, 30_000);
    const [, faults] = await Promise.all([
      runLoad(w, options, until, record),
      runFaults(w, infra, options, started, until),
    ]).finally(() => clearInterval(progress));
    await untilHealthy(w.s.stack.gatewayUrl);
    const db = openDatabases(w);
    try {
      const settleMs = await settle(db, w, options.log, 4 * HOLD_TTL_SECONDS * 1000);
      sampler.stop();
      const memoryRule = { warmupMs: options.memory.warmupMs, margin: options.memory.margin, minSamples: 6 };
      const snapshot = await readSnapshot(w, db, record, sampler.series);
      return {
        durationS: Math.round(options.durationMs / 1000),
        settleS: Math.round(settleMs / 1000),
        load: record,
        faults,
        checks: runChecks(snapshot, memoryRule),
        snapshot,
        memoryRule,
        connections: Object.fromEntries(PROCESSES.map((p) => [p, w.s.stack.connections(p)])),
      };
    } finally {
      await db.end();
    }
  } finally {
    sampler?.stop();
    await world?.s.stop();
    await world?.echo.close();
    await world?.receiver.close();
    await world?.documents.close();
    await world?.site.close();
    await infra.stop();
  }
}

/** The figures table printed at the end of a run. */
export function formatReport(r: SoakReport): string {
  const lines: string[] = [];
  lines.push(`soak: ${r.durationS} s of load, settled in ${r.settleS} s`);
  lines.push("", "requests by kind and outcome:");
  for (const [label, n] of [...r.load.outcomes.entries()].sort()) lines.push(`  ${label.padEnd(40)} ${n}`);
  lines.push(`  unclean replies: ${r.load.unclean.length}`);
  for (const u of r.load.unclean.slice(0, 10)) lines.push(`    ${u}`);
  lines.push("", "faults (t = seconds into the load; recovery = until GET /v1/health answers 200):");
  for (const f of r.faults)
    lines.push(
      `  t+${String(f.atS).padStart(4)} s  ${`${f.what}${f.replica === undefined ? "" : ` #${f.replica}`}`.padEnd(14)} recovered in ${(f.recoveryMs / 1000).toFixed(1)} s`,
    );
  if (Object.values(r.connections).some((c) => c.length > 1)) {
    lines.push("", "connections handed to each replica by its balancer:");
    for (const [role, split] of Object.entries(r.connections)) lines.push(`  ${role.padEnd(10)} ${split.join(" / ")}`);
  }
  lines.push("", "checks:");
  for (const c of r.checks) {
    const figures = Object.entries(c.figures)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
    lines.push(`  ${c.problems.length === 0 ? "PASS" : "FAIL"} ${c.name}: ${figures}`);
    for (const p of c.problems) lines.push(`       ${p}`);
  }
  lines.push("", "memory per process instance (VmRSS kB: first, after warm-up, last):");
  for (const m of r.snapshot.memory) {
    const afterWarmup = m.samples.find(([t]) => t >= r.memoryRule.warmupMs)?.[1] ?? "-";
    const lived = Math.round((m.samples.at(-1)?.[0] ?? 0) / 1000);
    lines.push(
      `  ${m.process.padEnd(10)} pid ${String(m.pid).padEnd(8)} ${String(m.samples[0]?.[1]).padStart(7)} ${String(afterWarmup).padStart(7)} ${String(m.samples.at(-1)?.[1]).padStart(7)}  (${lived} s, ${m.samples.length} samples)`,
    );
  }
  return lines.join("\n");
}
