/**
 * gRPC between our processes: @grpc/grpc-js servers over HTTP/2 without TLS (h2c) and grpc-js clients
 * with deadlines, both carrying connect-es handlers, interceptors and errors (grpc-wire.ts).
 * Interceptors carry the request id and the caller's principal in metadata, log each call, and turn any
 * thrown value into a ConnectError (domain errors keep their reason; anything else is "internal error"
 * with the cause logged, never sent).
 */
import { setMaxListeners } from "node:events";
import { type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  type ConnectRouter,
  createClient,
  createConnectRouter,
  createContextKey,
  decodeBinaryHeader,
  encodeBinaryHeader,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { Health } from "@toolport/proto/grpc/health/v1/health_pb";
import { AuthMethod, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { acceptRequestId, currentScope, PRINCIPAL_HEADER, REQUEST_ID_HEADER, runInScope } from "./context.js";
import { toConnectError, unauthenticated } from "./errors.js";
import { bindAddress, createGrpcJsTransport, createGrpcServer, grpcService } from "./grpc-wire.js";
import { HealthState } from "./health.js";
import { hostLocally, switchingTransport } from "./local-rpc.js";
import type { Logger } from "./logger.js";
import { rpcServerSeconds } from "./metrics.js";
import { contextFromHeaders, inSpan, SpanKind, traceHeaders } from "./tracing.js";

/**
 * The memory one HTTP/2 connection between our processes may hold (MiB) before Node refuses its new
 * streams with ENHANCE_YOUR_CALM. The default (10) is a guard against a hostile peer; between our own
 * processes it refused about 1 in 300 GET /v1/tools?limit=100 pages at 16 at once (818 KB each, so 16 in
 * flight pass 10 MiB), which the gateway could only answer with a 500. 256 leaves room for 64 pages of
 * LIST_MAX_LIMIT at once.
 */
const SESSION_MEMORY_MB = 256;

/**
 * Handlers read the caller with `context.values.get(principalKey)`. The object is shared by the calls
 * that carry the same principal and frozen (decodedPrincipal): read it, never change it.
 */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "caller" });
export const requestIdKey = createContextKey<string>("", { description: "request id" });

/**
 * The caller of an RPC that needs one: UNAUTHENTICATED without a principal, and with `jwt`, also when the
 * caller used an API key (routes the spec keeps for JWTs: webhooks, GET /skills/my, submissions).
 */
export function requirePrincipal(
  context: { values: { get(key: typeof principalKey): Principal | undefined } },
  options: { jwt?: boolean } = {},
): Principal {
  const principal = context.values.get(principalKey);
  if (!principal?.accountId) throw unauthenticated("unauthenticated", "this call needs an authenticated caller");
  if (options.jwt && principal.authMethod !== AuthMethod.JWT)
    throw unauthenticated("jwt_required", "this endpoint needs a JWT (Authorization: Bearer); an API key is not accepted");
  return principal;
}

/**
 * How many decoded principals a process keeps (decodedPrincipal); past it, the store starts again empty.
 * Only values up to DECODED_PRINCIPAL_MAX_CHARS are kept (a key allowed a long list of tools makes a
 * long one; longer ones are decoded on every call), so the store holds 8 MiB of keys at most.
 */
const DECODED_PRINCIPALS_MAX = 1024;
const DECODED_PRINCIPAL_MAX_CHARS = 8192;
const decodedPrincipals = new Map<string, Principal>();

/**
 * The principal a call's metadata carries, decoded once per distinct value: a caller's calls carry the
 * same bytes (the client side encodes each principal object once, encodedPrincipal), and decoding them
 * (base64, then protobuf) costs about 4 µs in a tight loop (test/bench/principal-decode.mjs: 0.01 µs
 * cached) and was charged 27 µs per tool call by a CPU profile of the one-process stack under load
 * (`BENCH_PROFILE=toolport node test/bench/execution-gateway.mjs`). The value is the key, so a different
 * principal is never served another's object. Shared between calls, hence frozen, nested messages and
 * lists included: a handler that tried to change its caller would throw instead of changing another
 * call's. Bounded by DECODED_PRINCIPALS_MAX and DECODED_PRINCIPAL_MAX_CHARS.
 */
