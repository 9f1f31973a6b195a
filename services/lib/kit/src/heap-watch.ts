/**
 * Warns well before the heap runs out: every few seconds the main thread's heap in use is compared with
 * its limit, and at WARN_SHARE or more a warning is logged, at most once per QUIET_MS while it stays high
 * (then again, with how long it has been high). The same figures are metrics (toolport_heap_used_bytes,
 * toolport_heap_limit_bytes). A heap that nears its limit ends in an out-of-memory crash, which the
 * launcher or Kubernetes restarts; this line is what says it was coming.
 */
import v8 from "node:v8";
import type { Logger } from "./logger.js";

export const WARN_SHARE = 0.8;
const CHECK_EVERY_MS = 5_000;
const QUIET_MS = 5 * 60_000;

export interface HeapWatchOptions {
  share?: number;
  everyMs?: number;
  quietMs?: number;
  /** The heap figures (tests give their own). */
  read?: () => { used: number; limit: number };
}

const fromV8 = () => {
  const s = v8.getHeapStatistics();
  return { used: s.used_heap_size, limit: s.heap_size_limit };
};

/** Starts watching; returns the function that stops it. */
export function watchHeap(log: Logger, options: HeapWatchOptions = {}): () => void {
  const share = options.share ?? WARN_SHARE;
  const quietMs = options.quietMs ?? QUIET_MS;
  const read = options.read ?? fromV8;
  let lastWarned = Number.NEGATIVE_INFINITY;
  let highSince: number | undefined;
  const mb = (bytes: number) => Math.round(bytes / (1024 * 1024));
  const timer = setInterval(() => {
    const { used, limit } = read();
    const now = Date.now();
    if (used < share * limit) {
      highSince = undefined;
      return;
    }
    highSince ??= now;
    if (now - lastWarned < quietMs) return;
    lastWarned = now;
    log.warn(
      {
        heap_used_mb: mb(used),
        heap_limit_mb: mb(limit),
        share: Number((used / limit).toFixed(3)),
        high_for_s: Math.round((now - highSince) / 1000),
      },
      `heap at ${Math.round((100 * used) / limit)}% of its limit: the process will die out of memory if it keeps growing`,
    );
  }, options.everyMs ?? CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
