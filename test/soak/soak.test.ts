/**
 * The short soak under faults in `npm test` (soak.ts runs it; run.ts is the 30-minute version): three
 * minutes of mixed load while every service process and the gateway are killed (SIGKILL) and restarted
 * once each, and NATS and Postgres are stopped and restarted once each, in a random order about every
 * 18 s, site crawls among the load (so the content kill lands on crawls too). Then every reply must have
 * been clean and each of the seven checks must pass. Memory: 20 s warm-up
 * per process instance, 50% margin (the instances live a minute or two here; run.ts is strict).
 * A second test feeds each check a doctored copy of the run's own snapshot and expects it to fail.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  checkDeliveries,
  checkEvents,
  checkHolds,
  checkLedger,
  checkMemory,
  checkPricedCalls,
  checkSites,
  formatReport,
  runSoak,
  type Snapshot,
  type SoakReport,
} from "./soak.js";

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
      ["billing", "catalog", "content", "execution", "gateway", "identity", "nats", "postgres", "webhooks"].sort(),
    );
    expect(report.load.unclean).toEqual([]);
    for (const kind of ["call", "batch", "priced", "webhook_call", "workflow", "crawl"]) {
      const ok = [...report.load.outcomes].filter(([label]) => label.startsWith(`${kind}\t2`)).length;
      expect(ok, `${kind}: no 2xx at all`).toBeGreaterThan(0);
    }
  });

  it("passes every check", () => {
    for (const check of report.checks) expect(check.problems, check.name).toEqual([]);
  });

  it("each check fails on a doctored copy of the run's snapshot", () => {
    const copy = (): Snapshot => structuredClone(report.snapshot);
    const memoryRule = report.memoryRule;

    const badLedger = copy();
    const tx = badLedger.transactions[0]!;
    badLedger.entries.push({ transaction_id: tx.id, account_id: badLedger.accounts[0]!.id, amount: "1" });
    expect(checkLedger(badLedger).problems.length).toBeGreaterThan(0);

    const doubleCharge = copy();
    const captured = doubleCharge.holds.find((h) => h.status === "captured")!;
    doubleCharge.transactions.push({ id: "bogus", kind: "release", reference: captured.execution_id });
    expect(checkPricedCalls(doubleCharge).problems.length).toBeGreaterThan(0);
    const unchargedSuccess = copy();
    unchargedSuccess.pricedSeen.push({ executionId: "never-held", success: true });
    expect(checkPricedCalls(unchargedSuccess).problems.length).toBeGreaterThan(0);

    const unapplied = copy();
    const event = unapplied.executionEvents[0]!;
    unapplied.inbox["identity-key-usage"] = unapplied.inbox["identity-key-usage"]!.filter((id) => id !== event.id);
    expect(checkEvents(unapplied).problems.length).toBeGreaterThan(0);

    const pending = copy();
    pending.deliveries.push({ id: "bogus", status: "pending", in_flight: false });
    expect(checkDeliveries(pending).problems.length).toBeGreaterThan(0);

    const unfinished = copy();
    unfinished.sites.push({ id: "bogus", status: "crawling", error: null });
    expect(checkSites(unfinished).problems.length).toBeGreaterThan(0);

    const stuck = copy();
    stuck.holds.push({ execution_id: "bogus", status: "held", expired: true });
    expect(checkHolds(stuck).problems.length).toBeGreaterThan(0);

    const leaking = copy();
    const series = leaking.memory.find(
      (m) => m.samples.filter(([t]) => t >= memoryRule.warmupMs).length >= memoryRule.minSamples,
    )!;
    // The last quarter of its samples three times as large: a leak.
    const lastQuarter = (series.samples.length * 3) / 4;
    series.samples = series.samples.map(([t, kb], i) => [t, i >= lastQuarter ? kb * 3 : kb]);
    expect(checkMemory(leaking, memoryRule).problems.length).toBeGreaterThan(0);
  });
});
