/**
 * Runs real Toolport processes (the built `dist/main.js` of each) on free ports against the run's
 * Postgres and NATS, each service on databases of its own for this stack, so test files never
 * share state. Output goes to a log file per process, printed when a process fails to come up.
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

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export const serviceNames = ["catalog", "execution", "billing", "identity", "content", "webhooks"] as const;
export type ServiceName = (typeof serviceNames)[number];
export type ProcessName = ServiceName | "gateway" | "mcp-server";

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
  ports: Record<ProcessName, number>;
  env: Record<string, string>;
  gatewayUrl: string;
  mcpUrl: string;
  logDir: string;
  start(name: ProcessName): Promise<void>;
  /**
   * Starts one more instance of a process beside the stack's own (e.g. a second gateway behind the
   * same services, as behind a balancer), on a new free port; returns that port. stopAll stops it.
   */
  startExtra(name: ProcessName): Promise<number>;
  stop(name: ProcessName, signal?: NodeJS.Signals): Promise<number | null>;
  stopAll(): Promise<void>;
  log(name: ProcessName): Promise<string>;
}

/**
 * Starts the named processes (services first). A port that was free when chosen can still be taken
 * before the process binds it; then the whole start is retried on new ports (at most three times).
 */
export async function startStack(names: ProcessName[], extraEnv: Record<string, string> = {}): Promise<Stack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(names, extraEnv);
    } catch (err) {
      if (attempt >= 3 || !String((err as Error).message).includes("EADDRINUSE")) throw err;
    }
  }
}

async function startStackOnce(names: ProcessName[], extraEnv: Record<string, string>): Promise<Stack> {
  const tag = randomBytes(3).toString("hex");
  const logDir = await mkdtemp(path.join(os.tmpdir(), "toolport-stack-"));
  const ports = {} as Record<ProcessName, number>;
  for (const name of Object.keys(entry) as ProcessName[]) ports[name] = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: inject("pgUrl"),
    NATS_URL: inject("natsUrl"),
    // Durable consumers of this stack only: other stacks on the same NATS must not take its events.
    NATS_CONSUMER_PREFIX: `s${tag}-`,
    LOG_LEVEL: "info",
    GATEWAY_URL: `http://127.0.0.1:${ports.gateway}`,
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    MCP_PUBLIC_URL: `http://127.0.0.1:${ports["mcp-server"]}/mcp`,
    ...extraEnv,
  };
  for (const s of serviceNames) {
    env[`${s.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[s]}`;
    const db = new URL(inject("pgUrl"));
    db.pathname = `/s${tag}_${s}`;
    env[`${s.toUpperCase()}_DATABASE_URL`] = db.toString();
  }
  const children = new Map<ProcessName, ChildProcess>();
  const extras: ChildProcess[] = [];

  /** Spawns one process; `register` sees it before it listens, so stopAll also stops one still starting. */
  async function spawnProcess(name: ProcessName, port: number, logName: string, register: (c: ChildProcess) => void) {
    const logFile = path.join(logDir, `${logName}.log`);
    const out = createWriteStream(logFile, { flags: "a" });
    const child = spawn(process.execPath, [path.join(repoRoot, entry[name])], {
      cwd: repoRoot,
      env: { ...env, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    register(child);
    await waitUntilListening(logName, child, port, logFile);
  }

  const stack: Stack = {
    ports,
    env,
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    mcpUrl: `http://127.0.0.1:${ports["mcp-server"]}/mcp`,
    logDir,
    async start(name) {
      await spawnProcess(name, ports[name], name, (child) => children.set(name, child));
    },
    async startExtra(name) {
      const port = await freePort();
      await spawnProcess(name, port, `${name}-${port}`, (child) => extras.push(child));
      return port;
    },
    async stop(name, signal = "SIGTERM") {
      const child = children.get(name);
      if (!child || child.exitCode !== null) return child?.exitCode ?? null;
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill(signal);
      const code = await exited;
      children.delete(name);
      return code;
    },
    async stopAll() {
      const exited = extras.splice(0).map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      );
      await Promise.all([...[...children.keys()].map((n) => stack.stop(n)), ...exited]);
    },
    log: (name) => readFile(path.join(logDir, `${name}.log`), "utf8").catch(() => ""),
  };
  try {
    // Services first (they create their databases), then the processes that call them.
    await Promise.all(names.filter((n) => (serviceNames as readonly string[]).includes(n)).map((n) => stack.start(n)));
    for (const n of names.filter((n) => !(serviceNames as readonly string[]).includes(n))) await stack.start(n);
  } catch (err) {
    await stack.stopAll();
    throw err;
  }
  return stack;
}

/** Resolves when the process logs that it listens; rejects with its log when it exits first. */
async function waitUntilListening(name: string, child: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
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
    if (/"msg":"[^"]*listening"/.test(seen)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on port ${port} within 30 s:\n${await readFile(logFile, "utf8").catch(() => "")}`);
}
