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
 * A tool that needs a person's input mid-call is passed on to our caller (issue 31, "the client face"):
 * the call fails with `mcp_input_required` carrying the questions (ExecutionFailure.ask), and the caller
 * repeats it with its answers (domain/continuation.ts). Only form elicitation is passed on; a tool that
 * asks for anything else (sampling, roots, a URL elicitation) fails plainly, saying what it needed.
 * - 2026-07-28: the server answers `input_required` (we declare form elicitation, and never fulfil the
 *   answer ourselves: `autoFulfill: false`). The questions are its elicitation requests; the repeated call
 *   sends the same `tools/call` with `inputResponses` and the server's `requestState`, as a new request.
 * - 2025-11-25: the server sends `elicitation/create` during the call. The handler finds the call it
 *   belongs to: a 2025 session runs one call at a time (a call arriving while another runs on the pooled
 *   session gets a session of its own, closed after it), so it is the session's one call (were there
 *   several, it could not tell, and answers `cancel`). A call whose question waits takes its session out
 *   of the pool (closed once the call ends), and the call answers at once with the question and a continuation naming an
 *   entry kept in this process while the upstream's call stays open. The repeated call resolves that
 *   entry with the caller's answer and waits for the upstream's final result (which may ask again). An
 *   entry not answered within `pendingTtlMs` is answered `cancel`, and at most `maxPending` wait (past it
 *   the oldest is cancelled). A repeated call reaching a process without the entry (restart, another
 *   replica, expired) fails with `mcp_input_expired` and runs nothing: with several execution replicas,
 *   a 2025-11-25 upstream's question must be answered on the replica that asked it.
 * Sessions with a call in flight are closed only once their calls end.
 */
import { createHash, randomUUID } from "node:crypto";
import {
  type CallToolRequest,
  type CallToolResult,
  Client,
  type ElicitRequest,
  type ElicitResult,
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
import type { InputAsk, Question, Resumption } from "../domain/continuation.js";
import { ExecutionFailure, UpstreamAuthFailure } from "../domain/failure.js";
import { transportFailure } from "./rest.js";

export interface McpCall {
  url: string;
  toolName: string;
  input: JsonObject;
  /** Extra request headers (a connected credential). */
  headers: Record<string, string>;
  timeoutMs: number;
  /** The caller's answers to the questions this call's tool asked before (verified by the executor). */
  resumption?: Resumption;
}

/** A question a 2025-11-25 server sent during a call, and how to answer it. */
interface Elicited {
  params: ElicitRequest["params"];
  respond: (answer: ElicitResult) => void;
}

/** A `tools/call` in flight on a session. */
interface Flight {
  /** Set while the call is awaited: receives a question the server sent for it (2025-11-25). */
  onAsk?: (elicited: Elicited) => void;
  /** Its question waits for the caller's answer. */
  waiting: boolean;
  /** Ends the upstream request (sends notifications/cancelled). */
  abort: AbortController;
  /** Takes the call's session out of the pool (while its question waits). */
  detach?: () => void;
}

/** How a `tools/call` ended: its result, or the error it failed with. */
type Settled = { result: CallToolResult | InputRequiredResult } | { error: unknown };

/** A 2025-11-25 call whose question waits for the caller's answer; the upstream call stays open. */
interface Pending {
  flight: Flight;
  settled: Promise<Settled>;
  respond: (answer: ElicitResult) => void;
  timer: NodeJS.Timeout;
  timeoutMs: number;
}

/** The one key a 2025-11-25 question is answered under (the server asks one at a time). */
const ELICITATION_KEY = "elicitation";

interface Session {
  client: Client;
  transport: "streamable-http" | "sse";
  /** Calls in flight, for the elicitation handler to find the one a question belongs to. */
  flights: Set<Flight>;
  /** Negotiated 2025-11-25 (or older): questions arrive as requests, so one call at a time. */
  legacy: boolean;
  /** Dropped while calls were in flight: closed when the last one ends. */
  closeWhenIdle?: boolean;
}

/**
 * A client that declares form elicitation (a person's answer can be passed on to our caller) and no
 * sampling or roots (nothing here could answer them), and hands an `input_required` answer back to the
 * caller of `callTool` instead of fulfilling it. `negotiation` is `auto` on Streamable HTTP; the HTTP+SSE
 * transport predates 2026-07-28, so a server on it is spoken to in the 2025 handshake without a probe.
 * A 2025-11-25 `elicitation/create` goes to the one call in `flights` not already waiting.
 */
function newClient(negotiation: "auto" | "legacy", flights: Set<Flight>): Client {
  const client = new Client(
    { name: "toolport-execution", version: "0.1.0" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: negotiation },
      inputRequired: { autoFulfill: false },
    },
  );
  client.setRequestHandler("elicitation/create", (request) => {
    // Only form mode was declared; a URL elicitation is not ours to open.
    if (request.params.mode === "url") return { action: "decline" };
    const open = [...flights].filter((f) => !f.waiting && f.onAsk);
    // No call, or several on this session: which one asks cannot be told, so no caller is asked.
    if (open.length !== 1) return { action: "cancel" };
    const flight = open[0]!;
    return new Promise<ElicitResult>((respond) => {
      flight.waiting = true;
      flight.onAsk?.({ params: request.params, respond });
    });
  });
  return client;
}

