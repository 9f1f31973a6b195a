/**
 * Publish an API: an OpenAPI or Swagger document (pasted, or read from a file, JSON or YAML), a
 * document's URL, or an MCP server's URL. "Preview" asks the gateway what the publish would create
 * (`POST /v1/services/preview`, nothing stored): the tools and the import's warnings, or the document's
 * defect and where it is. Then the name and visibility, and "Publish" (`POST /v1/services`), which opens
 * the new service's page.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { FileCode, Link as LinkIcon, Server, Upload } from "lucide-react";
import { type ChangeEvent, type FormEvent, useState } from "react";
import { Link, useLocation } from "wouter";
import { ApiError, type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, ErrorNote, Field, Note, Page, TableWrap } from "../ui/index";

type Source = { api: components["schemas"]["OpenApiSource"] } | { mcp_server: components["schemas"]["McpServerSource"] };
type SourceKind = "document" | "document_url" | "mcp_server";

const SOURCES: { kind: SourceKind; label: string; hint: string; icon: typeof FileCode }[] = [
  { kind: "document", label: "Paste or upload a document", hint: "OpenAPI 3.0/3.1 or Swagger 2.0, JSON or YAML", icon: FileCode },
  { kind: "document_url", label: "A document's URL", hint: "Toolport fetches it, now and on re-import", icon: LinkIcon },
  { kind: "mcp_server", label: "An MCP server", hint: "Its tools/list becomes the tools", icon: Server },
];

/** Where in the document a refusal points (the catalog's `details.location`), when it says. */
function locationOf(error: unknown): string | null {
  return error instanceof ApiError && typeof error.details.location === "string" ? error.details.location : null;
}

