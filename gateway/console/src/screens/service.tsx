/**
 * One of the organization's services, as its publisher sees it: what it is and where its tools come
 * from, how ready its tools are for the signed-in person (with the connect button when a credential is
 * missing), its tools (each opens the tool's page, where "try it" calls it), and re-import and delete.
 * Reads `GET /v1/services/{id}` and `/tools` with the person's session.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plug, RefreshCw, Wrench } from "lucide-react";
import { useCallback, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { ConfirmAction } from "../ui/content-confirm";
import { Drawer } from "../ui/dialog";
import { Badge, EmptyState, ErrorNote, Field, Loading, Note, Page, TableWrap, When } from "../ui/index";

type Tool = components["schemas"]["Tool"];
type Detail = components["schemas"]["ServiceWithPublishing"];

export default function ServicePage({ serviceId }: { serviceId: string }) {
  const { api, orgId } = useSession();
  const service = useQuery({
    queryKey: ["service", orgId, serviceId],
    queryFn: () => unwrap(api.GET("/v1/services/{service_id}", { params: { path: { service_id: serviceId } } })),
  });
  if (service.isPending) {
    return (
      <Page title="Service">
        <Loading what="Loading the service" />
      </Page>
    );
  }
  if (service.isError) {
    return (
      <Page title="Service">
        <ErrorNote error={service.error} />
        <p>
          <Link href="/services">Back to my services</Link>
        </p>
      </Page>
    );
  }
  return <ServiceDetails detail={service.data} />;
}

function ServiceDetails({ detail }: { detail: Detail }) {
  const { api, orgId } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const justPublished = new URLSearchParams(useSearch()).get("published") === "1";
  const { service, publishing } = detail;
  const path = { params: { path: { service_id: service.id } } };
  const tools = useQuery({
    queryKey: ["service-tools", orgId, service.id],
    queryFn: () => unwrap(api.GET("/v1/services/{service_id}/tools", path)),
  });
  const [reimporting, setReimporting] = useState(false);
  const closeReimport = useCallback(() => setReimporting(false), []);
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/v1/services/{service_id}", path)),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: ["service", orgId, service.id] });
      void queryClient.invalidateQueries({ queryKey: ["services"] });
      navigate(`/services?deleted=${encodeURIComponent(service.name)}`);
    },
  });

  const needsCredential = publishing.security_schemes.length > 0;
  const active = (tools.data ?? []).filter((t) => t.status === "active");
  const waiting = active.filter((t) => t.readiness === "needs_credential").length;
  const ready = active.filter((t) => t.readiness === "ready").length;
  const source =
    service.service_type === "mcp_server"
      ? publishing.mcp_server_url
      : (publishing.openapi_document_url ?? (service.service_type === "api" ? "a pasted document" : null));

  return (
    <Page
      title={service.name}
      actions={
        <>
          {needsCredential ? (
            <Link href={`/services/${service.id}/connect`} className="button">
              <Plug className="icon" size={16} aria-hidden="true" />
              Connect
            </Link>
          ) : null}
          {service.service_type !== "internal" ? (
            <button type="button" className="button-secondary" onClick={() => setReimporting(true)}>
              <RefreshCw className="icon" size={16} aria-hidden="true" />
              Re-import
            </button>
          ) : null}
          <ConfirmAction
            label="Delete"
            danger
            question={`Delete ${service.name} and its ${service.tool_count} tools for good?`}
            confirmLabel="Delete for good"
            busy={remove.isPending}
            onConfirm={() => remove.mutate()}
          />
        </>
      }
    >
      {justPublished ? (
        <Note kind="success">
          Published. Open a tool below to try it{needsCredential ? ", after connecting a credential" : ""}.
        </Note>
      ) : null}
      <ErrorNote error={remove.error} />
      <p className="row">
        <Badge value={service.visibility} />
        <Badge value={service.service_type} label={service.service_type === "mcp_server" ? "MCP server" : service.service_type} />
        {service.status !== "active" ? <Badge value={service.status} /> : null}
        {service.version ? <span className="muted">version {service.version}</span> : null}
      </p>
      {service.description ? <p className="lead">{service.description}</p> : null}
      <dl className="content-details">
        <dt>Slug</dt>
        <dd>
          <code>{service.slug}</code>
        </dd>
        {source ? (
          <>
            <dt>Source</dt>
            <dd className="content-url">{source}</dd>
          </>
        ) : null}
        {publishing.base_url ? (
          <>
            <dt>Calls go to</dt>
            <dd className="content-url">{publishing.base_url}</dd>
          </>
        ) : null}
        <dt>Imported</dt>
        <dd>
          <When at={publishing.imported_at} />
        </dd>
      </dl>

      <section aria-labelledby="readiness-title" className="panel">
        <h2 id="readiness-title">Readiness</h2>
        {tools.data ? (
          <p data-testid="service-readiness">
            {ready} of {active.length} active tool{active.length === 1 ? "" : "s"} ready for you
            {waiting > 0 ? `; ${waiting} ${waiting === 1 ? "waits" : "wait"} for a credential` : ""}.
          </p>
        ) : null}
        {waiting > 0 ? (
          <p>
            <Link href={`/services/${service.id}/connect`} className="strong-link">
              Connect {service.name}
            </Link>{" "}
            with your credential ({publishing.security_schemes.map((s) => s.name).join(", ")}) to call them.
          </p>
        ) : null}
      </section>

      <section aria-labelledby="tools-title">
        <h2 id="tools-title">Tools</h2>
        {tools.isPending ? <Loading what="Loading the tools" /> : null}
        <ErrorNote error={tools.error} />
        {tools.data && tools.data.length === 0 ? (
          <EmptyState icon={Wrench} title="No tools yet">
            The source had no operations. Add some to it and re-import.
          </EmptyState>
        ) : null}
        {tools.data && tools.data.length > 0 ? <ToolTable tools={tools.data} /> : null}
      </section>
      <Drawer title={`Re-import ${service.name}`} open={reimporting} onClose={closeReimport}>
        <Reimport detail={detail} />
      </Drawer>
    </Page>
  );
}

function ToolTable({ tools }: { tools: Tool[] }) {
  return (
    <TableWrap label="Tools of this service">
      <table>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Operation</th>
            <th scope="col">Readiness</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr key={t.id}>
              <td data-label="Tool">
                <Link href={`/tools/${t.id}`}>{t.name}</Link>
                {t.description ? <div className="muted clamp">{t.description}</div> : null}
              </td>
              <td data-label="Operation" className="mono">
                {t.method ? `${t.method} ${t.path}` : "MCP tool"}
              </td>
              <td data-label="Readiness">
                <Badge value={t.readiness} />
              </td>
              <td data-label="Status">
                <Badge value={t.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/**
 * Re-reads the source: an MCP server's tools/list, a document's URL, or (for a document that was
 * pasted, or to replace the document) a new document given here.
 */
