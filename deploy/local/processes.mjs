// Child-process and port helpers shared by the launcher (start.mjs), the test command and the test
// harness. Node built-ins only: this code runs before `pnpm install`.
import { spawn } from "node:child_process";
import { closeSync, createWriteStream, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

/**
 * Ports handed out are below Linux's ephemeral range (32768-60999 by default), where the OS never puts
 * an outgoing connection or a listen(0): a port chosen here and bound a moment later (by a child
 * process, or again after a restart) cannot be taken meanwhile by some client's connection, which is
 * what an OS-chosen port (listen on 0, close, reuse) allowed. Chosen at random and checked free; this
 * process never hands out the same port twice.
 *
 * Test files run side by side in vitest workers, each a process with its own record of what it handed
 * out, so two of them could pick the same port and both find it free before either child bound it
 * (a gateway then failed with EADDRINUSE in one CI run). A worker (VITEST_POOL_ID 1..n, unique among
 * the workers running at once) therefore draws from a slice of the range of its own; every other
 * process (the launcher, vitest's global setup, benches) from slice 0.
 */
const PORT_RANGE = { min: 20_000, max: 32_767 };
const PORT_SLICES = 4;
const handedOut = new Set();

/** The part of PORT_RANGE this process draws from (see above). */
function portSlice() {
  const size = Math.floor((PORT_RANGE.max - PORT_RANGE.min + 1) / PORT_SLICES);
  const worker = Number.parseInt(process.env.VITEST_POOL_ID ?? "", 10);
  const index = Number.isInteger(worker) && worker > 0 ? 1 + ((worker - 1) % (PORT_SLICES - 1)) : 0;
  const min = PORT_RANGE.min + index * size;
  return { min, max: min + size - 1 };
}

function bindable(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A free port on 127.0.0.1 (see above); falls back to one the OS picks. */
export async function freePort() {
  const slice = portSlice();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = slice.min + Math.floor(Math.random() * (slice.max - slice.min + 1));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen({ port: 0, host: "127.0.0.1" }, () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** The variables that move the launcher's listeners (start.mjs): each process's port, Postgres's and NATS's. */
export const LAUNCHER_PORT_VARIABLES = [
  "GATEWAY_PORT",
  "MCP_PORT",
  "CATALOG_PORT",
  "EXECUTION_PORT",
  "BILLING_PORT",
  "IDENTITY_PORT",
  "CONTENT_PORT",
  "WEBHOOKS_PORT",
  "PGPORT",
  "NATS_PORT",
];

/** Sets every launcher port variable in `env` to a free port (a launcher beside another one: benches, tests). */
export async function assignLauncherPorts(env) {
  for (const variable of LAUNCHER_PORT_VARIABLES) env[variable] = String(await freePort());
}

/**
 * Whether nothing listens on `port`. We bind the wildcard address: on Linux that fails when any
 * address (127.0.0.1, 0.0.0.0 or ::) already holds the port, which is what a launcher cares about.
 */
export function isPortFree(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", (err) => (err.code === "EADDRINUSE" ? resolve(false) : reject(err)));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Poll `url` until it answers 200; the timeout error carries the last answer (e.g. a 503 body). */
export async function waitForHttp(url, { timeoutMs = 60_000, intervalMs = 200, signal } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (true) {
    signal?.throwIfAborted();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      const body = await res.text();
      if (res.status === 200) return body;
      last = `HTTP ${res.status} ${body.slice(0, 300)}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000}s (last: ${last})`);
    }
    await sleep(intervalMs);
  }
}

// ANSI colours for labels, picked per name so a process keeps its colour across runs.
const COLOURS = [36, 32, 33, 35, 34, 96, 92, 93, 95, 94];
const useColour = () => Boolean(process.env.FORCE_COLOR) || (process.stdout.isTTY && !process.env.NO_COLOR);

function colourFor(name) {
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return COLOURS[hash % COLOURS.length];
}

/**
 * Spawn `cmd` with each stdout/stderr line echoed as `[name] line` on our stdout (unless
 * echo is false) and appended, unlabelled, to `logFile`. The child gets its own process group so a
 * terminal Ctrl-C reaches only the launcher, which then stops everything in order (services drain
 * before Postgres and NATS go away); stopChild kills the whole group so nothing is left behind.
 */
export function spawnLabelled(name, cmd, args, opts = {}) {
  const { env, cwd, logFile, color, echo = true, labelWidth = 0, uid, gid } = opts;
  const child = spawn(cmd, args, {
    cwd,
    env: env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    uid,
    gid,
  });
  let log;
  if (logFile) {
    mkdirSync(path.dirname(logFile), { recursive: true });
    log = createWriteStream(logFile, { flags: "a" });
    log.write(`---- ${new Date().toISOString()} ${cmd} ${args.join(" ")}\n`);
  }
  const plain = `[${name}]`.padEnd(labelWidth + 2);
  const label = useColour() ? `\x1b[${color ?? colourFor(name)}m${plain}\x1b[0m` : plain;
  let open = 2; // stdout and stderr; the log file closes after both end
  for (const stream of [child.stdout, child.stderr]) {
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => {
      if (echo) process.stdout.write(`${label} ${line}\n`);
      log?.write(`${line}\n`);
    });
    lines.on("close", () => {
      if (--open === 0) log?.end();
    });
  }
  // Without a listener a failed spawn (ENOENT, EACCES) would crash the launcher.
  child.on("error", (err) => {
    const line = `failed to start ${cmd}: ${err.message}`;
    if (echo) process.stdout.write(`${label} ${line}\n`);
    log?.write(`${line}\n`);
  });
  return child;
}

/** Resolve with {code, signal} once `child` has exited (immediately if it already has). */
export function waitForExit(child, timeoutMs = Number.POSITIVE_INFINITY) {
  return new Promise((resolve) => {
    const done = () => resolve({ code: child.exitCode, signal: child.signalCode });
    if (child.exitCode !== null || child.signalCode !== null) return done();
    // A child that never started emits "error" and may never emit "exit".
    const onError = () => child.pid === undefined && onExit();
    const cleanup = () => {
      child.off("exit", onExit);
      child.off("error", onError);
    };
    const timer = Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          cleanup(); // callers poll with short timeouts: don't pile up listeners
          resolve(null);
        }, timeoutMs)
      : null;
    function onExit() {
      if (timer) clearTimeout(timer);
      cleanup();
      done();
    }
    child.on("exit", onExit);
    child.on("error", onError);
  });
}

