/**
 * HTTP surface of the MCP server: /mcp, served by the official SDK's handler (`createMcpHandler`) for
 * both protocol revisions, and GET /mcp/health.
 *
 * A 2026-07-28 request stands alone (its protocol version and the client's capabilities travel in its
 * `_meta`; the SDK checks the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers against the
 * body and answers `server/discover`); a 2025-11-25 client initializes and is then served statelessly
 * (no `Mcp-Session-Id`). Either way any replica can answer any request. The one exception: a 2025-11-25
 * client that declares elicitation gets a session, so that it can be asked for consent
 * (legacy-sessions.ts).
 *
 * A plain tools/call (one of this server's tools, arguments its schema accepts, a client that cannot be
 * asked anything, no session) takes the direct lane instead (direct-calls.ts): the same handler, the same
 * answer, without the SDK's per-request machinery, which cost most of the MCP layer's CPU. Everything
 * else, errors included, is the SDK's.
 *
 * Only POST carries MCP messages here. Nothing is pushed outside a request, so GET /mcp (the optional
 * standalone SSE stream) answers 405, as the Streamable HTTP transport allows; otherwise every connected
 * client would hold a stream open. DELETE /mcp ends a session this process holds, and answers 405
 * otherwise.
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { Logger } from "@toolport/kit/logger";
import { httpRequestSeconds } from "@toolport/kit/metrics";
import { type AuthorizationSettings, authorize, METADATA_PATHS, sendMetadata, sendRefusal } from "./authorization.js";
import { DirectCalls } from "./direct-calls.js";
import type { GatewayClient } from "./gateway-client.js";
import {
  DEFAULT_LEGACY_SESSION_LIMITS,
  initializeThatCanAsk,
  type LegacySessionLimits,
  LegacySessions,
} from "./legacy-sessions.js";
import { type OriginPolicy, originPolicy, rebindingRefusal } from "./origin-guard.js";
import { createMcpServer, directTools, McpServerPool, SERVER_INFO } from "./server.js";
import { consentCodec } from "./tools/consent.js";
import { GRANT_HEADER } from "./tools/results.js";
import { asTaskResponse, declaresTasks, TaskHandles } from "./tools/tasks.js";
import { MAX_BODY_BYTES, parseJson, readBody, sendRpcError, webRequest, writeWebResponse } from "./web-bridge.js";

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export interface McpHttpOptions {
  /** Keep an X-Forwarded-For the client sent (true only behind a trusted balancer); otherwise replace it. */
  trustProxy: boolean;
  /** Which Host and Origin headers /mcp answers (origin-guard.ts); absent: loopback names only. */
  origins?: OriginPolicy;
  /**
   * The key sealing consent rounds' requestState (tools/consent.ts) and tagging task handles
   * (tools/tasks.ts), at least 32 bytes; every replica must have the same one. Absent: a random key of
   * this process.
   */
  stateKey?: string;
  /** Bounds on the sessions of 2025-11-25 clients that can be asked (legacy-sessions.ts). */
  legacySessions?: LegacySessionLimits;
  /** OAuth: the authorization server and this server's resource (authorization.ts). */
  authorization?: AuthorizationSettings;
  /** Plain tool calls answered without the SDK's request machinery (direct-calls.ts); default true. */
  directCalls?: boolean;
}

/** The /mcp request handler, and what it holds that must be let go when the server stops. */
export type McpHttpHandler = ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & {
  close(): Promise<void>;
  /** How many requests the direct lane answered (direct-calls.ts). */
  directCallsServed(): number;
};

/**
 * The headers the tools see as the caller's (svc-api-key, svc-org-id, x-request-id; never logged), with
 * X-Forwarded-For set to the MCP client's address. The gateway limits some routes per client IP (public
 * search: 30 a minute) and reads this header when its TRUST_PROXY is true, so callers do not share one
 * budget. A client-sent X-Forwarded-For is replaced, not extended, unless this server sits behind a
 * trusted balancer (MCP_TRUST_PROXY): the gateway takes the leftmost address, which a client could forge.
 */
function callerHeaders(req: IncomingMessage, trustProxy: boolean, grant?: string): IncomingHttpHeaders {
  const headers = { ...req.headers };
  // Only this server names a checked token's grant (authorization.ts).
  delete headers[GRANT_HEADER];
  if (grant) headers[GRANT_HEADER] = grant;
  const peer = req.socket.remoteAddress;
  const sent = headers["x-forwarded-for"];
  const earlier = trustProxy && sent ? (Array.isArray(sent) ? sent.join(", ") : sent) : undefined;
  const forwarded = peer ? (earlier ? `${earlier}, ${peer}` : peer) : earlier;
  if (forwarded === undefined) delete headers["x-forwarded-for"];
  else headers["x-forwarded-for"] = forwarded;
  return headers;
}

/** A tools/call whose client declared the Tasks extension: its answer may be a task. */
function mayBecomeTask(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const { method, params } = body as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  return method === "tools/call" && declaresTasks(params?._meta?.["io.modelcontextprotocol/clientCapabilities"]);
}

/** A JSON-RPC batch (2025-era) in which two requests carry the same id. */
function sharesAnId(body: unknown): boolean {
  if (!Array.isArray(body)) return false;
  const ids = body
    .filter((m) => typeof m === "object" && m !== null && "method" in m && "id" in m)
    .map((m) => (m as { id: unknown }).id);
  return new Set(ids).size !== ids.length;
}

