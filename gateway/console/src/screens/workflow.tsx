/**
 * One workflow (or a new one at /workflows/new): its name, description, visibility and inputs; the
 * steps editor (each step's tool found by search, its input mapping as parameter/value rows, the
 * templates valid at that step insertable with a button, and a check that holds back a save that refers
 * to a later or missing step); save and delete; a run with inputs (with the console key: runs are open
 * to API keys only) showing its status, steps and result, the confirmation a step may wait for; and the
 * run history.
 */
import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import { Link, useLocation } from "wouter";
import { type components, eachPage, unwrap } from "../api";
import { useSession } from "../session";
import { ConfirmAction, JsonBlock } from "../ui/content-confirm";
import { checkTemplates, formatValue, inputsUsed, parseValue } from "../ui/content-templates";
import { Badge, ErrorNote, Field, Loading, Page, TableWrap, When } from "../ui/index";

type Schemas = components["schemas"];
type Workflow = Schemas["Workflow"];
type WorkflowRun = Schemas["WorkflowRun"];
type PublicTool = Schemas["PublicTool"];

export default function WorkflowPage({ workflowId }: { workflowId: string }) {
  const { api } = useSession();
  const isNew = workflowId === "new";
  const workflow = useQuery({
    queryKey: ["workflow", workflowId],
    enabled: !isNew,
    queryFn: () => unwrap(api.GET("/v1/workflows/{workflow_id}", { params: { path: { workflow_id: workflowId } } })),
  });
  const back = (
    <p>
      <Link href="/workflows">All workflows</Link>
    </p>
  );

  if (isNew) {
    return (
      <Page title="New workflow">
        {back}
        <Editor key="new" saved={null} />
      </Page>
    );
  }
  if (workflow.isPending || workflow.error) {
    return (
      <Page title="Workflow">
        {back}
        {workflow.error ? <ErrorNote error={workflow.error} /> : <Loading what="Loading the workflow" />}
      </Page>
    );
  }
  return (
    <Page title={workflow.data.name}>
      {back}
      <Editor key={workflow.data.id} saved={workflow.data} />
      <RunPanel workflow={workflow.data} />
      <RunHistory workflow={workflow.data} />
    </Page>
  );
}

// ---------------------------------------------------------------------------------------------------------
// The draft being edited

interface Row {
  uid: number;
  key: string;
  /** As typed: see parseValue. */
  value: string;
}

interface StepDraft {
  uid: number;
  toolId: string;
  toolName: string;
  /** Known when the tool was picked from search here; looked up otherwise. */
  serviceId: string | null;
  description: string;
  rows: Row[];
}

interface Draft {
  name: string;
  description: string;
  visibility: "private" | "public";
  /** The inputs' names as typed (separated by commas or spaces). */
  inputs: string;
  steps: StepDraft[];
}

let lastUid = 0;
const uid = () => ++lastUid;

