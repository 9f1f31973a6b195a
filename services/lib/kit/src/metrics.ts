/**
 * Prometheus metrics (prom-client). One registry per process: every role it hosts reports there, told
 * apart by a `role` label, and the process serves it once (the gateway at `GET /metrics` on its port).
 * Node's runtime metrics (event-loop lag, heap, GC, CPU) come with it. Labels stay bounded: routes are
 * the router's patterns, never raw paths; RPCs are method names; tools are ids of the catalog.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import v8 from "node:v8";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export const metrics = new Registry();

/**
 * The event loop's delay, under the names and with the meaning of prom-client's default metrics: the lag
 * a scrape itself sees (nodejs_eventloop_lag_seconds, from a setImmediate, as of the previous scrape) and
 * the delays sampled since the previous scrape (nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds).
 * prom-client samples those with a libuv timer from the start and for good: 10 times a second at our
 * 100 ms, about 600 of an idle process's 860 wake-ups a minute, whether anyone reads them or not. Here the
 * sampling starts at a scrape and runs while scrapes keep coming (EVENT_LOOP_WATCH_MS after the last): a
 * scraped process samples all the time, as before, and one nobody scrapes (`npm start` without Prometheus)
 * does not wake for it. A scrape that finds no samples (the first, or the first after a pause) reports the
 * sampled gauges as NaN (not measured), as prom-client does for an empty window, not as delays of 0.
 */
const EVENT_LOOP_SAMPLE_MS = 100;
/** How long the sampling goes on after a scrape: longer than any usual scrape interval. */
export const EVENT_LOOP_WATCH_MS = 10 * 60_000;
type LoopDelay = ReturnType<typeof monitorEventLoopDelay>;
/** The sampled gauges: name suffix, help (prom-client's), and the value a histogram gives (nanoseconds). */
const sampledLag: [string, string, (h: LoopDelay) => number][] = [
  ["min", "The minimum recorded event loop delay.", (h) => h.min],
  ["max", "The maximum recorded event loop delay.", (h) => h.max],
  ["mean", "The mean of the recorded event loop delays.", (h) => h.mean],
  ["stddev", "The standard deviation of the recorded event loop delays.", (h) => h.stddev],
  ["p50", "The 50th percentile of the recorded event loop delays.", (h) => h.percentile(50)],
  ["p90", "The 90th percentile of the recorded event loop delays.", (h) => h.percentile(90)],
  ["p99", "The 99th percentile of the recorded event loop delays.", (h) => h.percentile(99)],
];

// prom-client's own event-loop metrics cannot be left out of its defaults, nor their sampling stopped: its
// timer is set to fire once in 24 days (in effect never) and its gauges give way to ours below.
collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: 2 ** 31 - 1 });
for (const name of ["nodejs_eventloop_lag_seconds", ...sampledLag.map(([key]) => `nodejs_eventloop_lag_${key}_seconds`)])
  metrics.removeSingleMetric(name);

const loopDelay = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
/** Until when the sampling goes on (the last scrape plus EVENT_LOOP_WATCH_MS), and the timer that ends it. */
let watchedUntil = 0;
let watchTimer: NodeJS.Timeout | undefined;

/** Samples the event loop's delay from now until EVENT_LOOP_WATCH_MS after the last call. */
function watchEventLoop(): void {
  watchedUntil = Date.now() + EVENT_LOOP_WATCH_MS;
  if (watchTimer) return;
  loopDelay.enable();
  const check = () => {
    const left = watchedUntil - Date.now();
    if (left > 0) {
      watchTimer = setTimeout(check, left).unref();
      return;
    }
    loopDelay.disable();
    loopDelay.reset();
    watchTimer = undefined;
  };
  watchTimer = setTimeout(check, EVENT_LOOP_WATCH_MS).unref();
}

/** Whether the event loop's delay is being sampled now (a scrape in the last EVENT_LOOP_WATCH_MS). */
export function eventLoopSampled(): boolean {
  return watchTimer !== undefined;
}

const eventLoopLag = new Gauge({
  name: "nodejs_eventloop_lag_seconds",
  help: "Lag of event loop in seconds.",
  registers: [metrics],
  // Sets the sampled gauges too, which are collected after it (registered after it), as in prom-client.
  collect() {
    const start = process.hrtime.bigint();
    setImmediate(() => eventLoopLag.set(Number(process.hrtime.bigint() - start) / 1e9));
    for (const { gauge, read } of sampledLagGauges) gauge.set(loopDelay.count > 0 ? read(loopDelay) / 1e9 : Number.NaN);
    loopDelay.reset();
    watchEventLoop();
  },
});
const sampledLagGauges = sampledLag.map(([key, help, read]) => ({
  gauge: new Gauge({ name: `nodejs_eventloop_lag_${key}_seconds`, help, registers: [metrics] }),
  read,
}));

/** The V8 heap in use now (the process's main thread), read at each scrape. */
export const heapUsedBytes = new Gauge({
  name: "toolport_heap_used_bytes",
  help: "V8 heap in use by the process's main thread",
  registers: [metrics],
  collect() {
    this.set(v8.getHeapStatistics().used_heap_size);
  },
});

/** The V8 heap's limit (--max-old-space-size and the young generation: what the heap may reach). */
export const heapLimitBytes = new Gauge({
  name: "toolport_heap_limit_bytes",
  help: "V8 heap limit of the process's main thread; the process dies out of memory near it",
  registers: [metrics],
  collect() {
    this.set(v8.getHeapStatistics().heap_size_limit);
  },
});

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

