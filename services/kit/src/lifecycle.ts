/**
 * Process lifecycle shared by every Toolport process: stop cleanly on SIGTERM/SIGINT (a second
 * signal exits at once), and exit loudly on anything uncaught instead of limping on.
 */
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

/** Runs `main`, printing a configuration or start-up error plainly and exiting non-zero. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: Error) => {
    // A ConfigError is written for a person; print it as it is, not as a JSON blob.
    process.stderr.write(`${name}: ${err.name === "ConfigError" ? err.message : (err.stack ?? String(err))}\n`);
    process.exit(1);
  });
}
