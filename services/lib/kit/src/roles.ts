/**
 * Roles (DESIGN.md "Roles"): every service, the gateway and the MCP server is a role that one process
 * can host alone (its own main.ts, as Kubernetes runs it) or together with others (`toolport
 * --roles=all`, services/host). A role starts from the environment and stops cleanly; config errors,
 * health, graceful shutdown and logs stay per role (each role logs with its own name).
 *
 * Ports: a process hosting one role reads `PORT`, as each service always has. A process hosting several
 * gives each role its own variable (CATALOG_PORT, ..., GATEWAY_PORT, MCP_PORT) with the role's usual
 * default, since one `PORT` cannot serve them all.
 */
import v8 from "node:v8";
import { watchHeap } from "./heap-watch.js";
import { onShutdown } from "./lifecycle.js";
import { createLogger, type Logger } from "./logger.js";
import { serveMetrics } from "./metrics.js";
import { startTracing, stopTracing } from "./tracing.js";

export interface RunningRole {
  name: string;
  kind: Role["kind"];
  /** The port it listens on (gRPC for services, HTTP for the gateway and the MCP server). */
  port: number;
  log: Logger;
  /** Stops taking work, lets in-flight work finish (within the role's grace), releases what it holds. */
  stop(): Promise<void>;
}

export interface Role {
  name: string;
  /** Services (gRPC) start before the edge (gateway, MCP server), which calls them. */
  kind: "service" | "edge";
  defaultPort: number;
  /** The variable that sets its port when it shares a process with other roles. */
  portVariable: string;
  start(env: NodeJS.ProcessEnv): Promise<RunningRole>;
  /** Creates and migrates the role's database, then returns (roles that own one: the services). */
  migrate?(env: NodeJS.ProcessEnv): Promise<void>;
}

/**
 * Applies the migrations of the roles that own a database, one role after another, in the environment
 * each would start with; roles without one (the gateway, the MCP server) have nothing to do.
 */
export async function migrateRoles(roles: Role[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  for (const role of roles) {
    try {
      await role.migrate?.(roleEnv(role, env, roles.length));
    } catch (err) {
      if (err instanceof Error && roles.length > 1) err.message = `${role.name}: ${err.message}`;
      throw err;
    }
  }
}

/** The port a role takes in a process that hosts several: its own variable's, or its default. */
export function rolePort(role: Role, env: NodeJS.ProcessEnv): string {
  return env[role.portVariable] || String(role.defaultPort);
}

/** The environment a role starts with in a process that hosts `count` roles. */
function roleEnv(role: Role, env: NodeJS.ProcessEnv, count: number): NodeJS.ProcessEnv {
  return count === 1 ? env : { ...env, PORT: rolePort(role, env) };
}

/**
 * Starts the roles (services together, then the edge in order) and returns them running. If one fails
 * to start, those already started are stopped and the error is rethrown, naming the role.
 */
export async function startRoles(roles: Role[], env: NodeJS.ProcessEnv = process.env): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  const startOne = async (role: Role) => {
    try {
      running.push(await role.start(roleEnv(role, env, roles.length)));
    } catch (err) {
      if (err instanceof Error && roles.length > 1) err.message = `${role.name}: ${err.message}`;
      throw err;
    }
  };
  try {
    const services = roles.filter((r) => r.kind === "service");
    const results = await Promise.allSettled(services.map(startOne));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    for (const role of roles.filter((r) => r.kind === "edge")) await startOne(role);
  } catch (err) {
    await stopRoles(running);
    throw err;
  }
  // In the order they were named, not the order they came up in.
  return roles.map((role) => running.find((r) => r.name === role.name) as RunningRole);
}

/** Stops the edge first (no new requests), then the services, each letting its in-flight work finish. */
export async function stopRoles(running: RunningRole[]): Promise<void> {
  const edge = running.filter((r) => r.kind === "edge");
  const services = running.filter((r) => r.kind === "service");
  await Promise.all(edge.map((r) => r.stop()));
  await Promise.all(services.map((r) => r.stop()));
}

/** A process's main: start the roles, stop them all on SIGTERM/SIGINT. */
export async function runRoles(roles: Role[], env: NodeJS.ProcessEnv = process.env): Promise<RunningRole[]> {
  // Before any role starts, so that every span of the process has the provider (when OTLP is configured).
  const tracing = startTracing(roles.length === 1 ? `toolport-${roles[0]!.name}` : "toolport", env);
  const running = await startRoles(roles, env);
  const log = running.length === 1 ? (running[0] as RunningRole).log : createLogger("toolport", env.LOG_LEVEL);
  if (running.length > 1) {
    const roles = Object.fromEntries(running.map((r) => [r.name, r.port]));
    log.info({ roles, pid: process.pid }, `toolport listening: ${running.map((r) => r.name).join(", ")}`);
  }
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) {
    await stopRoles(running);
    throw Object.assign(new Error(`METRICS_PORT must be a port number (0-65535), got "${env.METRICS_PORT}"`), {
      name: "ConfigError",
    });
  }
  const metricsServer = metricsPort === undefined ? undefined : await serveMetrics(metricsPort, env.HOST || "0.0.0.0");
  if (metricsServer) log.info({ port: metricsServer.port }, "metrics served at /metrics");
  if (tracing) log.info({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT }, "traces exported over OTLP");
  const heap = v8.getHeapStatistics();
  log.info(
    { heap_limit_mb: Math.round(heap.heap_size_limit / (1024 * 1024)), sized_by: env.TOOLPORT_HEAP_SIZED_BY || "node" },
    "heap limit",
  );
  const stopHeapWatch = watchHeap(log);
  onShutdown(log, async () => {
    stopHeapWatch();
    await stopRoles(running);
    await metricsServer?.close();
    await stopTracing();
  });
  return running;
}
