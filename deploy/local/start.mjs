// `npm start`: install and build, start Postgres and NATS from .data/ (unless DATABASE_URL /
// NATS_URL point elsewhere), then one Toolport process hosting every role (the six services, the
// gateway and the MCP server: `toolport --roles=all`, DESIGN.md "Roles"), with a labelled log stream;
// wait for every health check, print where things are, and on Ctrl-C stop everything in order.
// `--no-install` skips pnpm install and build (tests, benchmark); `--per-role` runs each role as its
// own process instead, as Kubernetes does.
import { existsSync } from "node:fs";
import path from "node:path";
import { build, elapsed, ensurePnpm, installPackages, repoRoot, step } from "./bootstrap.mjs";
import {
  ensureBinaries,
  isPortFree,
  killGroup,
  sleep,
  spawnLabelled,
  startNats,
  startPostgres,
  stopChild,
  tailFile,
  waitForHttp,
} from "./infra.mjs";

// Every process: where it lives, its default port, the variable that moves it, and the variable
// through which the others find it.
const PROCESSES = [
  { name: "catalog", dir: "services/catalog", port: 50051, portVar: "CATALOG_PORT", urlVar: "CATALOG_URL" },
  { name: "execution", dir: "services/execution", port: 50052, portVar: "EXECUTION_PORT", urlVar: "EXECUTION_URL" },
  { name: "billing", dir: "services/billing", port: 50053, portVar: "BILLING_PORT", urlVar: "BILLING_URL" },
  { name: "identity", dir: "services/identity", port: 50054, portVar: "IDENTITY_PORT", urlVar: "IDENTITY_URL" },
  { name: "content", dir: "services/content", port: 50055, portVar: "CONTENT_PORT", urlVar: "CONTENT_URL" },
  { name: "webhooks", dir: "services/webhooks", port: 50056, portVar: "WEBHOOKS_PORT", urlVar: "WEBHOOKS_URL" },
  { name: "gateway", dir: "gateway", port: 8080, portVar: "GATEWAY_PORT", urlVar: "GATEWAY_URL" },
  { name: "mcp-server", dir: "mcp-server", port: 8090, portVar: "MCP_PORT" },
];
const HEALTH_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

class UsageError extends Error {}

function portFromEnv(variable, fallback) {
  const raw = process.env[variable];
  if (raw === undefined || raw === "") return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`${variable}=${raw} is not a port number (1-65535)`);
  }
  return port;
}

const HOST = { name: "toolport", dir: "services/host" };

function readConfig(argv) {
  const unknown = argv.filter((arg) => arg !== "--no-install" && arg !== "--per-role");
  if (unknown.length > 0) {
    throw new UsageError(`unknown argument ${unknown[0]} (usage: start.mjs [--no-install] [--per-role])`);
  }
  const dataDir = path.resolve(process.env.TOOLPORT_DATA_DIR || path.join(repoRoot, ".data"));
  return {
    install: !argv.includes("--no-install"),
    perRole: argv.includes("--per-role"),
    dataDir,
    logsDir: path.join(dataDir, "logs"),
    processes: PROCESSES.map((p) => ({ ...p, port: portFromEnv(p.portVar, p.port) })),
    // Only the servers we start ourselves get a port; a given URL is used as is.
    pgPort: process.env.DATABASE_URL ? null : portFromEnv("PGPORT", 55432),
    natsPort: process.env.NATS_URL ? null : portFromEnv("NATS_PORT", 4222),
  };
}

/** With --no-install nothing builds dist/: say so up front rather than through 8 crashes. */
function checkBuilt(config) {
  const needed = config.perRole ? config.processes : [HOST];
  const missing = needed.filter((p) => !existsSync(path.join(repoRoot, p.dir, "dist/main.js")));
  if (missing.length > 0) {
    throw new UsageError(
      `not built: ${missing.map((p) => `${p.dir}/dist/main.js`).join(", ")}. ` +
        `Run \`npm start\` without --no-install, or \`pnpm run build\`.`,
    );
  }
}

