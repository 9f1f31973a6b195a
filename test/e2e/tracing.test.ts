/**
 * Traces (kit/tracing, OpenTelemetry): with OTEL_EXPORTER_OTLP_ENDPOINT set, one tool call is one trace,
 * exported over OTLP/HTTP to a collector started by the test: the gateway's server span, the execution
 * service's CallTool span under it (the trace context carried in the RPC's gRPC metadata from the gateway's
 * process to execution's), and the upstream call's client span under that. The call's event goes on in the
 * same trace across NATS: the outbox relay's publish (a producer span of execution) and each consumer's
 * handling under it (consumer spans of catalog, identity and webhooks, each in its own process). Without
 * the variable nothing is exported (the other tests' stacks).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closer, listen, startEchoApi, type Upstream } from "../harness/upstreams.js";
import { type ExecStack, echoApiDocument, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";
import { connectMcp } from "./mcp-support.js";

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
      ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway", "mcp-server"],
      // A process per role: the trace crosses processes in the RPC's metadata.
      { layout: "per-role" },
    );
  });
  afterAll(async () => {
    await s?.stop();
    await api?.close();
    await collector?.close();
  });

  let request: OtlpSpan | undefined;
  let agent: Awaited<ReturnType<typeof registerAgent>>;
  let tools: Record<string, string>;

  it("follows one tool call from the gateway through execution to the upstream, in one trace", async () => {
    agent = await registerAgent(s);
    ({ tools } = await publishOpenApi(s, agent, echoApiDocument(), api.url));
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
    request = chain.at(-1);
  });

  it("continues the trace an MCP client sends in _meta: the gateway's span is a child of the client's span", async () => {
    const mcp = await connectMcp(s.stack.mcpUrl, { key: agent.key });
    try {
      const traceId = randomBytes(16).toString("hex");
      const clientSpan = randomBytes(8).toString("hex");
      const result = await mcp.callTool({
        name: "search_tools",
        arguments: { query: "echo items", limit: 3 },
        _meta: { traceparent: `00-${traceId}-${clientSpan}-01` },
      });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      await expect
        .poll(() => collector.spans.find((x) => x.traceId === traceId && x.service === "toolport-gateway"), {
          timeout: 15_000,
          interval: 200,
        })
        .toMatchObject({ name: "GET /v1/tools/public/search", parentSpanId: clientSpan });
      // A malformed traceparent is not forwarded: the gateway starts a trace of its own.
      const before = collector.spans.length;
      await mcp.callTool({
        name: "search_tools",
        arguments: { query: "echo items" },
        _meta: { traceparent: `00-${traceId}-zz-01` },
      });
      await expect
        .poll(() => collector.spans.slice(before).find((x) => x.name === "GET /v1/tools/public/search"), {
          timeout: 15_000,
          interval: 200,
        })
        .toBeDefined();
      expect(collector.spans.slice(before).some((x) => x.traceId === traceId)).toBe(false);
    } finally {
      await mcp.close();
    }
  });

  it("carries the call's event across NATS in the same trace: execution's publish, then each consumer under it", async () => {
    expect(request, "the call of the test before").toBeDefined();
    const inTrace = () => collector.spans.filter((x) => x.traceId === request!.traceId);
    const consumers = ["toolport-catalog", "toolport-identity", "toolport-webhooks"];
    await expect
      .poll(
        () => {
          const services = inTrace()
            .filter((x) => x.name === "toolport.execution.completed process")
            .map((x) => x.service);
          return consumers.every((c) => services.includes(c));
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);
    const spans = inTrace();
    const byId = new Map(spans.map((x) => [x.spanId, x]));
    const publishes = spans.filter((x) => x.name === "toolport.execution.completed publish");
    expect(publishes).toHaveLength(1);
    const publish = publishes[0]!;
    expect(publish.kind).toBe(4); // producer
    expect(publish.service).toBe("toolport-execution");
    // Published by the relay later, under the RPC that wrote the row.
    expect(byId.get(publish.parentSpanId!)?.name).toBe("toolport.execution.v1.ExecutionService/CallTool");
    for (const service of consumers) {
      const processed = spans.filter((x) => x.name === "toolport.execution.completed process" && x.service === service);
      expect(processed.length, service).toBeGreaterThanOrEqual(1);
      for (const x of processed) {
        expect(x.kind, service).toBe(5); // consumer
        expect(x.parentSpanId, service).toBe(publish.spanId);
      }
    }
  });

  it("keeps a workflow run in the trace of the request that started it: its step's call, the upstream, its event", async () => {
    const created = await s.call("POST", "/workflows", {
      key: agent.key,
      body: { name: "traced", steps: [{ tool_id: tools.list_items, input_mapping: { n: 2 } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const res = await s.call("POST", `/workflows/${created.body.id}/run`, { key: agent.key, body: { inputs: {} } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe("completed");

    const expected = [
      ["POST /v1/workflows/:workflow_id/run", "toolport-gateway"],
      ["toolport.content.v1.ContentService/ExecuteWorkflow", "toolport-content"],
      ["toolport.execution.v1.ExecutionService/CallBatch", "toolport-execution"],
      ["upstream list_items", "toolport-execution"],
      ["toolport.workflow.completed publish", "toolport-content"],
      ["toolport.workflow.completed process", "toolport-webhooks"],
    ];
    const trace = () => {
      const root = collector.spans.find((x) => x.name === expected[0]![0]);
      return root ? collector.spans.filter((x) => x.traceId === root.traceId) : [];
    };
    await expect
      .poll(() => expected.every(([name, service]) => trace().some((x) => x.name === name && x.service === service)), {
        timeout: 15_000,
        interval: 200,
      })
      .toBe(true);
    const spans = trace();
    const parentOf = (name: string) => spans.find((x) => x.spanId === spans.find((y) => y.name === name)!.parentSpanId)?.name;
    expect(parentOf("toolport.execution.v1.ExecutionService/CallBatch")).toBe(
      "toolport.content.v1.ContentService/ExecuteWorkflow",
    );
    expect(parentOf("toolport.workflow.completed process")).toBe("toolport.workflow.completed publish");
  });
});
