/**
 * Real upstream servers for tests: an HTTP API that echoes what it received (and misbehaves on request),
 * MCP servers from the v1 SDK (Streamable HTTP with sessions, or the older HTTP+SSE transport), MCP
 * servers from the v2 SDK speaking only protocol revision 2026-07-28 or only 2025-11-25, and a minimal
 * Vault KV v2 endpoint. Each listens on a free loopback port and counts what it saw.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  inputRequired,
  inputResponse,
  isLegacyRequest,
  McpServer as McpServerV2,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { z } from "zod";

export interface Upstream {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** Listens on a free loopback port; resolves with the port. */
export async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes the server, its open connections included. */
export function closer(server: http.Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/**
 * An API that answers by path:
 *  /echo/...          200 JSON {method, path, query, headers, cookies, body}
 *  /status/<code>     that status with a JSON body
 *  /slow/<ms>         answers after ms
 *  /badjson           application/json that does not parse
 *  /big/<bytes>       a JSON string of that many bytes
 *  /text              text/plain
 *  /redirect?to=URL   302 to URL
 *  /secret            JSON echoing the Authorization header and the api key back
 *  /items?n=N&cursor= {items: [...], next_cursor}
 */
export async function startEchoApi(): Promise<Upstream> {
  const up = { connections: 0, requests: [] } as unknown as Upstream;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    up.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const url = new URL(req.url!, "http://x");
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    const [, first, second] = url.pathname.split("/");
    switch (first) {
      case "status":
        return json(Number(second), { error: `status ${second}`, detail: "the upstream says no" });
      case "slow":
        await new Promise((r) => setTimeout(r, Number(second)));
        return json(200, { slept: Number(second) });
      case "badjson":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end('{"broken": ');
      case "big":
        return json(200, { blob: "x".repeat(Number(second)) });
      case "text":
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        return res.end("plain text answer");
      case "redirect":
        res.writeHead(302, { location: url.searchParams.get("to")! });
        return res.end();
      case "secret":
        return json(200, {
          you_sent: req.headers.authorization ?? req.headers["x-api-key"] ?? url.searchParams.get("api_key"),
          note: "ok",
        });
      case "items": {
        const n = Number(url.searchParams.get("n") ?? 10);
        return json(200, { items: Array.from({ length: n }, (_, i) => ({ id: i, name: `item ${i}` })), next_cursor: "cursor-2" });
      }
      default: {
        const cookies = Object.fromEntries(
          (req.headers.cookie ?? "")
            .split(/;\s*/)
            .filter(Boolean)
            .map((c) => c.split("=").map(decodeURIComponent) as [string, string]),
        );
        let parsed: unknown = body;
        try {
          parsed = body ? JSON.parse(body) : null;
        } catch {}
        return json(200, {
          method: req.method,
          path: url.pathname,
          raw_path: req.url!.split("?")[0],
          query: Object.fromEntries([...new Set(url.searchParams.keys())].map((k) => [k, url.searchParams.getAll(k)])),
          headers: req.headers,
          cookies,
          content_type: req.headers["content-type"] ?? null,
          body: parsed,
        });
      }
    }
  });
  server.on("connection", () => up.connections++);
  up.port = await listen(server);
  up.url = `http://127.0.0.1:${up.port}`;
  up.close = closer(server);
  return up;
}

export interface McpUpstream extends Upstream {
  initializations: number;
  toolCalls: number;
}