/** Fail before starting anything when a port is taken or given twice, naming the variable. */
async function checkPorts(config) {
  const wanted = config.processes.map((p) => ({ port: p.port, what: p.name, variable: p.portVar }));
  if (config.pgPort) wanted.push({ port: config.pgPort, what: "Postgres", variable: "PGPORT" });
  if (config.natsPort) wanted.push({ port: config.natsPort, what: "NATS", variable: "NATS_PORT" });
  const problems = [];
  const seen = new Map();
  for (const w of wanted) {
    if (seen.has(w.port)) {
      problems.push(`port ${w.port} is given to both ${seen.get(w.port)} and ${w.what}; change ${w.variable}`);
    } else if (!(await isPortFree(w.port))) {
      problems.push(`port ${w.port} (${w.what}) is already in use; set ${w.variable} to a free port`);
    }
    seen.set(w.port, w.what);
  }
  if (problems.length > 0) throw new UsageError(problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// What is running, so that any path out of here (Ctrl-C, a crash, an error) can stop it.

const running = { children: [], servers: [] };
let stopping = null;
// Postgres or NATS may be mid-start when Ctrl-C comes; shutdown waits for that to settle so that
// what was just started gets stopped too.
let serversStarting = Promise.resolve();
const healthAbort = new AbortController();

/**
 * Server settings of the Postgres the launcher starts. Autovacuum looks at each database once per
 * `autovacuum_naptime`, with a worker process started for it, and with a database per service that was
 * eight worker starts a minute at Postgres's default of 1 min: most of what an idle stack's Postgres
 * costs (0.55-0.85% of a core with the default, 0.13-0.23% with 5 min; test/bench/idle.mjs). Every 5
 * minutes is enough on one machine; which tables need a vacuum is still decided by Postgres's thresholds.
 */
const POSTGRES_SETTINGS = { autovacuum_naptime: "300s" };

/** Stop everything, last started first: processes (drain), then NATS and Postgres; then exit. */
function shutdown(exitCode) {
  stopping ??= (async () => {
    healthAbort.abort();
    await serversStarting.catch(() => {});
    if (running.children.length + running.servers.length === 0) process.exit(exitCode);
    step("stopping");
    await Promise.all(
      running.children.map(async ({ name, child }) => {
        const { killed } = await stopChild(child, { timeoutMs: STOP_TIMEOUT_MS });
        if (killed) console.log(`${name} did not stop within ${STOP_TIMEOUT_MS / 1000}s: killed`);
      }),
    );
    while (running.servers.length > 0) {
      const server = running.servers.at(-1);
      try {
        await server.stop();
      } catch (err) {
        console.error(`stopping ${server.name}: ${err.message}`);
        exitCode ||= 1;
      }
      running.servers.pop();
    }
    console.log("stopped");
    process.exit(exitCode);
  })();
  return stopping;
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (stopping) console.log(`(${signal}: already stopping, please wait)`);
    else shutdown(0);
  });
}

// Last resort when the launcher dies without shutdown() (a bug, an uncaught error): no waiting is
// possible here, so kill the processes and ask Postgres (SIGINT: fast shutdown) and NATS to stop.
process.on("exit", () => {
  for (const { child } of running.children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const server of running.servers) {
    try {
      process.kill(server.pid, server.name === "Postgres" ? "SIGINT" : "SIGTERM");
    } catch {
      // already gone
    }
  }
});

// ---------------------------------------------------------------------------------------------

async function startServers(config) {
  const needPostgres = config.pgPort !== null;
  const needNats = config.natsPort !== null;
  if (needPostgres || needNats) {
    step("finding Postgres and nats-server");
    ensureBinaries({ install: true, postgres: needPostgres, nats: needNats, log: (m) => step(m) });
  }
  const log = (message) => console.log(`    ${message}`);
  let databaseUrl = process.env.DATABASE_URL;
  if (needPostgres) {
    step(`starting Postgres on 127.0.0.1:${config.pgPort} (data in ${path.join(config.dataDir, "postgres")})`);
    const pg = await startPostgres({
      dataDir: path.join(config.dataDir, "postgres"),
      port: config.pgPort,
      logFile: path.join(config.logsDir, "postgres.log"),
      log,
      settings: POSTGRES_SETTINGS,
    });
    running.servers.push({ name: "Postgres", ...pg });
    databaseUrl = pg.url;
  }
  let natsUrl = process.env.NATS_URL;
  if (needNats) {
    step(`starting NATS JetStream on 127.0.0.1:${config.natsPort} (data in ${path.join(config.dataDir, "nats")})`);
    const nats = await startNats({
      storeDir: path.join(config.dataDir, "nats"),
      port: config.natsPort,
      logFile: path.join(config.logsDir, "nats.log"),
      log,
    });
    running.servers.push({ name: "NATS", ...nats });
    natsUrl = nats.url;
  }
  return { databaseUrl, natsUrl };
}

