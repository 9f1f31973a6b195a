/**
 * The reliability block from the window's aggregates (spec "Reliability block"):
 * - window 30 days; null when the tool was not called in it;
 * - success_rate_30d is known only at MIN_SAMPLE (10) calls or more, null below;
 * - flagged when the known rate is under FLAG_BELOW (0.8): one call in five failing is the point
 *   where an agent should prefer an alternative;
 * - error classes counted as the spec names them (platform failures are `danube_failures_30d`).
 */
import type { ReliabilityBlock } from "./model.js";

export const WINDOW_DAYS = 30;
export const MIN_SAMPLE = 10;
export const FLAG_BELOW = 0.8;

export interface ReliabilityFacts {
  calls7d: number;
  calls30d: number;
  successes30d: number;
  p50Seconds: number | null;
  p95Seconds: number | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastErrorClass: string | null;
  lastErrorType: string | null;
  errorClasses: Record<string, number>;
  faults: Record<string, number>;
  distinctCallers30d: number;
}

export function successRate(calls: number, successes: number): number | null {
  return calls >= MIN_SAMPLE ? successes / calls : null;
}

export function reliabilityBlock(facts: ReliabilityFacts | undefined, now: Date = new Date()): ReliabilityBlock | null {
  if (!facts || facts.calls30d === 0) return null;
  const rate = successRate(facts.calls30d, facts.successes30d);
  const round = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);
  return {
    windowDays: WINDOW_DAYS,
    calls7d: facts.calls7d,
    calls30d: facts.calls30d,
    successRate30d: rate === null ? null : Math.round(rate * 10000) / 10000,
    p50Seconds: round(facts.p50Seconds),
    p95Seconds: round(facts.p95Seconds),
    lastSuccessAt: facts.lastSuccessAt,
    lastFailureAt: facts.lastFailureAt,
    lastErrorClass: facts.lastErrorClass,
    lastErrorType: facts.lastErrorType,
    errorClasses: facts.errorClasses,
    faults: facts.faults,
    authFailures30d: facts.errorClasses.auth ?? 0,
    callerFailures30d: facts.errorClasses.caller ?? 0,
    platformFailures30d: facts.errorClasses.platform ?? 0,
    upstreamFailures30d: facts.errorClasses.upstream ?? 0,
    distinctCallers30d: facts.distinctCallers30d,
    flagged: rate !== null && rate < FLAG_BELOW,
    refreshedAt: now,
  };
}

/** min_success_rate: drops tools whose known rate is below it, keeps tools without a meaningful sample. */
export function passesMinSuccessRate(block: ReliabilityBlock | null, min: number | undefined): boolean {
  if (min === undefined) return true;
  if (!block || block.successRate30d === null) return true;
  return block.successRate30d >= min;
}
