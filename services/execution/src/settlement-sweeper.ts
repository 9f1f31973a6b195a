/**
 * Price holds are settled right after the execution is stored. When billing cannot be reached then, the
 * execution keeps settlement `capture_pending` / `release_pending`, and this loop retries until billing
 * answers (Capture and Release are idempotent by execution id, so a retry never charges twice). It also
 * prunes expired confirm-token uses and idempotency keys. It runs every `everyMs`
 * (EXECUTION_SETTLEMENT_SWEEP_MS); a round still running when the next is due makes that one skip.
 */
import type { Logger } from "@toolport/kit/logger";
import type { ExecutionDeps } from "./deps.js";

export function startSettlementSweeper(deps: ExecutionDeps, log: Logger, everyMs: number): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = async () => {
    try {
      for (const row of await deps.store.pendingSettlements(100)) {
        await deps.executor.settle(row.id, row.settlement === "capture_pending");
      }
      await deps.store.prune();
    } catch (err) {
      log.warn({ err }, "settlement sweep failed");
    }
  };
  const timer = setInterval(() => {
    running ??= tick().finally(() => {
      running = undefined;
    });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
