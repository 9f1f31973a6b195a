import { describe, expect, it } from "vitest";
import { watchHeap } from "./heap-watch.js";
import type { Logger } from "./logger.js";

/** A logger that keeps its warnings. */
function recorder() {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const log = {
    warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }),
  } as unknown as Logger;
  return { log, warnings };
}

const ticks = (n: number) => new Promise((r) => setTimeout(r, n * 10 + 25));

describe("watchHeap", () => {
  it("stays quiet below the share, warns at it, and not again within the quiet time", async () => {
    const { log, warnings } = recorder();
    let used = 50;
    const stop = watchHeap(log, { share: 0.8, everyMs: 10, quietMs: 60_000, read: () => ({ used, limit: 100 }) });
    await ticks(3);
    expect(warnings).toEqual([]);
    used = 85;
    await ticks(5);
    stop();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.fields).toMatchObject({ share: 0.85 });
    expect(warnings[0]?.message).toMatch(/^heap at 85% of its limit/);
  });

  it("warns again once the quiet time has passed while the heap stays high", async () => {
    const { log, warnings } = recorder();
    const stop = watchHeap(log, { share: 0.8, everyMs: 10, quietMs: 0, read: () => ({ used: 90, limit: 100 }) });
    await ticks(4);
    stop();
    expect(warnings.length).toBeGreaterThan(1);
  });
});
