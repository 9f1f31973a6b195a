/**
 * gRPC between our processes on @grpc/grpc-js, both sides, with what services see kept as connect-es
 * gives it: handlers stay connect-shaped (`ServiceImpl`, a `HandlerContext`), interceptors stay connect
 * `Interceptor`s, and a caller gets a `ConnectError` with the code, message, metadata and details
 * (`findDetails`) connect's own gRPC client would give it. test/bench/rpc-hop.mjs measured grpc-js's
 * server at a fraction of connect-node's CPU per call (rows (1u) and (3)).
 *
 * - Messages are protobuf-es messages: a method's grpc-js definition serializes with `toBinary` and
 *   deserializes with `fromBinary` of the connect method descriptor.
 * - Headers cross as gRPC metadata: `-bin` keys as bytes (a connect `Headers` holds them base64, as
 *   `encodeBinaryHeader` writes them), the others as strings.
 * - An error crosses as connect's gRPC server sends it: the status code, the message, the error's
 *   metadata in the trailers and its details as a google.rpc.Status in `grpc-status-details-bin`
 *   (connect's `setTrailerStatus`), read back with connect's `findTrailerError`.
 * - Deadlines: the caller's (or the client's default) goes out as the gRPC deadline; the handler's
 *   context has it as `timeoutMs()` and its signal aborts at it, when the caller cancels and at shutdown.
 * Unary and server-streaming methods are served (health's Watch streams); our own methods are all unary.
 */
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
  fromBinary,
  isMessage,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  decodeBinaryHeader,
  encodeBinaryHeader,
  type HandlerContext,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import * as grpc from "@grpc/grpc-js";
import { CALL_ENDED, CallContext, pathOf, requestOf } from "./call-context.js";

/**
 * Channel and server options both sides share: no message size limit (connect-node has none either),
 * `maxSessionMemory` MiB per HTTP/2 connection, and no HTTP proxy from the environment (connect-node
 * never used one for calls between our processes).
 */
function wireOptions(maxSessionMemoryMb: number): grpc.ChannelOptions {
  return {
    "grpc.max_receive_message_length": -1,
    "grpc.max_send_message_length": -1,
    "grpc-node.max_session_memory": maxSessionMemoryMb,
    "grpc.enable_http_proxy": 0,
    // Channelz (grpc-js's call counters and traces per channel, for its admin service) is not served: no cost per call.
    "grpc.enable_channelz": 0,
  };
}

/** Bytes as grpc-js wants them (a Buffer), without copying. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function serializer<D extends DescMessage>(desc: D) {
  return (message: unknown) => asBuffer(toBinary(desc, message as Parameters<typeof toBinary<D>>[1]));
}

function deserializer<D extends DescMessage>(desc: D) {
  return (bytes: Buffer) => fromBinary(desc, bytes);
}

/** Metadata names grpc-js sets itself (or refuses): never copied from a `Headers`. */
const RESERVED = new Set(["content-type", "te", "user-agent", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding"]);

/** A connect `Headers` as gRPC metadata. */
export function metadataFromHeaders(headers: Headers): grpc.Metadata {
  const metadata = new grpc.Metadata();
  headers.forEach((value, key) => {
    if (RESERVED.has(key) || key === "grpc-status" || key === "grpc-message") return;
    if (key.endsWith("-bin")) {
      // A Headers joins repeated values with ", "; each is base64 of its own.
      for (const part of value.split(/,\s*/)) metadata.add(key, Buffer.from(decodeBinaryHeader(part)));
    } else {
      metadata.add(key, value);
    }
  });
  return metadata;
}

/** gRPC metadata as a connect `Headers`: `-bin` values base64, as over connect's own transport. */
export function headersFromMetadata(metadata: grpc.Metadata | undefined): Headers {
  const headers = new Headers();
  if (!metadata) return headers;
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) headers.append(key, typeof value === "string" ? value : encodeBinaryHeader(value));
  }
  return headers;
}

/** A thrown value as the gRPC status connect's gRPC server would send for it. */
function statusOf(err: unknown): Partial<grpc.StatusObject> {
  const error = ConnectError.from(err);
  const trailer = setTrailerStatus(new Headers(), error);
  trailer.delete("grpc-status");
  trailer.delete("grpc-message");
  let metadata: grpc.Metadata;
  try {
    metadata = metadataFromHeaders(trailer);
  } catch {
    // Error metadata grpc-js refuses (a name or value not allowed in HTTP/2): the details still go.
    metadata = new grpc.Metadata();
    const details = trailer.get("grpc-status-details-bin");
    if (details) metadata.set("grpc-status-details-bin", Buffer.from(decodeBinaryHeader(details)));
  }
  return { code: error.code as number as grpc.status, details: error.rawMessage, metadata };
}

