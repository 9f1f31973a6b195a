/**
 * Metrics (kit/metrics, prom-client): after a tool call that succeeds, one that fails upstream and a
 * search, the gateway's `GET /metrics` shows the request by route pattern and status, the RPCs the
 * services answered, the upstream calls by tool and outcome, the outbox's publish lag, the consumers'
 * pending messages, search latency and Node's runtime metrics; a process serving only gRPC serves
 * the same registry on METRICS_PORT.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { startProcess } from "../harness/process.js";
import { sample } from "../harness/prometheus.js";
import { repoRoot } from "../harness/stack.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { type ExecStack, echoApiDocument, publishOpenApi, registerAgent, startExecStack } from "./execution-support.js";

describe("metrics", () => {
  let s: ExecStack;
  let api: Upstream;

  beforeAll(async () => {
    api = await startEchoApi();
    s = await startExecStack([`127.0.0.1:${api.port}`], {}, undefined, { layout: "one-process" });
  });
  afterAll(async () => {
    await s?.stop();
    await api?.close();
  });

  it("shows the call just made: its route, the RPCs behind it, the upstream call by tool and outcome", async () => {
    const agent = await registerAgent(s);
    const { tools } = await publishOpenApi(s, agent, echoApiDocument(), api.url);
    const ok = await s.call("POST", `/tools/call/${tools.list_items}`, { key: agent.key, body: { n: 2 } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const failed = await s.call("POST", `/tools/call/${tools.status}`, { key: agent.key, body: { code: 502 } });
    expect(failed.body.success).toBe(false);

    const search = await s.call("GET", "/tools/search?query=echo", { key: agent.key });
    expect(search.status).toBe(200);

    // Events are published after the call answered: wait for the relay's lag to be observed.
    await expect
      .poll(
        async () =>
          sample(await (await fetch(`${s.stack.gatewayUrl}/metrics`)).text(), "toolport_outbox_publish_lag_seconds_count", {
            role: "execution",
          }),
        {
          timeout: 10_000,
        },
      )
      .toBeGreaterThanOrEqual(2);
    const res = await fetch(`${s.stack.gatewayUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    const route = { role: "gateway", method: "POST", route: "/v1/tools/call/:tool_id", status: "200" };
    expect(sample(text, "toolport_http_request_duration_seconds_count", route)).toBeGreaterThanOrEqual(2);
    expect(
      sample(text, "toolport_rpc_server_duration_seconds_count", { role: "execution", method: "CallTool", code: "ok" }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(text, "toolport_upstream_call_duration_seconds_count", { tool: tools.list_items!, outcome: "success" })).toBe(
      1,
    );
    expect(sample(text, "toolport_upstream_call_duration_seconds_count", { tool: tools.status!, outcome: "upstream" })).toBe(1);
    expect(sample(text, "toolport_search_duration_seconds_count", {})).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^toolport_consumer_pending_messages\{consumer="[^"]+"\} \d+/m);
    // Paths with ids are not labels: no series names the tool id in a route.
    expect(text).not.toContain(`route="/v1/tools/call/${tools.list_items}"`);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it("serves the registry on METRICS_PORT for a process that serves only gRPC", async () => {
    const metricsPort = await freePort();
    const { child, output, exited } = startProcess(
      process.execPath,
      [path.join(repoRoot, "services/host/dist/main.js"), "--roles=billing"],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          DATABASE_URL: inject("pgUrl"),
          BILLING_DATABASE_URL: (() => {
            const u = new URL(inject("pgUrl"));
            u.pathname = `/metrics_${Math.random().toString(36).slice(2, 8)}_billing`;
            return u.toString();
          })(),
          NATS_URL: inject("natsUrl"),
          NATS_NAMESPACE: `m${Math.random().toString(36).slice(2, 8)}`,
          PORT: String(await freePort()),
          METRICS_PORT: String(metricsPort),
          STRIPE_WEBHOOK_SECRET: "whsec_metrics",
          STRIPE_SECRET_KEY: "sk_test_metrics",
        },
      },
    );
    try {
      await expect
        .poll(async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`).catch(() => undefined))?.status, {
          timeout: 30_000,
          interval: 200,
        })
        .toBe(200);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/^process_resident_memory_bytes /m);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
    expect(output()).toContain("metrics served at /metrics");
  });
});
