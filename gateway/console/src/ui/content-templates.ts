/**
 * Templates in a workflow step's input mapping, as the content service reads them
 * (services/content/src/workflows/templates.ts): `{{inputs.<field>}}` for the run's inputs and
 * `{{steps.<N>.result.<field>}}` for an earlier step's result, spaces inside the braces allowed. The
 * workflow editor lists the templates valid at a step and checks each value before saving.
 */

const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;
const STEP_REF = /^steps\s*\.\s*(\d+)\s*\.\s*result(?=$|[.[])/;
const INPUTS_REF = /^inputs(?=$|[.[])/;

export interface TemplateCheck {
  /** What the service would refuse (the save is held back). */
  errors: string[];
  /** What may be a mistake but is allowed (an input that was not declared). */
  warnings: string[];
}

/**
 * Checks the templates of one value of step `stepNumber` in a workflow of `stepCount` steps whose
 * declared inputs are `inputs`.
 */
export function checkTemplates(value: string, stepNumber: number, stepCount: number, inputs: string[]): TemplateCheck {
  const errors: string[] = [];
  const warnings: string[] = [];
  let last = 0;
  for (const m of value.matchAll(TEMPLATE)) {
    last = m.index + m[0].length;
    const template = m[0];
    const inner = (m[1] ?? "").trim();
    const step = STEP_REF.exec(inner);
    if (step) {
      const n = Number(step[1]);
      if (n < 1) errors.push(`${template}: steps are numbered from 1.`);
      else if (n > stepCount) errors.push(`${template}: there is no step ${n} (the workflow has ${stepCount}).`);
      else if (n >= stepNumber)
        errors.push(`${template}: refers to step ${n}, which does not run before step ${stepNumber}; use an earlier step.`);
      continue;
    }
    if (INPUTS_REF.test(inner)) {
      const field = /^inputs\s*\.\s*([^.[\s]+)/.exec(inner)?.[1];
      if (field && !inputs.includes(field))
        warnings.push(`${template}: "${field}" is not one of the workflow's inputs; add it under Inputs.`);
      continue;
    }
    errors.push(`${template}: a template is {{inputs.<field>}} or {{steps.<N>.result.<field>}}.`);
  }
  if (value.indexOf("{{", last) >= 0) errors.push("A {{ is never closed with }}.");
  return { errors, warnings };
}

/** The input names a value refers to with `{{inputs.<name>...}}`. */
export function inputsUsed(value: string): string[] {
  const names: string[] = [];
  for (const m of value.matchAll(TEMPLATE)) {
    const field = /^inputs\s*\.\s*([^.[\s]+)/.exec((m[1] ?? "").trim())?.[1];
    if (field && !names.includes(field)) names.push(field);
  }
  return names;
}

/**
 * A mapping value as typed: JSON when it reads as JSON other than a string (`42`, `true`, `["a"]`,
 * `{"a": 1}`, `null`), and a quoted JSON string as that string; anything else is the text itself.
 */
export function parseValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

/** The text that `parseValue` reads back as `value`. */
export function formatValue(value: unknown): string {
  if (typeof value === "string") {
    // A string that would read as something else is written in quotes.
    const back = parseValue(value);
    return back === value ? value : JSON.stringify(value);
  }
  return JSON.stringify(value);
}