const hasExited = (child) => child.exitCode !== null || child.signalCode !== null || !child.pid;

/** SIGKILL whatever is left in a child's process group (it leads one: spawned detached). */
export function killGroup(child) {
  signalGroup(child, "SIGKILL");
}

/** Send a signal to the child's process group (it leads one: spawned detached). */
function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // group already empty
  }
}

/**
 * Stop a child: `signal` (SIGTERM: let it drain), wait up to timeoutMs, then SIGKILL its whole
 * group. Returns how it ended and whether it had to be killed.
 */
export async function stopChild(child, { signal = "SIGTERM", timeoutMs = 15_000 } = {}) {
  if (hasExited(child)) return { code: child.exitCode, signal: child.signalCode, killed: false };
  child.kill(signal);
  let result = await waitForExit(child, timeoutMs);
  const killed = result === null;
  if (killed) {
    signalGroup(child, "SIGKILL");
    child.kill("SIGKILL"); // in case it left its group
  }
  result ??= await waitForExit(child);
  // Anything the child forked into its group would otherwise outlive it.
  signalGroup(child, "SIGKILL");
  return { ...result, killed };
}

/** The last `lines` lines of a (log) file, or "" when it cannot be read. */
export function tailFile(file, lines = 20) {
  let fd;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    return buf.toString("utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
