/**
 * What a key may do, as a form: the allow-lists picked from the catalog (with the tools they let through
 * shown live), the caps in dollars and the confirmation flag. The keys screen makes a key with it, and the
 * OAuth consent page grants an MCP client the same permission set (a grant is a key). The caller keeps
 * the draft; `readPermissions` turns it into the API's permissions, or the problems to show.
 */
import { useQuery } from "@tanstack/react-query";
import { type KeyboardEvent, useId, useState } from "react";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { useServiceNames } from "./catalog-services";
import { ErrorNote, Field, Loading } from "./index";
import { parseDollars } from "./keys-money";
import { CallableTools } from "./keys-permissions";

type Permissions = components["schemas"]["ApiKeyPermissions"];

interface Choice {
  kind: "tool" | "service";
  id: string;
  label: string;
}

export interface PermissionDraft {
  picks: Choice[];
  /** Dollars as typed; empty for no cap. */
  perCall: string;
  daily: string;
  requireConfirmation: boolean;
}

export const NO_PERMISSIONS: PermissionDraft = { picks: [], perCall: "", daily: "", requireConfirmation: false };

export type PermissionProblems = Partial<Record<"perCall" | "daily", string>>;

/**
 * The draft as the API's permissions: null when nothing restricts (an unrestricted key), or the problems
 * to show beside their fields.
 */
export function readPermissions(
  draft: PermissionDraft,
): { ok: true; permissions: Permissions | null } | { ok: false; problems: PermissionProblems } {
  const perCall = parseDollars(draft.perCall);
  const daily = parseDollars(draft.daily);
  if (!perCall.ok || !daily.ok) {
    return {
      ok: false,
      problems: {
        ...(perCall.ok ? {} : { perCall: `The per-call cap ${perCall.error}.` }),
        ...(daily.ok ? {} : { daily: `The daily cap ${daily.error}.` }),
      },
    };
  }
  const tools = draft.picks.filter((p) => p.kind === "tool").map((p) => p.id);
  const services = draft.picks.filter((p) => p.kind === "service").map((p) => p.id);
  const restricted = draft.picks.length > 0 || perCall.value !== null || daily.value !== null || draft.requireConfirmation;
  if (!restricted) return { ok: true, permissions: null };
  return {
    ok: true,
    permissions: {
      allowed_tools: tools.length > 0 ? tools : null,
      allowed_services: services.length > 0 ? services : null,
      max_cost_per_call_cents: perCall.value,
      daily_spend_limit_cents: daily.value,
      require_confirmation: draft.requireConfirmation,
    },
  };
}

/**
 * The permission fields, controlled. `who` names what gets them in the live summary ("key",
 * "assistant"); a new `key` on this component clears the catalog search.
 */
export function PermissionFields({
  value,
  onChange,
  problems,
  who = "key",
}: {
  value: PermissionDraft;
  onChange: (next: PermissionDraft) => void;
  problems: PermissionProblems;
  who?: string;
}) {
  const confirmationId = useId();
  const set = <K extends keyof PermissionDraft>(field: K, next: PermissionDraft[K]) => onChange({ ...value, [field]: next });
  const problem = (field: keyof PermissionProblems, hint: string) =>
    problems[field] ? <span className="field-error">{problems[field]}</span> : hint;
  return (
    <>
      <AllowListPicker picks={value.picks} onChange={(picks) => set("picks", picks)} who={who} />
      <fieldset>
        <legend>Spending caps</legend>
        <div className="form-grid">
          <Field label="Per-call cap (USD)" hint={problem("perCall", "Dollars, e.g. 0.25; empty for no cap.")}>
            {(props) => (
              <input
                {...props}
                inputMode="decimal"
                autoComplete="off"
                value={value.perCall}
                aria-invalid={problems.perCall ? true : undefined}
                onChange={(e) => set("perCall", e.target.value)}
              />
            )}
          </Field>
          <Field label="Daily cap (USD)" hint={problem("daily", "Dollars a day (UTC), e.g. 10; empty for no cap.")}>
            {(props) => (
              <input
                {...props}
                inputMode="decimal"
                autoComplete="off"
                value={value.daily}
                aria-invalid={problems.daily ? true : undefined}
                onChange={(e) => set("daily", e.target.value)}
              />
            )}
          </Field>
        </div>
        <div className="checkbox">
          <input
            id={confirmationId}
            type="checkbox"
            checked={value.requireConfirmation}
            onChange={(e) => set("requireConfirmation", e.target.checked)}
          />
          <label htmlFor={confirmationId}>Require confirmation for calls that write, send, spend or delete</label>
        </div>
      </fieldset>
    </>
  );
}

