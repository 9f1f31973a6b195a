/**
 * Prometheus metrics (prom-client). One registry per process: every role it hosts reports there, told
 * apart by a `role` label, and the process serves it once (the gateway at `GET /metrics` on its port).
 * Node's runtime metrics (event-loop lag, heap, GC, CPU) come with it. Labels stay bounded: routes are
 * the router's patterns, never raw paths; RPCs are method names; tools are ids of the catalog.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Histogram, Registry } from "prom-client";

export const metrics = new Registry();
collectDefaultMetrics({ register: metrics });

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** HTTP requests a role answered (the gateway, the MCP server), by route pattern and status. */
export const httpRequestSeconds = new Histogram({
  name: "toolport_http_request_duration_seconds",
  help: "HTTP requests answered, by role, method, route pattern and status",
  labelNames: ["role", "method", "route", "status"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

/** RPCs a service answered (over gRPC or in process), by method and gRPC code. */
export const rpcServerSeconds = new Histogram({
  name: "toolport_rpc_server_duration_seconds",
  help: "RPCs answered, by role, method and gRPC code",
  labelNames: ["role", "method", "code"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

/** Upstream calls of tools (REST, MCP, built-in), by tool and outcome (success or the failure's class). */
export const upstreamCallSeconds = new Histogram({
  name: "toolport_upstream_call_duration_seconds",
  help: "Upstream tool calls, by tool id, service type and outcome (success, or the failure class: auth, caller, platform, upstream)",
  labelNames: ["tool", "service_type", "outcome"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

/**
 * A port of its own that answers `GET /metrics` with the registry: for processes that serve only gRPC
 * (one service per pod in Kubernetes). `toolport` opens it when METRICS_PORT is set.
 */
export async function serveMetrics(port: number, host = "0.0.0.0"): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    metrics.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.contentType }).end(text),
      (err: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
