/**
 * Releases holds left open past their expiry (the execution that took them crashed or never settled),
 * so no money stays reserved forever. Safe with several replicas: each release re-checks the hold under
 * the wallet's lock, and a hold settled meanwhile is left as it is.
 *
 * It looks when the next open hold it knows of expires (by Postgres's clock), and at least every
 * `idleMaxMs`, never more often than every `intervalMs`. A hold this process places moves the next look
 * forward to its expiry when that comes sooner; one placed by another replica after this one's last look
 * is that replica's to release, or found by this one's next look should that replica die.
 */

import type { Logger } from "@toolport/kit/logger";
import type { BackgroundWork } from "@toolport/kit/service";
import type { HoldStore } from "./store/holds.js";

/** The longest wait between looks of an idle sweeper (the default hold TTL when shorter). */
export const SWEEP_IDLE_MAX_MS = 5 * 60_000;

export function startHoldSweeper(
  holds: HoldStore,
  log: Logger,
  intervalMs: number,
  idleMaxMs = SWEEP_IDLE_MAX_MS,
): BackgroundWork {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  /** When the pending wait ends (ms since the epoch, this process's clock). */
  let wakeAt = 0;

  const waitFor = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeAt = Date.now() + ms;
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
      timer = setTimeout(() => wake?.(), ms);
    });

  // A hold placed here expires ttlMs from now: look then, if that is before the look already planned.
  holds.onPlaced = (ttlMs) => {
    const at = Date.now() + Math.max(ttlMs + 5, intervalMs);
    if (!wake || at >= wakeAt) return;
    const resolve = wake;
    clearTimeout(timer);
    wakeAt = at;
    timer = setTimeout(() => resolve(), at - Date.now());
  };

  const loop = (async () => {
    while (!stopped) {
      let nextMs = intervalMs;
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
        const dueInMs = await holds.nextExpiryInMs();
        nextMs = dueInMs === null ? idleMaxMs : Math.min(idleMaxMs, Math.max(intervalMs, Math.ceil(dueInMs) + 5));
      } catch (err) {
        log.warn({ err: (err as Error).message }, "hold sweeper round failed; retrying next round");
      }
      if (!stopped) await waitFor(nextMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      holds.onPlaced = undefined;
      wake?.();
      await loop;
    },
  };
}
