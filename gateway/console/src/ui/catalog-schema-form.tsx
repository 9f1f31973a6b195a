/**
 * The "try it" form of a tool, generated from its parameters (the Tool shape's `parameters`: type,
 * location, required, default, enum, minimum, maximum and the parameter's own JSON Schema): a select for
 * an enum, a checkbox for a boolean, a number input for an integer or number, a text input for a string,
 * and a JSON text area for an object, an array or anything whose schema a single control cannot hold
 * (anyOf, oneOf, nested properties...). Checked on submit, each problem said beside its control and the
 * first one focused; an optional control left alone is not sent, so the tool's default applies.
 */
import { type FormEvent, type ReactNode, useId, useRef, useState } from "react";
import type { components } from "../api";

export type Parameter = components["schemas"]["Tool"]["parameters"][string];
type Kind = "enum" | "boolean" | "integer" | "number" | "string" | "json";
type Value = string | boolean;

function schemaOf(p: Parameter): Record<string, unknown> {
  return typeof p.json_schema === "object" && p.json_schema !== null ? p.json_schema : {};
}

const COMPLEX_KEYWORDS = ["anyOf", "oneOf", "allOf", "not", "properties", "items", "$ref", "patternProperties"];

export function kindOf(p: Parameter): Kind {
  const schema = schemaOf(p);
  if (p.enum && p.enum.length > 0 && p.enum.every((v) => v === null || typeof v !== "object")) return "enum";
  if (p.type === "object" || p.type === "array" || Array.isArray(schema.type)) return "json";
  if (COMPLEX_KEYWORDS.some((k) => k in schema)) return "json";
  if (p.type === "boolean") return "boolean";
  if (p.type === "integer") return "integer";
  if (p.type === "number") return "number";
  return "string";
}

function bound(p: Parameter, name: "minimum" | "maximum"): number | undefined {
  const own = p[name];
  if (typeof own === "number") return own;
  const fromSchema = schemaOf(p)[name];
  return typeof fromSchema === "number" ? fromSchema : undefined;
}

function initialValue(p: Parameter, kind: Kind): Value {
  const d = p.default;
  if (kind === "boolean") return d === true;
  if (d === undefined || d === null) return "";
  if (kind === "enum") return String(p.enum!.indexOf(d));
  if (kind === "json") return JSON.stringify(d, null, 2);
  return String(d);
}

/** The value to send, or a message saying what is wrong with it; undefined when nothing is sent. */
function parse(p: Parameter, kind: Kind, raw: Value, touched: boolean): { value?: unknown; problem?: string } {
  if (kind === "boolean") {
    // An optional checkbox nobody touched and with no default leaves the choice to the tool.
    if (!touched && !p.required && p.default === undefined) return {};
    return { value: raw === true };
  }
  const text = String(raw);
  if (text.trim() === "") return p.required ? { problem: "Required: fill it in." } : {};
  switch (kind) {
    case "enum":
      return { value: p.enum![Number(text)] };
    case "integer":
    case "number": {
      const n = Number(text);
      if (!Number.isFinite(n)) return { problem: "Enter a number." };
      if (kind === "integer" && !Number.isInteger(n)) return { problem: "Enter a whole number." };
      const min = bound(p, "minimum");
      const max = bound(p, "maximum");
      if (min !== undefined && n < min) return { problem: `At least ${min}.` };
      if (max !== undefined && n > max) return { problem: `At most ${max}.` };
      return { value: n };
    }
    case "json": {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        return { problem: `Not valid JSON: ${(err as Error).message}` };
      }
      if (p.type === "array" && !Array.isArray(value)) return { problem: 'Enter a JSON array, e.g. ["a", "b"].' };
      if (p.type === "object" && (value === null || typeof value !== "object" || Array.isArray(value))) {
        return { problem: 'Enter a JSON object, e.g. {"key": "value"}.' };
      }
      return { value };
    }
    default:
      return { value: text };
  }
}

function describeType(p: Parameter, kind: Kind): string {
  const min = bound(p, "minimum");
  const max = bound(p, "maximum");
  const range = min !== undefined || max !== undefined ? ` from ${min ?? "any"} to ${max ?? "any"}` : "";
  if (kind === "json") return `${p.type || "JSON"} as JSON`;
  return `${p.type || "string"}${range}`;
}

