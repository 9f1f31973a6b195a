// Types for infra.mjs (and the process helpers it re-exports from processes.mjs), so the
// TypeScript test harness can import the launcher's process management.
import type { ChildProcess } from "node:child_process";

/** Where progress messages go: a function, or a logger object whose `info` is used. */
export type Log = ((message: string) => void) | { info(message: string): void };

/** Paths of the Postgres server tools, all from one folder. */
export interface PostgresBin {
  dir: string;
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/** A server this module started. */
export interface RunningServer {
  /** postgres://toolport@127.0.0.1:<port>/postgres, or nats://127.0.0.1:<port>. */
  url: string;
  /** The server's own pid (the postmaster, or nats-server). */
  pid: number;
  /** Stop it and wait until its process has gone. */
  stop(): Promise<void>;
}

export function findPostgresBin(): PostgresBin | null;
export function findNatsServer(): string | null;

export function ensureBinaries(options?: {
  /** Install the missing Debian packages when root with apt-get (default false: just explain). */
  install?: boolean;
  log?: Log;
  /** Which binaries are needed (Postgres and NATS by default; chromium, for the page tests, when asked). */
  postgres?: boolean;
  nats?: boolean;
  browser?: boolean;
}): { postgres: PostgresBin | null; natsServer: string | null; chromium: string | null };

/** A headless browser for the page tests: CHROMIUM_PATH, else Debian's chromium; null when there is none. */
export function findChromium(): string | null;

export function startPostgres(options: {
  dataDir: string;
  port: number;
  log?: Log;
  /** fsync, synchronous_commit and full_page_writes off: for throwaway test clusters only. */
  fast?: boolean;
  /** Where Postgres' output goes (default `<dataDir>.log`). */
  logFile?: string;
  bins?: PostgresBin;
  timeoutMs?: number;
  /** Server settings for this start, passed as `-c name=value` (e.g. `{ max_connections: 300 }`). */
  settings?: Record<string, string | number>;
}): Promise<RunningServer>;

export function startNats(options: {
  storeDir: string;
  port: number;
  log?: Log;
  /** Serve the HTTP monitor on this port (none by default). */
  monitorPort?: number;
  /** Where nats-server's output goes (default `<storeDir>.log`). */
  logFile?: string;
  natsServer?: string;
  timeoutMs?: number;
}): Promise<RunningServer>;

export function sleep(ms: number): Promise<void>;
export function freePort(): Promise<number>;
/** The variables that move the launcher's listeners: each process's port, Postgres's and NATS's. */
export const LAUNCHER_PORT_VARIABLES: readonly string[];
/** Sets every launcher port variable in `env` to a free port. */
export function assignLauncherPorts(env: Record<string, string | undefined>): Promise<void>;
export function isPortFree(port: number): Promise<boolean>;

/** Resolves with the 200 response's body; rejects on timeout with the last answer seen. */
export function waitForHttp(
  url: string,
  options?: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal },
): Promise<string>;

export function spawnLabelled(
  name: string,
  cmd: string,
  args: readonly string[],
  options?: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** Appended to, without labels. */
    logFile?: string;
    /** ANSI colour code for the label (default: picked from the name). */
    color?: number;
    /** Echo labelled lines on our stdout (default true). */
    echo?: boolean;
    /** Pad labels to this many characters so output lines up. */
    labelWidth?: number;
    uid?: number;
    gid?: number;
  },
): ChildProcess;

export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

/** Resolves with how the child exited, or null if timeoutMs passes first. */
export function waitForExit(child: ChildProcess, timeoutMs?: number): Promise<ExitStatus | null>;

/** Signal (default SIGTERM), wait up to timeoutMs (default 15 s), then SIGKILL the process group. */
export function stopChild(
  child: ChildProcess,
  options?: { signal?: NodeJS.Signals; timeoutMs?: number },
): Promise<ExitStatus & { killed: boolean }>;

export function tailFile(file: string, lines?: number): string;
