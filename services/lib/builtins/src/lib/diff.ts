/**
 * Line diff of two texts: longest common subsequence by dynamic programming over the lines between the
 * common prefix and suffix. The table is capped (MAX_CELLS), so a hostile pair of texts costs at most a few
 * milliseconds and 8 MB; beyond it the caller is told to diff smaller pieces.
 */
import { BuiltinInputError } from "../types.js";

export const MAX_CELLS = 4_000_000;

export interface LineChange {
  op: "add" | "remove";
  text: string;
  /** 1-based line in the old text (removals), else null. */
  old_line: number | null;
  /** 1-based line in the new text (additions), else null. */
  new_line: number | null;
}

export type Step = { op: "equal" | "add" | "remove"; text: string; oldLine: number; newLine: number };

export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export function diffLines(oldText: string, newText: string) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const steps = align(a, b);
  const changes: LineChange[] = steps
    .filter((s) => s.op !== "equal")
    .map((s) => ({
      op: s.op as LineChange["op"],
      text: s.text,
      old_line: s.op === "remove" ? s.oldLine : null,
      new_line: s.op === "add" ? s.newLine : null,
    }));
  const added = changes.filter((c) => c.op === "add").length;
  const removed = changes.length - added;
  return { steps, changes, added, removed, unchanged: steps.length - changes.length };
}

function align(a: string[], b: string[]): Step[] {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix])
    suffix++;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  if ((midA.length + 1) * (midB.length + 1) > MAX_CELLS) {
    throw new BuiltinInputError(
      `the texts differ in ${midA.length} and ${midB.length} lines, more than this tool compares at once (about 2,000 by 2,000); diff smaller sections`,
    );
  }
  const steps: Step[] = [];
  for (let i = 0; i < prefix; i++) steps.push({ op: "equal", text: a[i]!, oldLine: i + 1, newLine: i + 1 });
  for (const step of lcsSteps(midA, midB)) {
    steps.push({ ...step, oldLine: step.oldLine + prefix, newLine: step.newLine + prefix });
  }
  for (let k = suffix; k > 0; k--) {
    steps.push({ op: "equal", text: a[a.length - k]!, oldLine: a.length - k + 1, newLine: b.length - k + 1 });
  }
  return steps;
}

/**
 * Classic LCS table, filled from the end so the walk from the start emits steps in order. Lines are
 * compared as interned integers, so long near-identical lines cost one hash each, not one compare per cell.
 */
function lcsSteps(linesA: string[], linesB: string[]): Step[] {
  const ids = new Map<string, number>();
  const intern = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      ids.set(line, id);
    }
    return id;
  };
  const a = Int32Array.from(linesA, intern);
  const b = Int32Array.from(linesB, intern);
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const table = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      steps.push({ op: "equal", text: linesA[i]!, oldLine: i + 1, newLine: j + 1 });
      i++;
      j++;
    } else if (i < n && (j === m || table[(i + 1) * width + j]! >= table[i * width + j + 1]!)) {
      // Removals before additions at the same place, as `diff -u` prints them.
      steps.push({ op: "remove", text: linesA[i]!, oldLine: i + 1, newLine: j });
      i++;
    } else {
      steps.push({ op: "add", text: linesB[j]!, oldLine: i, newLine: j + 1 });
      j++;
    }
  }
  return steps;
}

/** Unified diff text ("--- old", "+++ new", "@@ -l,s +l,s @@" hunks) with `context` unchanged lines around changes. */
export function unifiedDiff(steps: Step[], context: number): string {
  const changed = steps.map((s, k) => (s.op === "equal" ? -1 : k)).filter((k) => k >= 0);
  if (changed.length === 0) return "";
  const out = ["--- old", "+++ new"];
  let k = 0;
  while (k < changed.length) {
    // Grow a hunk while the next change is within 2 * context lines of the current one.
    const start = Math.max(0, changed[k]! - context);
    let last = changed[k]!;
    while (k + 1 < changed.length && changed[k + 1]! - last <= 2 * context + 1) last = changed[++k]!;
    const end = Math.min(steps.length, last + context + 1);
    const hunk = steps.slice(start, end);
    const oldCount = hunk.filter((s) => s.op !== "add").length;
    const newCount = hunk.filter((s) => s.op !== "remove").length;
    const first = hunk[0]!;
    const oldStart = first.op === "add" ? first.oldLine + (oldCount ? 1 : 0) : first.oldLine;
    const newStart = first.op === "remove" ? first.newLine + (newCount ? 1 : 0) : first.newLine;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const s of hunk) out.push(`${s.op === "equal" ? " " : s.op === "add" ? "+" : "-"}${s.text}`);
    k++;
  }
  return `${out.join("\n")}\n`;
}