/**
 * Search the catalog and pick tools, whole services, or both; the picks become the allow-lists,
 * and both must match. What they let through is shown live (after a short pause in the picking).
 */
function AllowListPicker({ picks, onChange, who }: { picks: Choice[]; onChange: (picks: Choice[]) => void; who: string }) {
  const { api } = useSession();
  const [text, setText] = useState("");
  const [query, setQuery] = useState("");
  const results = useQuery({
    queryKey: ["allow-list-search", query],
    enabled: query !== "",
    queryFn: () => unwrap(api.GET("/v1/tools/public/search", { params: { query: { query, limit: 10 } } })),
  });
  const names = useServiceNames(results.data?.map((t) => t.service_id) ?? []);
  const serviceName = (id: string) => names.get(id) ?? "its service";
  const add = (pick: Choice) => {
    if (!picks.some((p) => p.kind === pick.kind && p.id === pick.id)) onChange([...picks, pick]);
  };
  const search = () => setQuery(text.trim());
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    // Enter searches here instead of submitting the whole form.
    if (e.key === "Enter") {
      e.preventDefault();
      search();
    }
  };
  const tools = picks.filter((p) => p.kind === "tool");
  const serviceList = picks.filter((p) => p.kind === "service");
  const chips = (kind: Choice["kind"], chosen: Choice[], none: string) =>
    chosen.length === 0 ? (
      <p className="muted allow-none">{none}</p>
    ) : (
      <ul className="chips" aria-label={kind === "tool" ? "Allowed tools" : "Allowed services"}>
        {chosen.map((p) => (
          <li key={p.id} className="chip">
            <span>{p.label}</span>
            <button type="button" className="chip-remove" onClick={() => onChange(picks.filter((q) => q !== p))}>
              <span aria-hidden="true">×</span>
              <span className="visually-hidden">
                Remove {p.kind} {p.label}
              </span>
            </button>
          </li>
        ))}
      </ul>
    );

  return (
    <fieldset>
      <legend>Allowed tools and services</legend>
      <p className="hint" id="allow-list-hint">
        Pick tools, whole services, or both. Both must match: a tool is callable when it is one of the tools picked (or none is
        picked) and its service is one of the services picked (or none is picked).
      </p>
      <div className="allow-lists">
        <div>
          <p className="allow-title">Tools</p>
          {chips("tool", tools, "Any tool")}
        </div>
        <p className="allow-and" aria-hidden="true">
          and
        </p>
        <div>
          <p className="allow-title">Services</p>
          {chips("service", serviceList, "Any service")}
        </div>
      </div>
      <CallableTools
        tools={tools.length > 0 ? tools.map((p) => p.id) : null}
        services={serviceList.length > 0 ? serviceList.map((p) => p.id) : null}
        settleMs={300}
        who={who}
      />
      <div className="search-row">
        <Field label="Search the catalog">
          {(props) => (
            <input
              {...props}
              type="search"
              value={text}
              aria-describedby="allow-list-hint"
              onChange={(e) => setText(e.target.value)}
              onKeyDown={onKey}
            />
          )}
        </Field>
        <button type="button" className="button-secondary" onClick={search}>
          Search
        </button>
      </div>
      {results.isFetching ? <Loading what="Searching" /> : null}
      <ErrorNote error={results.error} />
      {results.data && results.data.length === 0 ? <p className="muted">No tools match “{query}”.</p> : null}
      {results.data && results.data.length > 0 ? (
        <ul className="pick-results">
          {results.data.map((tool) => (
            <li key={tool.id}>
              <div>
                <strong>{tool.name}</strong> <span className="muted">in {serviceName(tool.service_id)}</span>
                <div className="hint">{tool.description}</div>
              </div>
              <div className="row">
                <button
                  type="button"
                  className="button-secondary"
                  onClick={() => add({ kind: "tool", id: tool.id, label: tool.name })}
                >
                  Allow tool<span className="visually-hidden"> {tool.name}</span>
                </button>
                <button
                  type="button"
                  className="button-secondary"
                  onClick={() =>
                    add({ kind: "service", id: tool.service_id, label: names.get(tool.service_id) ?? tool.service_id })
                  }
                >
                  Allow service<span className="visually-hidden"> {serviceName(tool.service_id)} (every tool)</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}
