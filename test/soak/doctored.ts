/**
 * Each check of soak.ts fed a doctored copy of a run's own snapshot, expected to fail: a check that
 * passes whatever it reads proves nothing. Shared by the soak (soak.test.ts) and the replica test
 * (replicas.test.ts).
 */
import { expect } from "vitest";
import {
  checkDeliveries,
  checkEvents,
  checkHolds,
  checkLedger,
  checkLimits,
  checkMemory,
  checkPricedCalls,
  checkSites,
  checkStoredOnce,
  checkWorkflowSteps,
  type Snapshot,
  type SoakReport,
} from "./soak.js";

export function doctoredCopiesFail(report: SoakReport): void {
  const copy = (): Snapshot => structuredClone(report.snapshot);
  const fails = (result: { problems: string[] }, what: string) => expect(result.problems.length, what).toBeGreaterThan(0);

  const badLedger = copy();
  const tx = badLedger.transactions[0]!;
  badLedger.entries.push({ transaction_id: tx.id, account_id: badLedger.accounts[0]!.id, amount: "1" });
  fails(checkLedger(badLedger), "an entry that unbalances a transaction");

  const doubleCharge = copy();
  const captured = doubleCharge.holds.find((h) => h.status === "captured")!;
  doubleCharge.transactions.push({ id: "bogus", kind: "release", reference: captured.execution_id });
  fails(checkPricedCalls(doubleCharge), "a captured hold also released");
  const unchargedSuccess = copy();
  unchargedSuccess.pricedSeen.push({ executionId: "never-held", success: true });
  fails(checkPricedCalls(unchargedSuccess), "a priced success never charged");

  const unapplied = copy();
  const event = unapplied.executionEvents[0]!;
  unapplied.inbox["webhooks-executions"] = unapplied.inbox["webhooks-executions"]!.filter((id) => id !== event.id);
  fails(checkEvents(unapplied), "an event one consumer never applied");
  const noKeyUsage = copy();
  const keyed = noKeyUsage.executions.find((x) => x.keyed)!;
  noKeyUsage.applied.keyUsage = noKeyUsage.applied.keyUsage.filter((id) => id !== keyed.id);
  fails(checkEvents(noKeyUsage), "a key's execution without its key usage row");
  const noFact = copy();
  noFact.applied.catalog = noFact.applied.catalog.filter((id) => id !== noFact.executions[0]!.id);
  fails(checkEvents(noFact), "an execution without its catalog stats row");

  const pending = copy();
  pending.deliveries.push({ id: "bogus", status: "pending", in_flight: false });
  fails(checkDeliveries(pending), "a delivery still pending");
  const missing = copy();
  missing.humanExecutions++;
  fails(checkDeliveries(missing), "an execution of the webhook's account without a delivery");

  const unfinished = copy();
  unfinished.sites.push({ id: "bogus", status: "crawling", error: null });
  fails(checkSites(unfinished), "a crawl that never ended");

  const stuck = copy();
  stuck.holds.push({ execution_id: "bogus", status: "held", expired: true });
  fails(checkHolds(stuck), "a hold open past its TTL");

  const ranTwice = copy();
  ranTwice.idempotency.executions.push("00000000-0000-4000-8000-000000000001");
  fails(checkStoredOnce(ranTwice), "a second execution for an idempotency key");
  const otherAnswer = copy();
  const answered = otherAnswer.idempotency.seen[0]!;
  otherAnswer.idempotency.seen.push({ key: answered.key, executionId: "00000000-0000-4000-8000-000000000002" });
  fails(checkStoredOnce(otherAnswer), "a replay answered with another execution");

  const stepTwice = copy();
  stepTwice.workflows.executions.push("00000000-0000-4000-8000-000000000003");
  fails(checkWorkflowSteps(stepTwice), "a runner's execution no step recorded (a step run twice)");
  const runStuck = copy();
  runStuck.workflows.runs.push({ id: "bogus", status: "running", steps: 2 });
  fails(checkWorkflowSteps(runStuck), "a run that never ended");

  const overRate = copy();
  overRate.limits.ratePerWindow.push({ window: "99:99", n: overRate.limits.rateLimit + 1 });
  fails(checkLimits(overRate), "a minute with one call over the rate limit");
  const overFree = copy();
  overFree.limits.freeCalls = overFree.limits.freeLimit + 1;
  fails(checkLimits(overFree), "one free-tier call over the limit");

  const memoryRule = report.memoryRule;
  const leaking = copy();
  const series = leaking.memory.find((m) => m.samples.filter(([t]) => t >= memoryRule.warmupMs).length >= memoryRule.minSamples)!;
  // The last quarter of its samples after warm-up (what the check reads as the end) three times as large:
  // a leak. Counted over the samples after warm-up, not all of them: for an instance killed early in the
  // run, most samples fall in the warm-up, and the last quarter of all would reach into the half the check
  // takes as its baseline.
  const firstAfter = series.samples.findIndex(([t]) => t >= memoryRule.warmupMs);
  const lastQuarter = firstAfter + Math.floor(((series.samples.length - firstAfter) * 3) / 4);
  series.samples = series.samples.map(([t, kb], i) => [t, i >= lastQuarter ? kb * 3 : kb]);
  fails(checkMemory(leaking, memoryRule), "memory tripled in the last quarter");
}
