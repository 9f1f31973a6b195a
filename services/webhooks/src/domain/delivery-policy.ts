/**
 * The delivery rules, decided here and nowhere else; the store writes what they decide.
 * - An attempt succeeds on a 2xx; anything else fails (another status, no response at all).
 * - A series has MAX_ATTEMPTS attempts: a failure is retried after RETRY_DELAYS_S (±20% jitter), and the
 *   last failure of a series marks the delivery `failed`. A redelivery starts a new series.
 * - The circuit: a webhook whose every attempt has failed for `circuitMs` is paused, with a reason its
 *   owner sees. A success closes it (clears the failure clock); resuming the webhook clears both.
 * - A claim holds a delivery for leaseSeconds: longer than any attempt, short enough that a dead sender's
 *   work is soon taken up again.
 */

export const MAX_ATTEMPTS = 3;
/** The retry after the first failure, and after the second (seconds, before jitter). */
export const RETRY_DELAYS_S = [1, 4] as const;
/** A retry's delay is its base delay times a factor in [1 - JITTER, 1 + JITTER). */
export const RETRY_JITTER = 0.2;

/** How long a claim holds a delivery, for an attempt timeout of `timeoutMs`: 1.5 x the timeout plus 5 s. */
export const leaseSeconds = (timeoutMs: number) => Math.ceil((timeoutMs * 1.5) / 1000) + 5;

/** A 2xx within the timeout; redirects are never followed, so a 3xx fails too. */
export const attemptSucceeded = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** What becomes of a delivery after one attempt. */
export interface AttemptDecision {
  status: "succeeded" | "failed" | "pending";
  /** When the next attempt is due, in seconds from now; null when there is none. */
  retryInSeconds: number | null;
  /** Delivered now (a success). */
  delivered: boolean;
}

/**
 * The delivery's state after the attempt numbered `attempt` (1 for the first of its series), which
 * succeeded or not. `random` is in [0, 1) (Math.random), for the jitter.
 */
export function afterAttempt(attempt: number, ok: boolean, random: () => number = Math.random): AttemptDecision {
  if (ok) return { status: "succeeded", retryInSeconds: null, delivered: true };
  if (attempt >= MAX_ATTEMPTS) return { status: "failed", retryInSeconds: null, delivered: false };
  const base = RETRY_DELAYS_S[Math.min(attempt - 1, RETRY_DELAYS_S.length - 1)] as number;
  return { status: "pending", retryInSeconds: base * (1 - RETRY_JITTER + random() * 2 * RETRY_JITTER), delivered: false };
}

/** A webhook's circuit: whether deliveries go out, since when every attempt failed, and why Toolport paused it. */
export interface CircuitState {
  isActive: boolean;
  /** The first failed attempt since the last success; null when the last attempt succeeded. */
  failingSince: Date | null;
  disabledReason: string | null;
}

/** The reason a paused webhook shows (seconds precision, UTC). */
export function pausedReason(failingSince: Date): string {
  return `paused by Toolport: every delivery attempt failed since ${failingSince.toISOString().replace(/\.\d+Z$/, "Z")}`;
}

/**
 * The circuit after an attempt at `now`. A success clears the failure clock. A failure starts it if it
 * was not running; when it has run for `circuitMs` already, an active webhook is paused with a reason.
 */
export function circuitAfter(state: CircuitState, ok: boolean, now: Date, circuitMs: number): CircuitState {
  if (ok) return { ...state, failingSince: null };
  const since = state.failingSince;
  const open = since !== null && since.getTime() <= now.getTime() - circuitMs;
  if (!open) return { ...state, failingSince: since ?? now };
  return {
    isActive: false,
    failingSince: since,
    disabledReason: state.isActive ? pausedReason(since) : state.disabledReason,
  };
}

/** The circuit changed: the store writes the new state. */
export const circuitChanged = (before: CircuitState, after: CircuitState): boolean =>
  before.isActive !== after.isActive ||
  before.disabledReason !== after.disabledReason ||
  before.failingSince?.getTime() !== after.failingSince?.getTime();