/** How long events waited in an outbox before the relay published them (the outbox's lag). */
export const outboxLagSeconds = new Histogram({
  name: "toolport_outbox_publish_lag_seconds",
  help: "Time from an event's commit to the outbox until JetStream acknowledged it, by role",
  labelNames: ["role"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metrics],
});

/** Messages a durable consumer has not been delivered yet, as of its last delivery (its lag). */
export const consumerPending = new Gauge({
  name: "toolport_consumer_pending_messages",
  help: "Messages still to deliver to a durable consumer, as of its last delivery",
  labelNames: ["consumer"] as const,
  registers: [metrics],
});

/** Messages a durable consumer received again (delivered before, not acked in time or nak'ed): work that failed or stalled. */
export const consumerRedeliveries = new Counter({
  name: "toolport_consumer_redeliveries_total",
  help: "Messages a durable consumer received more than once (a failed or timed-out earlier delivery)",
  labelNames: ["consumer"] as const,
  registers: [metrics],
});

/** Poison messages terminated and kept in dead_letters. */
export const deadLetters = new Counter({
  name: "toolport_dead_letters_total",
  help: "Messages a consumer terminated as poison and kept in dead_letters",
  labelNames: ["consumer"] as const,
  registers: [metrics],
});

/** Webhook delivery attempts by result (succeeded, retrying, failed: the delivery's status after it). */
export const webhookAttempts = new Histogram({
  name: "toolport_webhook_attempt_duration_seconds",
  help: "Webhook delivery attempts, by the delivery's status after the attempt (succeeded, pending = will retry, failed)",
  labelNames: ["status"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

/** The webhook sender's backlog, read from its database when scraped (reportWebhookBacklog). */
export interface WebhookBacklog {
  /** Deliveries due now (pending, next attempt in the past) to active webhooks. */
  due: number;
  /** How long the oldest of them has been due, in seconds (0 when none is). */
  oldestDueSeconds: number;
}

let webhookBacklogSource: (() => Promise<WebhookBacklog>) | undefined;

/** Where the webhook backlog gauges read from (the webhooks role sets it at start, and clears it at stop). */
export function reportWebhookBacklog(source: (() => Promise<WebhookBacklog>) | undefined): void {
  webhookBacklogSource = source;
}

async function readWebhookBacklog(): Promise<WebhookBacklog | undefined> {
  try {
    return await webhookBacklogSource?.();
  } catch {
    return undefined; // the database is away: the scrape goes on, this gauge keeps its last value
  }
}

export const webhookDeliveriesDue = new Gauge({
  name: "toolport_webhook_deliveries_due",
  help: "Webhook deliveries due now and not yet attempted, to active webhooks (the sender's backlog; the same on every webhooks replica)",
  registers: [metrics],
  async collect() {
    const backlog = await readWebhookBacklog();
    if (backlog) this.set(backlog.due);
  },
});

export const webhookOldestDueSeconds = new Gauge({
  name: "toolport_webhook_oldest_due_seconds",
  help: "How long the oldest webhook delivery due now has waited for its attempt, in seconds",
  registers: [metrics],
  async collect() {
    const backlog = await readWebhookBacklog();
    if (backlog) this.set(backlog.oldestDueSeconds);
  },
});

/** Catalog searches, by engine (embedded or meilisearch); finer below 50 ms, where the goal (20 ms) lies. */
export const searchSeconds = new Histogram({
  name: "toolport_search_duration_seconds",
  help: "Catalog searches, by engine",
  labelNames: ["engine"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.035, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metrics],
});

/**
 * OpenAPI documents the catalog imported (parse, conversion, validation, tool drafts), by where they
 * ran (`worker`: the import pool's threads; `event_loop`: the pool disabled) and outcome (`imported`,
 * `refused` with a 400, `busy` when the pool was full, `abandoned` by a caller that stopped waiting, `failed`).
 */
export const importSeconds = new Histogram({
  name: "toolport_catalog_import_duration_seconds",
  help: "OpenAPI document imports, by where they ran and outcome",
  labelNames: ["where", "outcome"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

/** OpenAPI documents being imported or waiting for an import thread. */
export const importsPending = new Gauge({
  name: "toolport_catalog_imports_pending",
  help: "OpenAPI documents being imported or waiting for an import thread",
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

/** On-chain deposits credited by billing, by who found them: `watcher` (by itself) or `confirm` (by hash). */
export const depositsCredited = new Counter({
  name: "toolport_deposits_credited_total",
  help: "On-chain USDC deposits credited, by source: watcher (found on chain) or confirm (confirm-deposit by hash)",
  labelNames: ["source"] as const,
  registers: [metrics],
});

/** The deposit watcher's cursor: the first block of the deposit network it has not scanned yet. */
export const depositWatcherNextBlock = new Gauge({
  name: "toolport_deposit_watcher_next_block",
  help: "First block of the deposit network the deposit watcher has not scanned yet",
  registers: [metrics],
});

/** Confirmed blocks the deposit watcher has still to scan (0 when caught up). */
export const depositWatcherLagBlocks = new Gauge({
  name: "toolport_deposit_watcher_lag_blocks",
  help: "Blocks confirmed enough to credit that the deposit watcher has not scanned yet",
  registers: [metrics],
});