function buildMcpServer(counter: McpUpstream): McpServer {
  const server = new McpServer({ name: "test-upstream", version: "1.0.0" });
  server.registerTool(
    "search_docs",
    {
      description: "Search documents",
      inputSchema: { query: z.string().describe("what to look for"), limit: z.number().int().optional() },
    },
    async ({ query, limit }) => {
      counter.toolCalls++;
      const results = Array.from({ length: limit ?? 3 }, (_, i) => ({ id: `doc-${i}`, title: `${query} #${i}` }));
      return { content: [{ type: "text", text: JSON.stringify({ results, next_cursor: "page-2" }) }] };
    },
  );
  server.registerTool("leak_env", { description: "Returns environment-like text", inputSchema: {} }, async () => {
    counter.toolCalls++;
    return {
      content: [
        {
          type: "text",
          text: JSON.stringify({ env: { HOME: "/root", GITHUB_TOKEN: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" } }),
        },
      ],
    };
  });
  server.registerTool("fail", { description: "Always fails", inputSchema: {} }, async () => {
    counter.toolCalls++;
    return { content: [{ type: "text", text: "this tool failed on purpose" }], isError: true };
  });
  server.registerTool("plain", { description: "Plain text", inputSchema: {} }, async () => {
    counter.toolCalls++;
    return { content: [{ type: "text", text: "just words" }] };
  });
  return server;
}

/**
 * Streamable HTTP with sessions: a request carrying an `mcp-session-id` goes to that session's transport;
 * an `initialize` without one opens a session on a new server from `build`; anything else is refused.
 */
export function mcpSessionRouter(build: () => McpServer, onInitialize: () => void = () => {}) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return {
    async handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
      const body = raw ? JSON.parse(raw) : undefined;
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (body?.method !== "initialize") {
          res.writeHead(sessionId ? 404 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no session" }, id: null }));
          return;
        }
        onInitialize();
        const opened = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, opened);
          },
        });
        transport = opened;
        await build().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    },
    async close(): Promise<void> {
      for (const t of transports.values()) await t.close().catch(() => {});
    },
  };
}

/** An MCP server on Streamable HTTP with sessions (at /mcp). */
export async function startMcpUpstream(): Promise<McpUpstream> {
  const up = { connections: 0, requests: [], initializations: 0, toolCalls: 0 } as unknown as McpUpstream;
  const router = mcpSessionRouter(
    () => buildMcpServer(up),
    () => up.initializations++,
  );
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    up.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: raw });
    await router.handle(req, res, raw);
  });
  server.on("connection", () => up.connections++);
  up.port = await listen(server);
  up.url = `http://127.0.0.1:${up.port}/mcp`;
  const close = closer(server);
  up.close = async () => {
    await router.close();
    await close();
  };
  return up;
}

/** An MCP server that only speaks the older HTTP+SSE transport (GET /sse, POST /messages). */
export async function startSseMcpUpstream(): Promise<McpUpstream> {
  const up = { connections: 0, requests: [], initializations: 0, toolCalls: 0 } as unknown as McpUpstream;
  const transports = new Map<string, SSEServerTransport>();
  const server = http.createServer(async (req, res) => {
    up.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: "" });
    const url = new URL(req.url!, "http://x");
    if (req.method === "GET" && url.pathname === "/sse") {
      up.initializations++;
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      res.on("close", () => transports.delete(transport.sessionId));
      await buildMcpServer(up).connect(transport);
      return;
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = transports.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    // Streamable HTTP attempts (POST /sse) are refused, as an SSE-only server does.
    res.writeHead(405).end();
  });
  server.on("connection", () => up.connections++);
  up.port = await listen(server);
  up.url = `http://127.0.0.1:${up.port}/sse`;
  up.close = closer(server);
  return up;
}

/** The protocol revision an MCP request came in on: 2026-07-28 (`modern`) or 2025-11-25 and before (`legacy`). */
export type McpEra = "modern" | "legacy";

export interface ModernMcpUpstream extends Upstream {
  /** Each JSON-RPC message received: its method and the era the SDK's own classification gives it. */
  rpc: Array<{ method: string; era: McpEra }>;
  /** tools/call requests by tool name. */
  toolCalls: Record<string, number>;
  /** The `requestState` each 2026-07-28 retry of book_table echoed (undefined: none). */
  echoedStates: Array<string | undefined>;
  /** What book_table answered once it had its answer, in order. */
  bookings: string[];
}

