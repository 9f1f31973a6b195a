/**
 * The short soak under faults in `npm test` (soak.ts runs it; run.ts is the 30-minute version): three
 * minutes of mixed load while every service process, the gateway and the MCP server are killed (SIGKILL) and restarted
 * once each, and NATS and Postgres are stopped and restarted once each, in a random order about every
 * 18 s, site crawls among the load (so the content kill lands on crawls too). Then every reply must have
 * been clean and each of the checks must pass (soak.ts lists them). Memory: 20 s warm-up
 * per process instance, 50% margin (the instances live a minute or two here; run.ts is strict).
 * A second test feeds each check a doctored copy of the run's own snapshot and expects it to fail.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { doctoredCopiesFail } from "./doctored.js";
import { ALL_KINDS, formatReport, runSoak, type SoakReport } from "./soak.js";

let report: SoakReport;

beforeAll(async () => {
  report = await runSoak({
    durationMs: 180_000,
    faultPlan: "each-once",
    faultEveryMs: 18_000,
    infraDownMs: 3_000,
    memory: { sampleEveryMs: 2_000, warmupMs: 20_000, margin: 0.5 },
    workers: 3,
    pauseMs: 500,
    log: (line) => console.log(line),
  });
  console.log(formatReport(report));
}, 480_000);

describe("the soak under faults (3 minutes)", () => {
  it("injected every kind of fault and answered every request cleanly", () => {
    expect(report.faults.map((f) => f.what).sort()).toEqual(
      ["billing", "catalog", "content", "execution", "gateway", "identity", "mcp-server", "nats", "postgres", "webhooks"].sort(),
    );
    expect(report.load.unclean).toEqual([]);
    for (const kind of ALL_KINDS) {
      const ok = [...report.load.outcomes].filter(([label]) => label.startsWith(`${kind}\t2`)).length;
      expect(ok, `${kind}: no 2xx at all`).toBeGreaterThan(0);
    }
  });

  it("passes every check", () => {
    for (const check of report.checks) expect(check.problems, check.name).toEqual([]);
  });

  it("each check fails on a doctored copy of the run's snapshot", () => {
    doctoredCopiesFail(report);
  });
});
