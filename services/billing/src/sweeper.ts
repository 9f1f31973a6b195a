/**
 * Releases holds left open past their expiry (the execution that took them crashed or never settled),
 * so no money stays reserved forever. Safe with several replicas: each release re-checks the hold under
 * the wallet's lock, and a hold settled meanwhile is left as it is.
 */

import type { Logger } from "@toolport/kit/logger";
import type { BackgroundWork } from "@toolport/kit/service";
import type { HoldStore } from "./store/holds.js";

export function startHoldSweeper(holds: HoldStore, log: Logger, intervalMs: number): BackgroundWork {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        let released = 0;
        for (;;) {
          const due = await holds.expiredOpenHolds(200);
          for (const executionId of due) {
            if (stopped) break;
            const result = await holds.release(executionId, "expired", "expire");
            if (!result.replayed) released += 1;
          }
          if (due.length < 200 || stopped) break;
        }
        if (released > 0) log.info({ released }, "released expired holds");
      } catch (err) {
        log.warn({ err: (err as Error).message }, "hold sweeper round failed; retrying next round");
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
