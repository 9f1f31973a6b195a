/**
 * Runs real Toolport processes (the built `dist/` code) on free ports against the run's Postgres and
 * NATS, each service on databases of its own for this stack, so test files never share state. Output
 * goes to a log file per process, printed when a process fails to come up.
 *
 * Two layouts (DESIGN.md "Roles"): "one-process" (the default, as `npm start` runs it) hosts every
 * named role in one `toolport --roles=...` process, the roles calling each other in process;
 * "per-role" runs each role as its own process, calling each other over gRPC, as Kubernetes runs them.
 * TOOLPORT_STACK_LAYOUT picks the default (the per-role test project sets it); a file that stops and
 * restarts single roles asks for "per-role" itself. Every role listens on its own port in both.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { type Balancer, startBalancer } from "./balancer.js";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export const serviceNames = ["catalog", "execution", "billing", "identity", "content", "webhooks"] as const;
export type ServiceName = (typeof serviceNames)[number];
export type ProcessName = ServiceName | "gateway" | "mcp-server";

export type Layout = "one-process" | "per-role";

export interface StackOptions {
  layout?: Layout;
  /**
   * A Postgres server and NATS of the caller's own instead of the run's (`inject`), e.g. for a soak that
   * stops and restarts them; the stack's databases are still created on that server, one per service.
   */
  infra?: { pgUrl: string; natsUrl: string };
  /**
   * Processes per role in the per-role layout (default 1). With more, each role's port is a TCP balancer
   * (balancer.ts, standing for a Kubernetes Service) in front of that many processes on ports of their own.
   */
  replicas?: number;
}

/** The layout a stack gets when its test does not ask for one. */
export function defaultLayout(): Layout {
  const wanted = process.env.TOOLPORT_STACK_LAYOUT;
  return wanted === "per-role" ? "per-role" : "one-process";
}

const HOST_ENTRY = "services/host/dist/main.js";
/** The variable that gives a role its port when several share a process (kit/roles.ts). */
const portVariable: Record<ProcessName, string> = {
  catalog: "CATALOG_PORT",
  execution: "EXECUTION_PORT",
  billing: "BILLING_PORT",
  identity: "IDENTITY_PORT",
  content: "CONTENT_PORT",
  webhooks: "WEBHOOKS_PORT",
  gateway: "GATEWAY_PORT",
  "mcp-server": "MCP_PORT",
};

const entry: Record<ProcessName, string> = {
  catalog: "services/catalog/dist/main.js",
  execution: "services/execution/dist/main.js",
  billing: "services/billing/dist/main.js",
  identity: "services/identity/dist/main.js",
  content: "services/content/dist/main.js",
  webhooks: "services/webhooks/dist/main.js",
  gateway: "gateway/dist/main.js",
  "mcp-server": "mcp-server/dist/main.js",
};

export interface Stack {
  layout: Layout;
  /** Processes per role (per-role layout; 1 in one process). */
  replicas: number;
  ports: Record<ProcessName, number>;
  env: Record<string, string>;
  gatewayUrl: string;
  mcpUrl: string;
  logDir: string;
  /** Starts a role's process (with replicas: that replica, or every one when none is named). */
  start(name: ProcessName, replica?: number): Promise<void>;
  /**
   * Starts one more instance of a process beside the stack's own (e.g. a second gateway behind the
   * same services, as behind a balancer), on a new free port; returns that port. stopAll stops it.
   */
  startExtra(name: ProcessName, env?: Record<string, string>): Promise<number>;
  /**
   * Stops one role's process (per-role layout only: in one process, roles stop together); with replicas,
   * the one named, or every one.
   */
  stop(name: ProcessName, signal?: NodeJS.Signals, replica?: number): Promise<number | null>;
  stopAll(): Promise<void>;
  /** Connections each replica of a role was handed by its balancer (replicas only; [] otherwise). */
  connections(name: ProcessName): number[];
  /** What the role logged (in one process: that process's lines of this role). */
  log(name: ProcessName): Promise<string>;
}

/**
 * Starts the named processes (services first). A port that was free when chosen can still be taken
 * before the process binds it; then the whole start is retried on new ports (at most three times).
 */
export async function startStack(
  names: ProcessName[],
  extraEnv: Record<string, string> = {},
  options: StackOptions = {},
): Promise<Stack> {
  const layout = options.layout ?? defaultLayout();
  return retriedOnTakenPort(() =>
    layout === "one-process" && names.length > 1
      ? startOneProcess(names, extraEnv, options.infra)
      : startStackOnce(names, extraEnv, options.infra, options.replicas ?? 1),
  );
}

/**
 * Runs `start`, which chooses its ports, again (at most three times in all) while it fails because a port
 * it chose was taken before its process bound it (EADDRINUSE).
 */