/** The environment every process gets: the caller's, then addresses of everything we run. */
function processEnv(config, { databaseUrl, natsUrl }) {
  const byName = Object.fromEntries(config.processes.map((p) => [p.name, p]));
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    PUBLIC_URL: process.env.PUBLIC_URL || `http://localhost:${byName.gateway.port}`,
    MCP_PUBLIC_URL: process.env.MCP_PUBLIC_URL || `http://localhost:${byName["mcp-server"].port}/mcp`,
    LOG_LEVEL: process.env.LOG_LEVEL || "info",
    CATALOG_INDEX_SNAPSHOT: process.env.CATALOG_INDEX_SNAPSHOT || path.join(config.dataDir, "catalog-index.snapshot"),
  };
  for (const p of config.processes) {
    if (p.urlVar) env[p.urlVar] = `http://127.0.0.1:${p.port}`;
    env[p.portVar] = String(p.port);
  }
  return env;
}

const logFileOf = (config, name) => path.join(config.logsDir, `${name}.log`);

/** The end of a log file, from this run only (spawnLabelled starts each run with a "---- " line). */
function lastRunLines(logFile) {
  const lines = tailFile(logFile, 30).split("\n");
  return lines.slice(lines.findLastIndex((line) => line.startsWith("---- ")) + 1).join("\n");
}

/** What to spawn: one process with every role, or (--per-role) a process per role. */
function launchPlan(config) {
  if (config.perRole) {
    return config.processes.map((p) => ({ name: p.name, args: [path.join(p.dir, "dist/main.js")], port: String(p.port) }));
  }
  // Each role takes its port from its own variable (CATALOG_PORT, ..., GATEWAY_PORT, MCP_PORT).
  return [{ name: HOST.name, args: [path.join(HOST.dir, "dist/main.js"), "--roles=all"] }];
}

// A process that dies is started again after a pause that doubles with each crash in a row (1 s, 2 s,
// 4 s, ... at most 30 s); one that ran STABLE_MS or more before it died starts a new row. After
// MAX_FAST_CRASHES in a row the launcher gives up and stops everything: a process that cannot stay up a
// minute has a cause a restart does not fix. Postgres and NATS keep running meanwhile.
const STABLE_MS = 60_000;
const MAX_FAST_CRASHES = 5;
const backoffMs = (crashesInARow) => Math.min(30_000, 1_000 * 2 ** (crashesInARow - 1));

/** How a process ended, in words: its exit code, or the signal that killed it (and what that usually means). */
function howItEnded(code, signal) {
  if (signal === "SIGKILL") return "killed by SIGKILL (out of memory in the kernel's eyes, or someone killed it)";
  if (signal) return `killed by ${signal}`;
  if (code === 134) return "exit code 134 (aborted: a V8 out-of-memory crash ends this way)";
  return `exit code ${code}`;
}