/** The ConnectError a caller receives for a gRPC status that is not OK. */
function errorOf(status: { code: grpc.status; details: string; metadata?: grpc.Metadata }, header: Headers): ConnectError {
  const trailer = headersFromMetadata(status.metadata);
  let error = trailer.has("grpc-status-details-bin") ? findTrailerError(trailer) : undefined;
  if (!error) {
    const code = status.code in Code ? (status.code as number as Code) : Code.Unknown;
    error = new ConnectError(status.details, code, trailer);
    error.isWireError = true;
  }
  header.forEach((value, key) => {
    error.metadata.append(key, value);
  });
  return error;
}

/** A handler's answer as a message: handlers may return an init object, as connect allows. */
function asMessage(desc: DescMessage, value: unknown) {
  return isMessage(value, desc) ? value : create(desc, value as MessageInitShape<DescMessage>);
}

type AnyHandler = (request: unknown, context: HandlerContext) => unknown;

function chain<Req, Res>(interceptors: Interceptor[], last: (req: Req) => Promise<Res>): (req: Req) => Promise<Res> {
  let next = last as unknown as Parameters<Interceptor>[0];
  for (let i = interceptors.length - 1; i >= 0; i--) next = (interceptors[i] as Interceptor)(next);
  return next as unknown as (req: Req) => Promise<Res>;
}

/**
 * How long before this side's deadline a caller's reset still counts as the deadline: a quarter of the
 * call's time, at most a second. Nothing on the wire tells a caller that cancelled that close to its
 * deadline from one whose deadline passed, so such a cancellation is reported as the deadline.
 */
function deadlineSlackMs(timeoutMs: number): number {
  return Math.min(1_000, Math.max(0, timeoutMs) / 4);
}

function contextOf(
  method: DescMethod,
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  shutdownSignal: AbortSignal,
): CallContext {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  const deadlineAt = Number.isFinite(at) ? at : undefined;
  const context = new CallContext(method, headersFromMetadata(call.metadata), deadlineAt, shutdownSignal);
  // grpc-js cancels the call at this side's deadline, and the caller resets it at its own. The caller's
  // deadline comes first: this side counts the same timeout from when the call arrived, so the caller's
  // reset comes before it by the call's transit time, which a loaded host stretches (in a CI run a 200 ms
  // call's reset came with time still left here). A reset within the deadline's slack is the deadline,
  // as connect's server reports it; one earlier is the caller's cancellation.
  const slack = deadlineAt === undefined ? 0 : deadlineSlackMs(deadlineAt - Date.now());
  call.once("cancelled", () =>
    context.abort(
      (context.timeoutMs() ?? Number.POSITIVE_INFINITY) <= slack
        ? new ConnectError("the operation timed out", Code.DeadlineExceeded)
        : new ConnectError("operation was aborted", Code.Canceled),
    ),
  );
  return context;
}

const INTERNAL = new ConnectError("internal error", Code.Internal);

/** Response headers set by the handler or an interceptor, sent before the message. */
function sendHeaders(call: { sendMetadata(m: grpc.Metadata): void }, header: Headers) {
  let any = false;
  header.forEach(() => {
    any = true;
  });
  if (any) call.sendMetadata(metadataFromHeaders(header));
}

function unaryHandler(
  method: DescMethodUnary,
  impl: AnyHandler | undefined,
  interceptors: Interceptor[],
  shutdownSignal: AbortSignal,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const context = contextOf(method, call, shutdownSignal);
    const serve = chain<UnaryRequest, UnaryResponse>(interceptors, async (req) => {
      if (!impl) throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented);
      const output = await impl(req.message, context);
      return {
        stream: false,
        service: method.parent,
        method,
        header: context.sent("header"),
        trailer: context.sent("trailer"),
        message: asMessage(method.output, output),
      } as UnaryResponse;
    });
    serve(
      requestOf<UnaryRequest>(context, {
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: context.url,
        header: context.requestHeader,
        contextValues: context.values,
        message: call.request as never,
      }),
    )
      .then(
        (res) => {
          // An interceptor may answer with headers of its own; a handler's are made only when asked for.
          let trailer: grpc.Metadata | undefined;
          try {
            if (res.header) sendHeaders(call, res.header);
            if (res.trailer) trailer = metadataFromHeaders(res.trailer);
          } catch {
            // A header grpc-js refuses (a value not printable ASCII, say): the caller gets an internal
            // error, as for any failure of ours, and the process lives on.
            callback(statusOf(INTERNAL));
            return;
          }
          callback(null, res.message, trailer);
        },
        (err: unknown) => callback(statusOf(err)),
      )
      .finally(() => context.abort(CALL_ENDED));
  };
}

