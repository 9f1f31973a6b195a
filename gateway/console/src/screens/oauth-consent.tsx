/**
 * The consent page of Toolport's OAuth authorization server (issue 32): an MCP client sent the person's
 * browser to `/oauth/authorize`, the gateway checked the request and sent it here with `?request=<id>`.
 * The page says which client asks (its name, its client id, where the browser goes back to, and a warning
 * when the person never allowed it before), lets the person choose the organization it acts in and what
 * it may do (the permission set of an API key: the grant is a key of theirs), and answers
 * `POST /v1/oauth/authorizations/{id}`; the browser then follows the answer's `redirect_to` back to the
 * client. The client's logo is not shown: it would be fetched from the client's own host, which the
 * console's Content-Security-Policy refuses, and a logo proves nothing about who asks.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useSearch } from "wouter";
import { ApiError, type components, unwrap } from "../api";
import { useSession } from "../session";
import { ErrorNote, Field, Loading, When } from "../ui/index";
import { clientHost } from "../ui/keys-grants";
import {
  NO_PERMISSIONS,
  type PermissionDraft,
  PermissionFields,
  type PermissionProblems,
  readPermissions,
} from "../ui/keys-permission-form";

type Authorization = components["schemas"]["OAuthAuthorization"];

/** Answered, expired or never made: nothing to decide any more. */
const isGone = (error: unknown) => error instanceof ApiError && error.code === "authorization_request_not_found";

export default function OAuthConsent() {
  const { api } = useSession();
  const requestId = new URLSearchParams(useSearch()).get("request") ?? "";
  const authorization = useQuery({
    queryKey: ["oauth-authorization", requestId],
    enabled: requestId !== "",
    // The request is answered once: a second look would find it gone and hide the page being answered.
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => unwrap(api.GET("/v1/oauth/authorizations/{request_id}", { params: { path: { request_id: requestId } } })),
  });

  if (requestId === "") {
    return (
      <Gone title="No authorization request">
        This page answers an app that asks to use Toolport for you, and the app opens it. Start again from the app.
      </Gone>
    );
  }
  if (isGone(authorization.error)) return <Ended />;
  if (authorization.isPending) return <Loading what="Loading the request" />;
  if (!authorization.data) {
    return (
      <>
        <h1 id="page-title">Connect an app</h1>
        <ErrorNote error={authorization.error} />
      </>
    );
  }
  return <Decide authorization={authorization.data} />;
}

function Gone({ title, children }: { title: string; children: string }) {
  return (
    <>
      <h1 id="page-title">{title}</h1>
      <p>{children}</p>
    </>
  );
}

const Ended = () => (
  <Gone title="This request is over">
    It was already answered, or it expired (a request lasts 10 minutes). Nothing more happens here: go back to the app and connect
    again if you still want to.
  </Gone>
);

function Decide({ authorization: a }: { authorization: Authorization }) {
  const { api, organizations, orgId, account } = useSession();
  // A viewer cannot let an app call an organization's tools; identity refuses it too.
  const eligible = organizations.filter((o) => o.role !== "viewer");
  const [chosenOrg, setChosenOrg] = useState<string | null>(null);
  const fallback = eligible.some((o) => o.id === orgId) ? orgId : (account?.personal_organization_id ?? eligible[0]?.id ?? "");
  const organizationId = chosenOrg ?? fallback;
  const [permissions, setPermissions] = useState<PermissionDraft>(NO_PERMISSIONS);
  const [problems, setProblems] = useState<PermissionProblems>({});

  const decide = useMutation({
    mutationFn: (body: {
      allow: boolean;
      organization_id?: string;
      permissions?: components["schemas"]["ApiKeyPermissions"] | null;
    }) => unwrap(api.POST("/v1/oauth/authorizations/{request_id}", { params: { path: { request_id: a.request_id } }, body })),
    // The client's redirect_uri with the code (or the refusal): the browser leaves the console.
    onSuccess: ({ redirect_to }) => window.location.assign(redirect_to),
  });

  if (isGone(decide.error)) return <Ended />;
  const leaving = decide.isPending || decide.isSuccess;

  const allow = () => {
    const read = readPermissions(permissions);
    setProblems(read.ok ? {} : read.problems);
    if (!read.ok) return;
    decide.mutate({ allow: true, ...(organizationId ? { organization_id: organizationId } : {}), permissions: read.permissions });
  };

  const host = clientHost(a.client_id);
  return (
    // No submit button: Enter in a field must not grant anything; only the Allow button does.
    <form className="consent-form" onSubmit={(e: FormEvent) => e.preventDefault()} noValidate aria-labelledby="page-title">
      <h1 id="page-title">Allow {a.client_name} to use Toolport?</h1>
      <p>
        <strong>{a.client_name}</strong> asks to call Toolport's tools for you, through its MCP server, as a key of yours with the
        organization and permissions you choose below.
      </p>
      {a.first_time ? (
        <div className="note note-warning" data-testid="first-time">
          <p>
            <strong>You have never allowed this app before.</strong> Only continue if you started this from {a.client_name}{" "}
            yourself, just now. If you did not, deny.
          </p>
        </div>
      ) : null}
      <dl className="key-facts consent-facts">
        <div>
          <dt>App</dt>
          <dd>{a.client_name}</dd>
        </div>
        <div>
          <dt>Client ID</dt>
          <dd>
            <code className="client-id">{a.client_id}</code>
          </dd>
        </div>
        <div>
          <dt>Identified by</dt>
          <dd>
            {a.client_kind === "metadata_document"
              ? `its client metadata document, published at ${host}`
              : "its registration with this Toolport (the name is the app's own claim)"}
          </dd>
        </div>
        {a.client_uri ? (
          <div>
            <dt>Website (as the app states it)</dt>
            <dd>
              <code>{a.client_uri}</code>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Answer before</dt>
          <dd>
            <When at={a.expires_at} />
          </dd>
        </div>
      </dl>
      <p data-testid="redirect-host">
        After you decide, you go back to <strong>{a.redirect_host}</strong>.
      </p>
      <section aria-labelledby="consent-organization">
        <h2 id="consent-organization">Where it acts</h2>
        {eligible.length > 0 ? (
          <Field
            label="Organization"
            hint="It calls tools and spends from the wallet of this organization. Organizations where you are a viewer are not listed."
          >
            {(props) => (
              <select {...props} value={organizationId} onChange={(e) => setChosenOrg(e.target.value)}>
                {eligible.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.is_personal ? `${o.name} (personal)` : o.name} · {o.role}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : (
          <p className="muted">Your personal organization.</p>
        )}
      </section>
      <section aria-labelledby="consent-permissions">
        <h2 id="consent-permissions">What it may do</h2>
        <p className="hint">
          The same permissions as an API key. Nothing picked and no caps: it may call every tool, without a limit on spending.
        </p>
        <PermissionFields value={permissions} onChange={setPermissions} problems={problems} who="assistant" />
      </section>
      <div className="row consent-actions">
        <button type="button" disabled={leaving} onClick={allow}>
          Allow
        </button>
        <button type="button" className="button-secondary" disabled={leaving} onClick={() => decide.mutate({ allow: false })}>
          Deny
        </button>
      </div>
      {leaving ? (
        <p role="status" className="muted">
          Going back to {a.redirect_host}…
        </p>
      ) : null}
      <ErrorNote error={decide.error} />
    </form>
  );
}
