/**
 * The event loop's delay metrics (metrics.ts): sampled only once someone scrapes, a stall between two
 * scrapes shows in the second, and the sampling stops EVENT_LOOP_WATCH_MS after the last scrape.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import { EVENT_LOOP_WATCH_MS, eventLoopSampled, metrics } from "../src/metrics.js";

/** A gauge's value in an exposition text (undefined when absent). */
function value(text: string, name: string): number | undefined {
  const line = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
  return line === undefined ? undefined : Number(line);
}

describe("event loop delay metrics", () => {
  afterAll(() => vi.useRealTimers());

  it("samples from the first scrape on and reports a stall in the next one", async () => {
    expect(eventLoopSampled()).toBe(false);
    const first = await metrics.metrics();
    expect(eventLoopSampled()).toBe(true);
    // Nothing was sampled before the first scrape: not measured, not a delay of 0.
    expect(value(first, "nodejs_eventloop_lag_max_seconds")).toBeNaN();
    expect(first).toMatch(/^nodejs_eventloop_lag_seconds /m);

    await new Promise((resolve) => setTimeout(resolve, 250)); // a few samples of an idle loop
    const blockedAt = Date.now();
    while (Date.now() - blockedAt < 400); // a stall of 400 ms
    await new Promise((resolve) => setTimeout(resolve, 250));
    const second = await metrics.metrics();
    expect(value(second, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.3);
    expect(value(second, "nodejs_eventloop_lag_min_seconds")).toBeLessThan(0.3);
    for (const key of ["mean", "stddev", "p50", "p90", "p99"])
      expect(value(second, `nodejs_eventloop_lag_${key}_seconds`)).not.toBeNaN();

    // Each scrape reports the window since the previous one: the stall is not reported again.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(value(await metrics.metrics(), "nodejs_eventloop_lag_max_seconds")).toBeLessThan(0.3);
  });

  it("stops sampling EVENT_LOOP_WATCH_MS after the last scrape, and starts again at the next", async () => {
    // A fresh module, so that its watch runs on the fake clock from its first scrape.
    vi.resetModules();
    vi.useFakeTimers({ toFake: ["setTimeout", "Date"] });
    const fresh = await import("../src/metrics.js");
    await fresh.metrics.metrics();
    vi.advanceTimersByTime(EVENT_LOOP_WATCH_MS / 2);
    await fresh.metrics.metrics(); // a later scrape moves the end
    vi.advanceTimersByTime(EVENT_LOOP_WATCH_MS / 2 + 1);
    expect(fresh.eventLoopSampled()).toBe(true);
    vi.advanceTimersByTime(EVENT_LOOP_WATCH_MS / 2);
    expect(fresh.eventLoopSampled()).toBe(false);
    vi.useRealTimers();
    await fresh.metrics.metrics();
    expect(fresh.eventLoopSampled()).toBe(true);
  });
});