export interface McpSessionLimits {
  /** Open sessions kept at most; past it the least recently used one is closed. */
  maxSessions: number;
  /** A session unused this long is closed (a rotated credential leaves its old session idle). */
  idleMs: number;
  /** A 2025-11-25 question waits this long for its answer; then the server is answered `cancel`. */
  pendingTtlMs?: number;
  /** 2025-11-25 questions waiting at most; past it the oldest is answered `cancel`. */
  maxPending?: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = {
  maxSessions: 256,
  idleMs: 5 * 60_000,
  pendingTtlMs: 5 * 60_000,
  maxPending: 1_000,
};

interface Entry {
  session: Promise<Session>;
  usedAt: number;
}

export class McpSessions {
  /** In least-recently-used order: a use moves the entry to the end. */
  private readonly sessions = new Map<string, Entry>();
  /** 2025-11-25 questions waiting for their answers, by id, oldest first. */
  private readonly pending = new Map<string, Pending>();
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

  private get pendingTtlMs(): number {
    return this.limits.pendingTtlMs ?? DEFAULT_MCP_SESSION_LIMITS.pendingTtlMs!;
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
    const resume = call.resumption?.resume;
    if (resume?.kind === "pending") return this.answerPending(resume.id, call);
    const key = `${call.url}\n${createHash("sha256").update(JSON.stringify(call.headers)).digest("hex")}`;
    const params: CallToolRequest["params"] & { inputResponses?: Record<string, ElicitResult>; requestState?: string } = {
      name: call.toolName,
      arguments: call.input,
    };
    if (resume?.kind === "state") {
      // 2026-07-28: the same call again, with the answers and the server's state echoed byte for byte.
      params.inputResponses = call.resumption!.answers as Record<string, ElicitResult>;
      if (resume.requestState !== undefined) params.requestState = resume.requestState;
    }
    for (let attempt = 0; ; attempt++) {
      const pooled = this.session(key, call);
      let session = await pooled;
      const flight: Flight = { waiting: false, abort: new AbortController() };
      if (session.legacy && session.flights.size > 0) {
        // A 2025-11-25 session runs one call at a time, so that a question it sends belongs to that call:
        // a call arriving while another runs gets a session of its own, closed when the call ends.
        session = await this.connect(call).catch((err) => {
          throw mcpFailure(err, call.timeoutMs);
        });
        session.closeWhenIdle = true;
      } else {
        // A call that parks a question takes its session out of the pool: later calls open a fresh one.
        flight.detach = () => {
          if (this.sessions.get(key)?.session !== pooled) return;
          this.sessions.delete(key);
          session.closeWhenIdle = true;
        };
      }
      session.flights.add(flight);
      const used = session;
      const settled: Promise<Settled> = session.client
        .callTool(params, {
          // A question waiting for its answer holds the request open (2025-11-25); `await` bounds each leg.
          timeout: call.timeoutMs + this.pendingTtlMs,
          allowInputRequired: true,
          signal: flight.abort.signal,
        })
        .then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        )
        .finally(() => this.landed(used, flight));
      const ended = await this.await(flight, settled, call.timeoutMs);
      if ("result" in ended) return this.resultOf(ended.result);
      const err = ended.error;
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
    }
  }

