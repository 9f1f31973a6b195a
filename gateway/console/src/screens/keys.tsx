/**
 * API keys of the chosen organization: the list (agents' keys, then the console's own: this sign-in's,
 * other sign-ins', and left-overs of an earlier console to revoke), a create form (agent, purpose,
 * allow-lists picked from the catalog with the tools they let through shown live, caps in dollars, the
 * confirmation flag), the new key shown once, and revoke with a confirmation step. Each key links to its
 * usage. Below, the apps the person connected through OAuth (ui/keys-grants.tsx): their keys are listed
 * there and not in the list of keys, where they would show up as keys nobody made on this screen, with
 * no agent or purpose. Another member's grant, which an owner or admin sees, stays in the list of keys,
 * marked as an OAuth grant.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { paths } from "@toolport/client";
import { KeyRound, Plus } from "lucide-react";
import { type FormEvent, useCallback, useState } from "react";
import { Link } from "wouter";
import { type components, consoleKeyId, unwrap } from "../api";
import { useSession } from "../session";
import { Drawer, SecretDialog } from "../ui/dialog";
import { Badge, EmptyState, ErrorNote, Field, Loading, Note, Page, When } from "../ui/index";
import { KeyActions } from "../ui/key-actions";
import { AGENT_TYPES, type AgentType, agentTypeLabel } from "../ui/keys-agent";
import { clientHost, OAuthGrants } from "../ui/keys-grants";
import {
  NO_PERMISSIONS,
  type PermissionDraft,
  PermissionFields,
  type PermissionProblems,
  readPermissions,
} from "../ui/keys-permission-form";
import { isExpired, permissionSummary } from "../ui/keys-permissions";

type ApiKey = components["schemas"]["ApiKey"];
type CreatedKey = components["schemas"]["CreatedApiKey"];
type CreateKeyBody = paths["/v1/api-keys"]["post"]["requestBody"]["content"]["application/json"];

/** Whose a console key is, seen from this sign-in; null for an agent's key. */
type ConsoleKind = "this" | "other" | "left_over" | null;