export function decodedPrincipal(raw: string): Principal {
  let principal = decodedPrincipals.get(raw);
  if (principal === undefined) {
    principal = frozen(fromBinary(PrincipalSchema, decodeBinaryHeader(raw)));
    if (raw.length <= DECODED_PRINCIPAL_MAX_CHARS) {
      if (decodedPrincipals.size >= DECODED_PRINCIPALS_MAX) decodedPrincipals.clear();
      decodedPrincipals.set(raw, principal);
    }
  }
  return principal;
}

/**
 * `value` and every object and array inside it, frozen. Bytes are left as they are (a typed array with
 * elements cannot be frozen): a principal has no bytes fields, but fields this build does not know, from a
 * newer sender during an upgrade, are kept as bytes in `$unknown`.
 */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

/** The server side of every RPC: request id and caller from the metadata, a span, metrics, logging, domain errors as ConnectErrors. */
export function serverInterceptor(role: string, log: Logger): Interceptor {
  return (next) => async (req) => {
    const requestId = acceptRequestId(req.header.get(REQUEST_ID_HEADER));
    const rawPrincipal = req.header.get(PRINCIPAL_HEADER);
    let principal: Principal | undefined;
    if (rawPrincipal) {
      try {
        principal = decodedPrincipal(rawPrincipal);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "ignoring undecodable principal metadata");
      }
    }
    req.contextValues.set(requestIdKey, requestId);
    req.contextValues.set(principalKey, principal);
    const started = performance.now();
    const parent = contextFromHeaders((name) => req.header.get(name));
    return inSpan(
      `${req.service.typeName}/${req.method.name}`,
      { kind: SpanKind.SERVER, parent, attributes: { "rpc.system": "grpc", "toolport.role": role } },
      (span) =>
        runInScope({ requestId, principal }, async () => {
          try {
            const res = await next(req);
            const ms = performance.now() - started;
            rpcServerSeconds.observe({ role, method: req.method.name, code: "ok" }, ms / 1000);
            log.debug({ rpc: req.url, ms: Math.round(ms) }, "rpc ok");
            return res;
          } catch (err) {
            const connectErr = toConnectError(err);
            rpcServerSeconds.observe(
              { role, method: req.method.name, code: Code[connectErr.code] ?? String(connectErr.code) },
              (performance.now() - started) / 1000,
            );
            const fields = {
              rpc: req.method.name,
              service: req.service.typeName,
              code: connectErr.code,
              ms: Math.round(performance.now() - started),
            };
            if (
              connectErr.cause !== undefined &&
              !(connectErr.cause instanceof Error && connectErr.cause.name === "DomainError")
            ) {
              log.error({ ...fields, err: connectErr.cause }, "rpc failed");
            } else {
              log.info({ ...fields, reason: connectErr.rawMessage }, "rpc refused");
            }
            span.setAttribute("rpc.grpc.status_code", connectErr.code);
            throw connectErr;
          }
        }),
    );
  };
}

export interface RpcServerOptions {
  name: string;
  host: string;
  port: number;
  log: Logger;
  /** Registers this process's services; health is added by the kit. */
  routes: (router: ConnectRouter) => void;
  /** Full names of the gRPC services registered, for per-service health entries. */
  serviceNames: string[];
}

export interface RpcServer {
  port: number;
  health: HealthState;
  /**
   * Stops accepting connections and new calls, lets in-flight calls finish (up to graceMs), then
   * closes what is left.
   */
  close(graceMs: number): Promise<void>;
}

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const health = new HealthState(options.serviceNames);
  const shutdown = new AbortController();
  // A call whose signal is in use listens to the shutdown signal until it ends: not a leak, so no warning.
  setMaxListeners(0, shutdown.signal);
  const interceptors = [serverInterceptor(options.name, options.log)];
  // The services the process registers, served by grpc-js and hosted for callers in this process
  // (local-rpc.ts). A connect router takes the registrations so that `routes` keeps its connect shape
  // and connect checks each implementation against its service as before.
  const implementations: [DescService, object][] = [];
  const router = createConnectRouter();
  const hosting: ConnectRouter = {
    handlers: router.handlers,
    service(service, impl, opts) {
      implementations.push([service, impl]);
      return router.service(service, impl, opts);
    },
    rpc() {
      throw new Error("register whole services (router.service): single methods are not served");
    },
  };
  options.routes(hosting);
  hosting.service(Health, health.implementation());
  const server = createGrpcServer(SESSION_MEMORY_MB);
  for (const [service, impl] of implementations) {
    server.addService(...grpcService(service, impl, interceptors, shutdown.signal));
  }
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(bindAddress(options.host, options.port), grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  const unhost = implementations.map(([service, impl]) => hostLocally(service, impl, interceptors, port, shutdown.signal));
  return {
    port,
    health,
    async close(graceMs) {
      for (const stop of unhost) stop();
      // No new connections or streams (GOAWAY); calls already running go on to their end.
      let timer: NodeJS.Timeout | undefined;
      const drained = new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        timer = setTimeout(() => {
          shutdown.abort(new Error("shutdown grace period over"));
          server.forceShutdown();
          resolve();
        }, graceMs);
      });
      await drained;
      clearTimeout(timer);
    },
  };
}