function serverStreamHandler(
  method: DescMethodServerStreaming,
  impl: AnyHandler | undefined,
  interceptors: Interceptor[],
  shutdownSignal: AbortSignal,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const context = contextOf(method, call, shutdownSignal);
    const serve = chain<StreamRequest, StreamResponse>(interceptors, async (req) => {
      if (!impl) throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented);
      let input: unknown;
      for await (const message of req.message) input = message;
      return {
        stream: true,
        service: method.parent,
        method,
        header: context.responseHeader,
        trailer: context.responseTrailer,
        message: impl(input, context) as AsyncIterable<never>,
      } as StreamResponse;
    });
    (async () => {
      const res = await serve(
        requestOf<StreamRequest>(context, {
          stream: true,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: context.url,
          header: context.requestHeader,
          contextValues: context.values,
          message: createAsyncIterable([call.request]) as never,
        }),
      );
      sendHeaders(call, res.header);
      for await (const message of res.message) {
        if (call.cancelled) return;
        call.write(asMessage(method.output, message));
      }
      call.end(metadataFromHeaders(res.trailer));
    })()
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit("error", statusOf(err));
      })
      .finally(() => context.abort(CALL_ENDED));
  };
}

/** A grpc-js service definition and implementation for a connect service and its connect-shaped handlers. */
export function grpcService(
  service: DescService,
  impl: object,
  interceptors: Interceptor[],
  shutdownSignal: AbortSignal,
): [grpc.ServiceDefinition, grpc.UntypedServiceImplementation] {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  const handlers = impl as Record<string, AnyHandler | undefined>;
  for (const method of service.methods) {
    const handler = typeof handlers[method.localName] === "function" ? handlers[method.localName]?.bind(impl) : undefined;
    definition[method.localName] = {
      path: pathOf(method),
      requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
      responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
      requestSerialize: serializer(method.input),
      requestDeserialize: deserializer(method.input),
      responseSerialize: serializer(method.output),
      responseDeserialize: deserializer(method.output),
      originalName: method.localName,
    };
    if (method.methodKind === "unary") {
      implementation[method.localName] = unaryHandler(method as DescMethodUnary, handler, interceptors, shutdownSignal);
    } else if (method.methodKind === "server_streaming") {
      implementation[method.localName] = serverStreamHandler(
        method as DescMethodServerStreaming,
        handler,
        interceptors,
        shutdownSignal,
      );
    } else {
      implementation[method.localName] = ((call: grpc.ServerDuplexStream<unknown, unknown>) =>
        call.emit("error", { code: grpc.status.UNIMPLEMENTED, details: "client streaming is not served" })) as never;
    }
  }
  return [definition as grpc.ServiceDefinition, implementation];
}

/** A grpc-js server with the options our processes use between themselves. */
export function createGrpcServer(maxSessionMemoryMb: number): grpc.Server {
  return new grpc.Server(wireOptions(maxSessionMemoryMb));
}

