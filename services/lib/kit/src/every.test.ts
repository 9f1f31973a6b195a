import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "./logger.js";
import { every } from "./service.js";

/** The service logger, keeping the lines it writes. */
function recorder() {
  const warnings: { msg: string; err?: { message: string } }[] = [];
  const log = createLogger("every-test", "warn", { write: (line: string) => void warnings.push(JSON.parse(line)) });
  return { log, warnings };
}

/** A task whose runs end only when told to. */
function held() {
  const ends: (() => void)[] = [];
  let started = 0;
  const task = () => {
    started++;
    return new Promise<void>((resolve) => ends.push(resolve));
  };
  const endAll = () => {
    for (const end of ends.splice(0)) end();
  };
  return { task, started: () => started, endAll };
}

describe("every", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("runs at each turn, and at once only when asked", async () => {
    const { log } = recorder();
    let runs = 0;
    const later = every(1_000, "counting", log, async () => void runs++);
    const now = every(1_000, "counting", log, async () => void runs++, { atStart: true });
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(runs).toBe(7);
    await later.stop();
    await now.stop();
  });

  it("skips a turn that comes while the last run is still going", async () => {
    const { log } = recorder();
    const slow = held();
    const work = every(1_000, "slow work", log, slow.task);
    await vi.advanceTimersByTimeAsync(3_500);
    expect(slow.started()).toBe(1);
    slow.endAll();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(slow.started()).toBe(2);
    slow.endAll();
    await work.stop();
  });

  it("logs a failed run as a warning and runs again at the next turn", async () => {
    const { log, warnings } = recorder();
    let runs = 0;
    const work = every(1_000, "pruning things", log, async () => {
      runs++;
      if (runs === 1) throw new Error("the database went away");
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(runs).toBe(2);
    expect(warnings.map((w) => [w.msg, w.err?.message])).toEqual([["pruning things failed", "the database went away"]]);
    await work.stop();
  });

  it("stops: waits for the run under way, and runs no more", async () => {
    const { log } = recorder();
    const slow = held();
    const work = every(1_000, "slow work", log, slow.task, { atStart: true });
    let stopped = false;
    const stopping = work.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    slow.endAll();
    await stopping;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slow.started()).toBe(1);
  });
});