/**
 * Encoded principal headers by principal object: a request makes several calls with the same
 * principal, and the gateway's principal cache hands the same object to many requests.
 */
const encodedPrincipals = new WeakMap<Principal, string>();

function encodedPrincipal(principal: Principal): string {
  let encoded = encodedPrincipals.get(principal);
  if (encoded === undefined) {
    encoded = encodeBinaryHeader(toBinary(PrincipalSchema, principal));
    encodedPrincipals.set(principal, encoded);
  }
  return encoded;
}

function clientInterceptor(): Interceptor {
  return (next) => async (req) => {
    const scope = currentScope();
    if (scope) {
      if (!req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, scope.requestId);
      if (scope.principal && !req.header.has(PRINCIPAL_HEADER))
        req.header.set(PRINCIPAL_HEADER, encodedPrincipal(scope.principal));
    }
    for (const [name, value] of Object.entries(traceHeaders())) req.header.set(name, value);
    return next(req);
  };
}

/**
 * A client for one of our services. The request id and principal of the current request travel
 * with every call; every call has a deadline: its own, or else the client's default, cut to what is left
 * of the request's (RequestScope.deadline). When the service is hosted in this process (one process,
 * several roles), the call runs in process with the same messages and errors (local-rpc.ts).
 */
export function createServiceClient<T extends DescService>(
  service: T,
  baseUrl: string,
  options: { timeoutMs?: number } = {},
): Client<T> {
  const interceptors = [clientInterceptor()];
  const timeoutMs = options.timeoutMs ?? 10_000;
  // No compression between our own processes: grpc-js compresses nothing unless asked to (gzip on
  // loopback or a cluster network only costs CPU: 1.4x per call in test/bench/rpc-hop.mjs with connect).
  const remote = createGrpcJsTransport({
    baseUrl,
    interceptors,
    defaultTimeoutMs: timeoutMs,
    maxSessionMemoryMb: SESSION_MEMORY_MB,
  });
  return createClient(service, withinRequest(switchingTransport(remote, baseUrl, interceptors, timeoutMs), timeoutMs));
}

/**
 * The deadline of a call that sets none, when it runs for a request whose answer is due at a time
 * (RequestScope.deadline): the client's default, or what is left until then if that is less (at least
 * 1 ms, so a call made too late ends at once as DEADLINE_EXCEEDED). Without it each call had the whole
 * default however long the request had already taken: behind a slow authentication, a duplicate of an
 * idempotent call waiting for its first (executor.ts waitDeadline) answered after its caller had stopped
 * listening.
 */
function withinRequest(transport: Transport, defaultTimeoutMs: number): Transport {
  const timeoutOf = (timeoutMs: number | undefined) => {
    if (timeoutMs !== undefined) return timeoutMs;
    const due = currentScope()?.deadline;
    if (due === undefined) return undefined;
    const left = due - Date.now();
    return Math.max(1, defaultTimeoutMs > 0 ? Math.min(defaultTimeoutMs, left) : left);
  };
  return {
    unary: (method, signal, timeoutMs, ...rest) => transport.unary(method, signal, timeoutOf(timeoutMs), ...rest),
    stream: (method, signal, timeoutMs, ...rest) => transport.stream(method, signal, timeoutOf(timeoutMs), ...rest),
  };
}

/** Marks a principal for an outgoing call made outside any request scope (jobs, consumers, tests). */
export function principalHeader(principal: Principal): Record<string, string> {
  return { [PRINCIPAL_HEADER]: encodeBinaryHeader(toBinary(PrincipalSchema, principal)) };
}
