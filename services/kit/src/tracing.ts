/**
 * Traces with OpenTelemetry: on only when OTEL_EXPORTER_OTLP_ENDPOINT is set (spans exported over OTLP/HTTP
 * in batches, the standard OTEL_* variables apply), off and free otherwise: no provider is registered, so
 * the API's tracer is a no-op and propagation injects nothing.
 *
 * One trace follows a request: the gateway's (or MCP server's) server span, then each RPC as a server
 * span of the service answering it, in process or across processes alike (W3C trace context in the gRPC
 * metadata, kit/rpc), then the upstream call as a client span of execution.
 */
import { type Context, context, propagation, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
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

/** The trace context to send along, as headers (`traceparent`, `tracestate`): empty when tracing is off. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a caller sent in its headers (none: the active one). */
export function contextFromHeaders(get: (name: string) => string | null | undefined): Context {
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

export { SpanKind, SpanStatusCode };
