/**
 * The settlement sweeper's pacing (pacedLoop): every everyMs while rounds find something, doubling while
 * they find nothing up to IDLE_SWEEP_FACTOR x everyMs and no further, back to everyMs when a round finds
 * something, when a round fails, and at once when something is left for it (`soon`).
 */
import { createLogger } from "@toolport/kit/logger";
import { describe, expect, it } from "vitest";
import { until } from "../../../test/harness/wait.js";
import { IDLE_SWEEP_FACTOR, pacedLoop } from "./settlement-sweeper.js";

const log = createLogger("settlement-sweeper-test", "silent");
const EVERY_MS = 5;

/** A loop whose rounds answer `script` in turn (true: found something; an Error: fails), then false. */
function scripted(script: (boolean | Error)[]) {
  const waitsSeen: number[] = [];
  const loop = pacedLoop({
    everyMs: EVERY_MS,
    log,
    name: "test sweep",
    round: async () => {
      waitsSeen.push(loop.nextWaitMs);
      const next = script.shift() ?? false;
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { loop, waitsSeen };
}

describe("pacedLoop", () => {
  it("doubles its wait while rounds find nothing, up to the factor, and comes back to everyMs when one finds something", async () => {
    const { loop, waitsSeen } = scripted([false, false, false, false, true, false, new Error("pg down"), false]);
    await until("eight rounds", async () => waitsSeen.length >= 9);
    await loop.stop();
    // The wait each round was started after: everyMs first, then doubling after each empty round, capped.
    const cap = EVERY_MS * IDLE_SWEEP_FACTOR;
    expect(waitsSeen.slice(0, 9)).toEqual([
      EVERY_MS,
      2 * EVERY_MS,
      cap,
      cap,
      cap, // the 5th round finds something:
      EVERY_MS,
      2 * EVERY_MS, // the 7th fails: counts as found
      EVERY_MS,
      2 * EVERY_MS,
    ]);
  });

  it("soon() brings an idle loop back to everyMs", async () => {
    const { loop, waitsSeen } = scripted([]);
    await until("the loop slowed down", async () => loop.nextWaitMs === EVERY_MS * IDLE_SWEEP_FACTOR);
    loop.soon();
    expect(loop.nextWaitMs).toBe(EVERY_MS);
    const rounds = waitsSeen.length;
    await until("the next round", async () => waitsSeen.length > rounds);
    await loop.stop();
  });

  it("soon() during a round that then finds nothing keeps everyMs (the round may have looked too early)", async () => {
    let release: ((found: boolean) => void) | undefined;
    const waitsSeen: number[] = [];
    const loop = pacedLoop({
      everyMs: EVERY_MS,
      log,
      name: "test sweep",
      round: () => {
        waitsSeen.push(loop.nextWaitMs);
        // The third round hangs until released.
        return waitsSeen.length === 3 ? new Promise<boolean>((r) => (release = r)) : Promise.resolve(false);
      },
    });
    await until("the third round", async () => release !== undefined);
    expect(loop.nextWaitMs).toBe(EVERY_MS * IDLE_SWEEP_FACTOR);
    loop.soon();
    release!(false);
    await until("the fourth round", async () => waitsSeen.length >= 4);
    await loop.stop();
    expect(waitsSeen[3]).toBe(EVERY_MS);
  });

  it("runs no round after stop()", async () => {
    const { loop, waitsSeen } = scripted([]);
    await until("a round", async () => waitsSeen.length > 0);
    await loop.stop();
    const rounds = waitsSeen.length;
    await new Promise((r) => setTimeout(r, 10 * EVERY_MS * IDLE_SWEEP_FACTOR));
    expect(waitsSeen.length).toBe(rounds);
  });
});
