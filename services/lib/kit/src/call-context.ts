/**
 * The handler context of one call served by the kit (connect's `HandlerContext`), over grpc-js
 * (grpc-wire.ts) and in process (local-rpc.ts): its own values, the caller's metadata as headers, the
 * caller's deadline as `timeoutMs()`, and a signal that aborts when the server aborts the call (the
 * caller cancels, the deadline passes, the server shuts down, the call ends). Made for the kit rather
 * than with connect's `createHandlerContext`, which arms a deadline timer and links three AbortControllers
 * per call, each with listeners to add and remove: the transport keeps the deadline and the caller's
 * cancel itself and calls `abort`, and the signal and response headers are made only when something asks
 * for them (most handlers never do; rpc-hop.mjs rows (5) and (7)).
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";

/** A method's gRPC path, `/<service type name>/<method>`. */
export const pathOf = (method: DescMethod) => `/${method.parent.typeName}/${method.name}`;

export class CallContext implements HandlerContext {
  readonly requestMethod = "POST";
  private controller: AbortController | undefined;
  private reason: unknown;
  private header: Headers | undefined;
  private trailer: Headers | undefined;
  private readonly onShutdown = () => this.abort(this.shutdownSignal?.reason);

  /**
   * `deadlineAt` (epoch ms) is what `timeoutMs()` counts down to; `shutdownSignal`, when given, aborts the
   * context's signal once that is made (a transport that watches shutdown itself passes none).
   */
  constructor(
    readonly method: DescMethod,
    readonly requestHeader: Headers,
    private readonly deadlineAt: number | undefined,
    private readonly shutdownSignal: AbortSignal | undefined,
    readonly protocolName: "grpc" | "local" = "grpc",
    readonly values: ContextValues = createContextValues(),
  ) {}

  get service(): DescService {
    return this.method.parent;
  }

  get url(): string {
    return this.protocolName === "local" ? `local:${pathOf(this.method)}` : pathOf(this.method);
  }

  timeoutMs(): number | undefined {
    return this.deadlineAt === undefined ? undefined : this.deadlineAt - Date.now();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
      else if (this.shutdownSignal?.aborted) this.abort(this.shutdownSignal.reason);
      else this.shutdownSignal?.addEventListener("abort", this.onShutdown, { once: true });
    }
    return this.controller.signal;
  }

  get responseHeader(): Headers {
    this.header ??= new Headers();
    return this.header;
  }

  get responseTrailer(): Headers {
    this.trailer ??= new Headers();
    return this.trailer;
  }

  /** Response headers or trailers, if a handler or interceptor made any. */
  sent(which: "header" | "trailer"): Headers | undefined {
    return which === "header" ? this.header : this.trailer;
  }

  /** Aborts the signal (once; the first reason stands). */
  abort(reason: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    if (this.controller) {
      this.shutdownSignal?.removeEventListener("abort", this.onShutdown);
      this.controller.abort(reason);
    }
  }
}

/** A request whose signal is the context's, made only when read (an interceptor or handler asking for it). */
export function requestOf<R extends UnaryRequest | StreamRequest>(context: CallContext, fields: Omit<R, "signal">): R {
  return Object.defineProperty(fields, "signal", { get: () => context.signal, enumerable: true }) as R;
}

/** The reason a finished call's context is aborted with: made once (an Error per call costs a stack trace). */
export const CALL_ENDED = new ConnectError("call ended", Code.Canceled);
