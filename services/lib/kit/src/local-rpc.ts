/**
 * Calls between roles hosted in the same process (DESIGN.md "Roles"), without a socket.
 *
 * A service that starts its gRPC server also registers its implementation here; a client made with
 * `createServiceClient` looks its service up on every call and, when it is hosted in this process, runs
 * the call here instead of over HTTP/2. What a service sees stays what the wire gives it:
 * - the request and the response cross as deep copies walked by their schema (message-copy.ts), not
 *   encoded and decoded: caller and callee never share a mutable object, a property the contract does not
 *   carry does not cross, and what arrives is what the decoder would return;
 * - headers cross as a new `Headers` (the principal and request id travel in them, as over the wire), and
 *   the callee gets context values of its own;
 * - the client's interceptors, then the server's (scope, logging, error mapping), run as they do remotely;
 * - an error arrives as a new ConnectError with the code, message, metadata and details (encoded, as
 *   `findDetails` reads them off the wire) and never the callee's `cause`;
 * - the caller's deadline holds: past it the call fails with DEADLINE_EXCEEDED and the callee's signal aborts.
 *
 * Only unary methods are hosted (every method of ours is; streaming calls go over the wire).
 */
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  isMessage,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { CALL_ENDED, CallContext, requestOf } from "./call-context.js";
import { copyMessage } from "./message-copy.js";

type UnaryHandler = (request: unknown, context: CallContext) => unknown;

interface HostedService {
  service: DescService;
  impl: Record<string, UnaryHandler | undefined>;
  interceptors: Interceptor[];
  shutdownSignal?: AbortSignal;
}

/** By service full name and the port its gRPC server listens on: `<type name> <port>`. */
const hosted = new Map<string, HostedService>();
const keyOf = (typeName: string, port: number) => `${typeName} ${port}`;

/** Whether calls to co-located services skip the socket (TOOLPORT_LOCAL_CALLS=false keeps them on gRPC). */
export const localCallsEnabled = process.env.TOOLPORT_LOCAL_CALLS !== "false";

/**
 * Hosts a service implementation for in-process callers of the server on `port`; returns the function
 * that stops hosting it. A client whose base URL names that port calls it in process: the port, not the
 * host name, since the same process answers on every address it listens on, and two instances of one
 * service in a process (tests do that) are told apart by it.
 */
export function hostLocally(
  service: DescService,
  impl: object,
  interceptors: Interceptor[],
  port: number,
  shutdownSignal?: AbortSignal,
): () => void {
  const entry: HostedService = {
    service,
    impl: impl as Record<string, UnaryHandler | undefined>,
    interceptors,
    shutdownSignal,
  };
  const key = keyOf(service.typeName, port);
  hosted.set(key, entry);
  return () => {
    if (hosted.get(key) === entry) hosted.delete(key);
  };
}

/** The services hosted in this process, as `<full name> <port>`. */
export function hostedServices(): string[] {
  return [...hosted.keys()];
}

/** Whether a client of `service` at `baseUrl` calls it in this process now. */
export function hostedHere(service: DescService, baseUrl: string): boolean {
  return localCallsEnabled && hosted.has(keyOf(service.typeName, portOf(baseUrl)));
}