/** `host:port` as grpc-js binds it (an IPv6 address in brackets). */
export function bindAddress(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

export interface GrpcTransportOptions {
  /** `http://host:port` (plaintext HTTP/2) or `https://host:port` (TLS, the system's CAs). */
  baseUrl: string;
  interceptors: Interceptor[];
  /** The deadline of a call that sets none; a call's `timeoutMs` <= 0 means none. */
  defaultTimeoutMs?: number;
  maxSessionMemoryMb: number;
}

/**
 * The signal of a call whose caller gave none: one for all such calls, since nothing aborts it (an
 * AbortController per call showed in the client's CPU profile, rpc-hop.mjs row (7)).
 */
const NOT_ABORTED = new AbortController().signal;

/**
 * A connect `Transport` over a grpc-js client. The client's interceptors run around each call as in
 * connect's transports; the deadline is grpc-js's (it ends the call, and the server gets it), and a
 * caller's abort cancels the call. Errors are connect's for the same events: DEADLINE_EXCEEDED "the
 * operation timed out" past the deadline, CANCELED with the abort's reason, and otherwise the status
 * the server sent (errorOf). One channel per transport.
 */
export function createGrpcJsTransport(options: GrpcTransportOptions): Transport & { close(): void } {
  const url = new URL(options.baseUrl);
  const credentials = url.protocol === "https:" ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const target = `${url.hostname}:${port}`;
  // A connection of its own (grpc-js otherwise shares one per target among a process's channels), as
  // connect-node had a session per transport: a role's replicas behind a Service (L4, per connection)
  // then get the connections of each client, not one per process, and a channel made anew after a
  // failure connects at once instead of inheriting a shared connection's reconnect backoff.
  const connect = () =>
    new grpc.Client(target, credentials, { ...wireOptions(options.maxSessionMemoryMb), "grpc.use_local_subchannel_pool": 1 });
  let client = connect();
  /**
   * The channel to call on. A grpc-js channel that failed to connect (the peer down or restarting) waits
   * out a growing backoff (1 s, then up to 2 min) and fails every call meanwhile, so a peer back up would
   * stay unreachable for up to minutes; connect-node tried to connect at each call. So does this: such a
   * channel is closed and a new one connects at once (the failed calls never left this process).
   */
  const channel = () => {
    if (client.getChannel().getConnectivityState(false) === grpc.connectivityState.TRANSIENT_FAILURE) {
      client.close();
      client = connect();
    }
    return client;
  };
  const base = options.baseUrl.replace(/\/+$/, "");
  const serializers = new Map<DescMethod, [(m: unknown) => Buffer, (b: Buffer) => unknown]>();
  const serializersOf = (method: DescMethod) => {
    let found = serializers.get(method);
    if (!found) {
      found = [serializer(method.input), deserializer(method.output)];
      serializers.set(method, found);
    }
    return found;
  };

  function send(req: UnaryRequest, deadlineAt: number | undefined): Promise<UnaryResponse> {
    const signal = req.signal;
    if (signal.aborted) return Promise.reject(ConnectError.from(signal.reason, Code.Canceled));
    const [serialize, deserialize] = serializersOf(req.method);
    return new Promise((resolve, reject) => {
      let responseHeader: Headers | undefined;
      let value: unknown;
      const call = channel().makeUnaryRequest(
        pathOf(req.method),
        serialize,
        deserialize,
        req.message,
        metadataFromHeaders(req.header),
        { deadline: deadlineAt ?? Number.POSITIVE_INFINITY },
        (_error, response) => {
          value = response;
        },
      );
      const cancel = () => call.cancel();
      if (signal !== NOT_ABORTED) signal.addEventListener("abort", cancel, { once: true });
      call.on("metadata", (metadata: grpc.Metadata) => {
        responseHeader = headersFromMetadata(metadata);
      });
      // grpc-js calls the callback, then emits the status with the trailers, in one go.
      call.on("status", (status: grpc.StatusObject) => {
        if (signal !== NOT_ABORTED) signal.removeEventListener("abort", cancel);
        if (status.code === grpc.status.OK && value !== undefined) {
          resolve({
            stream: false,
            service: req.service,
            method: req.method,
            header: responseHeader ?? new Headers(),
            message: value,
            trailer: headersFromMetadata(status.metadata),
          } as UnaryResponse);
        } else if (signal.aborted) {
          reject(ConnectError.from(signal.reason, Code.Canceled));
        } else if (
          status.code === grpc.status.DEADLINE_EXCEEDED &&
          deadlineAt !== undefined &&
          Date.now() >= deadlineAt &&
          !status.metadata?.get("grpc-status-details-bin").length
        ) {
          reject(new ConnectError("the operation timed out", Code.DeadlineExceeded));
        } else {
          reject(errorOf(status, responseHeader ?? new Headers()));
        }
      });
    });
  }

  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      const deadline = timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const deadlineAt = deadline === undefined ? undefined : Date.now() + deadline;
      const run = chain<UnaryRequest, UnaryResponse>(options.interceptors, (req) => send(req, deadlineAt));
      return (await run({
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: `${base}${pathOf(method)}`,
        signal: signal ?? NOT_ABORTED,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: asMessage(method.input, input),
      } as UnaryRequest)) as never;
    },
    async stream() {
      throw new ConnectError("streaming calls are not made between our services", Code.Unimplemented);
    },
    close() {
      client.close();
    },
  };
}
