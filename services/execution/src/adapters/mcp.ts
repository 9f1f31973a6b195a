/**
 * The `mcp_server` adapter: one MCP client session per upstream server (and credential), opened on first
 * use with the Streamable HTTP transport, falling back to the older HTTP+SSE transport when the server
 * does not speak it, and reused across calls. A call that fails because the session is gone (server
 * restarted, session expired) reconnects once. Connections go through the guarded Outbound fetch, so the
 * address policy holds here too. The result is the server's `tools/call` envelope as JSON.
 */
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Logger } from "@toolport/kit/logger";
import { ExecutionFailure } from "../domain/failure.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { Outbound } from "./outbound.js";
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

export class McpSessions {
  private readonly sessions = new Map<string, Promise<Session>>();

  constructor(
    private readonly outbound: Outbound,
    private readonly log: Logger,
  ) {}

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
    let session = this.sessions.get(key);
    if (!session) {
      session = this.connect(call).catch((err) => {
        this.sessions.delete(key);
        throw mcpFailure(err, call.timeoutMs);
      });
      this.sessions.set(key, session);
    }
    return session;
  }

  private drop(key: string): void {
    const session = this.sessions.get(key);
    this.sessions.delete(key);
    session?.then((s) => s.client.close()).catch(() => {});
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
      if (findsRefusal(err)) throw err;
      this.log.debug({ url: call.url, err: (err as Error).message }, "streamable HTTP failed; trying SSE");
    }
    const sse = new Client({ name: "toolport-execution", version: "0.1.0" });
    await sse.connect(new SSEClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
    return { client: sse, transport: "sse" };
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.then((x) => x.client.close()).catch(() => {})));
  }
}

function findsRefusal(err: unknown): boolean {
  return transportFailure(err, { timeoutMs: 0, maxBytes: 0 }).errorType === "address_not_allowed";
}

function mcpFailure(err: unknown, timeoutMs: number): ExecutionFailure {
  if (err instanceof ExecutionFailure) return err;
  const failure = transportFailure(err, { timeoutMs, maxBytes: 0 });
  if (failure.errorType !== "connection_failed") return failure;
  const message = (err as Error)?.message ?? "";
  // The server answered 401/403 to the session's requests.
  if (/\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(message)) {
    return new ExecutionFailure("auth", "mcp_auth", "the MCP server refused the credential", { cause: err });
  }
  return new ExecutionFailure("upstream", "mcp_error", `the MCP server failed: ${message.slice(0, 300)}`, { cause: err });
}
