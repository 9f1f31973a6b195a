/**
 * The NATS connection (credentials, CA) and the stream: created, or brought to the configured limits.
 * Part of `@toolport/kit/events`, whose header says how events work.
 */
import { readFileSync } from "node:fs";
import {
  type Authenticator,
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  StorageType,
  type StreamConfig,
} from "nats";
import type { Logger } from "../logger.js";
import { currentNatsNames } from "./subjects.js";

/**
 * How a process proves itself to NATS beyond what its URL carries (user and password, or a token), and
 * which CA it trusts: file paths, so a Kubernetes Secret mounted as a volume provides them.
 */
export interface NatsAuth {
  /** A `.creds` file (a user JWT and its NKey seed), as `nsc` writes it. */
  credsFile?: string;
  /** A file holding an NKey seed (`SU...`), for a server whose users are NKeys. */
  nkeySeedFile?: string;
  /** PEM file of the CA the server's certificate is checked against; TLS is then required. */
  caFile?: string;
}

/** The connection options a NatsAuth gives: an authenticator and TLS, each read from its file at connect time. */
export function natsAuthOptions(auth: NatsAuth = {}): Pick<ConnectionOptions, "authenticator" | "tls"> {
  if (auth.credsFile && auth.nkeySeedFile) throw new Error("NATS: give a creds file or an NKey seed file, not both");
  const options: Pick<ConnectionOptions, "authenticator" | "tls"> = {};
  // Read on every (re)connect, so a rotated file mounted from a Secret is taken without a restart.
  const file = (path: string) => () => new Uint8Array(readFileSync(path));
  let authenticator: Authenticator | undefined;
  if (auth.credsFile) authenticator = credsAuthenticator(file(auth.credsFile));
  if (auth.nkeySeedFile) {
    const read = file(auth.nkeySeedFile);
    // A seed file may end with a newline; the seed itself is the first line.
    authenticator = nkeyAuthenticator(() => new TextEncoder().encode(new TextDecoder().decode(read()).trim()));
  }
  if (authenticator) options.authenticator = authenticator;
  if (auth.caFile) options.tls = { caFile: auth.caFile };
  return options;
}

export async function connectNats(url: string, name: string, log: Logger, auth: NatsAuth = {}): Promise<NatsConnection> {
  // A start waits for NATS as long as it takes: say so, and keep saying so, rather than hang in silence.
  const servers = url.replace(/\/\/[^@/]*@/g, "//"); // no credentials in the log
  const started = Date.now();
  const waiting = setInterval(() => {
    log.warn({ nats: servers, waited_s: Math.round((Date.now() - started) / 1000) }, "still waiting for NATS");
  }, 10_000);
  waiting.unref();
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: url,
      name,
      ...natsAuthOptions(auth),
      // Keep trying for as long as the process lives: the outbox holds events meanwhile.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
      // No stack captured when a request starts (two Errors per publish and pull, in case it times out):
      // its message and code say what timed out, and the capture showed in the call path's CPU profile.
      noAsyncTraces: true,
    });
  } finally {
    clearInterval(waiting);
  }
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect" || status.type === "error") {
        log.warn({ nats: status.type, data: String(status.data) }, "nats connection status");
      }
    }
  })().catch(() => {});
  return nc;
}

/**
 * The stream's size and safety, from configuration (NATS_STREAM_*): how many servers keep a copy, and
 * how old or how large it may grow before the oldest events go. The defaults (one copy, no limit) suit one
 * server; a cluster wants 3 copies, and any long-lived server a limit.
 */
export interface StreamLimits {
  /** Copies on a NATS cluster (1 to 5; more than the cluster's servers is refused by NATS). */
  replicas?: number;
  /** Oldest event kept, in seconds (0: no limit). */
  maxAgeSeconds?: number;
  /** Largest the stream may grow, in bytes (-1: no limit). */
  maxBytes?: number;
}

function streamSettings(limits: StreamLimits): Pick<StreamConfig, "num_replicas" | "max_age" | "max_bytes"> {
  return {
    num_replicas: limits.replicas ?? 1,
    max_age: (limits.maxAgeSeconds ?? 0) * 1_000_000_000, // nanoseconds
    max_bytes: limits.maxBytes ?? -1,
  };
}

/**
 * Creates the stream when absent, with `limits`; an existing stream whose replicas or limits differ is
 * updated to them (its subjects and everything else left as they are), so changing a setting and
 * restarting applies it.
 */
export async function ensureStream(nc: NatsConnection, limits: StreamLimits = {}): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const wanted = streamSettings(limits);
  let existing: StreamConfig | undefined;
  try {
    existing = (await jsm.streams.info(currentNatsNames().stream)).config;
  } catch {
    try {
      await jsm.streams.add({
        name: currentNatsNames().stream,
        subjects: [currentNatsNames().wire("toolport.>")],
        storage: StorageType.File,
        duplicate_window: 2 * 60 * 1_000_000_000, // 2 minutes, in nanoseconds
        ...wanted,
      });
    } catch (err) {
      // Another process created it meanwhile.
      if (!String((err as Error).message).includes("already in use")) throw err;
    }
    return;
  }
  if (
    existing.num_replicas !== wanted.num_replicas ||
    existing.max_age !== wanted.max_age ||
    (existing.max_bytes ?? -1) !== wanted.max_bytes
  ) {
    await jsm.streams.update(currentNatsNames().stream, { ...existing, ...wanted });
  }
}
