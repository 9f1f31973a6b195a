/**
 * API keys of the chosen organization: the list (with this browser's console key marked), a create
 * form (agent, purpose, allow-lists picked from the catalog, caps in dollars, the confirmation flag),
 * the new key shown once, and revoke with a confirmation step. Each key links to its usage.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { paths } from "@toolport/client";
import { type FormEvent, type KeyboardEvent, useState } from "react";
import { Link } from "wouter";
import { type components, consoleKeyId, forgetConsoleKey, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, cents, ErrorNote, Field, Loading, Page, ShownOnce, When } from "../ui/index";
import { AGENT_TYPES, type AgentType, agentTypeLabel } from "../ui/keys-agent";
import { parseDollars } from "../ui/keys-money";

type ApiKey = components["schemas"]["ApiKey"];
type CreatedKey = components["schemas"]["CreatedApiKey"];
type CreateKeyBody = paths["/v1/api-keys"]["post"]["requestBody"]["content"]["application/json"];

export default function Keys() {
  const { api, orgId, session } = useSession();
  const [showRevoked, setShowRevoked] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const keys = useQuery({
    queryKey: ["api-keys", orgId, showRevoked],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap(
        api.GET("/v1/api-keys", {
          params: { query: { organization_id: orgId, ...(showRevoked ? { include_revoked: true } : {}) } },
        }),
      ),
  });
  const consoleKey = consoleKeyId(session.accountId, orgId);

  return (
    <Page title="API keys">
      <p className="muted">
        Agents call tools with a key sent as the <code>svc-api-key</code> header. Each key runs in this organization, limited to
        what its permissions allow.
      </p>
      <section aria-labelledby="create-key">
        <h2 id="create-key">Create a key</h2>
        <CreateKeyForm onCreated={setCreated} />
        {created ? (
          <div className="created-key">
            <ShownOnce label={`The key "${created.name}"`} value={created.key} />
            <p className="muted">
              Send it as <code>svc-api-key</code>. <Link href={`/keys/${created.id}`}>See its usage</Link>.
            </p>
          </div>
        ) : null}
      </section>
      <section aria-labelledby="key-list">
        <div className="section-head">
          <h2 id="key-list">Keys</h2>
          <div className="checkbox">
            <input id="show-revoked" type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} />
            <label htmlFor="show-revoked">Show revoked keys</label>
          </div>
        </div>
        {keys.isPending ? <Loading what="Loading the keys" /> : null}
        <ErrorNote error={keys.error} />
        {keys.data?.length === 0 ? <p className="muted">No keys in this organization yet.</p> : null}
        {keys.data && keys.data.length > 0 ? (
          <ul className="cards key-list">
            {keys.data.map((key) => (
              <KeyCard key={key.id} apiKey={key} isConsoleKey={key.id === consoleKey} />
            ))}
          </ul>
        ) : null}
      </section>
    </Page>
  );
}

function KeyCard({ apiKey, isConsoleKey }: { apiKey: ApiKey; isConsoleKey: boolean }) {
  const { api, orgId, session } = useSession();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation({
    mutationFn: () => unwrap(api.DELETE("/v1/api-keys/{key_id}", { params: { path: { key_id: apiKey.id } } })),
    onSuccess: () => {
      if (isConsoleKey) forgetConsoleKey(session.accountId, orgId, apiKey.id);
      setConfirming(false);
      return queryClient.invalidateQueries({ queryKey: ["api-keys", orgId] });
    },
  });
  const headingId = `key-${apiKey.id}`;
  return (
    <li className="card" aria-labelledby={headingId}>
      <div className="key-head">
        <h3 id={headingId}>
          <Link href={`/keys/${apiKey.id}`}>{apiKey.name}</Link>
        </h3>
        {isConsoleKey ? <Badge value="console" label="this browser's console key" /> : null}
        {apiKey.revoked_at ? <Badge value="revoked" /> : null}
      </div>
      <dl className="key-facts">
        <div>
          <dt>Prefix</dt>
          <dd>
            <code>{apiKey.key_prefix}…</code>
          </dd>
        </div>
        <div>
          <dt>Agent</dt>
          <dd>
            {apiKey.agent_name ?? <span className="muted">no name</span>} ({agentTypeLabel(apiKey.agent_type)})
          </dd>
        </div>
        <div>
          <dt>Purpose</dt>
          <dd>{apiKey.purpose ?? <span className="muted">not given</span>}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <When at={apiKey.created_at} />
          </dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>
            <When at={apiKey.last_used} />
          </dd>
        </div>
        {apiKey.revoked_at ? (
          <div>
            <dt>Revoked</dt>
            <dd>
              <When at={apiKey.revoked_at} />
            </dd>
          </div>
        ) : null}
        <div className="key-permissions">
          <dt>Permissions</dt>
          <dd>{permissionSummary(apiKey.permissions)}</dd>
        </div>
      </dl>
      {apiKey.revoked_at ? null : (
        <div className="row">
          <Link href={`/keys/${apiKey.id}`} className="button button-secondary">
            Usage<span className="visually-hidden"> of {apiKey.name}</span>
          </Link>
          {confirming ? (
            <>
              <button type="button" className="button-danger" disabled={revoke.isPending} onClick={() => revoke.mutate()}>
                Revoke {apiKey.name}?
              </button>
              <button type="button" className="button-secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button type="button" className="button-secondary" onClick={() => setConfirming(true)}>
              Revoke<span className="visually-hidden"> {apiKey.name}</span>
            </button>
          )}
        </div>
      )}
      {confirming && isConsoleKey ? (
        <p className="hint">This is the key this browser uses for calls; the console makes a new one when it needs it.</p>
      ) : null}
      <ErrorNote error={revoke.error} />
    </li>
  );
}

function permissionSummary(p: ApiKey["permissions"]): string {
  if (!p) return "Unrestricted: every tool, no caps.";
  const count = (ids: string[] | null, one: string, many: string) =>
    ids === null ? null : `${ids.length} ${ids.length === 1 ? one : many}`;
  const lists = [count(p.allowed_tools, "tool", "tools"), count(p.allowed_services, "service", "services")].filter(Boolean);
  const parts = [lists.length ? `Only ${lists.join(" and ")}` : "Every tool"];
  if (p.max_cost_per_call_cents !== null) parts.push(`${cents(p.max_cost_per_call_cents)} a call at most`);
  if (p.daily_spend_limit_cents !== null) parts.push(`${cents(p.daily_spend_limit_cents)} a day at most`);
  if (p.require_confirmation) parts.push("confirmation before writes, sends, spends and deletes");
  return `${parts.join("; ")}.`;
}

interface Pick {
  kind: "tool" | "service";
  id: string;
  label: string;
}

interface Draft {
  name: string;
  agentName: string;
  agentType: "" | AgentType;
  purpose: string;
  perCall: string;
  daily: string;
  requireConfirmation: boolean;
}

const EMPTY: Draft = { name: "", agentName: "", agentType: "", purpose: "", perCall: "", daily: "", requireConfirmation: false };

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const { api, orgId, organization } = useSession();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [picks, setPicks] = useState<Pick[]>([]);
  // A new picker (search cleared) after each key made.
  const [generation, setGeneration] = useState(0);
  const [problems, setProblems] = useState<Partial<Record<keyof Draft, string>>>({});
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => setDraft((d) => ({ ...d, [field]: value }));

  const create = useMutation({
    mutationFn: (body: CreateKeyBody) => unwrap(api.POST("/v1/api-keys", { body })),
    onSuccess: (key) => {
      onCreated(key);
      setDraft(EMPTY);
      setPicks([]);
      setGeneration((g) => g + 1);
      return queryClient.invalidateQueries({ queryKey: ["api-keys", orgId] });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: Partial<Record<keyof Draft, string>> = {};
    if (draft.name.trim() === "") found.name = "Give the key a name.";
    const perCall = parseDollars(draft.perCall);
    const daily = parseDollars(draft.daily);
    if (!perCall.ok) found.perCall = `The per-call cap ${perCall.error}.`;
    if (!daily.ok) found.daily = `The daily cap ${daily.error}.`;
    setProblems(found);
    if (Object.keys(found).length > 0 || !perCall.ok || !daily.ok) return;
    const tools = picks.filter((p) => p.kind === "tool").map((p) => p.id);
    const services = picks.filter((p) => p.kind === "service").map((p) => p.id);
    const restricted = picks.length > 0 || perCall.value !== null || daily.value !== null || draft.requireConfirmation;
    create.mutate({
      name: draft.name.trim(),
      organization_id: orgId,
      ...(draft.agentName.trim() ? { agent_name: draft.agentName.trim() } : {}),
      ...(draft.agentType ? { agent_type: draft.agentType } : {}),
      ...(draft.purpose.trim() ? { purpose: draft.purpose.trim() } : {}),
      ...(restricted
        ? {
            permissions: {
              allowed_tools: tools.length > 0 ? tools : null,
              allowed_services: services.length > 0 ? services : null,
              max_cost_per_call_cents: perCall.value,
              daily_spend_limit_cents: daily.value,
              require_confirmation: draft.requireConfirmation,
            },
          }
        : {}),
    });
  };

  const problem = (field: keyof Draft, hint: string) =>
    problems[field] ? <span className="field-error">{problems[field]}</span> : hint;

  return (
    <form className="key-form" onSubmit={submit} noValidate aria-labelledby="create-key">
      <Field label="Name" hint={problem("name", "How you will recognise it in this list, e.g. ci or laptop.")}>
        {(props) => (
          <input
            {...props}
            value={draft.name}
            maxLength={100}
            required
            aria-invalid={problems.name ? true : undefined}
            onChange={(e) => set("name", e.target.value)}
          />
        )}
      </Field>
      <div className="form-grid">
        <Field label="Agent name" hint="Shown in the dashboard and audit entries.">
          {(props) => (
            <input {...props} value={draft.agentName} maxLength={100} onChange={(e) => set("agentName", e.target.value)} />
          )}
        </Field>
        <Field label="Agent type">
          {(props) => (
            <select {...props} value={draft.agentType} onChange={(e) => set("agentType", e.target.value as Draft["agentType"])}>
              <option value="">Not given</option>
              {AGENT_TYPES.map((t) => (
                <option key={t.value} value={t.value}>
                  {t.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Purpose" hint="One line: what the agent does with it.">
        {(props) => <input {...props} value={draft.purpose} maxLength={200} onChange={(e) => set("purpose", e.target.value)} />}
      </Field>
      <AllowListPicker key={generation} picks={picks} onChange={setPicks} />
      <fieldset>
        <legend>Spending caps</legend>
        <div className="form-grid">
          <Field label="Per-call cap (USD)" hint={problem("perCall", "Dollars, e.g. 0.25; empty for no cap.")}>
            {(props) => (
              <input
                {...props}
                inputMode="decimal"
                autoComplete="off"
                value={draft.perCall}
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
                value={draft.daily}
                aria-invalid={problems.daily ? true : undefined}
                onChange={(e) => set("daily", e.target.value)}
              />
            )}
          </Field>
        </div>
        <div className="checkbox">
          <input
            id="require-confirmation"
            type="checkbox"
            checked={draft.requireConfirmation}
            onChange={(e) => set("requireConfirmation", e.target.checked)}
          />
          <label htmlFor="require-confirmation">Require confirmation for calls that write, send, spend or delete</label>
        </div>
      </fieldset>
      <p className="muted">
        The key belongs to <strong>{organization?.name ?? "this organization"}</strong> (the organization chosen in the menu).
      </p>
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? "Creating…" : "Create key"}
      </button>
      <ErrorNote error={create.error} />
    </form>
  );
}

/** Search the catalog and pick tools or whole services; the picks become the key's allow-lists. */
function AllowListPicker({ picks, onChange }: { picks: Pick[]; onChange: (picks: Pick[]) => void }) {
  const { api } = useSession();
  const [text, setText] = useState("");
  const [query, setQuery] = useState("");
  const results = useQuery({
    queryKey: ["allow-list-search", query],
    enabled: query !== "",
    queryFn: () => unwrap(api.GET("/v1/tools/public/search", { params: { query: { query, limit: 10 } } })),
  });
  const services = useQuery({
    queryKey: ["public-services"],
    enabled: query !== "",
    staleTime: 5 * 60_000,
    queryFn: () => unwrap(api.GET("/v1/services/public")),
  });
  const serviceName = (id: string) => services.data?.find((s) => s.id === id)?.name ?? "its service";
  const add = (pick: Pick) => {
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

  return (
    <fieldset>
      <legend>Allowed tools and services</legend>
      <p className="hint" id="allow-list-hint">
        Nothing picked: the key may call every tool. Pick tools, or whole services, to allow only those.
      </p>
      {picks.length > 0 ? (
        <ul className="chips" aria-label="Allowed">
          {picks.map((p) => (
            <li key={`${p.kind}:${p.id}`} className="chip">
              <span>
                <span className="muted">{p.kind}</span> {p.label}
              </span>
              <button type="button" className="chip-remove" onClick={() => onChange(picks.filter((q) => q !== p))}>
                <span aria-hidden="true">×</span>
                <span className="visually-hidden">
                  Remove {p.kind} {p.label}
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
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
                  onClick={() => add({ kind: "service", id: tool.service_id, label: serviceName(tool.service_id) })}
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
