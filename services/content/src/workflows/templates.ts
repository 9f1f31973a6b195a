/**
 * Templates in a workflow step's input_mapping (spec "Workflow": `{{inputs.<field>}}` and
 * `{{steps.<N>.result.<field>}}`). What follows `inputs` or `steps.<N>.result` is a path in the
 * language of stored results (kit json-path: `a.b`, `items[0]`, `items[].id`, backticked keys, ...);
 * none at all takes the whole value. Spaces inside the braces are allowed.
 *
 * Resolution: a string that is exactly one template takes the referenced value with its JSON type (a
 * number stays a number, an object stays an object); templates inside a longer string are replaced by
 * their text (strings as they are, anything else as JSON). An exact `inputs` template whose input was
 * not given leaves its parameter out, so optional inputs stay optional; anything else that matches
 * nothing is an error.
 */
import { invalidArgument } from "@toolport/kit/errors";
import { parsePath, type Step } from "@toolport/kit/json-path";
import { isObject, type Json, type JsonObject } from "@toolport/kit/json-values";

/** A parsed template: `text` as written, `pathText` the path after `inputs` or `result` ("" = all of it). */
export type TemplateRef =
  | { kind: "inputs"; text: string; pathText: string; path: Step[] }
  | { kind: "step"; text: string; pathText: string; step: number; path: Step[] };

const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;
const STEP_REF = /^steps\s*\.\s*(\d+)\s*\.\s*result(?=$|[.[])/;

/** Why a template does not parse, or undefined with the reference it makes. */
export function parseTemplate(text: string): TemplateRef | string {
  const inner = text.slice(2, -2).trim();
  let rest: string;
  let ref: { kind: "inputs" } | { kind: "step"; step: number };
  const step = STEP_REF.exec(inner);
  if (step) {
    ref = { kind: "step", step: Number(step[1]) };
    rest = inner.slice(step[0].length);
  } else if (/^inputs(?=$|[.[])/.test(inner)) {
    ref = { kind: "inputs" };
    rest = inner.slice("inputs".length);
  } else {
    return "a template is {{inputs.<field>}} or {{steps.<N>.result.<field>}}";
  }
  if (rest.startsWith(".")) rest = rest.slice(1);
  else if (rest !== "" && !rest.startsWith("[")) return "a path must follow a dot";
  if (rest.startsWith("$")) return "a path here does not start with $";
  let path: Step[];
  try {
    path = parsePath(rest, "template");
  } catch (err) {
    return (err as Error).message.replace(/^template "[^"]*" is not a valid path: /, "its path is not valid: ");
  }
  return { ...ref, text, pathText: rest, path };
}

/** Every template in a string, in order, with where each starts and ends; an unclosed `{{` is an error. */
export function templatesIn(value: string): {
  refs: { ref: TemplateRef | string; start: number; end: number }[];
  unclosed: boolean;
} {
  const refs: { ref: TemplateRef | string; start: number; end: number }[] = [];
  let last = 0;
  for (const m of value.matchAll(TEMPLATE)) {
    refs.push({ ref: parseTemplate(m[0]), start: m.index, end: m.index + m[0].length });
    last = m.index + m[0].length;
  }
  return { refs, unclosed: value.indexOf("{{", last) >= 0 };
}

/** A template found in a mapping: where it is (`q`, `filters.ids[0]`) and what it refers to. */
export interface FoundTemplate {
  field: string;
  ref: TemplateRef;
  /** The string is exactly this template. */
  exact: boolean;
}

/**
 * Checks every template of step `stepNumber`'s input_mapping: each must parse and refer to the run's
 * inputs or an earlier step. Throws InvalidArgument (400) naming the step, the field and the template.
 */
export function checkMapping(mapping: JsonObject, stepNumber: number): FoundTemplate[] {
  const found: FoundTemplate[] = [];
  const fail = (field: string, template: string, why: string) =>
    invalidArgument("invalid_template", `step ${stepNumber}: ${field} ${template}: ${why}`, {
      details: { step_number: stepNumber, field: `steps[${stepNumber - 1}].input_mapping.${field}`, template },
    });
  walkStrings(mapping, "", (text, field) => {
    const { refs, unclosed } = templatesIn(text);
    if (unclosed) throw fail(field, JSON.stringify(text), "has a {{ that is never closed with }}");
    for (const { ref, start, end } of refs) {
      const template = text.slice(start, end);
      if (typeof ref === "string") throw fail(field, template, ref);
      if (ref.kind === "step") {
        if (ref.step < 1 || ref.step >= stepNumber)
          throw fail(
            field,
            template,
            ref.step >= stepNumber
              ? `refers to step ${ref.step}, which does not run before step ${stepNumber}`
              : "steps are numbered from 1",
          );
      }
      found.push({ field, ref, exact: start === 0 && end === text.length });
    }
  });
  return found;
}

function walkStrings(value: Json, field: string, visit: (text: string, field: string) => void): void {
  if (typeof value === "string") visit(value, field || "$");
  else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walkStrings(value[i]!, `${field}[${i}]`, visit);
  } else if (isObject(value)) for (const [k, v] of Object.entries(value)) walkStrings(v, field ? `${field}.${k}` : k, visit);
}

/** What a template refers to: matched false when its path matches nothing. */
export type Lookup = (ref: TemplateRef) => Promise<{ matched: boolean; value: Json }>;

/** A template that matched nothing while a step's input was being built. */
export class TemplateError extends Error {}

/** The step's tool input: the mapping with every template replaced (see the module comment). */
export async function resolveMapping(mapping: JsonObject, lookup: Lookup): Promise<JsonObject> {
  return (await resolveValue(mapping, "", lookup)) as JsonObject;
}

const OMIT = Symbol("omit");

async function resolveValue(value: Json, field: string, lookup: Lookup): Promise<Json | typeof OMIT> {
  if (typeof value === "string") return resolveString(value, field || "$", lookup);
  if (Array.isArray(value)) {
    const out: Json[] = [];
    for (let i = 0; i < value.length; i++) {
      const v = await resolveValue(value[i]!, `${field}[${i}]`, lookup);
      out.push(v === OMIT ? null : v);
    }
    return out;
  }
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const resolved = await resolveValue(v, field ? `${field}.${k}` : k, lookup);
      if (resolved !== OMIT)
        Object.defineProperty(out, k, { value: resolved, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

async function resolveString(text: string, field: string, lookup: Lookup): Promise<Json | typeof OMIT> {
  const { refs } = templatesIn(text);
  if (refs.length === 0) return text;
  const first = refs[0]!;
  if (refs.length === 1 && first.start === 0 && first.end === text.length && typeof first.ref !== "string") {
    const found = await lookup(first.ref);
    if (found.matched) return found.value;
    if (first.ref.kind === "inputs") return OMIT;
    throw new TemplateError(`${field}: ${first.ref.text} matched nothing in step ${first.ref.step}'s result`);
  }
  let out = "";
  let at = 0;
  for (const { ref, start, end } of refs) {
    out += text.slice(at, start);
    at = end;
    if (typeof ref === "string") throw new TemplateError(`${field}: ${text.slice(start, end)}: ${ref}`);
    const found = await lookup(ref);
    if (!found.matched) {
      const where = ref.kind === "inputs" ? "the run's inputs" : `step ${ref.step}'s result`;
      throw new TemplateError(`${field}: ${ref.text} matched nothing in ${where}`);
    }
    out += typeof found.value === "string" ? found.value : JSON.stringify(found.value);
  }
  return out + text.slice(at);
}