export default function Keys() {
  const { api, orgId, session } = useSession();
  const [showRevoked, setShowRevoked] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [creating, setCreating] = useState(false);
  const closeCreate = useCallback(() => setCreating(false), []);
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
  const mine = consoleKeyId(session, orgId);
  const kindOf = (key: ApiKey): ConsoleKind =>
    key.console_key === "left_over" ? "left_over" : key.console_key === "session" ? (key.id === mine ? "this" : "other") : null;
  const listed = keys.data ?? [];
  // The person's own grants are in their own section.
  const all = listed.filter((k) => !(k.oauth_client_id && k.account_id === session.accountId));
  const agents = all.filter((k) => k.console_key === null);
  // Left-overs first (they are to be revoked), then this sign-in's key, then other sign-ins'.
  const rank: Record<Exclude<ConsoleKind, null>, number> = { left_over: 0, this: 1, other: 2 };
  const consoles = all.filter((k) => k.console_key !== null).sort((a, b) => rank[kindOf(a)!] - rank[kindOf(b)!]);
  const leftOvers = consoles.filter((k) => k.console_key === "left_over" && !k.revoked_at).length;
  const names = new Map(all.map((k) => [k.id, k.name]));
  const card = (key: ApiKey) => (
    <KeyCard
      key={key.id}
      apiKey={key}
      kind={kindOf(key)}
      madeWith={key.created_by_key_id ? names.get(key.created_by_key_id) : undefined}
    />
  );

  const newKey = (
    <button type="button" onClick={() => setCreating(true)}>
      <Plus className="icon" size={16} aria-hidden="true" />
      New key
    </button>
  );
  return (
    <Page title="API keys" actions={newKey}>
      <p className="muted">
        Agents call tools with a key sent as the <code>svc-api-key</code> header. Each key runs in this organization, limited to
        what its permissions allow.
      </p>
      <Drawer title="Create a key" titleId="create-key" open={creating} onClose={closeCreate}>
        <CreateKeyForm
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
          }}
        />
      </Drawer>
      {created ? (
        <SecretDialog
          title="Your new API key"
          label={`The key "${created.name}"`}
          value={created.key}
          onClose={() => setCreated(null)}
        >
          <p className="muted">
            Send it as <code>svc-api-key</code>. <Link href={`/keys/${created.id}`}>See its usage</Link>.
          </p>
        </SecretDialog>
      ) : null}
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
        {keys.data && all.length === 0 ? (
          <EmptyState icon={KeyRound} title="No keys in this organization yet." action={newKey}>
            Create a key for each agent or assistant, limited to the tools it needs.
          </EmptyState>
        ) : null}
        {keys.data && all.length > 0 && agents.length === 0 ? (
          <p className="muted">No keys for agents in this organization yet.</p>
        ) : null}
        {agents.length > 0 ? <ul className="cards key-list">{agents.map(card)}</ul> : null}
      </section>
      <OAuthGrants showRevoked={showRevoked} />
      {consoles.length > 0 ? (
        <section aria-labelledby="console-key-list">
          <h2 id="console-key-list">Console keys</h2>
          <p className="muted">
            The console calls tools, funds the wallet and runs workflows with a key of its own: one per sign-in and organization,
            the same in every tab, revoked on sign-out and expiring with the sign-in.
          </p>
          {leftOvers > 0 ? (
            <Note kind="warning">
              {leftOvers === 1 ? "One left-over console key" : `${leftOvers} left-over console keys`}: an earlier version of the
              console made {leftOvers === 1 ? "it" : "them"} with no end, and nothing uses {leftOvers === 1 ? "it" : "them"} now.
              Revoke {leftOvers === 1 ? "it" : "them"}.
            </Note>
          ) : null}
          <ul className="cards key-list">{consoles.map(card)}</ul>
        </section>
      ) : null}
    </Page>
  );
}

const KIND_BADGES: Record<Exclude<ConsoleKind, null>, { value: string; label: string; hint: string }> = {
  this: {
    value: "console",
    label: "console key of this sign-in",
    hint: "The console uses it for this sign-in, in every tab. Signing out revokes it, and it expires with the sign-in.",
  },
  other: {
    value: "console",
    label: "console key of another sign-in",
    hint: "Made by the console for another sign-in (another browser, or an earlier sign-in). It ends when that sign-in signs out or expires.",
  },
  left_over: {
    value: "left_over",
    label: "left-over console key",
    hint: "Left over: an earlier version of the console kept a key like this in a browser, with no end. Nothing uses it now; revoke it.",
  },
};

