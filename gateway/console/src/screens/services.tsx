/**
 * The organization's own services (`GET /v1/services`): each opens its page (tools, readiness,
 * connect, re-import, delete); "Publish an API" adds one.
 */
import { useQuery } from "@tanstack/react-query";
import { Boxes, PackagePlus } from "lucide-react";
import { Link, useSearch } from "wouter";
import { unwrap } from "../api";
import { useSession } from "../session";
import { Badge, EmptyState, ErrorNote, Loading, Note, Page, TableWrap } from "../ui/index";

export default function Services() {
  const { api, orgId } = useSession();
  const deleted = new URLSearchParams(useSearch()).get("deleted");
  const services = useQuery({ queryKey: ["services", orgId], queryFn: () => unwrap(api.GET("/v1/services")) });
  const publishButton = (
    <Link href="/services/new" className="button">
      <PackagePlus className="icon" size={16} aria-hidden="true" />
      Publish an API
    </Link>
  );
  return (
    <Page title="My services" actions={publishButton}>
      <p className="muted">
        APIs and MCP servers this organization published. Their tools are in the catalog for whoever may see them.
      </p>
      {deleted ? <Note kind="success">Deleted {deleted}.</Note> : null}
      {services.isPending ? <Loading what="Loading the services" /> : null}
      <ErrorNote error={services.error} />
      {services.data && services.data.length === 0 ? (
        <EmptyState icon={Boxes} title="No services yet" action={publishButton}>
          Publish your first API: paste its OpenAPI document or give its URL, or an MCP server's, and preview the tools it makes.
        </EmptyState>
      ) : null}
      {services.data && services.data.length > 0 ? (
        <TableWrap label="Services">
          <table>
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Kind</th>
                <th scope="col">Visibility</th>
                <th scope="col">Tools</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {services.data.map((s) => (
                <tr key={s.id}>
                  <td data-label="Service">
                    <Link href={`/services/${s.id}`}>{s.name}</Link>
                    {s.summary ? <div className="muted">{s.summary}</div> : null}
                  </td>
                  <td data-label="Kind">
                    {s.service_type === "mcp_server" ? "MCP server" : s.service_type === "api" ? "API" : "built-in"}
                  </td>
                  <td data-label="Visibility">
                    <Badge value={s.visibility} />
                  </td>
                  <td data-label="Tools" className="number">
                    {s.tool_count}
                  </td>
                  <td data-label="Status">
                    <Badge value={s.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </Page>
  );
}