async function retriedOnTakenPort<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !String((err as Error).message).includes("EADDRINUSE")) throw err;
    }
  }
}

interface Prepared {
  ports: Record<ProcessName, number>;
  env: Record<string, string>;
  logDir: string;
  gatewayUrl: string;
  mcpUrl: string;
}

/** Ports, databases and environment of a new stack, whatever its layout. */
async function prepare(extraEnv: Record<string, string>, infra?: StackOptions["infra"]): Promise<Prepared> {
  const pgUrl = infra?.pgUrl ?? inject("pgUrl");
  const tag = randomBytes(3).toString("hex");
  const logDir = await mkdtemp(path.join(os.tmpdir(), "toolport-stack-"));
  const ports = {} as Record<ProcessName, number>;
  for (const name of Object.keys(entry) as ProcessName[]) ports[name] = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: pgUrl,
    NATS_URL: infra?.natsUrl ?? inject("natsUrl"),
    // A stream and subjects of this stack's own: other stacks on the same NATS neither receive its events
    // nor replay their history into it (a test publishing an event itself uses natsNames(env.NATS_NAMESPACE)).
    NATS_NAMESPACE: `s${tag}`,
    LOG_LEVEL: "info",
    GATEWAY_URL: `http://127.0.0.1:${ports.gateway}`,
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    MCP_PUBLIC_URL: `http://127.0.0.1:${ports["mcp-server"]}/mcp`,
    ...extraEnv,
  };
  for (const s of serviceNames) {
    env[`${s.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[s]}`;
    const db = new URL(pgUrl);
    db.pathname = `/s${tag}_${s}`;
    // A test may give a service a database of its own (one it migrated beforehand as another user).
    env[`${s.toUpperCase()}_DATABASE_URL`] = extraEnv[`${s.toUpperCase()}_DATABASE_URL`] ?? db.toString();
  }
  return {
    ports,
    env,
    logDir,
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    mcpUrl: `http://127.0.0.1:${ports["mcp-server"]}/mcp`,
  };
}

/**
 * Spawns `node <file> ...args` with `env`, logging to `<logDir>/<logName>.log`; `register` sees the child
 * before it listens, so a stop also stops one still starting. Resolves once `ready` matches its output.
 */
