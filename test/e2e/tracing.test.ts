/**
 * Traces (kit/tracing, OpenTelemetry): with OTEL_EXPORTER_OTLP_ENDPOINT set, one tool call is one trace,
 * exported over OTLP/HTTP to a collector started by the test: the gateway's server span, the execution
 * service's CallTool span under it (the trace context carried in the RPC's gRPC metadata from the gateway's
 * process to execution's), and the upstream call's client span under that. Without the variable nothing is exported (the other tests' stacks).
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closer, listen, startEchoApi, type Upstream } from "../../services/execution/test/upstreams.js";
import { type ExecStack, echoApiDocument, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}

/** An OTLP/HTTP (JSON) trace receiver: every span it was sent, with its resource's service.name. */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === "/v1/traces" && (req.headers["content-type"] ?? "").includes("json")) {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a: { key: string }) => a.key === "service.name")?.value?.stringValue;
        for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) spans.push({ ...span, service });
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, spans, close: closer(server) };
}

describe("traces", () => {
  let s: ExecStack;
  let api: Upstream;
  let collector: Awaited<ReturnType<typeof startCollector>>;

  beforeAll(async () => {
    collector = await startCollector();
    api = await startEchoApi();
    s = await startExecStack(
      [`127.0.0.1:${api.port}`],
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
      undefined,
      // A process per role: the trace crosses processes in the RPC's metadata.
      { layout: "per-role" },
    );
  });
  afterAll(async () => {
    await s?.stop();
    await api?.close();
    await collector?.close();
  });

  it("follows one tool call from the gateway through execution to the upstream, in one trace", async () => {
    const agent = await registerAgent(s);
    const { tools } = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    const res = await s.call("POST", `/tools/call/${tools.list_items}`, { key: agent.key, body: { n: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    let chain: OtlpSpan[] = [];
    await expect
      .poll(
        () => {
          const upstream = collector.spans.find((x) => x.name === "upstream list_items");
          if (!upstream) return false;
          const byId = new Map(collector.spans.filter((x) => x.traceId === upstream.traceId).map((x) => [x.spanId, x]));
          chain = [upstream];
          for (let at = upstream; at.parentSpanId && byId.has(at.parentSpanId); ) {
            at = byId.get(at.parentSpanId)!;
            chain.push(at);
          }
          return chain.at(-1)?.name === "POST /v1/tools/call/:tool_id";
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);
    // From the upstream call up to the request: execution's RPC span between them.
    expect(chain.map((x) => x.name)).toEqual([
      "upstream list_items",
      "toolport.execution.v1.ExecutionService/CallTool",
      "POST /v1/tools/call/:tool_id",
    ]);
    expect(chain.map((x) => x.kind)).toEqual([3, 2, 2]); // client, server, server (OTLP's SpanKind numbering)
    expect(new Set(chain.map((x) => x.traceId)).size).toBe(1);
    expect(chain.map((x) => x.service)).toEqual(["toolport-execution", "toolport-execution", "toolport-gateway"]);
  });
});
