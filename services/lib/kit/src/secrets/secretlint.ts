/**
 * Runs the secretlint recommended preset over many strings at once. The strings are joined with a
 * separator no rule matches across (`\n\0\n`: every pattern either stops at whitespace or excludes NUL),
 * scanned once, and each finding is mapped back to the string it starts in (clipped to it). The
 * `filter-comments` rule is left out: it would let a result switch detection off with a
 * `secretlint-disable` comment.
 *
 * The preset's rules are run here directly (each rule's `create(context).file(source)`, with the small
 * context they use: `createTranslator` and `report`), not through @secretlint/core's `lintSource`: core
 * keeps an always-on profiler that records every performance mark in a list it searches linearly and
 * never clears, so inside a long-running service each call got slower than the last (measured: ~80 ms of
 * blocked event loop per call after a few thousand calls).
 *
 * Cost: every rule is a global regex with bounded quantifiers ({1,256}, {100,10000}, ...), so the work per
 * start position is bounded and a pass is linear in the text; the test suite measures hostile 1 MiB
 * inputs aimed at each rule.
 */
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { fieldLabel, type TextFinding } from "./rules.js";

const SEPARATOR = "\n\u0000\n";
const RULE_PREFIX = "@secretlint/secretlint-rule-";

const rules = (recommended as unknown as { rules: RuleCreator[] }).rules
  .filter((rule) => !rule.meta.id.endsWith("filter-comments"))
  .map((rule) => ({
    id: rule.meta.id,
    rule,
    // The AWS rule looks for access key ids only when asked.
    options: rule.meta.id.endsWith("-aws") ? { enableIDScanRule: true } : {},
  }));

/** Findings per input string, in input order. */
export async function secretlintFindings(texts: string[]): Promise<TextFinding[][]> {
  const out: TextFinding[][] = texts.map(() => []);
  // Nothing to find in empty strings (callers pass "" for text too short to scan): the rules are not run.
  if (texts.every((text) => text.length === 0)) return out;
  const starts: number[] = [];
  let offset = 0;
  for (const text of texts) {
    starts.push(offset);
    offset += text.length + SEPARATOR.length;
  }
  const content = texts.join(SEPARATOR);
  for (const message of await runRules(content)) {
    const [start, end] = message.range;
    const index = lastAtOrBefore(starts, start);
    const base = starts[index]!;
    const length = texts[index]!.length;
    const from = start - base;
    const to = Math.min(end - base, length);
    if (from < 0 || from >= length || to <= from) continue;
    out[index]!.push({
      start: from,
      end: to,
      field: fieldLabel(message.messageId),
      rule: `secretlint/${message.ruleId.replace(RULE_PREFIX, "")}`,
    });
  }
  return out;
}

interface RuleMessage {
  ruleId: string;
  messageId: string;
  range: [number, number];
}

interface RuleHandlers {
  file?: (source: unknown) => unknown;
}

interface RuleCreator {
  meta: { id: string };
  create(context: unknown, options: unknown): RuleHandlers;
}

/** Every finding of every rule on one text. */
async function runRules(content: string): Promise<RuleMessage[]> {
  const messages: RuleMessage[] = [];
  const source = { content, filePath: "/result.txt", ext: ".txt", contentType: "text" };
  for (const { id, rule, options } of rules) {
    const context = {
      sharedOptions: {},
      // Messages are not rendered: the message id names the finding.
      createTranslator: () => (messageId: string, data: unknown) => ({ message: messageId, messageId, data }),
      report: (descriptor: { message: { messageId: string }; range: [number, number] }) => {
        messages.push({ ruleId: id, messageId: descriptor.message.messageId, range: descriptor.range });
      },
      ignore: () => {},
    };
    await rule.create(context, options).file?.(source);
  }
  return messages;
}

function lastAtOrBefore(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sorted[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
