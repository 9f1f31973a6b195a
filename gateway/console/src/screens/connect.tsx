/**
 * Connect a service: the page a tool's `configuration_url` points to. For each security scheme the
 * service's tools use, a form of its kind (API key, bearer token, username and password), each secret
 * either stored (encrypted, never shown again) or given as a reference (`env://NAME`, `vault://path`)
 * resolved when a tool runs; for the person alone or, for owners and admins, the whole organization.
 * Below: the credentials connected now (disconnect), and the readiness of the service's tools for this
 * person, refreshed on connecting so it turns `ready` without a reload.
 *
 * OAuth: where the publisher registered an OAuth client (`connect_flow` on the scheme), one button starts
 * the flow (`POST /services/{id}/oauth/connect`) and sends the browser to the provider; the provider
 * returns it to the gateway's callback, which sends it back here with `oauth=connected` or
 * `oauth_error=`. The OAuth connections of the service (`GET /connections`) are listed with their state:
 * a broken one (the provider refused a refresh) is reconnected with the same button, as is one an MCP server
 * asked for more scopes (`needs_consent`, step-up): connecting again asks for them too.
 *
 * Where the facts come from: the security schemes are the managers' publishing facts on
 * `GET /services/{id}`, so the page reads them from `GET /tools/{id}/describe` (`security_schemes`), for
 * a tool of the service found with `GET /tools?service_id=`, every page (both with the console key, which acts
 * for this person and organization, so the readiness it reports is theirs); the credentials connected
 * come from `GET /services/{id}/credentials` with the session.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { allPages } from "@toolport/client";
import { type FormEvent, useId, useState } from "react";
import { Link, useSearch } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, ErrorNote, Field, Loading, Note, Page, TableWrap, When } from "../ui/index";

type Scheme = components["schemas"]["ServiceSecurityScheme"];
type Credential = components["schemas"]["CredentialSummary"];
type ServiceSummary = components["schemas"]["ServiceSummary"];
type Connection = components["schemas"]["Connection"];
type Kind = "api_key" | "bearer" | "basic";

const ENV_REF = /^env:\/\/[A-Za-z_][A-Za-z0-9_]*$/;
const VAULT_REF = /^vault:\/\/[A-Za-z0-9_\-./#:]+$/;

/** Why a reference is not one the catalog accepts, or null when it is. */
function referenceProblem(value: string): string | null {
  if (value.startsWith("env://")) {
    return ENV_REF.test(value)
      ? null
      : "env:// must name a variable: letters, digits and _ (e.g. env://TOOLPORT_SECRET_PETSTORE).";
  }
  if (value.startsWith("vault://")) {
    return VAULT_REF.test(value) ? null : "vault:// must give a secret path, e.g. vault://secret/data/petstore#key.";
  }
  return "A reference starts with env:// or vault://.";
}

const TYPE_LABELS: Record<string, string> = {
  api_key: "API key",
  bearer: "Bearer token",
  basic: "Username and password",
  oauth2: "OAuth connection",
};

/** Why the provider's round trip did not connect, in words (the callback's `oauth_error`). */
const OAUTH_ERRORS: Record<string, string> = {
  access_denied: "You (or the provider) declined the access.",
  exchange_failed: "The provider refused to exchange the authorization code.",
  state_expired: "The authorization took longer than 10 minutes.",
  missing_code: "The provider returned no authorization code.",
  oauth_not_configured: "The service no longer has an OAuth client.",
};

function kindOf(s: Scheme): Kind | "oauth" {
  if (s.type === "apiKey") return "api_key";
  if (s.type === "http") return s.scheme?.toLowerCase() === "basic" ? "basic" : "bearer";
  return "oauth";
}

