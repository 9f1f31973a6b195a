/**
 * Sessions for 2025-11-25 clients that can ask their user (issue 31).
 *
 * A 2025-11-25 client declares its capabilities once, in `initialize`, and a server asks the person by
 * sending `elicitation/create` on the stream of the request it is answering, then waits for the client
 * to POST the answer. Served statelessly (http.ts), this server would neither know the capabilities
 * when a later `tools/call` arrives nor receive the answer. So an `initialize` whose client declares
 * elicitation (form mode) opens a session here: its own McpServer (it learns the capabilities from that
 * `initialize`) behind the SDK's stateful Streamable HTTP transport, answering with SSE streams so a
 * question can travel before the result. The tool handlers stay the same: batch_execute_tools answers
 * `input_required` (tools/consent.ts), and the SDK's legacy shim turns that into `elicitation/create`
 * requests on the stream and runs the handler again with the answers.
 *
 * Every other 2025-11-25 client is served statelessly, as before: no `Mcp-Session-Id`, any replica.
 *
 * What a session does not change: each request still carries the caller's key and is served with it,
 * and a session answers only the caller that opened it (a hash of the key and organization), so a
 * leaked session id lets nobody else answer a question. A request naming a session this process does
 * not hold (a restart, another replica, an evicted or foreign session) is served statelessly rather
 * than refused: the client keeps working and only loses being asked (it gets the consent object). So
 * behind several replicas, the answer to a question must reach the replica that asked: route
 * `Mcp-Session-Id` to one replica (deploy/k8s/README.md says how); an answer that lands elsewhere is
 * dropped and the call ends, unrun, when the question times out (the SDK's ten minutes, as long as a
 * confirm token lives).
 *
 * Sessions are bounded: at most `maxSessions` (the least recently used closed first) and none kept
 * idle past `idleMs`.
 */
import { createHash, randomUUID } from "node:crypto";
import { type McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { callerIdentity, GRANT_HEADER } from "./tools/results.js";

export interface LegacySessionLimits {
  /** Sessions kept at most; past it the least recently used one is closed. */
  maxSessions: number;
  /** A session unused this long is closed. */
  idleMs: number;
}

export const DEFAULT_LEGACY_SESSION_LIMITS: LegacySessionLimits = { maxSessions: 1_000, idleMs: 30 * 60_000 };

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  /** Hash of the key and organization that opened it. */
  caller: string;
  usedAt: number;
}

/** Hash of a request's caller: its key and organization (the key itself is never kept). */
export function callerOfHeaders(headers: Headers): string {
  const caller = {
    apiKey: headers.get("svc-api-key") || undefined,
    grant: headers.get(GRANT_HEADER) || undefined,
    orgId: headers.get("svc-org-id") || undefined,
  };
  return createHash("sha256").update(callerIdentity(caller)).digest("hex");
}

/** Whether this message (a 2025-11-25 body) is an `initialize` whose client can show its user a form. */
export function initializeThatCanAsk(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const { method, params } = body as { method?: unknown; params?: { capabilities?: { elicitation?: unknown } } };
  if (method !== "initialize") return false;
  const elicitation = params?.capabilities?.elicitation;
  if (typeof elicitation !== "object" || elicitation === null) return false;
  // An empty object means form mode (the 2025-06-18 shape); otherwise form must be named.
  return Object.keys(elicitation).length === 0 || "form" in elicitation;
}

export class LegacySessions {
  /** In least-recently-used order: a use moves the session to the end. */
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly newServer: () => McpServer,
    private readonly maxRequestBodySize: number,
    private readonly limits: LegacySessionLimits = DEFAULT_LEGACY_SESSION_LIMITS,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, limits.idleMs));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves an `initialize` that opens a session; the answer carries its `Mcp-Session-Id`. */
  async open(request: Request, parsedBody: unknown): Promise<Response> {
    const caller = callerOfHeaders(request.headers);
    const server = this.newServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: this.maxRequestBodySize,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, caller, usedAt: Date.now() });
        this.evictOverLimit();
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    // A refused initialize (bad headers, bad body) opened nothing: let its server go.
    if (transport.sessionId === undefined || !this.sessions.has(transport.sessionId)) await transport.close();
    return response;
  }

  /** The session a request names, if this process holds it for the same caller. */
  find(request: Request): WebStandardStreamableHTTPServerTransport | undefined {
    const id = request.headers.get("mcp-session-id");
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session || session.caller !== callerOfHeaders(request.headers)) return undefined;
    session.usedAt = Date.now();
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session.transport;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(open.map((s) => s.transport.close()));
  }

  private evictOverLimit(): void {
    for (const [id, session] of this.sessions) {
      if (this.sessions.size <= this.limits.maxSessions) break;
      this.sessions.delete(id);
      void session.transport.close();
    }
  }

  private closeIdle(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const [id, session] of this.sessions) {
      // LRU order: the first one used since `before` ends the sweep.
      if (session.usedAt >= before) break;
      this.sessions.delete(id);
      void session.transport.close();
    }
  }
}
