/**
 * The `mcp_server` adapter: one MCP client session per upstream server (and credential), opened on first
 * use and reused across calls. The client is the official v2 SDK's (`@modelcontextprotocol/client`): it
 * probes the server with `server/discover` and speaks protocol revision 2026-07-28 (stateless: no session
 * on the server's side) when the server does, else the 2025-11-25 `initialize` handshake, over Streamable
 * HTTP; a server that does not speak Streamable HTTP is tried with the older HTTP+SSE transport. A call
 * that fails because the session is gone (server restarted, session expired) reconnects once. Sessions are
 * bounded: at most `maxSessions` (least recently used closed first) and none kept idle past `idleMs`, so
 * rotated credentials and many callers cannot grow them without limit. Connections go through the guarded
 * Outbound fetch, so the address policy holds here too. The result is the server's `tools/call` envelope
 * as JSON.
 *
 * A tool that needs a person's input mid-call fails with `mcp_input_required`: on 2026-07-28 the server
 * answers `input_required` (or, since we declare no elicitation capability, refuses with -32021); on
 * 2025-11-25 it would send `elicitation/create`, which the SDK's servers refuse to send to a client without
 * that capability, failing the tool instead. Passing the question on to our own MCP caller and retrying
 * with the answer is later work (issue 31); until then the client declares no elicitation capability and
 * never fulfils an `input_required` answer itself, so such a call ends at once instead of waiting or
 * looping.
 */
import { createHash } from "node:crypto";
import {
  type CallToolResult,
  Client,
  type InputRequiredResult,
  isInputRequiredResult,
  ProtocolErrorCode,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { Logger } from "@toolport/kit/logger";
import type { Outbound } from "@toolport/kit/outbound";
import { ExecutionFailure, UpstreamAuthFailure } from "../domain/failure.js";
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

/**
 * A client that declares no capabilities (no elicitation, sampling or roots: nothing here could answer
 * them yet) and hands an `input_required` answer back to the caller of `callTool` instead of fulfilling
 * it. `negotiation` is `auto` on Streamable HTTP; the HTTP+SSE transport predates 2026-07-28, so a
 * server on it is spoken to in the 2025 handshake without a probe.
 */
function newClient(negotiation: "auto" | "legacy"): Client {
  return new Client(
    { name: "toolport-execution", version: "0.1.0" },
    { capabilities: {}, versionNegotiation: { mode: negotiation }, inputRequired: { autoFulfill: false } },
  );
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
      let result: CallToolResult | InputRequiredResult;
      try {
        result = await session.client.callTool(
          { name: call.toolName, arguments: call.input },
          { timeout: call.timeoutMs, allowInputRequired: true },
        );
      } catch (err) {
        // The server refused the credential: a new session with the same one would fare no better.
        const refused = authRefusal(err);
        if (refused) {
          this.drop(key);
          throw refused;
        }
        const failure = callFailure(err, call.timeoutMs);
        if (failure) throw failure;
        // The session may be stale: drop it and retry once on a fresh one.
        this.drop(key);
        if (attempt >= 1) throw mcpFailure(err, call.timeoutMs);
        this.log.debug({ url: call.url, err: (err as Error).message }, "mcp call failed; reconnecting");
        continue;
      }
      if (isInputRequiredResult(result)) throw inputRequired(asksOf(result));
      if (refusedElicitation(result)) throw inputRequired({ person: true });
      return JSON.parse(JSON.stringify(result)) as Json;
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
    const fetch = refusingFetch(this.outbound.fetch);
    const streamable = newClient("auto");
    try {
      await streamable.connect(new StreamableHTTPClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
      return { client: streamable, transport: "streamable-http" };
    } catch (err) {
      await streamable.close().catch(() => {});
      // A refused address, or a server refusing the credential: SSE would fare no better.
      if (findsRefusal(err) || refusesCredential(err)) throw err;
      this.log.debug({ url: call.url, err: (err as Error).message }, "streamable HTTP failed; trying SSE");
    }
    const sse = newClient("legacy");
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

/** A 401 or 403 answer, with its WWW-Authenticate challenge, raised by the transport's fetch. */
class HttpRefusal extends Error {
  constructor(
    readonly status: 401 | 403,
    readonly challenge: string,
  ) {
    super(`the MCP server answered HTTP ${status}`);
  }
}

/**
 * The transport's fetch, raising a 401 or 403 with its challenge before the SDK makes a bare status of it:
 * an OAuth upstream's 403 `insufficient_scope` names the scopes the call needs (issue 32).
 */
function refusingFetch(fetch: Outbound["fetch"]): Outbound["fetch"] {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel().catch(() => {});
      throw new HttpRefusal(res.status, res.headers.get("www-authenticate") ?? "");
    }
    return res;
  };
}

/** The HttpRefusal in an error's cause chain, as the failure it is; undefined for any other error. */
function authRefusal(err: unknown): UpstreamAuthFailure | undefined {
  let e = err as { cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5 && !(e instanceof HttpRefusal); depth++) e = e.cause as typeof e;
  if (!(e instanceof HttpRefusal)) return undefined;
  if (e.status === 403 && /error\s*=\s*"?insufficient_scope/i.test(e.challenge)) {
    const scope = /scope\s*=\s*"([^"]*)"/i.exec(e.challenge)?.[1] ?? "";
    const scopes = scope.split(" ").filter(Boolean);
    return new UpstreamAuthFailure(
      403,
      `the MCP server needs more consent for this call (insufficient_scope${scopes.length ? `: ${scopes.join(" ")}` : ""})`,
      scopes,
      { cause: err },
    );
  }
  return new UpstreamAuthFailure(e.status, "the MCP server refused the credential", undefined, { cause: err });
}