/** One labelled control with its hint and, after a failed submit, its problem; both tied to it. */
function ParameterField({
  label,
  hint,
  problem,
  children,
}: {
  label: string;
  hint: ReactNode;
  problem: string | undefined;
  children: (props: { id: string; "aria-describedby": string; "aria-invalid": boolean }) => ReactNode;
}) {
  const id = useId();
  const describedBy = problem ? `${id}-problem ${id}-hint` : `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-describedby": describedBy, "aria-invalid": Boolean(problem) })}
      {problem ? (
        <div className="field-problem" id={`${id}-problem`}>
          {problem}
        </div>
      ) : null}
      <div className="hint" id={`${id}-hint`}>
        {hint}
      </div>
    </div>
  );
}

export function ParameterForm({
  parameters,
  busy,
  onRun,
  extra,
}: {
  parameters: Record<string, Parameter>;
  busy: boolean;
  onRun(input: Record<string, unknown>): void;
  /** Controls shown after the parameters (call options). */
  extra?: ReactNode;
}) {
  const entries = Object.entries(parameters).sort(([, a], [, b]) => Number(b.required) - Number(a.required));
  const [values, setValues] = useState<Record<string, Value>>(() =>
    Object.fromEntries(entries.map(([name, p]) => [name, initialValue(p, kindOf(p))])),
  );
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [problems, setProblems] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);

  const set = (name: string, value: Value) => {
    setValues((v) => ({ ...v, [name]: value }));
    setTouched((t) => new Set(t).add(name));
  };

  function submit(e: FormEvent) {
    e.preventDefault();
    const input: Record<string, unknown> = {};
    const found: Record<string, string> = {};
    for (const [name, p] of entries) {
      const { value, problem } = parse(p, kindOf(p), values[name] ?? "", touched.has(name));
      if (problem) found[name] = problem;
      else if (value !== undefined) input[name] = value;
    }
    setProblems(found);
    const first = Object.keys(found)[0];
    if (first) {
      // The first control with a problem takes the focus, so a keyboard or screen reader user lands on it.
      form.current?.querySelector<HTMLElement>(`[data-parameter="${CSS.escape(first)}"]`)?.focus();
      return;
    }
    onRun(input);
  }

  const problemCount = Object.keys(problems).length;
  return (
    <form ref={form} onSubmit={submit} noValidate className="try-form">
      {entries.length === 0 ? <p className="muted">This tool takes no parameters.</p> : null}
      {entries.map(([name, p]) => {
        const kind = kindOf(p);
        const label = p.required ? `${name} (required)` : name;
        const hint = (
          <>
            {p.description ? `${p.description} ` : ""}
            <span className="mono">
              {describeType(p, kind)}, in {p.location}
              {p.default !== undefined ? `, default ${JSON.stringify(p.default)}` : ""}
            </span>
          </>
        );
        const common = { "data-parameter": name, name, disabled: busy };
        return (
          <ParameterField key={name} label={label} hint={hint} problem={problems[name]}>
            {(a11y) => {
              switch (kind) {
                case "enum":
                  return (
                    <select {...a11y} {...common} value={String(values[name])} onChange={(e) => set(name, e.target.value)}>
                      {!p.required || p.default === undefined ? (
                        <option value="">{p.required ? "Choose…" : "(not set)"}</option>
                      ) : null}
                      {p.enum!.map((v, i) => (
                        <option key={String(v)} value={String(i)}>
                          {String(v)}
                        </option>
                      ))}
                    </select>
                  );
                case "boolean":
                  return (
                    <input
                      {...a11y}
                      {...common}
                      type="checkbox"
                      className="checkbox-input"
                      checked={values[name] === true}
                      onChange={(e) => set(name, e.target.checked)}
                    />
                  );
                case "integer":
                case "number":
                  return (
                    <input
                      {...a11y}
                      {...common}
                      type="number"
                      inputMode={kind === "integer" ? "numeric" : "decimal"}
                      step={kind === "integer" ? 1 : "any"}
                      min={bound(p, "minimum")}
                      max={bound(p, "maximum")}
                      value={String(values[name])}
                      onChange={(e) => set(name, e.target.value)}
                    />
                  );
                case "json":
                  return (
                    <textarea
                      {...a11y}
                      {...common}
                      spellCheck={false}
                      placeholder={p.type === "array" ? '["a", "b"]' : '{"key": "value"}'}
                      value={String(values[name])}
                      onChange={(e) => set(name, e.target.value)}
                    />
                  );
                default: {
                  const schema = schemaOf(p);
                  return (
                    <input
                      {...a11y}
                      {...common}
                      type="text"
                      maxLength={typeof schema.maxLength === "number" ? schema.maxLength : undefined}
                      value={String(values[name])}
                      onChange={(e) => set(name, e.target.value)}
                    />
                  );
                }
              }
            }}
          </ParameterField>
        );
      })}
      {extra}
      {problemCount > 0 ? (
        <p className="field-problem" role="alert">
          {problemCount === 1 ? "One parameter needs attention." : `${problemCount} parameters need attention.`}
        </p>
      ) : null}
      <button type="submit" disabled={busy}>
        {busy ? "Running…" : "Run"}
      </button>
    </form>
  );
}