  /**
   * Waits for a call's next step for at most `timeoutMs`: its end, or a question it asks (kept as a
   * pending entry, and reported as mcp_input_required).
   */
  private async await(flight: Flight, settled: Promise<Settled>, timeoutMs: number): Promise<Settled> {
    let timer: NodeJS.Timeout | undefined;
    const asked = new Promise<Elicited>((resolve) => {
      flight.onAsk = resolve;
    });
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    try {
      const next = await Promise.race([settled, asked, late]);
      if (next === "late") {
        flight.abort.abort();
        throw new ExecutionFailure("upstream", "timeout", `the MCP server did not answer within ${timeoutMs} ms`);
      }
      if ("respond" in next) throw this.park(flight, settled, next, timeoutMs);
      return next;
    } finally {
      clearTimeout(timer);
      flight.onAsk = undefined;
    }
  }

  /** Keeps a 2025-11-25 question waiting for the caller's answer; the failure that carries it. */
  private park(flight: Flight, settled: Promise<Settled>, elicited: Elicited, timeoutMs: number): ExecutionFailure {
    const max = Math.max(1, this.limits.maxPending ?? DEFAULT_MCP_SESSION_LIMITS.maxPending!);
    while (this.pending.size >= max) this.expire(this.pending.keys().next().value as string);
    flight.detach?.();
    const id = randomUUID();
    const expiresAt = this.now() + this.pendingTtlMs;
    const timer = setTimeout(() => this.expire(id), this.pendingTtlMs);
    timer.unref();
    this.pending.set(id, { flight, settled, respond: elicited.respond, timer, timeoutMs });
    const params = elicited.params as { message?: unknown; requestedSchema?: unknown };
    const question = {
      key: ELICITATION_KEY,
      message: typeof params.message === "string" ? params.message : "",
      requested_schema: (params.requestedSchema ?? { type: "object", properties: {} }) as JsonObject,
    };
    return inputRequired({ person: true, question: question.message }, undefined, {
      questions: [question],
      resume: { kind: "pending", id, keys: [ELICITATION_KEY], expiresAt },
    });
  }