export default function Publish() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [kind, setKind] = useState<SourceKind>("document");
  const [text, setText] = useState("");
  const [url, setUrl] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [name, setName] = useState("");
  const [visibility, setVisibility] = useState<"private" | "public">("private");

  const source = (): Source => {
    const base = baseUrl.trim() ? { base_url: baseUrl.trim() } : {};
    if (kind === "mcp_server") return { mcp_server: { url: url.trim() } };
    if (kind === "document_url") return { api: { document_url: url.trim(), ...base } };
    return { api: { document_text: text, ...base } };
  };

  const preview = useMutation({
    mutationFn: () => unwrap(api.POST("/v1/services/preview", { body: source() })),
    onSuccess: (p) => setName((current) => current || p.name),
  });
  const publish = useMutation({
    mutationFn: () =>
      unwrap(api.POST("/v1/services", { body: { ...source(), visibility, ...(name.trim() ? { name: name.trim() } : {}) } })),
    onSuccess: (published) => {
      void queryClient.invalidateQueries({ queryKey: ["services"] });
      if (published.service) navigate(`/services/${published.service.id}?published=1`);
    },
  });

  // A changed source needs a new preview before it is published.
  const changed = () => {
    preview.reset();
    publish.reset();
  };

  async function readFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setText(await file.text());
    changed();
  }

  function submitPreview(e: FormEvent) {
    e.preventDefault();
    preview.mutate();
  }

  const where = locationOf(preview.error) ?? locationOf(publish.error);
  return (
    <Page title="Publish an API" actions={<Link href="/services">Back to my services</Link>}>
      <p className="muted">
        Add your own API or MCP server to the catalog: its operations become tools your keys and assistants can call. Preview
        first; nothing is stored until you publish.
      </p>
      <form onSubmit={submitPreview} className="panel publish-form" aria-labelledby="publish-source">
        <h2 id="publish-source">1. Where the tools come from</h2>
        <fieldset className="source-choice">
          <legend>Source</legend>
          {SOURCES.map((s) => (
            <label key={s.kind} className={kind === s.kind ? "source-option selected" : "source-option"}>
              <input
                type="radio"
                className="source-radio"
                name="source"
                value={s.kind}
                checked={kind === s.kind}
                onChange={() => {
                  setKind(s.kind);
                  changed();
                }}
              />
              <s.icon className="icon source-icon" size={20} aria-hidden="true" />
              <span>
                <strong>{s.label}</strong>
                <br />
                <span className="muted">{s.hint}</span>
              </span>
            </label>
          ))}
        </fieldset>
        {kind === "document" ? (
          <>
            <Field label="OpenAPI document (JSON or YAML)" hint="Paste it here, or read it from a file.">
              {(p) => (
                <textarea
                  {...p}
                  className="document-text"
                  required
                  spellCheck={false}
                  value={text}
                  placeholder={"openapi: 3.0.3\ninfo:\n  title: My API\n  version: 1.0.0\npaths: {}"}
                  onChange={(e) => {
                    setText(e.target.value);
                    changed();
                  }}
                />
              )}
            </Field>
            <label className="button button-secondary file-button">
              <Upload className="icon" size={16} aria-hidden="true" />
              Upload a file
              <input
                type="file"
                className="visually-hidden"
                accept=".json,.yaml,.yml,application/json,application/yaml,text/yaml"
                onChange={readFile}
              />
            </label>
          </>
        ) : (
          <Field
            label={kind === "mcp_server" ? "MCP server URL" : "Document URL"}
            hint={
              kind === "mcp_server"
                ? "Its streamable HTTP endpoint, e.g. https://example.com/mcp."
                : "An http(s) URL of the JSON or YAML document."
            }
          >
            {(p) => (
              <input
                {...p}
                type="url"
                required
                placeholder="https://"
                value={url}
                onChange={(e) => {
                  setUrl(e.target.value);
                  changed();
                }}
              />
            )}
          </Field>
        )}
        {kind !== "mcp_server" ? (
          <Field
            label="Base URL (optional)"
            hint="Where calls go, when the document's servers do not say (or say a relative URL)."
          >
            {(p) => (
              <input
                {...p}
                type="url"
                placeholder="https://api.example.com"
                value={baseUrl}
                onChange={(e) => {
                  setBaseUrl(e.target.value);
                  changed();
                }}
              />
            )}
          </Field>
        ) : null}
        <button type="submit" disabled={preview.isPending}>
          {preview.isPending ? "Reading…" : "Preview the tools"}
        </button>
        {preview.error ? (
          <div className="publish-error">
            <ErrorNote error={preview.error} />
            {where ? (
              <p className="muted" data-testid="defect-location">
                Where: <code>{where}</code>
              </p>
            ) : null}
          </div>
        ) : null}
      </form>

      {preview.data ? (
        <section className="panel" aria-labelledby="publish-preview">
          <h2 id="publish-preview">2. What will be published</h2>
          <p className="row">
            <strong>{preview.data.name}</strong>
            <Badge value={preview.data.service_type} label={preview.data.service_type === "api" ? "API" : "MCP server"} />
            <span data-testid="preview-count">
              {preview.data.tools.length} tool{preview.data.tools.length === 1 ? "" : "s"}
            </span>
            {preview.data.base_url ? <code>{preview.data.base_url}</code> : null}
          </p>
          {preview.data.security_schemes.length > 0 ? (
            <p className="muted">
              Calls need a credential ({preview.data.security_schemes.join(", ")}): connect it on the service's page after
              publishing.
            </p>
          ) : null}
          {preview.data.warnings.length > 0 ? (
            <Note kind="warning">
              <strong>
                {preview.data.warnings.length} warning{preview.data.warnings.length === 1 ? "" : "s"}
              </strong>
              <ul className="preview-warnings">
                {preview.data.warnings.map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            </Note>
          ) : null}
          {preview.data.tools.length > 0 ? (
            <TableWrap label="Tools to be created">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Tool</th>
                    <th scope="col">Operation</th>
                    <th scope="col">Inputs</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.data.tools.map((t) => (
                    <tr key={`${t.method} ${t.path} ${t.name}`}>
                      <td data-label="Tool">
                        <strong>{t.name}</strong>
                        {t.deprecated ? <Badge value="deprecated" /> : null}
                        {t.description ? <div className="muted">{t.description}</div> : null}
                      </td>
                      <td data-label="Operation" className="mono">
                        {t.method ? `${t.method} ${t.path}` : "MCP tool"}
                      </td>
                      <td data-label="Inputs">
                        {t.parameters.length > 0 ? t.parameters.join(", ") : <span className="muted">none</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          ) : null}

          <h2>3. Name and visibility</h2>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              publish.mutate();
            }}
          >
            <Field label="Service name">
              {(p) => <input {...p} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
            </Field>
            <fieldset>
              <legend>Visibility</legend>
              <label className="checkbox">
                <input
                  type="radio"
                  name="visibility"
                  checked={visibility === "private"}
                  onChange={() => setVisibility("private")}
                />
                <span>
                  <strong>Private</strong> <span className="muted">only this organization's members and keys see it</span>
                </span>
              </label>
              <label className="checkbox">
                <input
                  type="radio"
                  name="visibility"
                  checked={visibility === "public"}
                  onChange={() => setVisibility("public")}
                />
                <span>
                  <strong>Public</strong> <span className="muted">listed in the public catalog for everyone</span>
                </span>
              </label>
            </fieldset>
            <button type="submit" disabled={publish.isPending}>
              {publish.isPending ? "Publishing…" : "Publish"}
            </button>
            <ErrorNote error={publish.error} />
          </form>
        </section>
      ) : null}
    </Page>
  );
}