function schemeTitle(s: Scheme): string {
  switch (kindOf(s)) {
    case "api_key":
      return `API key in the ${s.location ?? "header"} ${s.parameter_name ?? ""}`.trim();
    case "basic":
      return "Username and password (HTTP basic)";
    case "bearer":
      return `Bearer token${s.bearer_format ? ` (${s.bearer_format})` : ""}`;
    default:
      return s.type === "openIdConnect" ? "OpenID Connect" : "OAuth 2";
  }
}

export default function Connect({ serviceId }: { serviceId: string }) {
  const { api, withKey, orgId, organization } = useSession();
  const tools = useQuery({
    queryKey: ["service-tools", orgId, serviceId],
    // Every tool of the service, 500 a page (a service imported from a large document has thousands).
    queryFn: () =>
      withKey((c) =>
        allPages((cursor) => c.GET("/v1/tools", { params: { query: { service_id: serviceId, limit: 500, cursor } } }), {
          maxItems: 10_000,
        }),
      ),
  });
  const toolList = tools.data ?? [];
  // Tools still missing a credential name the schemes to show first; the schemes stay as first read
  // (connecting turns those tools ready, and the forms must not move).
  const schemes = useQuery({
    queryKey: ["service-schemes", orgId, serviceId],
    enabled: tools.isSuccess,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: async () => {
      const ordered = [
        ...toolList.filter((t) => t.readiness === "needs_credential"),
        ...toolList.filter((t) => t.readiness !== "needs_credential"),
      ];
      let service: ServiceSummary | null = null;
      for (const t of ordered.slice(0, 5)) {
        const d = await withKey((c) => c.GET("/v1/tools/{tool_id}/describe", { params: { path: { tool_id: t.id } } }));
        service = d.service;
        if (d.security_schemes.length > 0) return { service, schemes: d.security_schemes };
      }
      return { service, schemes: [] as Scheme[] };
    },
  });
  const credentials = useQuery({
    queryKey: ["credentials", orgId, serviceId],
    queryFn: () => unwrap(api.GET("/v1/services/{service_id}/credentials", { params: { path: { service_id: serviceId } } })),
  });

  const name = schemes.data?.service?.name;
  const canOrg = organization?.role === "owner" || organization?.role === "admin";
  const hasOAuth = Boolean(schemes.data?.schemes.some((s) => s.connect_flow));
  return (
    <Page title={name ? `Connect ${name}` : "Connect a service"}>
      <p className="lead">
        Tools of {name ?? "this service"} call its API with a credential you connect here. A stored secret is kept encrypted and
        never shown again; a reference is resolved only when a tool runs.
      </p>
      <OAuthOutcome />
      <ErrorNote error={tools.error ?? credentials.error} />
      <Readiness tools={toolList} pending={tools.isPending} serviceName={name} />
      <section aria-labelledby="connected-title">
        <h2 id="connected-title">Connected credentials</h2>
        {credentials.isPending ? <Loading what="Loading credentials" /> : null}
        {credentials.data ? (
          <Connected
            serviceId={serviceId}
            credentials={credentials.data.filter((c) => c.type !== "oauth2")}
            canOrg={canOrg}
            orgName={organization?.name}
            oauth={hasOAuth}
          />
        ) : null}
      </section>
      {hasOAuth ? <OAuthConnections serviceId={serviceId} canOrg={canOrg} orgName={organization?.name} /> : null}
      {schemes.isPending && tools.isSuccess ? <Loading what="Reading how the service takes a credential" /> : null}
      <ErrorNote error={schemes.error} />
      {schemes.data && schemes.data.schemes.length === 0 ? (
        <Note>
          {toolList.length === 0
            ? "This service has no tools you can see."
            : "No tool of this service needs a credential: they are ready to call."}
        </Note>
      ) : null}
      {schemes.data?.schemes.map((s) => (
        <SchemeSection
          key={s.name}
          scheme={s}
          serviceId={serviceId}
          canOrg={canOrg}
          orgName={organization?.name}
          several={schemes.data.schemes.length > 1}
        />
      ))}
    </Page>
  );
}

