/**
 * Process lifecycle shared by every Toolport process: stop cleanly on SIGTERM/SIGINT (a second
 * signal exits at once), and exit loudly on anything uncaught instead of limping on.
 */
import { setFlagsFromString } from "node:v8";
import type { Logger } from "./logger.js";

export function onShutdown(log: Logger, shutdown: (signal: string) => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "second signal, exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    shutdown(signal).then(
      () => {
        log.info("stopped");
        process.exit(0);
      },
      (err) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("uncaughtException", (err) => {
    log.fatal({ err }, "uncaught exception");
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    log.fatal({ err }, "unhandled rejection");
    process.exit(1);
  });
}

/**
 * How much V8 lets the old generation grow after a full collection before it runs the next one, in percent
 * of what survived (HEAP_GROWING_PERCENT; default 100, so twice the live heap; 0 leaves V8's own rule).
 *
 * V8's own rule grows the heap by as little as 10% when collecting looks cheap, which it does to a process
 * that mostly waits on I/O: at one request at a time the gateway ran a full collection every 25 requests
 * of a 20-tool GET /v1/tools page, and the catalog (whose live heap is mostly the search index, so each
 * full collection pauses 10-21 ms) every 80; those pauses were most of the route's p99 (issue 30). At 100%,
 * side by side on the same 100,085-tool stack: the catalog's full collections fell from 5 to none in 400
 * requests, and GET /v1/tools' p99 from 55-80 ms to 36-47 ms; the catalog's heap held 182 MB against
 * 85-110 MB (RSS 444 MB against 363 MB). V8 reads this flag whenever it sets the next limit, so it
 * applies when set at start.
 */
export function tuneHeapGrowth(env: NodeJS.ProcessEnv = process.env): void {
  const raw = env.HEAP_GROWING_PERCENT?.trim() || "100";
  const percent = Number(raw);
  if (!Number.isInteger(percent) || percent < 0 || percent > 1000)
    throw Object.assign(new Error(`HEAP_GROWING_PERCENT: expected a whole number from 0 to 1000, got ${JSON.stringify(raw)}`), {
      name: "ConfigError",
    });
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** Runs `main`, printing a configuration or start-up error plainly and exiting non-zero. */
export function runMain(name: string, main: () => Promise<void>): void {
  Promise.resolve()
    .then(() => tuneHeapGrowth())
    .then(main)
    .catch((err: Error) => {
      // A ConfigError is written for a person; print it as it is, not as a JSON blob.
      process.stderr.write(`${name}: ${err.name === "ConfigError" ? err.message : (err.stack ?? String(err))}\n`);
      process.exit(1);
    });
}
