/**
 * Price holds are settled right after the execution is stored. When billing cannot be reached then, the
 * execution keeps settlement `capture_pending` / `release_pending`, and this loop retries until billing
 * answers (Capture and Release are idempotent by execution id, so a retry never charges twice). It also
 * prunes expired confirm-token uses and idempotency keys.
 */
import type { Logger } from "@toolport/kit/logger";
import type { ExecutionDeps } from "./routes.js";

const EVERY_MS = 15_000;

export function startSettlementSweeper(deps: ExecutionDeps, log: Logger): { stop(): Promise<void> } {
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
  }, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