  /** A waiting question not answered in time (or pushed out): the server is answered `cancel`. */
  private expire(id: string): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    entry.respond({ action: "cancel" });
  }

  /** The caller's answer to a 2025-11-25 question: the upstream call goes on to its result (or asks again). */
  private async answerPending(id: string, call: McpCall): Promise<Json> {
    const entry = this.pending.get(id);
    if (!entry) {
      throw new ExecutionFailure(
        "caller",
        "mcp_input_expired",
        "the MCP tool's question is no longer waiting here (it expired, or this execution service restarted or is another replica); nothing ran: call the tool again to be asked again",
      );
    }
    this.pending.delete(id);
    clearTimeout(entry.timer);
    entry.flight.waiting = false;
    const answer = call.resumption!.answers[ELICITATION_KEY] ?? { action: "cancel" };
    const next = this.await(entry.flight, entry.settled, entry.timeoutMs);
    entry.respond(answer as ElicitResult);
    const ended = await next;
    if ("result" in ended) return this.resultOf(ended.result);
    // The call was under way: it is not sent again.
    throw callFailure(ended.error, entry.timeoutMs) ?? mcpFailure(ended.error, entry.timeoutMs);
  }

  private resultOf(result: CallToolResult | InputRequiredResult): Json {
    if (isInputRequiredResult(result)) throw inputRequired(asksOf(result), undefined, askOf(result));
    if (refusedElicitation(result)) throw inputRequired({ person: true });
    return JSON.parse(JSON.stringify(result)) as Json;
  }

  /** A call ended: a session dropped meanwhile is closed once it has none in flight. */
  private landed(session: Session, flight: Flight): void {
    session.flights.delete(flight);
    if (session.closeWhenIdle && session.flights.size === 0) session.client.close().catch(() => {});
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
    entry?.session
      .then((s) => {
        // A call in flight (a question waiting, perhaps) keeps its session until it ends.
        if (s.flights.size > 0) s.closeWhenIdle = true;
        else return s.client.close();
      })
      .catch(() => {});
  }

  private async connect(call: McpCall): Promise<Session> {
    const url = new URL(call.url);
    const requestInit = { headers: call.headers };
    const fetch = refusingFetch(this.outbound.fetch);
    const flights = new Set<Flight>();
    const streamable = newClient("auto", flights);
    try {
      await streamable.connect(new StreamableHTTPClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
      return { client: streamable, transport: "streamable-http", flights, legacy: streamable.getProtocolEra() !== "modern" };
    } catch (err) {
      await streamable.close().catch(() => {});
      // A refused address, or a server refusing the credential: SSE would fare no better.
      if (findsRefusal(err) || refusesCredential(err)) throw err;
      this.log.debug({ url: call.url, err: (err as Error).message }, "streamable HTTP failed; trying SSE");
    }
    const sse = newClient("legacy", flights);
    await sse.connect(new SSEClientTransport(url, { requestInit, fetch }), { timeout: call.timeoutMs });
    return { client: sse, transport: "sse", flights, legacy: true };
  }

  async close(): Promise<void> {
    clearInterval(this.idleSweep);
    for (const id of [...this.pending.keys()]) this.expire(id);
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
 * The questions of a 2026-07-28 `input_required` answer that the caller can be asked: every request in
 * it is a form elicitation. Anything else (sampling, roots, a URL to open) is not passed on.
 */
function askOf(result: InputRequiredResult): InputAsk | undefined {
  const entries = Object.entries(result.inputRequests ?? {}) as Array<
    [string, { method?: unknown; params?: { mode?: unknown; message?: unknown; requestedSchema?: unknown } }]
  >;
  if (entries.length === 0) return undefined;
  const questions: Question[] = [];
  for (const [key, request] of entries) {
    const params = request.params ?? {};
    if (request.method !== "elicitation/create" || (params.mode !== undefined && params.mode !== "form")) return undefined;
    questions.push({
      key,
      message: typeof params.message === "string" ? params.message : "",
      requested_schema: (params.requestedSchema ?? { type: "object", properties: {} }) as JsonObject,
    });
  }
  return { questions, resume: { kind: "state", requestState: result.requestState, keys: questions.map((q) => q.key) } };
}

/**
 * The failure of a tool that asks for input mid-call. Blamed on the upstream like its other failures:
 * the caller did nothing wrong. With `ask`, the caller can answer and repeat the call; without, the
 * request cannot be passed on (sampling, roots, URL elicitation, or an upstream that refused to ask).
 */
function inputRequired(asks: Asks, cause?: unknown, ask?: InputAsk): ExecutionFailure {
  const needs = asks.person
    ? "a person's input"
    : asks.methods?.some((m) => m.startsWith("sampling"))
      ? "an answer from its caller's model (sampling)"
      : "input from its caller";
  const question = asks.question ? ` (it asks: ${JSON.stringify(asks.question.slice(0, 300))})` : "";
  const next = ask
    ? ": ask the person its questions (error_details.questions) and repeat the same call with input_responses"
    : ", and Toolport cannot pass such a request on to the caller";
  return new ExecutionFailure(
    "upstream",
    "mcp_input_required",
    `the MCP tool needs ${needs} before it can finish${question}${next}`,
    {
      ...(cause === undefined ? {} : { cause }),
      ...(ask ? { ask } : {}),
    },
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
