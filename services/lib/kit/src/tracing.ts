/**
 * Traces with OpenTelemetry: on only when OTEL_EXPORTER_OTLP_ENDPOINT is set (spans exported over OTLP/HTTP
 * in batches, the standard OTEL_* variables apply), off and free otherwise: no provider is registered, so
 * the API's tracer is a no-op and propagation injects nothing.
 *
 * One trace follows a request: the gateway's (or MCP server's) server span, then each RPC as a server
 * span of the service answering it, in process or across processes alike (W3C trace context in the gRPC
 * metadata, kit/rpc), then the upstream call as a client span of execution. Events follow it across NATS:
 * the outbox row keeps the trace context of the work that wrote it (`outboxTraceContext`), the relay's
 * publish is a producer span in that trace, and each consumer's handling a consumer span under it, the
 * context carried in the message's headers (kit/events).
 */
import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

let provider: NodeTracerProvider | undefined;

/** Registers the tracer provider of this process once, when OTLP export is configured; true if it did. */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (provider || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // AsyncLocalStorage context and the W3C trace-context propagator, for the whole process.
  provider.register();
  return true;
}

/** Exports the spans still buffered and stops (at shutdown). */
export async function stopTracing(): Promise<void> {
  const p = provider;
  provider = undefined;
  await p?.shutdown().catch(() => {});
}

export const tracer = () => trace.getTracer("toolport");

/**
 * The span `inSpan` hands its callback while tracing is off: the API's non-recording span, on which every
 * call does nothing. Off, inSpan and the header helpers return at once instead of going through the no-op
 * tracer and context manager, which make a span and a context per call for nothing (four spans a tool call).
 */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The trace context to send along, as headers (`traceparent`, `tracestate`): empty when tracing is off. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  if (!provider) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/**
 * The active trace context as an outbox row keeps it (a JSON object of the W3C headers), or null when there
 * is none to keep (tracing off, or no span active): the relay publishes the event in that trace later.
 */
export function outboxTraceContext(): string | null {
  const carrier = traceCarrier();
  return carrier ? JSON.stringify(carrier) : null;
}

/** The active trace context's W3C headers, or null when there is none (tracing off, or no span active). */
export function traceCarrier(): Record<string, string> | null {
  const carrier = traceHeaders();
  return carrier.traceparent ? carrier : null;
}

/** The context a caller sent in its headers (none: the active one). */
export function contextFromHeaders(get: (name: string) => string | null | undefined): Context {
  if (!provider) return context.active();
  return propagation.extract(context.active(), undefined, {
    keys: () => ["traceparent", "tracestate"],
    get: (_carrier, key) => get(key) ?? undefined,
  });
}

/**
 * Runs `fn` inside a new span (a child of `parent`, default the active context), ended when `fn` settles;
 * a throw marks the span as an error.
 */
export function inSpan<T>(
  name: string,
  options: { kind: SpanKind; attributes?: Record<string, string | number | boolean>; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!provider) {
    try {
      return fn(NO_SPAN);
    } catch (err) {
      return Promise.reject(err);
    }
  }
  const span = tracer().startSpan(
    name,
    { kind: options.kind, attributes: options.attributes },
    options.parent ?? context.active(),
  );
  return context.with(trace.setSpan(options.parent ?? context.active(), span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A span begun now and ended by the caller (`end(error?)`), for work that does not fit in one callback:
 * the relay's publishes, a consumer's batch. Nothing is recorded when tracing is off.
 */
export function beginSpan(
  name: string,
  options: { kind: SpanKind; attributes?: Record<string, string | number | boolean>; parent: Context },
): { span: Span; context: Context; end: (error?: unknown) => void } {
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, options.parent);
  return {
    span,
    context: trace.setSpan(options.parent, span),
    end: (error) => {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
      span.end();
    },
  };
}

/** Runs `fn` with `ctx` as the active trace context. */
export function withTraceContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The trace context an outbox row or a run kept (`outboxTraceContext`), or the active one when it kept none. */
export function contextFromStored(stored: string | Record<string, string> | null | undefined): Context {
  if (!stored) return context.active();
  let carrier: Record<string, string>;
  try {
    carrier = typeof stored === "string" ? (JSON.parse(stored) as Record<string, string>) : stored;
  } catch {
    return context.active();
  }
  return contextFromHeaders((name) => carrier[name]);
}

export { SpanKind, SpanStatusCode };
