/**
 * The `mcp_server` adapter: one MCP client session per upstream server (and credential), opened on first
 * use with the Streamable HTTP transport, falling back to the older HTTP+SSE transport when the server
 * does not speak it, and reused across calls. A call that fails because the session is gone (server
 * restarted, session expired) reconnects once. Sessions are bounded: at most `maxSessions` (least recently
 * used closed first) and none kept idle past `idleMs`, so rotated credentials and many callers cannot
 * grow them without limit. Connections go through the guarded Outbound fetch, so the
 * address policy holds here too. The result is the server's `tools/call` envelope as JSON.
 */
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { Logger } from "@toolport/kit/logger";
import type { Outbound } from "@toolport/kit/outbound";
import { ExecutionFailure } from "../domain/failure.js";
import { transportFailure } from "./rest.js";

export interface McpCall {
  url: string;
  toolName: string;
  input: JsonObject;
  /** Extra request headers (a connected credential). */
  headers: Record<string, string>;
  timeoutMs: number;
}

interface Session {
  client: Client;
  transport: "streamable-http" | "sse";
}

export interface McpSessionLimits {
  /** Open sessions kept at most; past it the least recently used one is closed. */
  maxSessions: number;
  /** A session unused this long is closed (a rotated credential leaves its old session idle). */
  idleMs: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = { maxSessions: 256, idleMs: 5 * 60_000 };

interface Entry {
  session: Promise<Session>;
  usedAt: number;
}

export class McpSessions {
  /** In least-recently-used order: a use moves the entry to the end. */
  private readonly sessions = new Map<string, Entry>();
  private readonly idleSweep: NodeJS.Timeout;

  constructor(
    private readonly outbound: Outbound,
    private readonly log: Logger,
    private readonly limits: McpSessionLimits = DEFAULT_MCP_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.idleSweep = setInterval(() => this.closeIdle(), Math.min(60_000, Math.max(1_000, limits.idleMs / 2)));
    this.idleSweep.unref();
  }

  /** How many sessions are open or opening (tests). */
  get size(): number {
    return this.sessions.size;
  }

  /** Closes every session unused for longer than the idle limit. */
  closeIdle(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [key, entry] of this.sessions) if (entry.usedAt < cutoff) this.drop(key);
  }

  async call(call: McpCall): Promise<Json> {
    const key = `${call.url}\n${createHash("sha256").update(JSON.stringify(call.headers)).digest("hex")}`;
    for (let attempt = 0; ; attempt++) {
      const session = await this.session(key, call);
      try {
        const result = await session.client.callTool({ name: call.toolName, arguments: call.input }, undefined, {
          timeout: call.timeoutMs,
        });
        return JSON.parse(JSON.stringify(result)) as Json;
      } catch (err) {
        const timedOut = (err as { code?: number }).code === -32001;
        if (timedOut)
          throw new ExecutionFailure("upstream", "timeout", `the MCP server did not answer within ${call.timeoutMs} ms`, {
            cause: err,
          });
        if ((err as { code?: number }).code === -32602 || (err as { code?: number }).code === -32601) {
          throw new ExecutionFailure(
            "caller",
            "mcp_invalid_request",
            `the MCP server refused the call: ${(err as Error).message}`,
            { cause: err },
          );
        }
        // The session may be stale: drop it and retry once on a fresh one.
        this.drop(key);
        if (attempt >= 1) throw mcpFailure(err, call.timeoutMs);
        this.log.debug({ url: call.url, err: (err as Error).message }, "mcp call failed; reconnecting");
      }
    }
  }

  private session(key: string, call: McpCall): Promise<Session> {
    const found = this.sessions.get(key);
    let session = found?.session;
    if (!session) {
      const opening = this.connect(call).catch((err) => {
        if (this.sessions.get(key)?.session === opening) this.sessions.delete(key);
        throw mcpFailure(err, call.timeoutMs);
      });
      session = opening;
      while (this.sessions.size >= Math.max(1, this.limits.maxSessions)) {
        this.drop(this.sessions.keys().next().value as string);
      }
    }
    this.sessions.delete(key);
    this.sessions.set(key, { session, usedAt: this.now() });
    return session;
  }

  private drop(key: string): void {
    const entry = this.sessions.get(key);
    this.sessions.delete(key);
    entry?.session.then((s) => s.client.close()).catch(() => {});
  }

  private async connect(call: McpCall): Promise<Session> {
    const url = new URL(call.url);
    const requestInit = { headers: call.headers };
    const fetch = this.outbound.fetch as never;
    const streamable = new Client({ name: "toolport-execution", version: "0.1.0" });
    try {
      await streamable.connect(new StreamableHTTPClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
      return { client: streamable, transport: "streamable-http" };
    } catch (err) {
      await streamable.close().catch(() => {});
      // A refused address, or a server refusing the credential: SSE would fare no better.
      if (findsRefusal(err) || refusesCredential(err)) throw err;
      this.log.debug({ url: call.url, err: (err as Error).message }, "streamable HTTP failed; trying SSE");
    }
    const sse = new Client({ name: "toolport-execution", version: "0.1.0" });
    await sse.connect(new SSEClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
    return { client: sse, transport: "sse" };
  }

  async close(): Promise<void> {
    clearInterval(this.idleSweep);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((e) => e.session.then((x) => x.client.close()).catch(() => {})));
  }
}

function findsRefusal(err: unknown): boolean {
  return transportFailure(err, { timeoutMs: 0, maxBytes: 0 }).errorType === "address_not_allowed";
}

/** The server answered 401 or 403 (the SDK's StreamableHTTPError carries the status as `code`). */
function refusesCredential(err: unknown): boolean {
  const status = (err as { code?: unknown })?.code;
  return status === 401 || status === 403;
}

function mcpFailure(err: unknown, timeoutMs: number): ExecutionFailure {
  if (err instanceof ExecutionFailure) return err;
  if (refusesCredential(err)) {
    return new ExecutionFailure("auth", "mcp_auth", "the MCP server refused the credential", { cause: err });
  }
  const failure = transportFailure(err, { timeoutMs, maxBytes: 0 });
  if (failure.errorType !== "connection_failed") return failure;
  const message = (err as Error)?.message ?? "";
  // The server answered 401/403 to the session's requests.
  if (/\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(message)) {
    return new ExecutionFailure("auth", "mcp_auth", "the MCP server refused the credential", { cause: err });
  }
  return new ExecutionFailure("upstream", "mcp_error", `the MCP server failed: ${message.slice(0, 300)}`, { cause: err });
}