export function mcpHttpHandler(
  log: Logger,
  gateway: GatewayClient,
  options: McpHttpOptions = { trustProxy: false },
): McpHttpHandler {
  const stateKey = options.stateKey ?? randomBytes(32);
  const parts = { consent: consentCodec(stateKey), tasks: new TaskHandles(stateKey) };
  const pool = new McpServerPool(gateway, parts);
  const direct = options.directCalls === false ? undefined : new DirectCalls(directTools(gateway, parts), SERVER_INFO);
  let directServed = 0;
  const sessions = new LegacySessions(
    () => createMcpServer(gateway, parts),
    MAX_BODY_BYTES,
    options.legacySessions ?? DEFAULT_LEGACY_SESSION_LIMITS,
  );
  const modern = createMcpHandler((ctx) => pool.acquire(ctx.era), {
    legacy: "reject",
    maxRequestBodySize: MAX_BODY_BYTES,
    // Requests the SDK refused (bad headers, unsupported versions) are answered to the client already.
    onerror: (err) => log.debug({ err: err.message }, "mcp request refused or failed"),
  });
  /**
   * A 2025-11-25 request (initialize, then plain JSON-RPC without the 2026-07-28 `_meta` envelope): the
   * SDK's Streamable HTTP transport, stateless, answering JSON rather than a one-event SSE stream (the
   * SDK's own stateless fallback always streams; a JSON body costs both ends less, and no tool here sends
   * anything before its result).
   */
  const legacy = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const session = sessions.find(request);
    if (session) return session.handleRequest(request, { parsedBody });
    if (initializeThatCanAsk(parsedBody)) return sessions.open(request, parsedBody);
    const server = pool.acquire("legacy");
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_BODY_BYTES,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
    } finally {
      // Closing the transport closes the server's side too, which returns it to the pool.
      await transport.close();
    }
  };
  const origins = options.origins ?? originPolicy({ listenHost: "127.0.0.1", allowedHosts: [], allowedOrigins: [] });
  const authorization = options.authorization ?? { issuer: "http://localhost:8080" };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const started = performance.now();
    res.once("finish", () => {
      const route = path === "/mcp" || path === "/mcp/health" || METADATA_PATHS.includes(path) ? path : "unmatched";
      httpRequestSeconds.observe(
        { role: "mcp-server", method: req.method ?? "", route, status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    if (path === "/mcp/health" && req.method === "GET") {
      sendJson(res, 200, { status: "ok" });
      return;
    }
    if (METADATA_PATHS.includes(path)) {
      sendMetadata(req, res, authorization);
      return;
    }
    if (path !== "/mcp") {
      const message = `no route for ${req.method} ${path}`;
      sendJson(res, 404, { detail: message, error: { code: "not_found", message, details: {} } });
      return;
    }
    const refused = rebindingRefusal(req, origins);
    if (refused) {
      sendRpcError(res, 403, -32000, `Forbidden: ${refused}`);
      return;
    }
    const verdict = await authorize(req, gateway, authorization);
    if (!verdict.ok) {
      sendRefusal(req, res, authorization, verdict);
      return;
    }
    const grant = verdict.grant;
    if (req.method === "DELETE") {
      const request = webRequest(req, res, callerHeaders(req, options.trustProxy, grant), undefined);
      const session = sessions.find(request);
      if (session) {
        await writeWebResponse(res, await session.handleRequest(request));
        return;
      }
    }
    if (req.method !== "POST") {
      const message = `${req.method} ${path} is not served: this MCP server is stateless, send JSON-RPC messages with POST`;
      sendRpcError(res, 405, -32000, message, { allow: "POST" });
      return;
    }
    try {
      const text = await readBody(req, MAX_BODY_BYTES);
      if (text === undefined) {
        sendRpcError(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`);
        return;
      }
      const parsedBody = parseJson(text);
      const call = direct?.take(req.headers, parsedBody);
      if (direct && call) {
        directServed++;
        const answer = await direct.answer(call, callerHeaders(req, options.trustProxy, grant));
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
        res.end(answer);
        return;
      }
      const request = webRequest(req, res, callerHeaders(req, options.trustProxy, grant), text);
      if (sharesAnId(parsedBody)) {
        // Their responses could not be told apart; the SDK's transport would answer only one of them.
        sendRpcError(res, 400, -32600, "Invalid Request: two requests in one batch share an id");
        return;
      }
      const response = (await isLegacyRequest(request, parsedBody))
        ? await legacy(request, parsedBody)
        : await modern.fetch(request, parsedBody === undefined ? {} : { parsedBody });
      if (mayBecomeTask(parsedBody) && (response.headers.get("content-type") ?? "").startsWith("application/json")) {
        // The SDK has no task result for tools/call: the tool's result carries the task (tools/tasks.ts).
        const body = JSON.stringify(asTaskResponse(await response.json()));
        res.writeHead(response.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      await writeWebResponse(res, response);
    } catch (err) {
      log.error({ err }, "mcp request failed");
      sendRpcError(res, 500, -32603, "Internal error");
    }
  };
  return Object.assign(handler, { close: () => sessions.closeAll(), directCallsServed: () => directServed });
}