function Readiness({
  tools,
  pending,
  serviceName,
}: {
  tools: components["schemas"]["Tool"][];
  pending: boolean;
  serviceName: string | undefined;
}) {
  const ready = tools.filter((t) => t.readiness === "ready").length;
  return (
    <section aria-labelledby="readiness-title">
      <h2 id="readiness-title">Readiness for you</h2>
      {pending ? <Loading what="Loading the tools" /> : null}
      {!pending ? (
        <p role="status" data-testid="readiness-summary">
          {tools.length === 0
            ? `${serviceName ?? "This service"} has no tools you can see.`
            : `${ready} of ${tools.length} tool${tools.length === 1 ? "" : "s"} ready for you.`}
        </p>
      ) : null}
      {tools.length > 0 ? (
        <ul className="readiness-list">
          {tools.map((t) => (
            <li key={t.id}>
              <Link href={`/tools/${t.id}`}>{t.name}</Link> <Badge value={t.readiness} />
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function useRefreshAfterChange(serviceId: string) {
  const queryClient = useQueryClient();
  const { orgId } = useSession();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ["service-tools", orgId, serviceId] }),
      queryClient.invalidateQueries({ queryKey: ["credentials", orgId, serviceId] }),
      // Readiness shows elsewhere too: search results and tool pages.
      queryClient.invalidateQueries({ queryKey: ["tool-search"] }),
      queryClient.invalidateQueries({ queryKey: ["tool"] }),
    ]);
}

function Connected({
  serviceId,
  credentials,
  canOrg,
  orgName,
  oauth,
}: {
  serviceId: string;
  credentials: Credential[];
  canOrg: boolean;
  orgName: string | undefined;
  oauth: boolean;
}) {
  const { api } = useSession();
  const refresh = useRefreshAfterChange(serviceId);
  const disconnect = useMutation({
    mutationFn: (scope: Credential["scope"]) =>
      unwrap(
        api.DELETE("/v1/services/{service_id}/credentials", { params: { path: { service_id: serviceId }, query: { scope } } }),
      ),
    onSuccess: refresh,
  });
  if (credentials.length === 0) {
    return (
      <p className="muted">{oauth ? "No stored secret: OAuth connections are listed below." : "None yet: connect one below."}</p>
    );
  }
  return (
    <>
      <TableWrap label="Connected credentials">
        <table>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">For</th>
              <th scope="col">Secret</th>
              <th scope="col">Connected</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {credentials.map((c) => (
              <tr key={c.scope}>
                <td>{TYPE_LABELS[c.type] ?? c.type}</td>
                <td>{whoItServes(c.scope, orgName)}</td>
                <td>
                  {c.is_reference ? (
                    <Badge value="reference" label="reference" />
                  ) : c.hint ? (
                    <span>
                      stored, ends in <code>{c.hint}</code>
                    </span>
                  ) : (
                    "stored"
                  )}
                </td>
                <td>
                  <When at={c.created_at} />
                </td>
                <td>
                  <When at={c.updated_at} />
                </td>
                <DisconnectCell
                  allowed={c.scope === "caller" || canOrg}
                  pending={disconnect.isPending}
                  onDisconnect={() => disconnect.mutate(c.scope)}
                  what={c.scope === "caller" ? "your credential" : "the organization's credential"}
                />
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <ErrorNote error={disconnect.error} />
    </>
  );
}

/** Whom a credential or connection serves, for its "For" column. */
function whoItServes(scope: string, orgName: string | undefined): string {
  return scope === "caller" ? "you" : `everyone in ${orgName ?? "the organization"}`;
}

/** The last cell of a connected credential's row: disconnect it, or say who may. */
function DisconnectCell({
  allowed,
  pending,
  onDisconnect,
  what,
}: {
  allowed: boolean;
  pending: boolean;
  onDisconnect: () => void;
  /** What goes, for screen readers (the visible word is the same on every row). */
  what: string;
}) {
  return (
    <td>
      {allowed ? (
        <button type="button" className="button-secondary" disabled={pending} onClick={onDisconnect}>
          Disconnect <span className="visually-hidden">{what}</span>
        </button>
      ) : (
        <span className="muted">owners and admins manage it</span>
      )}
    </td>
  );
}

type Source = "stored" | "reference";

function SchemeSection({
  scheme,
  serviceId,
  canOrg,
  orgName,
  several,
}: {
  scheme: Scheme;
  serviceId: string;
  canOrg: boolean;
  orgName: string | undefined;
  several: boolean;
}) {
  const headingId = useId();
  const kind = kindOf(scheme);
  return (
    <section aria-labelledby={headingId} className="scheme">
      <h2 id={headingId}>
        Connect with {several ? <code>{scheme.name}</code> : null} {schemeTitle(scheme)}
      </h2>
      {scheme.description ? <p className="muted">{scheme.description}</p> : null}
      {kind === "oauth" && scheme.connect_flow ? (
        <>
          <OAuthConnect serviceId={serviceId} flow={scheme.connect_flow} />
          <details className="oauth-manual">
            <summary>Or connect an access token by hand</summary>
            <SchemeForm scheme={scheme} kind="bearer" serviceId={serviceId} canOrg={canOrg} orgName={orgName} />
          </details>
        </>
      ) : (
        <>
          {kind === "oauth" ? (
            <Note kind="warning">
              The publisher has not registered an OAuth client for this service, so it cannot be connected through its provider
              here. If the service accepts an access token as a bearer token, connect one below: it is sent as{" "}
              <code>Authorization: Bearer …</code>.
            </Note>
          ) : null}
          <SchemeForm
            scheme={scheme}
            kind={kind === "oauth" ? "bearer" : kind}
            serviceId={serviceId}
            canOrg={canOrg}
            orgName={orgName}
          />
        </>
      )}
    </section>
  );
}

function SchemeForm({
  scheme,
  kind,
  serviceId,
  canOrg,
  orgName,
}: {
  scheme: Scheme;
  kind: Kind;
  serviceId: string;
  canOrg: boolean;
  orgName: string | undefined;
}) {
  const { api } = useSession();
  const refresh = useRefreshAfterChange(serviceId);
  const [source, setSource] = useState<Source>("stored");
  const [scope, setScope] = useState<"caller" | "organization">("caller");
  const [secret, setSecret] = useState("");
  const [username, setUsername] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [connected, setConnected] = useState<Credential | null>(null);
  const ids = useId();

  const put = useMutation({
    mutationFn: (credential: Record<string, unknown>) =>
      unwrap(
        api.PUT("/v1/services/{service_id}/credentials", {
          params: { path: { service_id: serviceId } },
          body: { scope, scheme_name: scheme.name, credential },
        }),
      ),
    onSuccess: async (answer) => {
      setSecret("");
      setConnected(answer.credential);
      await refresh();
    },
  });

  /** What is wrong with the form, or null when it can be sent. */
  function problemOf(value: string): string | null {
    if (kind === "basic" && username.trim() === "") return "Enter the username.";
    if (value === "") return source === "reference" ? "Enter the reference." : "Enter the secret.";
    if (source === "reference") return referenceProblem(value);
    if (value.startsWith("env://") || value.startsWith("vault://")) return "This is a reference: choose “Use a reference” above.";
    return null;
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    setConnected(null);
    const value = secret.trim();
    const found = problemOf(value);
    setProblem(found);
    if (found) return;
    put.mutate(
      kind === "api_key"
        ? { api_key: value }
        : kind === "bearer"
          ? { bearer: { token: value } }
          : { basic: { username: username.trim(), password: value } },
    );
  }

  const secretNoun = kind === "api_key" ? "API key" : kind === "bearer" ? "Token" : "Password";
  const where =
    kind === "api_key"
      ? `Sent in the ${scheme.location ?? "header"} ${scheme.parameter_name ?? ""}.`
      : kind === "bearer"
        ? "Sent as Authorization: Bearer <token>."
        : "Sent as HTTP basic authentication.";
  const referenceHint =
    "env://NAME names a variable of the execution service (by default only names starting with TOOLPORT_SECRET_); vault://mount/path#field a Vault secret.";
  return (
    <form onSubmit={submit} noValidate className="connect-form" aria-describedby={`${ids}-outcome`}>
      <fieldset>
        <legend>Secret</legend>
        <div className="checkbox">
          <input
            type="radio"
            id={`${ids}-stored`}
            name={`${ids}-source`}
            checked={source === "stored"}
            onChange={() => setSource("stored")}
          />
          <label htmlFor={`${ids}-stored`}>Store the secret (encrypted)</label>
        </div>
        <div className="checkbox">
          <input
            type="radio"
            id={`${ids}-reference`}
            name={`${ids}-source`}
            checked={source === "reference"}
            onChange={() => setSource("reference")}
          />
          <label htmlFor={`${ids}-reference`}>Use a reference (env:// or vault://)</label>
        </div>
      </fieldset>
      {kind === "basic" ? (
        <Field label="Username">
          {(p) => <input {...p} value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" />}
        </Field>
      ) : null}
      <Field
        label={source === "reference" ? `${secretNoun} reference` : secretNoun}
        hint={source === "reference" ? `${where} ${referenceHint}` : where}
      >
        {(p) => (
          <input
            {...p}
            type={source === "reference" ? "text" : "password"}
            className="secret-input"
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            placeholder={source === "reference" ? "env://TOOLPORT_SECRET_NAME" : undefined}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? `${ids}-outcome ${p["aria-describedby"]}` : p["aria-describedby"]}
          />
        )}
      </Field>
      <fieldset>
        <legend>For</legend>
        <div className="checkbox">
          <input
            type="radio"
            id={`${ids}-caller`}
            name={`${ids}-scope`}
            checked={scope === "caller"}
            onChange={() => setScope("caller")}
          />
          <label htmlFor={`${ids}-caller`}>Only me</label>
        </div>
        {canOrg ? (
          <div className="checkbox">
            <input
              type="radio"
              id={`${ids}-organization`}
              name={`${ids}-scope`}
              checked={scope === "organization"}
              onChange={() => setScope("organization")}
            />
            <label htmlFor={`${ids}-organization`}>Everyone in {orgName ?? "the organization"}</label>
          </div>
        ) : (
          <p className="hint">Only owners and admins connect a credential for everyone in {orgName ?? "the organization"}.</p>
        )}
      </fieldset>
      <div id={`${ids}-outcome`}>
        {problem ? (
          <div className="note note-error" role="alert">
            {problem}
          </div>
        ) : null}
        <ErrorNote error={put.error} />
        {connected ? (
          <Note kind="success">
            Connected: {TYPE_LABELS[connected.type] ?? connected.type} for{" "}
            {connected.scope === "caller" ? "you" : "everyone in the organization"}
            {connected.is_reference ? ", as a reference" : connected.hint ? `, ending in ${connected.hint}` : ""}.
          </Note>
        ) : null}
      </div>
      <button type="submit" disabled={put.isPending}>
        {put.isPending ? "Connecting…" : "Connect"}
      </button>
    </form>
  );
}

/** What the provider's round trip ended in, from the callback's redirect (`oauth=connected`, `oauth_error=`). */
function OAuthOutcome() {
  const params = new URLSearchParams(useSearch());
  const error = params.get("oauth_error");
  if (params.get("oauth") === "connected") {
    return <Note kind="success">Connected through the provider: the service's tools can now be called for you.</Note>;
  }
  if (!error) return null;
  const reason = params.get("reason");
  return (
    <div className="note note-error" role="alert">
      <strong>Not connected.</strong> {OAUTH_ERRORS[error] ?? "The provider did not grant access."} <code>{error}</code>
      {reason ? (
        <>
          {" "}
          <code>{reason}</code>
        </>
      ) : null}
    </div>
  );
}

/** Starts the OAuth flow: to the provider (authorization code), or connected at once (client credentials). */
function OAuthConnect({ serviceId, flow }: { serviceId: string; flow: string }) {
  const { api } = useSession();
  const refresh = useRefreshAfterChange(serviceId);
  const [made, setMade] = useState(false);
  const start = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/v1/services/{service_id}/oauth/connect", {
          params: { path: { service_id: serviceId } },
          body: { return_to: `/console/services/${serviceId}/connect` },
        }),
      ),
    onSuccess: async (answer) => {
      if (answer.authorization_url) {
        window.location.assign(answer.authorization_url);
        return;
      }
      setMade(true);
      await refresh();
    },
  });
  return (
    <div className="oauth-connect">
      <p>
        {flow === "client_credentials"
          ? "Toolport fetches an access token with the publisher's client and renews it before it expires."
          : "You sign in at the service's provider and grant access; Toolport keeps the tokens encrypted and renews them before they expire. They are never shown, not even to you."}
      </p>
      <button type="button" disabled={start.isPending} onClick={() => start.mutate()}>
        {start.isPending ? "Connecting…" : flow === "client_credentials" ? "Connect" : "Connect with the provider"}
      </button>
      <ErrorNote error={start.error} />
      {made ? <Note kind="success">Connected with the publisher's client.</Note> : null}
    </div>
  );
}

/** The service's OAuth connections for this person and organization, with their state. */
function OAuthConnections({ serviceId, canOrg, orgName }: { serviceId: string; canOrg: boolean; orgName: string | undefined }) {
  const { api, orgId } = useSession();
  const refresh = useRefreshAfterChange(serviceId);
  const queryClient = useQueryClient();
  const connections = useQuery({
    queryKey: ["connections", orgId],
    queryFn: () => unwrap(api.GET("/v1/connections")),
  });
  const remove = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE("/v1/connections/{connection_id}", { params: { path: { connection_id: id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["connections", orgId] });
      await refresh();
    },
  });
  const mine = (connections.data ?? []).filter((c: Connection) => c.service_id === serviceId);
  return (
    <section aria-labelledby="oauth-connections-title">
      <h2 id="oauth-connections-title">OAuth connections</h2>
      {connections.isPending ? <Loading what="Loading connections" /> : null}
      <ErrorNote error={connections.error ?? remove.error} />
      {connections.data && mine.length === 0 ? <p className="muted">None yet: connect below.</p> : null}
      {mine.length > 0 ? (
        <TableWrap label="OAuth connections of this service">
          <table>
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">For</th>
                <th scope="col">Scopes</th>
                <th scope="col">Token expires</th>
                <th scope="col">Connected</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {mine.map((c: Connection) => (
                <tr key={c.id}>
                  <td>
                    <Badge
                      value={c.status === "broken" ? "failed" : c.status === "needs_consent" ? "needs_credential" : "active"}
                      label={c.status.replace(/_/g, " ")}
                    />
                    {c.broken_reason ? <p className="hint">{c.broken_reason}. Connect again below.</p> : null}
                  </td>
                  <td>{whoItServes(c.scope, orgName)}</td>
                  <td>{c.scopes.length > 0 ? c.scopes.join(" ") : <span className="muted">none named</span>}</td>
                  <td>
                    <When at={c.expires_at} />
                  </td>
                  <td>
                    <When at={c.created_at} />
                  </td>
                  <DisconnectCell
                    allowed={c.scope === "caller" || canOrg}
                    pending={remove.isPending}
                    onDisconnect={() => remove.mutate(c.id)}
                    what="the OAuth connection"
                  />
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </section>
  );
}
