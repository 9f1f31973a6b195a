/**
 * Price holds are settled right after the execution is stored. When billing cannot be reached then, the
 * execution keeps settlement `capture_pending` / `release_pending`, and this loop retries until billing
 * answers (Capture and Release are idempotent by execution id, so a retry never charges twice). It also
 * prunes expired confirm-token uses and idempotency keys.
 *
 * It runs every `everyMs` (EXECUTION_SETTLEMENT_SWEEP_MS) while there is something to settle. Idle, it
 * slows down: each round that finds nothing pending doubles the wait, up to IDLE_SWEEP_FACTOR x everyMs;
 * a round that finds something, and a settlement this process leaves pending (billing unreachable),
 * bring it back to everyMs. So what this process leaves pending is retried every everyMs as before; what
 * a replica that died left pending waits IDLE_SWEEP_FACTOR x everyMs at worst (1 minute by default, far
 * inside a hold's expiry of 10 minutes).
 */
import type { Logger } from "@toolport/kit/logger";
import type { ExecutionDeps } from "./deps.js";

/** An idle sweep waits at most this many times everyMs. */
export const IDLE_SWEEP_FACTOR = 4;

export interface PacedLoop {
  /** The next round's wait: everyMs, or more while rounds find nothing (tests, diagnostics). */
  readonly nextWaitMs: number;
  /** Something to do was left for the loop: the next round within everyMs. */
  soon(): void;
  stop(): Promise<void>;
}

/**
 * Runs `round` every `everyMs`, slowing down while it finds nothing (resolves false), as described above;
 * a round still running when the next is due makes that one wait for it. A round that throws is logged
 * and counts as finding something (the next comes after everyMs).
 */
export function pacedLoop(o: { everyMs: number; log: Logger; name: string; round: () => Promise<boolean> }): PacedLoop {
  let waitMs = o.everyMs;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = 0;
  let running: Promise<void> | undefined;
  // soon() during a round: that round may have looked before what was left, so it does not slow down.
  let soonDuringRound = false;
  let stopped = false;
  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    dueAt = Date.now() + waitMs;
    timer = setTimeout(run, waitMs);
    timer.unref();
  };
  const run = () => {
    running ??= o
      .round()
      .then(
        (found) => {
          waitMs = found || soonDuringRound ? o.everyMs : Math.min(waitMs * 2, o.everyMs * IDLE_SWEEP_FACTOR);
        },
        (err) => {
          waitMs = o.everyMs;
          o.log.warn({ err }, `${o.name} failed`);
        },
      )
      .finally(() => {
        running = undefined;
        soonDuringRound = false;
        schedule();
      });
  };
  schedule();
  return {
    get nextWaitMs() {
      return waitMs;
    },
    soon() {
      waitMs = o.everyMs;
      if (running) soonDuringRound = true;
      else if (dueAt - Date.now() > o.everyMs) schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      clearTimeout(timer);
    },
  };
}

export function startSettlementSweeper(deps: ExecutionDeps, log: Logger, everyMs: number): { stop(): Promise<void> } {
  const loop = pacedLoop({
    everyMs,
    log,
    name: "settlement sweep",
    round: async () => {
      const pending = await deps.store.pendingSettlements(100);
      for (const row of pending) {
        await deps.executor.settle(row.id, row.settlement === "capture_pending");
      }
      await deps.store.prune();
      return pending.length > 0;
    },
  });
  deps.executor.onSettlementPending = () => loop.soon();
  return {
    async stop() {
      deps.executor.onSettlementPending = undefined;
      await loop.stop();
    },
  };
}