async function spawnLogged(
  file: string,
  args: string[],
  env: Record<string, string>,
  logDir: string,
  logName: string,
  register: (c: ChildProcess) => void,
  ready: RegExp,
  port: number,
): Promise<void> {
  const logFile = path.join(logDir, `${logName}.log`);
  const out = createWriteStream(logFile, { flags: "a" });
  const child = spawn(process.execPath, [path.join(repoRoot, file), ...args], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  register(child);
  await waitUntilListening(logName, child, port, logFile, ready);
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

const LISTENING = /"msg":"[^"]*listening"/;

/**
 * One more single-role process beside a stack, on a new free port (stopped with the stack's extras), with
 * the stack's environment and `overrides`; on another port when that one was taken before the process
 * bound it, as startStack.
 */
function startExtra(
  name: ProcessName,
  env: Record<string, string>,
  logDir: string,
  extras: ChildProcess[],
  overrides: Record<string, string> = {},
): Promise<number> {
  return retriedOnTakenPort(async () => {
    const port = await freePort();
    await spawnLogged(
      entry[name],
      [],
      { ...env, ...overrides, PORT: String(port) },
      logDir,
      `${name}-${port}`,
      (c) => extras.push(c),
      LISTENING,
      port,
    );
    return port;
  });
}

/** Every named role in one `toolport --roles=...` process. */
async function startOneProcess(
  names: ProcessName[],
  extraEnv: Record<string, string>,
  infra?: StackOptions["infra"],
): Promise<Stack> {
  const prepared = await prepare(extraEnv, infra);
  const { ports, env, logDir } = prepared;
  for (const name of names) env[portVariable[name]] = String(ports[name]);
  const ordered = (Object.keys(entry) as ProcessName[]).filter((n) => names.includes(n));
  let host: ChildProcess | undefined;
  const extras: ChildProcess[] = [];
  const stack: Stack = {
    layout: "one-process",
    replicas: 1,
    ...prepared,
    async start(name) {
      throw new Error(`stack.start("${name}"): roles start together in the one-process layout; ask for { layout: "per-role" }`);
    },
    startExtra: (name, overrides) => startExtra(name, env, logDir, extras, overrides),
    async stop(name) {
      throw new Error(`stack.stop("${name}"): roles stop together in the one-process layout; ask for { layout: "per-role" }`);
    },
    async stopAll() {
      await Promise.all([...extras.splice(0), ...(host ? [host] : [])].map((c) => stopChild(c)));
    },
    connections: () => [],
    async log(name) {
      const all = await readFile(path.join(logDir, "toolport.log"), "utf8").catch(() => "");
      const mine = `"service":"${name}"`;
      return all
        .split("\n")
        .filter((line) => line.includes(mine))
        .join("\n");
    },
  };
  try {
    await spawnLogged(
      HOST_ENTRY,
      [`--roles=${ordered.join(",")}`],
      env,
      logDir,
      "toolport",
      (c) => {
        host = c;
      },
      /"msg":"toolport listening/,
      ports[ordered[0] as ProcessName],
    );
  } catch (err) {
    await stack.stopAll();
    throw err;
  }
  return stack;
}

/** Each named role in a process of its own (or `replicas` processes behind a balancer). */
async function startStackOnce(
  names: ProcessName[],
  extraEnv: Record<string, string>,
  infra: StackOptions["infra"],
  replicas: number,
): Promise<Stack> {
  const prepared = await prepare(extraEnv, infra);
  const { ports, env, logDir } = prepared;
  /** Keyed by `name` (one replica) or `name#i`. */
  const children = new Map<string, ChildProcess>();
  const extras: ChildProcess[] = [];
  const balancers: Balancer[] = [];
  const replicaPorts = new Map<ProcessName, number[]>();
  const indexes = (replica?: number) => (replica === undefined ? [...Array(replicas).keys()] : [replica]);
  const keyOf = (name: ProcessName, i: number) => (replicas === 1 ? name : `${name}#${i}`);
  const portOf = (name: ProcessName, i: number) => (replicas === 1 ? ports[name] : (replicaPorts.get(name)?.[i] as number));

  const stack: Stack = {
    layout: "per-role",
    replicas,
    ...prepared,
    async start(name, replica) {
      await Promise.all(
        indexes(replica).map((i) =>
          spawnLogged(
            entry[name],
            [],
            { ...env, PORT: String(portOf(name, i)) },
            logDir,
            replicas === 1 ? name : `${name}-${i}`,
            (c) => children.set(keyOf(name, i), c),
            LISTENING,
            portOf(name, i),
          ),
        ),
      );
    },
    startExtra: (name, overrides) => startExtra(name, env, logDir, extras, overrides),
    async stop(name, signal = "SIGTERM", replica) {
      const codes = await Promise.all(
        indexes(replica).map(async (i) => {
          const child = children.get(keyOf(name, i));
          if (!child || child.exitCode !== null) return child?.exitCode ?? null;
          const code = await stopChild(child, signal);
          children.delete(keyOf(name, i));
          return code;
        }),
      );
      return codes[0] ?? null;
    },
    async stopAll() {
      await Promise.all([...children.values(), ...extras.splice(0)].map((c) => stopChild(c)));
      children.clear();
      await Promise.all(balancers.splice(0).map((b) => b.close()));
    },
    connections: (name) => {
      const own = replicaPorts.get(name);
      const balancer = balancers.find((b) => b.port === ports[name]);
      return own && balancer ? own.map((p) => balancer.connections.get(p) ?? 0) : [];
    },
    log: async (name) =>
      (
        await Promise.all(
          indexes().map((i) =>
            readFile(path.join(logDir, `${replicas === 1 ? name : `${name}-${i}`}.log`), "utf8").catch(() => ""),
          ),
        )
      ).join("\n"),
  };
  try {
    if (replicas > 1) {
      for (const name of names) {
        const own: number[] = [];
        for (let i = 0; i < replicas; i++) own.push(await freePort());
        replicaPorts.set(name, own);
        balancers.push(await startBalancer(ports[name], own));
      }
    }
    // Services first (they create their databases), then the processes that call them.
    // Replicas start together, as a Deployment's pods do (migrations take an advisory lock).
    await Promise.all(names.filter((n) => (serviceNames as readonly string[]).includes(n)).map((n) => stack.start(n)));
    for (const n of names.filter((n) => !(serviceNames as readonly string[]).includes(n))) await stack.start(n);
  } catch (err) {
    await stack.stopAll();
    throw err;
  }
  return stack;
}

/** Resolves when the process logs that it listens; rejects with its log when it exits first. */
async function waitUntilListening(
  name: string,
  child: ChildProcess,
  port: number,
  logFile: string,
  ready: RegExp,
): Promise<void> {
  // 30 s by default; TOOLPORT_TEST_START_SECONDS gives a busier machine (a developer's, running more) longer.
  const seconds = Number(process.env.TOOLPORT_TEST_START_SECONDS) || 30;
  const deadline = Date.now() + seconds * 1000;
  let seen = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    seen += chunk.toString();
  });
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `${name} exited with ${child.exitCode} before listening:\n${await readFile(logFile, "utf8").catch(() => "")}`,
      );
    }
    if (ready.test(seen)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    `${name} did not listen on port ${port} within ${seconds} s:\n${await readFile(logFile, "utf8").catch(() => "")}`,
  );
}
