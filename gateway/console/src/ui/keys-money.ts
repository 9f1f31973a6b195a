/**
 * Money typed by a person, read exactly: dollars to integer cents and USDC to atomic units (6 decimals)
 * by parsing the digits, never through a float, and atomic amounts formatted back with BigInt.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const DOLLARS = /^\$?(\d{1,9})(?:\.(\d{0,2}))?$/;

/** "12", "12.5", "$0.25" -> cents; empty -> null (no amount). At most $999,999,999.99. */
export function parseDollars(text: string): Parsed<number | null> {
  const value = text.trim().replace(/^\$\s*/, "$");
  if (value === "" || value === "$") return { ok: true, value: null };
  const match = DOLLARS.exec(value);
  if (!match) {
    return /^\$?\d+\.\d{3,}$/.test(value)
      ? { ok: false, error: "has more than two decimals: enter whole cents, such as 2.50" }
      : { ok: false, error: "must be an amount in dollars, such as 10 or 2.50 (digits and one point, no commas)" };
  }
  const cents = BigInt(match[1]!) * 100n + BigInt((match[2] ?? "").padEnd(2, "0"));
  return { ok: true, value: Number(cents) };
}

export const USDC_DECIMALS = 6;
const UNIT = 10n ** BigInt(USDC_DECIMALS);
const USDC = /^(\d{1,12})(?:\.(\d{0,6}))?$/;

/** "5", "0.25", "1.000001" -> atomic units (1 USDC = 1,000,000); empty -> null. */
export function parseUsdc(text: string): Parsed<bigint | null> {
  const value = text.trim();
  if (value === "") return { ok: true, value: null };
  const match = USDC.exec(value);
  if (!match) {
    return /^\d+\.\d{7,}$/.test(value)
      ? { ok: false, error: "has more than six decimals (USDC's smallest unit is 0.000001)" }
      : { ok: false, error: "must be an amount in USDC, such as 5 or 0.25 (digits and one point, no commas)" };
  }
  return { ok: true, value: BigInt(match[1]!) * UNIT + BigInt((match[2] ?? "").padEnd(USDC_DECIMALS, "0")) };
}

/** Atomic units as USDC text with at least two decimals and no trailing zeros past them: 1250000 -> "1.25". */
export function usdc(atomic: bigint | number | string): string {
  const n = BigInt(atomic);
  const sign = n < 0n ? "-" : "";
  const abs = n < 0n ? -n : n;
  const fraction = String(abs % UNIT)
    .padStart(USDC_DECIMALS, "0")
    .replace(/0{1,4}$/, "");
  return `${sign}${abs / UNIT}.${fraction}`;
}

/** Atomic units as the text a person would type back into a USDC field ("5", "0.25"). */
export function usdcInput(atomic: bigint | number | string): string {
  const n = BigInt(atomic);
  const fraction = String(n % UNIT)
    .padStart(USDC_DECIMALS, "0")
    .replace(/0+$/, "");
  return fraction ? `${n / UNIT}.${fraction}` : String(n / UNIT);
}
