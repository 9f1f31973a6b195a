/**
 * One tool: what it does, its parameters, its readiness for the signed-in person (with the way to the
 * connect page when a credential is missing), and "try it": a form generated from the parameters that
 * runs the tool with the console key, walks through the consent handshake when the key asks for it, and
 * shows the answer (collapsible JSON, masked secrets, truncation) with a reader for the stored result.
 *
 * Reading the tool: `GET /tools/{id}` and `/describe` take an API key only, and the public lists cover
 * public services only. The page reads `/describe` with the console key: running the tool needs that key
 * anyway, and one answer holds the tool in the full shape (any service the person's organization sees),
 * its inputs, its readiness for this person (the key acts for the same person and organization, with no
 * allow-lists) and the credential its service takes.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "wouter";
import { ApiError, type components } from "../api";
import { useSession } from "../session";
import { CallResultView, PathReader } from "../ui/catalog-result";
import { ParameterForm } from "../ui/catalog-schema-form";
import { Badge, ErrorNote, Field, Loading, Note, Page, TableWrap, When } from "../ui/index";

type Description = components["schemas"]["ToolDescription"];
type CallResult = components["schemas"]["SingleCallResult"];
type Consent = components["schemas"]["Consent"];

export default function ToolPage({ toolId }: { toolId: string }) {
  const { withKey, orgId } = useSession();
  const described = useQuery({
    queryKey: ["tool", orgId, toolId],
    queryFn: () => withKey((c) => c.GET("/v1/tools/{tool_id}/describe", { params: { path: { tool_id: toolId } } })),
  });

  if (described.isPending) {
    return (
      <Page title="Tool">
        <Loading what="Loading the tool" />
      </Page>
    );
  }
  if (described.isError) {
    return (
      <Page title="Tool">
        <ErrorNote error={described.error} />
        <p>
          <Link href="/catalog">Back to the catalog</Link>
        </p>
      </Page>
    );
  }
  return <ToolDetails d={described.data} />;
}

function ToolDetails({ d }: { d: Description }) {
  const { tool, service } = d;
  return (
    <Page title={tool.name} actions={<Link href="/catalog">Back to the catalog</Link>}>
      <p className="lead">{tool.description}</p>
      <p className="row">
        <Badge value={d.readiness} />
        <span>
          Service <strong>{service.name}</strong>
        </span>
        {tool.slug ? (
          <span>
            Slug <code>{tool.slug}</code>
          </span>
        ) : null}
        {tool.method ? (
          <span className="mono">
            {tool.method} {tool.path}
          </span>
        ) : null}
        {tool.is_paid ? <Badge value="paid" label={`${tool.price_per_call_cents} cents a call`} /> : <Badge value="free" />}
      </p>
      {tool.deprecated ? (
        <Note kind="warning">
          Deprecated{tool.deprecation_message ? `: ${tool.deprecation_message}` : ""}
          {tool.sunset_date ? (
            <>
              {" "}
              (calls are refused after <When at={tool.sunset_date} />)
            </>
          ) : null}
        </Note>
      ) : null}
      <Readiness d={d} />
      {tool.tips ? (
        <>
          <h2>Tips</h2>
          <p>{tool.tips}</p>
        </>
      ) : null}
      <Parameters parameters={tool.parameters} />
      <TryIt d={d} />
    </Page>
  );
}

function Readiness({ d }: { d: Description }) {
  if (d.readiness === "ready") return null;
  const connect = `/services/${d.tool.service_id}/connect`;
  return (
    <Note kind="warning">
      {d.readiness === "needs_credential" ? (
        <p>
          This tool needs a credential for {d.service.name}.{" "}
          <Link href={connect} className="strong-link">
            Connect {d.service.name}
          </Link>
        </p>
      ) : (
        <p>You cannot call this tool now:</p>
      )}
      {d.missing.length > 0 ? (
        <ul>
          {d.missing.map((g) => (
            <li key={g.kind}>{g.message}</li>
          ))}
        </ul>
      ) : null}
    </Note>
  );
}

function Parameters({ parameters }: { parameters: Description["tool"]["parameters"] }) {
  const entries = Object.entries(parameters);
  return (
    <section aria-labelledby="parameters-title">
      <h2 id="parameters-title">Parameters</h2>
      {entries.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <TableWrap label="Parameters">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">In</th>
                <th scope="col">Type</th>
                <th scope="col">Required</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {entries.map(([name, p]) => (
                <tr key={name}>
                  <td>
                    <code>{name}</code>
                  </td>
                  <td>{p.location}</td>
                  <td>
                    <code>{p.type}</code>
                    {typeof p.minimum === "number" || typeof p.maximum === "number" ? (
                      <div className="muted">
                        {p.minimum ?? "…"} to {p.maximum ?? "…"}
                      </div>
                    ) : null}
                  </td>
                  <td>{p.required ? "yes" : "no"}</td>
                  <td>
                    {p.description}
                    {p.enum ? (
                      <div className="muted">
                        One of:{" "}
                        {p.enum.map((v, i) => (
                          <span key={String(v)}>
                            {i > 0 ? ", " : ""}
                            <code>{JSON.stringify(v)}</code>
                          </span>
                        ))}
                      </div>
                    ) : null}
                    {p.default !== undefined ? (
                      <div className="muted">
                        Default <code>{JSON.stringify(p.default)}</code>
                      </div>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

interface Pending {
  input: Record<string, unknown>;
  consent: Consent;
  token: string;
  problem?: string;
}

function consentOf(err: unknown): { consent: Consent; token: string; problem?: string } | null {
  if (!(err instanceof ApiError) || err.code !== "confirmation_required") return null;
  const details = err.details as { consent?: Consent; confirm_token?: string; token_problem?: string };
  if (!details.consent || !details.confirm_token) return null;
  return {
    consent: details.consent,
    token: details.confirm_token,
    ...(details.token_problem ? { problem: details.token_problem } : {}),
  };
}

function TryIt({ d }: { d: Description }) {
  const { withKey } = useSession();
  const [cap, setCap] = useState("");
  const [pending, setPending] = useState<Pending | null>(null);
  const [result, setResult] = useState<CallResult | null>(null);
  const [path, setPath] = useState("");
  const [readRequest, setReadRequest] = useState(0);
  const run = useMutation({
    mutationFn: ({ input, token }: { input: Record<string, unknown>; token?: string }) => {
      const max = Number(cap);
      return withKey((c) =>
        c.POST("/v1/tools/call/{tool_id}", {
          params: { path: { tool_id: d.tool.id } },
          body: {
            tool_input: input,
            ...(cap.trim() && Number.isInteger(max) ? { max_response_chars: max } : {}),
            ...(token ? { confirm_token: token } : {}),
          },
        }),
      );
    },
    onMutate: () => {
      setResult(null);
      setPath("");
      setReadRequest(0);
    },
    onSuccess: (answer) => {
      setPending(null);
      setResult(answer);
    },
    onError: (err, vars) => {
      const asked = consentOf(err);
      setPending(asked ? { input: vars.input, ...asked } : null);
    },
  });

  return (
    <section aria-labelledby="try-title" className="try-it">
      <h2 id="try-title">Try it</h2>
      <p className="muted">
        Runs the tool with the console key of this sign-in (an API key of yours in this organization, listed on the keys screen,
        ending when you sign out).
      </p>
      <ParameterForm
        parameters={d.tool.parameters}
        busy={run.isPending}
        onRun={(input) => run.mutate({ input })}
        extra={
          <Field
            label="Answer size cap"
            hint="Characters at most in the answer (default 32,000; 100 to 500,000). The whole result is stored."
          >
            {(p) => (
              <input {...p} type="number" min={100} max={500_000} step={1} value={cap} onChange={(e) => setCap(e.target.value)} />
            )}
          </Field>
        }
      />
      {pending ? (
        <div className="note note-warning" role="alert">
          <p>
            <strong>Confirm this call.</strong> {d.tool.name} writes, sends, spends or deletes, and your key asks for confirmation
            first. Nothing ran yet.
          </p>
          {pending.problem ? <p>The previous confirmation was not accepted ({pending.problem.replace(/_/g, " ")}).</p> : null}
          <p>It will run with these parameters:</p>
          <pre>{JSON.stringify(pending.consent.parameters, null, 2)}</pre>
          <p>
            The confirmation holds until <When at={pending.consent.expires_at} />.
          </p>
          <div className="row">
            <button
              type="button"
              disabled={run.isPending}
              onClick={() => run.mutate({ input: pending.input, token: pending.token })}
            >
              Confirm and run
            </button>
            <button type="button" className="button-secondary" onClick={() => setPending(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {!pending ? <ErrorNote error={run.error} /> : null}
      {run.isPending ? <Loading what="Running" /> : null}
      {result ? (
        <>
          <CallResultView
            result={result}
            onReadPath={(p) => {
              setPath(p);
              setReadRequest((n) => n + 1);
            }}
          />
          <PathReader
            key={result.execution_id}
            executionId={result.execution_id}
            path={path}
            setPath={setPath}
            request={readRequest}
          />
        </>
      ) : null}
    </section>
  );
}