function Reimport({ detail }: { detail: Detail }) {
  const { api, orgId } = useSession();
  const queryClient = useQueryClient();
  const { service, publishing } = detail;
  const [text, setText] = useState("");
  const isApi = service.service_type === "api";
  const fromUrl = publishing.openapi_document_url;
  const reimport = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/v1/services/{service_id}/reimport", {
          params: { path: { service_id: service.id } },
          body: isApi && text.trim() ? { api: { document_text: text } } : {},
        }),
      ),
    onSuccess: () => {
      setText("");
      void queryClient.invalidateQueries({ queryKey: ["service-tools", orgId, service.id] });
      void queryClient.invalidateQueries({ queryKey: ["service", orgId, service.id] });
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        reimport.mutate();
      }}
    >
      <p>
        {service.service_type === "mcp_server"
          ? "Lists the MCP server's tools again."
          : fromUrl
            ? `Reads ${fromUrl} again, or the document you paste below.`
            : "This service was published from a pasted document: paste its new version."}{" "}
        New operations become tools, changed ones are updated, and tools the source no longer has are set inactive.
      </p>
      {isApi ? (
        <Field label={fromUrl ? "New document (optional)" : "New document"} hint="OpenAPI or Swagger, JSON or YAML.">
          {(p) => (
            <textarea
              {...p}
              className="document-text"
              required={!fromUrl}
              spellCheck={false}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
      ) : null}
      <button type="submit" disabled={reimport.isPending}>
        {reimport.isPending ? "Re-importing…" : "Re-import now"}
      </button>
      <ErrorNote error={reimport.error} />
      {reimport.data ? (
        <Note kind="success">
          <p data-testid="reimport-result">
            Re-imported: {reimport.data.tools.length} tool{reimport.data.tools.length === 1 ? "" : "s"} from the source
            {reimport.data.deactivated_tool_ids.length > 0 ? `, ${reimport.data.deactivated_tool_ids.length} set inactive` : ""}.
          </p>
          {reimport.data.warnings.length > 0 ? (
            <ul>
              {reimport.data.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          ) : null}
        </Note>
      ) : null}
    </form>
  );
}