const emptyRow = (): Row => ({ uid: uid(), key: "", value: "" });
const emptyStep = (): StepDraft => ({
  uid: uid(),
  toolId: "",
  toolName: "",
  serviceId: null,
  description: "",
  rows: [emptyRow()],
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The inputs a workflow declares (its input_schema's properties) and those its steps use. */
function workflowInputs(w: Workflow): string[] {
  const names = isObject(w.input_schema) && isObject(w.input_schema.properties) ? Object.keys(w.input_schema.properties) : [];
  for (const s of w.steps) {
    for (const v of Object.values(s.input_mapping)) {
      if (typeof v !== "string") continue;
      for (const n of inputsUsed(v)) if (!names.includes(n)) names.push(n);
    }
  }
  return names;
}

function draftOf(w: Workflow | null): Draft {
  if (!w) return { name: "", description: "", visibility: "private", inputs: "", steps: [emptyStep()] };
  return {
    name: w.name,
    description: w.description,
    visibility: w.visibility,
    inputs: workflowInputs(w).join(", "),
    steps: w.steps.map((s) => {
      const rows = Object.entries(s.input_mapping).map(([key, value]) => ({ uid: uid(), key, value: formatValue(value) }));
      return {
        uid: uid(),
        toolId: s.tool_id,
        toolName: s.tool_name,
        serviceId: null,
        description: s.description,
        rows: rows.length > 0 ? rows : [emptyRow()],
      };
    }),
  };
}

const inputNames = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** The input_schema to send: undefined leaves the saved one as it is. */
function inputSchemaFor(names: string[], saved: Workflow | null): Record<string, unknown> | null | undefined {
  const schema = saved && isObject(saved.input_schema) ? saved.input_schema : null;
  const properties = schema && isObject(schema.properties) ? schema.properties : {};
  const savedNames = Object.keys(properties);
  if (names.length === savedNames.length && names.every((n) => savedNames.includes(n))) return undefined;
  if (names.length === 0) return schema ? null : undefined;
  const required = Array.isArray(schema?.required) ? schema.required.filter((n) => names.includes(String(n))) : [];
  return {
    ...(schema ?? {}),
    type: "object",
    properties: Object.fromEntries(names.map((n) => [n, properties[n] ?? {}])),
    ...(required.length > 0 ? { required } : {}),
  };
}

function stepsBody(draft: Draft) {
  return draft.steps.map((s) => ({
    tool_id: s.toolId,
    description: s.description.trim(),
    input_mapping: Object.fromEntries(s.rows.filter((r) => r.key.trim() !== "").map((r) => [r.key.trim(), parseValue(r.value)])),
  }));
}

function bodyOf(draft: Draft, saved: Workflow | null) {
  const schema = inputSchemaFor(inputNames(draft.inputs), saved);
  return {
    name: draft.name.trim(),
    description: draft.description.trim(),
    visibility: draft.visibility,
    steps: stepsBody(draft),
    ...(schema !== undefined ? { input_schema: schema } : {}),
  };
}

/** Problems that hold back a save, each a sentence. */
function draftProblems(draft: Draft): string[] {
  const problems: string[] = [];
  if (draft.name.trim() === "") problems.push("The workflow needs a name.");
  const inputs = inputNames(draft.inputs);
  draft.steps.forEach((s, i) => {
    const n = i + 1;
    if (!s.toolId) problems.push(`Step ${n} has no tool: search for one and choose it.`);
    const keys = s.rows.map((r) => r.key.trim()).filter(Boolean);
    if (new Set(keys).size !== keys.length) problems.push(`Step ${n} names a parameter twice.`);
    for (const r of s.rows) {
      for (const e of checkTemplates(r.value, n, draft.steps.length, inputs).errors)
        problems.push(`Step ${n}, ${r.key.trim() || "a parameter"}: ${e}`);
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------------------
// Tools: search, and what a chosen tool takes and gives

interface ToolInfo {
  parameters: Record<string, { required?: boolean; description?: string; type?: string }>;
  /** The top-level fields of its result, when the tool describes its output. */
  outputFields: string[];
}

/** The list route's largest page: a service of thousands of tools takes a few requests. */
const TOOLS_PAGE = 500;

function outputFields(output: unknown): string[] {
  return isObject(output) && isObject(output.properties) ? Object.keys(output.properties) : [];
}

/**
 * A tool's parameters and output fields, from its service's public tool list (no API key needed), read a
 * page at a time (the largest page) until the tool is found.
 */
function useToolInfos(steps: StepDraft[]) {
  const { api } = useSession();
  return useQueries({
    queries: steps.map((s) => ({
      queryKey: ["tool-info", s.toolId],
      enabled: s.toolId !== "",
      staleTime: 5 * 60_000,
      queryFn: async (): Promise<ToolInfo | null> => {
        let serviceId = s.serviceId;
        if (!serviceId) {
          const found = await unwrap(api.GET("/v1/tools/public/search", { params: { query: { query: s.toolName, limit: 30 } } }));
          serviceId = found.find((t) => t.id === s.toolId)?.service_id ?? null;
        }
        if (!serviceId) return null;
        const id = serviceId;
        for await (const tools of eachPage((cursor) =>
          api.GET("/v1/services/public/{service_id}/tools", {
            params: { path: { service_id: id }, query: { limit: TOOLS_PAGE, cursor } },
          }),
        )) {
          const tool = tools.find((t) => t.id === s.toolId);
          if (tool) return { parameters: tool.parameters as ToolInfo["parameters"], outputFields: outputFields(tool.output) };
        }
        return null;
      },
    })),
  });
}

/** `value` once it has stayed the same for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

// ---------------------------------------------------------------------------------------------------------
// The editor

function Editor({ saved }: { saved: Workflow | null }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState<Draft>(() => draftOf(saved));
  const [tried, setTried] = useState(false);
  const infos = useToolInfos(draft.steps);
  const problems = draftProblems(draft);
  const savedBody = useMemo(() => (saved ? JSON.stringify(bodyOf(draftOf(saved), saved)) : null), [saved]);
  const dirty = savedBody !== null && JSON.stringify(bodyOf(draft, saved)) !== savedBody;
  const inputs = inputNames(draft.inputs);

  const save = useMutation({
    mutationFn: () => {
      const body = bodyOf(draft, saved);
      return saved
        ? unwrap(api.PATCH("/v1/workflows/{workflow_id}", { params: { path: { workflow_id: saved.id } }, body }))
        : unwrap(api.POST("/v1/workflows", { body }));
    },
    onSuccess: (workflow) => {
      queryClient.setQueryData(["workflow", workflow.id], workflow);
      void queryClient.invalidateQueries({ queryKey: ["workflows-my"] });
      setTried(false);
      if (!saved) navigate(`/workflows/${workflow.id}`, { replace: true });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE("/v1/workflows/{workflow_id}", { params: { path: { workflow_id: id } } })),
    onSuccess: (_done, id) => {
      queryClient.removeQueries({ queryKey: ["workflow", id] });
      void queryClient.invalidateQueries({ queryKey: ["workflows-my"] });
      navigate("/workflows");
    },
  });

  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const setStep = (i: number, step: StepDraft) => setDraft((d) => ({ ...d, steps: d.steps.map((s, j) => (j === i ? step : s)) }));
  const moveStep = (i: number, by: -1 | 1) =>
    setDraft((d) => {
      const steps = [...d.steps];
      const [step] = steps.splice(i, 1);
      steps.splice(i + by, 0, step!);
      return { ...d, steps };
    });

  function submit(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (problems.length === 0) save.mutate();
  }

  return (
    <section aria-labelledby="workflow-definition">
      <h2 id="workflow-definition">Definition</h2>
      <form onSubmit={submit} className="content-form" noValidate>
        <Field label="Name">
          {(p) => <input {...p} required maxLength={128} value={draft.name} onChange={(e) => set({ name: e.target.value })} />}
        </Field>
        <Field label="Description">
          {(p) => <textarea {...p} rows={2} value={draft.description} onChange={(e) => set({ description: e.target.value })} />}
        </Field>
        <Field label="Visibility" hint="A public workflow is listed for everyone; runs always use the runner's own key.">
          {(p) => (
            <select {...p} value={draft.visibility} onChange={(e) => set({ visibility: e.target.value as Draft["visibility"] })}>
              <option value="private">Private</option>
              <option value="public">Public</option>
            </select>
          )}
        </Field>
        <Field
          label="Inputs"
          hint={
            <>
              Names of the values each run is given, separated by commas (e.g. <code>title, count</code>); steps use them as{" "}
              <code>{"{{inputs.<name>}}"}</code>.
            </>
          }
        >
          {(p) => (
            <input
              {...p}
              autoComplete="off"
              spellCheck={false}
              value={draft.inputs}
              onChange={(e) => set({ inputs: e.target.value })}
            />
          )}
        </Field>

        <h3>Steps</h3>
        <ol className="content-steps">
          {draft.steps.map((step, i) => (
            <li key={step.uid}>
              <StepEditor
                step={step}
                number={i + 1}
                count={draft.steps.length}
                inputs={inputs}
                info={infos[i]?.data ?? null}
                earlier={draft.steps.slice(0, i).map((s, j) => ({
                  number: j + 1,
                  toolName: s.toolName,
                  fields: infos[j]?.data?.outputFields ?? [],
                }))}
                onChange={(s) => setStep(i, s)}
                onMove={(by) => moveStep(i, by)}
                onRemove={() => setDraft((d) => ({ ...d, steps: d.steps.filter((_, j) => j !== i) }))}
              />
            </li>
          ))}
        </ol>
        <p>
          <button
            type="button"
            className="button-secondary"
            disabled={draft.steps.length >= 20}
            onClick={() => setDraft((d) => ({ ...d, steps: [...d.steps, emptyStep()] }))}
          >
            Add a step
          </button>
        </p>

        {tried && problems.length > 0 ? (
          <div className="note note-error" role="alert">
            <p>
              <strong>Not saved yet:</strong>
            </p>
            <ul>
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </div>
        ) : null}
        <div className="row">
          <button type="submit" disabled={save.isPending}>
            {save.isPending ? "Saving…" : saved ? "Save changes" : "Create workflow"}
          </button>
          {saved ? (
            <ConfirmAction
              label="Delete workflow"
              danger
              question={`Delete ${saved.name} and its run history for good?`}
              confirmLabel="Delete for good"
              busy={remove.isPending}
              onConfirm={() => remove.mutate(saved.id)}
            />
          ) : null}
          {dirty ? <span className="muted">Unsaved changes: a run uses the saved steps.</span> : null}
          {save.isSuccess && !dirty ? <span className="content-ok">Saved.</span> : null}
        </div>
        <ErrorNote error={save.error ?? remove.error} />
      </form>
    </section>
  );
}

interface Earlier {
  number: number;
  toolName: string;
  fields: string[];
}

function StepEditor({
  step,
  number,
  count,
  inputs,
  info,
  earlier,
  onChange,
  onMove,
  onRemove,
}: {
  step: StepDraft;
  number: number;
  count: number;
  inputs: string[];
  info: ToolInfo | null;
  earlier: Earlier[];
  onChange(step: StepDraft): void;
  onMove(by: -1 | 1): void;
  onRemove(): void;
}) {
  const { api } = useSession();
  const [query, setQuery] = useState("");
  // Searched once typing pauses: public search is limited per address (30 a minute by default).
  const q = useDebounced(query.trim(), 300);
  const [target, setTarget] = useState<number | null>(null);
  const fields = useRef(new Map<number, HTMLInputElement>());
  const found = useQuery({
    queryKey: ["tool-search", q],
    enabled: q.length >= 2,
    queryFn: () => unwrap(api.GET("/v1/tools/public/search", { params: { query: { query: q, limit: 8 } } })),
  });

  const legendId = `step-${step.uid}-legend`;
  // Where a template goes: the value last focused, else the first empty one, else the last.
  const targetRow =
    step.rows.find((r) => r.uid === target) ?? step.rows.find((r) => r.value === "") ?? step.rows[step.rows.length - 1];
  const keyCounts = new Map<string, number>();
  for (const r of step.rows) if (r.key.trim()) keyCounts.set(r.key.trim(), (keyCounts.get(r.key.trim()) ?? 0) + 1);
  const params = info ? Object.entries(info.parameters) : [];

  const setRow = (rowUid: number, patch: Partial<Row>) =>
    onChange({ ...step, rows: step.rows.map((r) => (r.uid === rowUid ? { ...r, ...patch } : r)) });

  function pick(tool: PublicTool) {
    const hasMapping = step.rows.some((r) => r.key.trim() !== "" || r.value !== "");
    const required = Object.values(tool.parameters)
      .filter((p) => p.required)
      .map((p) => ({ uid: uid(), key: p.name, value: "" }));
    onChange({
      ...step,
      toolId: tool.id,
      toolName: tool.name,
      serviceId: tool.service_id,
      rows: hasMapping ? step.rows : required.length > 0 ? required : [emptyRow()],
    });
    setQuery("");
  }

  /** Puts a template where the caret was in the target value (the end when it was never focused). */
  function insert(template: string) {
    if (!targetRow) return;
    const el = fields.current.get(targetRow.uid);
    const value = targetRow.value;
    const start = el?.selectionStart ?? value.length;
    const end = el?.selectionEnd ?? value.length;
    setRow(targetRow.uid, { value: value.slice(0, start) + template + value.slice(end) });
  }

  const templates = [
    ...inputs.map((n) => `{{inputs.${n}}}`),
    ...earlier.flatMap((e) => [`{{steps.${e.number}.result}}`, ...e.fields.map((f) => `{{steps.${e.number}.result.${f}}}`)]),
  ];

  return (
    <fieldset className="content-step" aria-labelledby={legendId}>
      <legend id={legendId}>Step {number}</legend>
      <p>
        Tool:{" "}
        {step.toolId ? (
          <>
            <strong>{step.toolName}</strong> <code className="muted">{step.toolId}</code>
          </>
        ) : (
          <span className="muted">none chosen yet</span>
        )}
      </p>
      <Field label={`Find a tool for step ${number}`} hint="Words from its name or description, e.g. slugify.">
        {(p) => <input {...p} type="search" autoComplete="off" value={query} onChange={(e) => setQuery(e.target.value)} />}
      </Field>
      {q.length >= 2 ? (
        found.isPending ? (
          <Loading what="Searching" />
        ) : found.error ? (
          <ErrorNote error={found.error} />
        ) : found.data.length === 0 ? (
          <p className="muted">No tools match.</p>
        ) : (
          <ul className="content-tool-results">
            {found.data.map((t) => (
              <li key={t.id}>
                <button type="button" className="button-secondary" onClick={() => pick(t)}>
                  Use {t.name}
                </button>{" "}
                {t.slug ? <code className="muted">{t.slug}</code> : null} <span className="muted">{t.description}</span>
              </li>
            ))}
          </ul>
        )
      ) : null}

      <Field label={`Description of step ${number}`}>
        {(p) => <input {...p} value={step.description} onChange={(e) => onChange({ ...step, description: e.target.value })} />}
      </Field>

      <h4 className="content-subhead">Input</h4>
      {params.length > 0 ? (
        <p className="hint">
          Parameters of {step.toolName}:{" "}
          {params.map(([name, p], i) => (
            <span key={name}>
              {i > 0 ? ", " : ""}
              <code>{name}</code>
              {p.required ? " (required)" : ""}
            </span>
          ))}
          . A value is JSON when it reads as JSON (<code>42</code>, <code>true</code>, <code>["a"]</code>); put text in quotes to
          keep it text (<code>"42"</code>).
        </p>
      ) : null}
      <datalist id={`params-${step.uid}`}>
        {params.map(([name]) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <div className="content-mapping">
        {step.rows.map((r, i) => {
          const check = checkTemplates(r.value, number, count, inputs);
          const duplicate = r.key.trim() !== "" && (keyCounts.get(r.key.trim()) ?? 0) > 1;
          const errors = [...(duplicate ? [`${r.key.trim()} is named twice in this step.`] : []), ...check.errors];
          const problemId = `row-${r.uid}-problems`;
          const shown = errors.length + check.warnings.length > 0;
          const keyId = `row-${r.uid}-key`;
          const valueId = `row-${r.uid}-value`;
          const valueLabel = r.key.trim() ? `Value of ${r.key.trim()}` : `Value ${i + 1}`;
          return (
            <div key={r.uid} className="content-mapping-row">
              <div className="field">
                <label htmlFor={keyId}>Parameter {i + 1}</label>
                <input
                  id={keyId}
                  list={`params-${step.uid}`}
                  autoComplete="off"
                  spellCheck={false}
                  value={r.key}
                  aria-invalid={duplicate}
                  onChange={(e) => setRow(r.uid, { key: e.target.value })}
                />
              </div>
              <div className="field">
                <label htmlFor={valueId}>{valueLabel}</label>
                <input
                  id={valueId}
                  ref={(el) => {
                    if (el) fields.current.set(r.uid, el);
                    else fields.current.delete(r.uid);
                  }}
                  autoComplete="off"
                  spellCheck={false}
                  value={r.value}
                  aria-invalid={errors.length > 0}
                  aria-describedby={shown ? problemId : undefined}
                  onFocus={() => setTarget(r.uid)}
                  onChange={(e) => setRow(r.uid, { value: e.target.value })}
                />
              </div>
              <button
                type="button"
                className="button-secondary content-remove"
                aria-label={`Remove ${r.key.trim() || `parameter ${i + 1}`} from step ${number}`}
                onClick={() => onChange({ ...step, rows: step.rows.filter((x) => x.uid !== r.uid) })}
              >
                Remove
              </button>
              {shown ? (
                <ul id={problemId} className="content-problems content-mapping-problems">
                  {errors.map((e) => (
                    <li key={e}>{e}</li>
                  ))}
                  {check.warnings.map((w) => (
                    <li key={w} className="content-warning">
                      {w}
                    </li>
                  ))}
                </ul>
              ) : null}
            </div>
          );
        })}
      </div>
      <p>
        <button
          type="button"
          className="button-secondary"
          onClick={() => onChange({ ...step, rows: [...step.rows, emptyRow()] })}
        >
          Add a parameter
        </button>
      </p>

      <div className="content-hints">
        <p id={`hints-${step.uid}`} className="hint">
          Templates valid at step {number}
          {targetRow ? (
            <>
              {" "}
              (insert into <strong>{targetRow.key.trim() ? `the value of ${targetRow.key.trim()}` : "the last value"}</strong>)
            </>
          ) : null}
          :
        </p>
        {templates.length === 0 ? (
          <p className="hint">
            None yet: name the workflow's inputs above
            {number > 1 ? "" : ", or add a step after this one to use this step's result"}.
          </p>
        ) : (
          <div className="row">
            {templates.map((t) => (
              <button key={t} type="button" className="button-secondary content-template" onClick={() => insert(t)}>
                {t}
              </button>
            ))}
          </div>
        )}
        {earlier.some((e) => e.fields.length === 0 && e.toolName) ? (
          <p className="hint">
            Where a tool does not describe its output, add the path yourself: <code>{"{{steps.1.result.items[0].id}}"}</code>.
          </p>
        ) : null}
      </div>

      <div className="row content-step-actions">
        <button
          type="button"
          className="button-secondary"
          disabled={number === 1}
          aria-label={`Move up (step ${number})`}
          onClick={() => onMove(-1)}
        >
          Move up
        </button>
        <button
          type="button"
          className="button-secondary"
          disabled={number === count}
          aria-label={`Move down (step ${number})`}
          onClick={() => onMove(1)}
        >
          Move down
        </button>
        <button
          type="button"
          className="button-secondary"
          disabled={count === 1}
          aria-label={`Remove step ${number}`}
          onClick={onRemove}
        >
          Remove step
        </button>
      </div>
    </fieldset>
  );
}

// ---------------------------------------------------------------------------------------------------------
// Runs

function RunPanel({ workflow }: { workflow: Workflow }) {
  const { api, withKey } = useSession();
  const queryClient = useQueryClient();
  const names = workflowInputs(workflow);
  const [values, setValues] = useState<Record<string, string>>({});
  const [asJson, setAsJson] = useState(false);
  const [json, setJson] = useState("{}");
  const [jsonProblem, setJsonProblem] = useState<string | null>(null);
  const [run, setRun] = useState<WorkflowRun | null>(null);

  const settled = () => {
    void queryClient.invalidateQueries({ queryKey: ["workflow-runs", workflow.id] });
    void queryClient.invalidateQueries({ queryKey: ["workflow", workflow.id] });
    void queryClient.invalidateQueries({ queryKey: ["workflows-my"] });
  };

  const start = useMutation({
    mutationFn: (inputs: Record<string, unknown>) =>
      withKey((c) =>
        c.POST("/v1/workflows/{workflow_id}/run", { params: { path: { workflow_id: workflow.id } }, body: { inputs } }),
      ),
    onMutate: () => setRun(null),
    onSuccess: (r) => {
      setRun(r);
      settled();
    },
  });

  // A run still going (202) is read again until it ends or waits for a confirmation.
  const live = useQuery({
    queryKey: ["workflow-run", run?.run_id],
    enabled: run?.status === "running",
    refetchInterval: 1000,
    queryFn: () => unwrap(api.GET("/v1/workflows/runs/{run_id}", { params: { path: { run_id: run!.run_id } } })),
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when a new reading of the run arrives
  useEffect(() => {
    if (live.data && run && live.data.run_id === run.run_id && run.status === "running" && live.data.status !== "running") {
      setRun(live.data);
      settled();
    }
  }, [live.data]);

  function submit(e: FormEvent) {
    e.preventDefault();
    setJsonProblem(null);
    let inputs: Record<string, unknown>;
    if (asJson) {
      try {
        const parsed: unknown = JSON.parse(json);
        if (!isObject(parsed)) throw new Error("not an object");
        inputs = parsed;
      } catch {
        setJsonProblem('Inputs must be a JSON object, e.g. {"title": "Hello"}.');
        return;
      }
    } else {
      inputs = Object.fromEntries(names.filter((n) => (values[n] ?? "") !== "").map((n) => [n, values[n]!]));
    }
    start.mutate(inputs);
  }

  const shown = live.data && live.data.run_id === run?.run_id && run?.status === "running" ? live.data : run;

  return (
    <section aria-labelledby="workflow-run">
      <h2 id="workflow-run">Run</h2>
      <p className="muted">Runs with the console key of this sign-in, so each step is a call with its permissions and limits.</p>
      <form onSubmit={submit} className="content-form" noValidate>
        <label className="checkbox">
          <input type="checkbox" checked={asJson} onChange={(e) => setAsJson(e.target.checked)} />
          <span>Write the inputs as JSON</span>
        </label>
        {asJson ? (
          <Field label="Inputs (JSON)">
            {(p) => (
              <>
                <textarea
                  {...p}
                  rows={4}
                  spellCheck={false}
                  value={json}
                  aria-invalid={jsonProblem !== null}
                  aria-describedby={jsonProblem ? "run-json-problem" : p["aria-describedby"]}
                  onChange={(e) => setJson(e.target.value)}
                />
                {jsonProblem ? (
                  <p id="run-json-problem" className="content-problem">
                    {jsonProblem}
                  </p>
                ) : null}
              </>
            )}
          </Field>
        ) : names.length === 0 ? (
          <p className="muted">This workflow takes no inputs.</p>
        ) : (
          names.map((n) => (
            <Field key={n} label={`Input ${n}`}>
              {(p) => (
                <input {...p} value={values[n] ?? ""} onChange={(e) => setValues((v) => ({ ...v, [n]: e.target.value }))} />
              )}
            </Field>
          ))
        )}
        <button type="submit" disabled={start.isPending || run?.status === "running"}>
          {start.isPending || run?.status === "running" ? "Running…" : "Run workflow"}
        </button>
        <ErrorNote error={start.error} />
      </form>
      {shown ? (
        <div className="content-run" data-run={shown.run_id}>
          <h3>This run</h3>
          <RunView
            run={shown}
            heading="h4"
            onChanged={(r) => {
              setRun(r);
              settled();
            }}
          />
        </div>
      ) : null}
    </section>
  );
}

function RunHistory({ workflow }: { workflow: Workflow }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const runs = useQuery({
    queryKey: ["workflow-runs", workflow.id],
    queryFn: () =>
      unwrap(
        api.GET("/v1/workflows/{workflow_id}/runs", { params: { path: { workflow_id: workflow.id }, query: { limit: 20 } } }),
      ),
    // Read again while a run is still going.
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "running") ? 2000 : false),
  });

  return (
    <section aria-labelledby="workflow-runs">
      <h2 id="workflow-runs">Run history</h2>
      {runs.isPending ? (
        <Loading what="Loading runs" />
      ) : runs.error ? (
        <ErrorNote error={runs.error} />
      ) : runs.data.length === 0 ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <ul className="cards content-runs">
          {runs.data.map((r) => (
            <li key={r.run_id} className="card" data-run={r.run_id}>
              <details>
                <summary>
                  <When at={r.started_at} /> <Badge value={r.status} />{" "}
                  <span className="muted">
                    {r.steps_completed} of {r.steps_total} steps, {r.execution_time_ms} ms
                  </span>
                </summary>
                <RunView
                  run={r}
                  heading="h3"
                  onChanged={() => void queryClient.invalidateQueries({ queryKey: ["workflow-runs", workflow.id] })}
                />
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** A run: status, its steps, the confirmation it waits for, and its result. */
function RunView({
  run,
  heading: Heading,
  onChanged,
}: {
  run: WorkflowRun;
  /** The level of the Result heading, one below the section's. */
  heading: "h3" | "h4";
  onChanged(run: WorkflowRun): void;
}) {
  const { withKey } = useSession();
  const confirm = useMutation({
    mutationFn: (token: string) =>
      withKey((c) =>
        c.POST("/v1/workflows/runs/{run_id}/confirm", {
          params: { path: { run_id: run.run_id } },
          body: { confirm_token: token },
        }),
      ),
    onSuccess: onChanged,
  });

  return (
    <div className="content-run-view">
      <div className="row">
        <Badge value={run.status} />
        <span className="muted">
          {run.steps_completed} of {run.steps_total} steps · {run.execution_time_ms} ms · started <When at={run.started_at} />
        </span>
      </div>
      {run.error ? (
        <div className="note note-error">
          <strong>The run failed:</strong> {run.error}
        </div>
      ) : null}
      {run.status === "awaiting_confirmation" && run.consent ? (
        <div className="note note-warning">
          <p>
            Step waits for your confirmation: <strong>{run.consent.tool_name}</strong> with these parameters (until{" "}
            <When at={run.consent.expires_at} />
            ):
          </p>
          <JsonBlock value={run.consent.parameters} />
          <button type="button" disabled={confirm.isPending} onClick={() => confirm.mutate(run.consent!.confirm_token)}>
            Confirm and continue
          </button>
          <ErrorNote error={confirm.error} />
        </div>
      ) : null}
      <TableWrap label={`Steps of run ${run.run_id}`}>
        <table>
          <caption className="visually-hidden">Steps of run {run.run_id}</caption>
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Tool</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {run.steps.map((s) => (
              <tr key={s.step_number}>
                <td>{s.step_number}</td>
                <td>{s.tool_name}</td>
                <td>
                  <Badge value={s.status} />
                </td>
                <td>{s.duration_ms} ms</td>
                <td>
                  {s.error ? (
                    <>
                      {s.error} {s.error_code ? <code>{s.error_code}</code> : null}
                    </>
                  ) : (
                    <span className="muted">none</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {run.status === "completed" ? (
        <>
          <Heading className="content-subhead">Result</Heading>
          <JsonBlock value={run.result} />
          {run.truncated && run.response_meta ? (
            <p className="muted">
              Cut to {run.response_meta.response_chars} of {run.response_meta.original_response_chars} characters.
            </p>
          ) : null}
        </>
      ) : null}
      {Object.keys(run.inputs).length > 0 ? (
        <details className="content-disclosure">
          <summary>Inputs</summary>
          <JsonBlock value={run.inputs} />
        </details>
      ) : null}
    </div>
  );
}