export interface ModernMcpOptions {
  /** The one protocol revision the server speaks. */
  speaks: "2026-07-28" | "2025-11-25";
  /**
   * Treat every 2026-07-28 request as if its client had declared the elicitation capability, as a server
   * that ignores the client's capabilities does: it then answers `input_required` to any client.
   */
  ignoresClientCapabilities?: boolean;
}

export const BOOKING_QUESTION = "Book a table for 4 at 20:00 at Chez Nous?";

/**
 * An upstream on the v2 SDK, the same tools in either era: `search_docs` (text), `get_forecast` (an
 * `outputSchema`, a text summary and the `structuredContent`) and `book_table`, which needs a person to
 * confirm: on 2026-07-28 it answers `input_required` with a form elicitation and a `requestState`
 * naming the restaurant, on 2025-11-25 it sends `elicitation/create` (`elicitInput`), each only to a
 * client that declared the elicitation capability. Given the answer (the 2026-07-28 retry's
 * `inputResponses`, or elicitInput's result) it says what it did: `<action>: <restaurant>`, plus
 * ` (booked)` when the person accepted with `confirm: true`.
 */
function buildModernSdkServer(era: McpEra, up: ModernMcpUpstream, versions?: string[]): McpServerV2 {
  const server = new McpServerV2(
    { name: `weather-${era}`, version: "3.0.0" },
    { instructions: "Weather and bookings", ...(versions ? { supportedProtocolVersions: versions } : {}) },
  );
  const called = (name: string) => {
    up.toolCalls[name] = (up.toolCalls[name] ?? 0) + 1;
  };
  server.registerTool(
    "search_docs",
    {
      description: "Search documents",
      inputSchema: z.object({ query: z.string().describe("what to look for"), limit: z.number().int().optional() }),
      annotations: { readOnlyHint: true },
    },
    async ({ query, limit }) => {
      called("search_docs");
      const results = Array.from({ length: limit ?? 3 }, (_, i) => ({ id: `doc-${i}`, title: `${query} #${i}` }));
      return { content: [{ type: "text", text: JSON.stringify({ results }) }] };
    },
  );
  server.registerTool(
    "get_forecast",
    {
      description: "Today's forecast for a city",
      inputSchema: z.object({ city: z.string().describe("City name") }),
      outputSchema: z.object({
        city: z.string(),
        temperature_c: z.number().describe("Degrees Celsius"),
        conditions: z.enum(["sunny", "cloudy", "rain"]),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ city }) => {
      called("get_forecast");
      return {
        content: [{ type: "text", text: `Sunny and 21 °C in ${city}` }],
        structuredContent: { city, temperature_c: 21, conditions: "sunny" },
      };
    },
  );
  const confirmation = z.object({ confirm: z.boolean().describe("Book it") });
  server.registerTool(
    "book_table",
    {
      description: "Book a restaurant table once a person confirms",
      inputSchema: z.object({ restaurant: z.string() }),
      annotations: { destructiveHint: true, readOnlyHint: false },
    },
    async ({ restaurant }, ctx) => {
      called("book_table");
      const booked = (action: string, content: unknown) => {
        const yes = action === "accept" && (content as { confirm?: unknown } | undefined)?.confirm === true;
        const text = `${action}: ${restaurant}${yes ? " (booked)" : ""}`;
        up.bookings.push(text);
        return { content: [{ type: "text" as const, text }] };
      };
      if (era === "modern") {
        const answer = inputResponse(ctx.mcpReq.inputResponses, "confirm");
        if (answer.kind === "elicit") {
          up.echoedStates.push(ctx.mcpReq.requestState<string>());
          return booked(answer.action, answer.content);
        }
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: BOOKING_QUESTION, requestedSchema: confirmation }) },
          requestState: `booking:${restaurant}`,
        });
      }
      const answer = await ctx.mcpReq.elicitInput({
        mode: "form",
        message: BOOKING_QUESTION,
        requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
      });
      return booked(answer.action, answer.content);
    },
  );
  return server;
}

