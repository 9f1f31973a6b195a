/**
 * Unit conversion by factors to one base unit per category (metre, kilogram, litre, byte); temperature by
 * its offsets. Exact definitions: 1 in = 0.0254 m, 1 lb = 0.45359237 kg, 1 US gal = 3.785411784 L.
 */
import { BuiltinInputError } from "../types.js";

export type Category = "length" | "mass" | "volume" | "data" | "temperature";

const FACTORS: Record<Exclude<Category, "temperature">, Record<string, number>> = {
  length: { mm: 0.001, cm: 0.01, m: 1, km: 1000, in: 0.0254, ft: 0.3048, yd: 0.9144, mi: 1609.344, nmi: 1852 },
  mass: { mg: 1e-6, g: 0.001, kg: 1, t: 1000, oz: 0.028349523125, lb: 0.45359237, st: 6.35029318 },
  volume: {
    ml: 0.001,
    l: 1,
    m3: 1000,
    tsp: 0.00492892159375,
    tbsp: 0.01478676478125,
    fl_oz: 0.0295735295625,
    cup: 0.2365882365,
    pt: 0.473176473,
    qt: 0.946352946,
    gal: 3.785411784,
  },
  data: {
    bit: 0.125,
    B: 1,
    kB: 1e3,
    MB: 1e6,
    GB: 1e9,
    TB: 1e12,
    KiB: 1024,
    MiB: 1024 ** 2,
    GiB: 1024 ** 3,
    TiB: 1024 ** 4,
  },
};

const TEMPERATURE = ["C", "F", "K"] as const;

export const UNITS: string[] = [...Object.values(FACTORS).flatMap((units) => Object.keys(units)), ...TEMPERATURE];

export function categoryOf(unit: string): Category {
  if ((TEMPERATURE as readonly string[]).includes(unit)) return "temperature";
  for (const [category, units] of Object.entries(FACTORS)) if (unit in units) return category as Category;
  throw new BuiltinInputError(`unknown unit "${unit}"`);
}

const toKelvin = { C: (v: number) => v + 273.15, F: (v: number) => ((v - 32) * 5) / 9 + 273.15, K: (v: number) => v };
const fromKelvin = { C: (k: number) => k - 273.15, F: (k: number) => ((k - 273.15) * 9) / 5 + 32, K: (k: number) => k };

export function convert(value: number, from: string, to: string): { result: number; category: Category } {
  const category = categoryOf(from);
  const target = categoryOf(to);
  if (category !== target) throw new BuiltinInputError(`to: cannot convert ${category} (${from}) to ${target} (${to})`);
  if (category === "temperature") {
    const kelvin = toKelvin[from as "C"](value);
    if (kelvin < -1e-9) throw new BuiltinInputError(`value: ${value} ${from} is below absolute zero`);
    return { result: tidy(fromKelvin[to as "C"](kelvin)), category };
  }
  const units = FACTORS[category];
  return { result: tidy((value * units[from]!) / units[to]!), category };
}

/** Rounds away binary noise (0.30000000000000004 -> 0.3) while keeping 12 significant digits. */
export function tidy(value: number): number {
  if (!Number.isFinite(value)) throw new BuiltinInputError("value: the result is out of range");
  return Number.isInteger(value) ? value : Number(value.toPrecision(12)) + 0;
}