/** The port a base URL names (its scheme's default when it names none). */
export function portOf(baseUrl: string): number {
  const url = new URL(baseUrl);
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/**
 * The message as the other side receives it. `create` of an init shape keeps the init's arrays and nested
 * messages, so a message made here is copied too.
 */
function received<D extends DescMessage>(desc: D, value: unknown) {
  return copyMessage(desc, isMessage(value, desc) ? value : create(desc, value as MessageInitShape<D>));
}

/** The error as a remote caller receives it: no cause, details encoded. */
function asReceived(err: unknown): ConnectError {
  const e = ConnectError.from(err);
  const details = e.details.map((d) =>
    "desc" in d ? { type: d.desc.typeName, value: toBinary(d.desc, create(d.desc, d.value)) } : d,
  );
  const received = new ConnectError(e.rawMessage, e.code, new Headers(e.metadata));
  // As the wire delivers them: Any-style {type, value} (the constructor only takes outgoing details).
  received.details = details;
  return received;
}

function chain(interceptors: Interceptor[], last: (req: UnaryRequest) => Promise<UnaryResponse>) {
  let next = last as Parameters<Interceptor>[0];
  for (let i = interceptors.length - 1; i >= 0; i--) next = (interceptors[i] as Interceptor)(next);
  return next as (req: UnaryRequest) => Promise<UnaryResponse>;
}

async function callHosted(
  target: HostedService,
  method: DescMethodUnary,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
  header: Headers,
  message: unknown,
): Promise<UnaryResponse> {
  const impl = target.impl[method.localName];
  if (!impl) throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented);
  const contextValues = createContextValues();
  // The callee's own copy of the headers. The transport watches the deadline, the caller's signal and
  // shutdown itself (below) and aborts the context, whose signal is made only if the callee reads it.
  const context = new CallContext(
    method,
    new Headers(header),
    timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
    undefined,
    "local",
    contextValues,
  );
  const serve = chain(target.interceptors, async (req) => {
    const output = await impl(req.message, context);
    return {
      stream: false,
      service: method.parent,
      method,
      header: context.responseHeader,
      trailer: context.responseTrailer,
      message: create(method.output, output as MessageInitShape<DescMessage>),
    } as UnaryResponse;
  });
  // The context aborts at the deadline, when the caller aborts and at shutdown; the caller stops waiting
  // then, whatever the handler does.
  let stopWaiting!: (err: ConnectError) => void;
  const aborted = new Promise<never>((_, reject) => {
    stopWaiting = reject;
  });
  aborted.catch(() => {});
  const stop = (reason: unknown) => {
    context.abort(reason);
    stopWaiting(ConnectError.from(reason, Code.Canceled));
  };
  const onCallerAbort = () => stop(signal?.reason);
  const onShutdown = () => stop(target.shutdownSignal?.reason);
  const timedOut = () => stop(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined && timeoutMs <= 0) timedOut();
  else if (signal?.aborted) stop(signal.reason);
  else if (target.shutdownSignal?.aborted) stop(target.shutdownSignal.reason);
  else {
    if (timeoutMs !== undefined) timer = setTimeout(timedOut, timeoutMs);
    signal?.addEventListener("abort", onCallerAbort, { once: true });
    target.shutdownSignal?.addEventListener("abort", onShutdown, { once: true });
  }
  const request = requestOf<UnaryRequest>(context, {
    stream: false,
    service: method.parent,
    method,
    requestMethod: "POST",
    url: context.url,
    header: context.requestHeader,
    contextValues,
    message: received(method.input, message),
  });
  try {
    const res = await Promise.race([serve(request), aborted]);
    // The response headers are the context's own, made for this call: no other holder to copy away from.
    return { ...res, message: received(method.output, res.message) };
  } catch (err) {
    throw asReceived(err);
  } finally {
    // As a server does when a call ends: the timer and listeners go, and the context's signal (if the
    // callee made it) aborts.
    clearTimeout(timer);
    signal?.removeEventListener("abort", onCallerAbort);
    target.shutdownSignal?.removeEventListener("abort", onShutdown);
    context.abort(CALL_ENDED);
  }
}

/**
 * The signal of a call whose caller gave none: one for all such calls, since its controller is never
 * aborted (an AbortSignal per call cost about 5 us of a 35 us hop, row (5b) of rpc-hop.mjs). It is not
 * handed on to the callee's context, which would add and remove a listener on it per call.
 */
const NOT_ABORTED = new AbortController().signal;

/**
 * A transport that runs a call in this process when its service is hosted here on the port of `baseUrl`
 * (at the moment of the call), and over `remote` otherwise. `interceptors` are the client's, run in both
 * cases (for remote calls `remote` runs its own).
 */
export function switchingTransport(
  remote: Transport,
  baseUrl: string,
  interceptors: Interceptor[],
  defaultTimeoutMs?: number,
): Transport {
  if (!localCallsEnabled) return remote;
  const port = portOf(baseUrl);
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      const target = hosted.get(keyOf(method.parent.typeName, port));
      if (!target) return remote.unary(method, signal, timeoutMs, header, input, contextValues);
      const deadline = timeoutMs ?? defaultTimeoutMs;
      const send = chain(interceptors, (req) =>
        // callHosted copies the headers into the callee's own object.
        callHosted(target, req.method, req.signal === NOT_ABORTED ? undefined : req.signal, deadline, req.header, req.message),
      );
      return send({
        stream: false,
        service: method.parent,
        method: method as DescMethodUnary,
        requestMethod: "POST",
        url: `local:/${method.parent.typeName}/${method.name}`,
        signal: signal ?? NOT_ABORTED,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: input,
      } as UnaryRequest) as never;
    },
    stream(method, ...rest) {
      return remote.stream(method, ...rest);
    },
  };
}