function findsRefusal(err: unknown): boolean {
  return transportFailure(err, { timeoutMs: 0, maxBytes: 0 }).errorType === "address_not_allowed";
}

/** The server answered 401 or 403 (the SDK's SdkHttpError carries the status). */
function refusesCredential(err: unknown): boolean {
  if (authRefusal(err)) return true;
  const status = (err as { status?: unknown } | undefined)?.status;
  return status === 401 || status === 403;
}

/**
 * A failed call that a fresh session would not change, mapped here; undefined for any other failure
 * (the session may be stale). Each branch is an SDK error or a JSON-RPC error the server answered.
 */
function callFailure(err: unknown, timeoutMs: number): ExecutionFailure | undefined {
  const { code, data } = (err ?? {}) as { code?: unknown; data?: unknown };
  switch (code) {
    // No answer in time (the SDK's own timeout).
    case SdkErrorCode.RequestTimeout:
      return new ExecutionFailure("upstream", "timeout", `the MCP server did not answer within ${timeoutMs} ms`, {
        cause: err,
      });
    // The server refused the arguments, or knows no such tool.
    case ProtocolErrorCode.InvalidParams:
    case ProtocolErrorCode.MethodNotFound:
      return new ExecutionFailure("caller", "mcp_invalid_request", `the MCP server refused the call: ${(err as Error).message}`, {
        cause: err,
      });
    // 2026-07-28: the tool needs input that only a client with these capabilities could give (-32021).
    case ProtocolErrorCode.MissingRequiredClientCapability: {
      const required = (data as { requiredCapabilities?: Record<string, unknown> } | undefined)?.requiredCapabilities ?? {};
      return inputRequired({ person: "elicitation" in required, methods: Object.keys(required) }, err);
    }
    // An input_required answer that reached the SDK's own check (allowInputRequired makes it rare).
    case SdkErrorCode.UnsupportedResultType:
      if ((data as { resultType?: unknown } | undefined)?.resultType === "input_required") return inputRequired({}, err);
      return undefined;
    default:
      return undefined;
  }
}

interface Asks {
  /** A person's answer (elicitation), as opposed to the caller's model (sampling) or roots. */
  person?: boolean;
  /** The question put to the person, when the server sent it. */
  question?: string;
  /** What else it asks for: request methods or capability names. */
  methods?: string[];
}

/** What an `input_required` answer asks for. */
function asksOf(result: InputRequiredResult): Asks {
  const requests = Object.values(result.inputRequests ?? {}) as Array<{ method?: unknown; params?: { message?: unknown } }>;
  const elicitation = requests.find((r) => r.method === "elicitation/create");
  const question = elicitation?.params?.message;
  return {
    person: elicitation !== undefined,
    question: typeof question === "string" ? question : undefined,
    methods: requests.map((r) => String(r.method)),
  };
}

/**
 * A 2025-11-25 tool error saying that the client cannot be asked (the SDKs' own wording when a tool
 * elicits from a client without the elicitation capability): the tool needed a person's input.
 */
function refusedElicitation(result: CallToolResult): boolean {
  if (result.isError !== true) return false;
  return result.content.some(
    (block) => block.type === "text" && /does not support (?:form |url )?elicitation|\(elicitation\/create\)/i.test(block.text),
  );
}

/**
 * The failure of a tool that asks for input mid-call. Blamed on the upstream like its other failures:
 * the caller did nothing wrong, and the tool cannot complete through Toolport until such questions are
 * passed on (issue 31).
 */
function inputRequired(asks: Asks, cause?: unknown): ExecutionFailure {
  const needs = asks.person
    ? "a person's input"
    : asks.methods?.some((m) => m.startsWith("sampling"))
      ? "an answer from its caller's model (sampling)"
      : "input from its caller";
  const question = asks.question ? ` (it asks: ${JSON.stringify(asks.question.slice(0, 300))})` : "";
  return new ExecutionFailure(
    "upstream",
    "mcp_input_required",
    `the MCP tool needs ${needs} before it can finish${question}, and Toolport cannot pass such a request on to the caller yet`,
    cause === undefined ? undefined : { cause },
  );
}

function mcpFailure(err: unknown, timeoutMs: number): ExecutionFailure {
  if (err instanceof ExecutionFailure) return err;
  const refused = authRefusal(err);
  if (refused) return refused;
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
