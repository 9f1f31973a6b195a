/**
 * @toolport/kit/secrets: the rules that find credentials in text (the secretlint recommended preset and
 * ours, see rules.ts). Execution masks what they find in upstream results; content refuses skill
 * submissions whose files contain one.
 */
export { fieldLabel, findJwts, findPatternSecrets, isSensitiveKey, normalizeKey, type TextFinding } from "./rules.js";
export { secretlintFindings } from "./secretlint.js";

import { findPatternSecrets, type TextFinding } from "./rules.js";
import { secretlintFindings } from "./secretlint.js";

/** Every rule's findings per text, in input order, each text's sorted by position. */
export async function findSecrets(texts: string[]): Promise<TextFinding[][]> {
  const preset = await secretlintFindings(texts);
  return texts.map((text, i) => [...preset[i]!, ...findPatternSecrets(text)].sort((a, b) => a.start - b.start || b.end - a.end));
}
