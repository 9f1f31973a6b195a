import { describe, expect, it } from "vitest";
import { HealthState, ServingStatus as Status } from "./health.js";

describe("HealthState checks", () => {
  it("runs a check when asked: SERVING when it passes, NOT_SERVING when it fails, rejects or hangs", async () => {
    const health = new HealthState([]);
    let up = true;
    let asked = 0;
    health.addCheck("toolport.database", async () => {
      asked++;
      return up;
    });
    health.addCheck("toolport.broken", () => Promise.reject(new Error("connection refused")));
    health.addCheck("toolport.hanging", () => new Promise<boolean>(() => {}));
    health.setAll(Status.SERVING);

    expect(await health.checkNow("toolport.database")).toBe(Status.SERVING);
    up = false;
    expect(await health.checkNow("toolport.database")).toBe(Status.NOT_SERVING);
    expect(asked).toBe(2);
    expect(await health.checkNow("toolport.broken")).toBe(Status.NOT_SERVING);
    expect(await health.checkNow("toolport.hanging")).toBe(Status.NOT_SERVING);
    // The process itself ("") stays as set: liveness looks at nothing else.
    expect(await health.checkNow("")).toBe(Status.SERVING);
  });

  it("answers NOT_SERVING without running the check while the process does not serve (starting, draining)", async () => {
    const health = new HealthState([]);
    let asked = 0;
    health.addCheck("toolport.readiness", async () => {
      asked++;
      return true;
    });
    expect(await health.checkNow("toolport.readiness")).toBe(Status.NOT_SERVING);
    health.setAll(Status.SERVING);
    expect(await health.checkNow("toolport.readiness")).toBe(Status.SERVING);
    health.setAll(Status.NOT_SERVING);
    expect(await health.checkNow("toolport.readiness")).toBe(Status.NOT_SERVING);
    expect(asked).toBe(1);
  });
});
