/**
 * Money rules: USDC amounts are bigint atomic units (6 decimals); key caps are cents
 * (1 cent = 10,000 atomic units). Never a float.
 */

/** Atomic units in one USDC. */
export const ATOMIC_PER_USDC = 1_000_000n;
/** Atomic units in one cent. */
export const ATOMIC_PER_CENT = 10_000n;
/** The per-call spend ceiling, whatever an account's settings say (5.00 USD). */
export const PER_CALL_CEILING_ATOMIC = 5_000_000n;
/** Default of max_per_call_atomic in spending settings. */
export const DEFAULT_MAX_PER_CALL_ATOMIC = PER_CALL_CEILING_ATOMIC;
/** Smallest card funding, in cents. */
export const MIN_CARD_FUNDING_CENTS = 100n;
/** The spend warning fires when a key's daily spend reaches this share of its cap. */
export const SPEND_WARNING_PERCENT = 80n;

/** "12.500000": six decimals, a leading "-" for negative amounts. */
export function formatUsdc(atomic: bigint): string {
  const negative = atomic < 0n;
  const abs = negative ? -atomic : atomic;
  const whole = abs / ATOMIC_PER_USDC;
  const fraction = (abs % ATOMIC_PER_USDC).toString().padStart(6, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

export const centsToAtomic = (cents: bigint): bigint => cents * ATOMIC_PER_CENT;

/** Whole cents in an atomic amount, rounded down (a spend of 0.004999 USD is 0 cents). */
export const atomicToCents = (atomic: bigint): bigint => atomic / ATOMIC_PER_CENT;