function startProcesses(config, env) {
  const plan = launchPlan(config);
  step(
    config.perRole
      ? "starting services, gateway and MCP server, a process each"
      : "starting one process with every role: services, gateway and MCP server",
  );
  const labelWidth = Math.max(...plan.map((p) => p.name.length));
  for (const p of plan) {
    const logFile = logFileOf(config, p.name);
    const entry = { name: p.name, child: undefined, crashes: 0, restarts: 0 };
    running.children.push(entry);
    const launch = () => {
      const startedAt = Date.now();
      const child = spawnLabelled(p.name, process.execPath, p.args, {
        cwd: repoRoot,
        env: p.port ? { ...env, PORT: p.port } : env,
        logFile,
        labelWidth,
      });
      entry.child = child;
      // Whatever it left in its process group (the child it re-executed as, services/host heap-limit.ts)
      // goes with it: that holds the ports the restart needs, and the output pipes "close" waits for.
      child.on("exit", () => {
        if (!stopping) killGroup(child);
      });
      // "close" comes after the output pipes drain, so the log tail below is complete.
      child.on("close", async (code, signal) => {
        if (stopping) return;
        await sleep(100); // let the log file stream flush
        if (stopping) return;
        entry.crashes = Date.now() - startedAt >= STABLE_MS ? 1 : entry.crashes + 1;
        console.error(`\n${p.name} exited unexpectedly: ${howItEnded(code, signal)}; last lines of ${logFile}:`);
        console.error(lastRunLines(logFile).replace(/^/gm, "    "));
        if (entry.crashes >= MAX_FAST_CRASHES) {
          console.error(
            `\n${p.name} crashed ${entry.crashes} times in a row, each within ${STABLE_MS / 1000}s of starting: giving up. ` +
              `Its log is ${logFile}; fix the cause above and run npm start again.`,
          );
          shutdown(1);
          return;
        }
        const wait = backoffMs(entry.crashes);
        console.error(
          `restarting ${p.name} in ${wait / 1000}s (restart ${entry.restarts + 1}; crash ${entry.crashes} of ${MAX_FAST_CRASHES} in a row ` +
            `before giving up); Postgres and NATS keep running`,
        );
        await sleep(wait);
        if (stopping) return;
        entry.restarts++;
        launch();
        console.log(`restarted ${p.name}: pid ${entry.child.pid}`);
      });
    };
    launch();
  }
}

async function waitUntilHealthy(config) {
  step("waiting for health checks");
  const port = (name) => config.processes.find((p) => p.name === name).port;
  const checks = [
    { name: "gateway", url: `http://127.0.0.1:${port("gateway")}/v1/health` },
    { name: "mcp-server", url: `http://127.0.0.1:${port("mcp-server")}/mcp/health` },
  ];
  await Promise.all(
    checks.map(({ name, url }) =>
      waitForHttp(url, { timeoutMs: HEALTH_TIMEOUT_MS, signal: healthAbort.signal }).catch((err) => {
        const logFile = logFileOf(config, config.perRole ? name : HOST.name);
        throw new Error(`${name} is not up: ${err.message}\n  see ${logFile} (all logs in ${config.logsDir})`);
      }),
    ),
  );
}

function printSummary(config) {
  const port = (name) => config.processes.find((p) => p.name === name).port;
  const pids = [...running.servers.map((s) => s.pid), ...running.children.map((c) => c.child.pid)];
  console.log(`
  Toolport is running
    gateway   http://localhost:${port("gateway")}/v1
    console   http://localhost:${port("gateway")}/console (sign up there)
    reference http://localhost:${port("gateway")}/docs
    MCP       http://localhost:${port("mcp-server")}/mcp
    logs      ${config.perRole ? `${config.logsDir}/<process>.log` : `${config.logsDir}/${HOST.name}.log (each line names its role)`}
    data      ${config.dataDir}
    stop      Ctrl-C (or kill -TERM ${process.pid})
`);
  console.log(`ready in ${elapsed()}s`);
  console.log(`pids: ${pids.join(",")}`);
}

async function main() {
  const config = readConfig(process.argv.slice(2));
  if (config.install) {
    const pnpm = await ensurePnpm();
    await installPackages(pnpm);
    await build(pnpm);
  }
  checkBuilt(config);
  await checkPorts(config);
  serversStarting = startServers(config);
  const urls = await serversStarting;
  if (stopping) return; // Ctrl-C while Postgres or NATS was starting
  startProcesses(config, processEnv(config, urls));
  await waitUntilHealthy(config);
  printSummary(config);
}

main().catch((err) => {
  if (stopping) return; // a child's crash is already being reported
  console.error(`\nerror: ${err.message}`);
  shutdown(err instanceof UsageError ? 2 : 1);
});