/**
 * An MCP server on the v2 SDK speaking one revision at /mcp. 2026-07-28 only: the SDK's
 * `createMcpHandler` with `legacy: "reject"` (an `initialize` is refused). 2025-11-25 only: Streamable HTTP
 * with sessions, its server listing only 2025 revisions, so it has no `server/discover` and a probe is
 * answered as a 2025 server answers any request outside a session.
 */
export async function startModernSdkUpstream(options: ModernMcpOptions): Promise<ModernMcpUpstream> {
  const up = {
    connections: 0,
    requests: [],
    rpc: [],
    toolCalls: {},
    echoedStates: [],
    bookings: [],
  } as unknown as ModernMcpUpstream;
  const legacyVersions = SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < "2026");
  const modern = createMcpHandler(({ era }) => buildModernSdkServer(era, up), { legacy: "reject" });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const serveLegacy = async (request: Request, body: unknown): Promise<Response> => {
    const id = request.headers.get("mcp-session-id");
    const found = id ? sessions.get(id) : undefined;
    if (found) return found.handleRequest(request, { parsedBody: body });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, transport);
      },
    });
    await buildModernSdkServer("legacy", up, legacyVersions).connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    up.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: raw });
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {}
    const request = webRequest(req, res, raw);
    const era: McpEra = (await isLegacyRequest(request, body)) ? "legacy" : "modern";
    for (const message of Array.isArray(body) ? body : body ? [body] : []) {
      if (typeof message?.method === "string") up.rpc.push({ method: message.method, era });
    }
    if (era === "modern" && options.ignoresClientCapabilities) claimElicitation(body);
    const response =
      options.speaks === "2026-07-28" ? await modern.fetch(request, { parsedBody: body }) : await serveLegacy(request, body);
    await writeWebResponse(res, response);
  });
  server.on("connection", () => up.connections++);
  up.port = await listen(server);
  up.url = `http://127.0.0.1:${up.port}/mcp`;
  const close = closer(server);
  up.close = async () => {
    await modern.close();
    for (const t of sessions.values()) await t.close().catch(() => {});
    await close();
  };
  return up;
}

/** Adds `elicitation` to the client capabilities a 2026-07-28 request declares in its `_meta`. */
function claimElicitation(body: unknown): void {
  const meta = (body as { params?: { _meta?: Record<string, Record<string, unknown>> } } | undefined)?.params?._meta;
  const declared = meta?.[CLIENT_CAPABILITIES_META_KEY];
  if (declared) declared.elicitation = {};
}

/** The node request as a Web `Request` (its body already read), aborted when the client goes away. */
function webRequest(req: http.IncomingMessage, res: http.ServerResponse, body: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  const aborted = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: hasBody ? body : undefined,
    signal: aborted.signal,
  });
}

/** Writes a Web `Response` to the node response, streaming an SSE body as it comes. */
async function writeWebResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  res.once("close", () => {
    reader.cancel().catch(() => {});
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/** A Vault KV v2 read endpoint holding `secrets` under mount `secret`; requires the token. */
export async function startVault(token: string, secrets: Record<string, Record<string, string>>): Promise<Upstream> {
  const up = { connections: 0, requests: [] } as unknown as Upstream;
  const server = http.createServer((req, res) => {
    up.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: "" });
    if (req.headers["x-vault-token"] !== token) {
      res.writeHead(403, { "content-type": "application/json" }).end('{"errors":["permission denied"]}');
      return;
    }
    const m = /^\/v1\/secret\/data\/(.+)$/.exec(req.url ?? "");
    const data = m ? secrets[decodeURIComponent(m[1]!)] : undefined;
    if (!data) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"errors":[]}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: { data, metadata: { version: 1 } } }));
  });
  up.port = await listen(server);
  up.url = `http://127.0.0.1:${up.port}`;
  up.close = closer(server);
  return up;
}
