/**
 * Runs each corpus sample through `redact` as the executor applies it to an upstream result, and judges
 * it: a credential is caught when none of its text survives anywhere in the result and the redaction
 * report lists at least one masked field; a lookalike is a false positive when anything in it was masked.
 */

import { isObject, type Json } from "@toolport/kit/json-values";
import { redact } from "../../../services/execution/src/domain/redaction/redact.js";
import type { LookalikeSample } from "./lookalikes.js";
import type { SecretSample } from "./secrets.js";

export interface Tally {
  total: number;
  hits: number;
  /** A few of the samples counted as hits, to show what went wrong. */
  shown: string[];
}

export interface Measurement {
  /** Per family: caught of total. */
  recall: Map<string, Tally>;
  /** Per lookalike category: masked of total. */
  flagged: Map<string, Tally>;
  millis: number;
}

const SHOWN = 3;

export async function measure(secrets: SecretSample[], lookalikes: LookalikeSample[]): Promise<Measurement> {
  const recall = new Map<string, Tally>();
  const flagged = new Map<string, Tally>();
  const started = performance.now();
  for (const sample of secrets) {
    const { value, report } = await redact(structuredClone(sample.value));
    const texts = stringsIn(value);
    const leaked = sample.vanish.filter((piece) => texts.some((text) => text.includes(piece)));
    const caught = leaked.length === 0 && report.count > 0;
    // Recall counts caught samples; `shown` lists misses.
    count(recall, sample.family, caught, caught ? "" : `${sample.context}: ${JSON.stringify(value).slice(0, 160)}`);
  }
  for (const sample of lookalikes) {
    const { value, report } = await redact(structuredClone(sample.value));
    const masked = report.count > 0;
    count(flagged, sample.category, masked, masked ? `${sample.context}: ${JSON.stringify(value).slice(0, 160)}` : "");
  }
  return { recall, flagged, millis: performance.now() - started };
}

function count(tallies: Map<string, Tally>, name: string, hit: boolean, shown: string) {
  const tally = tallies.get(name) ?? { total: 0, hits: 0, shown: [] };
  tally.total++;
  if (hit) tally.hits++;
  if (shown !== "" && tally.shown.length < SHOWN) tally.shown.push(shown);
  tallies.set(name, tally);
}

/** Every string in a result, and every object key. */
function stringsIn(value: Json): string[] {
  const out: string[] = [];
  const pending: Json[] = [value];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (typeof node === "string") out.push(node);
    else if (Array.isArray(node)) pending.push(...node);
    else if (isObject(node)) {
      out.push(...Object.keys(node));
      pending.push(...Object.values(node));
    }
  }
  return out;
}

/** Rows as an aligned plain-text table under a header line. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