function KeyCard({ apiKey, kind, madeWith }: { apiKey: ApiKey; kind: ConsoleKind; madeWith: string | undefined }) {
  const { api, orgId, signOut } = useSession();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation({
    mutationFn: () => unwrap(api.DELETE("/v1/api-keys/{key_id}", { params: { path: { key_id: apiKey.id } } })),
    onSuccess: () => {
      // The gateway does not replace a sign-in's revoked console key: the sign-in is over.
      if (kind === "this") return signOut("You revoked the console key of your sign-in, which ended it. Sign in again to go on.");
      setConfirming(false);
      return queryClient.invalidateQueries({ queryKey: ["api-keys", orgId] });
    },
  });
  const expired = isExpired(apiKey);
  const badge = kind ? KIND_BADGES[kind] : null;
  const headingId = `key-${apiKey.id}`;
  return (
    <li className="card" aria-labelledby={headingId}>
      <div className="key-head">
        <h3 id={headingId}>
          <Link href={`/keys/${apiKey.id}`}>{apiKey.name}</Link>
        </h3>
        {badge ? <Badge value={badge.value} label={badge.label} /> : null}
        {apiKey.oauth_client_id ? <Badge value="oauth" label={`OAuth grant to ${clientHost(apiKey.oauth_client_id)}`} /> : null}
        {apiKey.revoked_at ? <Badge value="revoked" /> : expired ? <Badge value="expired" /> : null}
      </div>
      {badge && !apiKey.revoked_at && !expired ? <p className="hint">{badge.hint}</p> : null}
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
        {apiKey.expires_at ? (
          <div>
            <dt>{expired ? "Expired" : "Expires"}</dt>
            <dd>
              <When at={apiKey.expires_at} />
            </dd>
          </div>
        ) : null}
        {apiKey.revoked_at ? (
          <div>
            <dt>Revoked</dt>
            <dd>
              <When at={apiKey.revoked_at} />
            </dd>
          </div>
        ) : null}
        {apiKey.created_by_key_id ? (
          <div>
            <dt>Made with</dt>
            <dd>
              {madeWith ? (
                <Link href={`/keys/${apiKey.created_by_key_id}`}>{madeWith}</Link>
              ) : (
                <span className="muted">a key not listed here</span>
              )}
            </dd>
          </div>
        ) : null}
        <div className="key-permissions">
          <dt>Permissions</dt>
          <dd>{permissionSummary(apiKey.permissions)}</dd>
        </div>
      </dl>
      {apiKey.revoked_at ? null : (
        <KeyActions
          keyId={apiKey.id}
          label={apiKey.name}
          expired={expired}
          confirming={confirming}
          setConfirming={setConfirming}
          revoke={revoke}
        />
      )}
      {confirming && kind === "this" ? (
        <p className="hint">
          This sign-in calls tools, funds and runs workflows with this key, and the gateway makes no other for it: revoking it
          ends the sign-in, and you sign in again.
        </p>
      ) : null}
      <ErrorNote error={revoke.error} />
    </li>
  );
}

interface Draft {
  name: string;
  agentName: string;
  agentType: "" | AgentType;
  purpose: string;
}

const EMPTY: Draft = { name: "", agentName: "", agentType: "", purpose: "" };

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const { api, orgId, organization } = useSession();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [permissions, setPermissions] = useState<PermissionDraft>(NO_PERMISSIONS);
  // New permission fields (catalog search cleared) after each key made.
  const [generation, setGeneration] = useState(0);
  const [problems, setProblems] = useState<{ name?: string } & PermissionProblems>({});
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => setDraft((d) => ({ ...d, [field]: value }));

  const create = useMutation({
    mutationFn: (body: CreateKeyBody) => unwrap(api.POST("/v1/api-keys", { body })),
    onSuccess: (key) => {
      onCreated(key);
      setDraft(EMPTY);
      setPermissions(NO_PERMISSIONS);
      setGeneration((g) => g + 1);
      return queryClient.invalidateQueries({ queryKey: ["api-keys", orgId] });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const read = readPermissions(permissions);
    const found = {
      ...(draft.name.trim() === "" ? { name: "Give the key a name." } : {}),
      ...(read.ok ? {} : read.problems),
    };
    setProblems(found);
    if (Object.keys(found).length > 0 || !read.ok) return;
    create.mutate({
      name: draft.name.trim(),
      organization_id: orgId,
      ...(draft.agentName.trim() ? { agent_name: draft.agentName.trim() } : {}),
      ...(draft.agentType ? { agent_type: draft.agentType } : {}),
      ...(draft.purpose.trim() ? { purpose: draft.purpose.trim() } : {}),
      ...(read.permissions ? { permissions: read.permissions } : {}),
    });
  };

  return (
    <form className="key-form" onSubmit={submit} noValidate aria-labelledby="create-key">
      <Field
        label="Name"
        hint={
          problems.name ? (
            <span className="field-error">{problems.name}</span>
          ) : (
            "How you will recognise it in this list, e.g. ci or laptop."
          )
        }
      >
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
      <PermissionFields key={generation} value={permissions} onChange={setPermissions} problems={problems} />
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
