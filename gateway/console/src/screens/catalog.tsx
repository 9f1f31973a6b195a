/**
 * The catalog: search the tools the person can see (the query lives in the address, `?q=`, so reload and
 * back keep it): `GET /v1/tools/search`, which the spec opens to API keys, so with the sign-in's console key
 * (api.ts). That finds their organization's private tools beside the public ones, with readiness for
 * them, and is limited per account rather than per address. Each result shows its service, a
 * readiness badge (with the way to connect the service when a credential is missing) and its 30-day
 * reliability. Without a query: recommended tools and the public services, a page at a time ("More
 * services" follows the list's `Link` header), never every service at once: the catalog may hold thousands.
 * A result's service name is read by id (once per service, kept long; ui/catalog-services.ts).
 */
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { type components, unwrap, unwrapPage } from "../api";
import { useSession } from "../session";
import { rememberServices, useServiceNames } from "../ui/catalog-services";
import { Badge, ErrorNote, Field, Loading, Page, When } from "../ui/index";

type Tool = components["schemas"]["Tool"];
type Reliability = NonNullable<Tool["reliability"]>;
type Service = components["schemas"]["Service"];

export default function Catalog() {
  const [, navigate] = useLocation();
  const q = new URLSearchParams(useSearch()).get("q")?.trim() ?? "";
  const [draft, setDraft] = useState(q);
  // Back and forward change the address: the box follows.
  useEffect(() => setDraft(q), [q]);

  function submit(e: FormEvent) {
    e.preventDefault();
    const next = draft.trim();
    navigate(next ? `/catalog?q=${encodeURIComponent(next)}` : "/catalog");
  }

  return (
    <Page title="Catalog">
      <search>
        <form onSubmit={submit} className="row search-form">
          <Field label="Search tools" hint="What you want to do, or a tool's name, e.g. “slugify a title”.">
            {(p) => <input {...p} type="search" value={draft} onChange={(e) => setDraft(e.target.value)} maxLength={500} />}
          </Field>
          <button type="submit">Search</button>
        </form>
      </search>
      {q ? <Results q={q} /> : <Discover />}
    </Page>
  );
}

/** Services shown per page in Discover (the list route's own default is 100). */
const SERVICES_PAGE = 12;

function Results({ q }: { q: string }) {
  const { withKey, orgId } = useSession();
  const search = useQuery({
    queryKey: ["tool-search", orgId, q],
    queryFn: () => withKey((c) => c.GET("/v1/tools/search", { params: { query: { query: q, limit: 20 } } })),
  });
  const names = useServiceNames(search.data?.map((t) => t.service_id) ?? []);
  return (
    <section aria-labelledby="results-title">
      <h2 id="results-title">Results for “{q}”</h2>
      {search.isPending ? <Loading what="Searching" /> : null}
      <ErrorNote error={search.error} />
      {search.data?.length === 0 ? (
        <p role="status">No tools match “{q}”. Try other words, or what the tool does rather than its name.</p>
      ) : null}
      {search.data && search.data.length > 0 ? (
        <>
          <p className="visually-hidden" role="status">
            {search.data.length} tools found
          </p>
          <ul className="cards" aria-label="Tools">
            {search.data.map((t) => (
              <ToolCard key={t.id} tool={t} serviceName={names.get(t.service_id)} />
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

function percent(rate: number): string {
  return `${Math.round(rate * 1000) / 10}%`;
}

function seconds(s: number): string {
  return s < 1 ? `${Math.round(s * 1000)} ms` : `${Math.round(s * 100) / 100} s`;
}

function ReliabilityLine({ r }: { r: Reliability | null }) {
  if (!r) return <p className="stats">Not called in the last 30 days.</p>;
  return (
    <dl className="stats reliability">
      <div>
        <dt>Success</dt>
        <dd>
          {r.success_rate_30d === null ? "too few calls to tell" : percent(r.success_rate_30d)} ({r.calls_30d} call
          {r.calls_30d === 1 ? "" : "s"} in {r.window_days} days)
        </dd>
      </div>
      {r.p50_seconds !== null ? (
        <div>
          <dt>p50</dt>
          <dd>{seconds(r.p50_seconds)}</dd>
        </div>
      ) : null}
      <div>
        <dt>Last failure</dt>
        <dd>
          {r.last_failure_at ? (
            <>
              <When at={r.last_failure_at} />
              {r.last_error_class ? ` (${r.last_error_class}${r.last_error_type ? `: ${r.last_error_type}` : ""})` : ""}
            </>
          ) : (
            "none"
          )}
        </dd>
      </div>
      {r.flagged ? (
        <div>
          <dt className="visually-hidden">Flag</dt>
          <dd>
            <Badge value="degraded" label="low success rate" />
          </dd>
        </div>
      ) : null}
    </dl>
  );
}

function ToolCard({ tool, serviceName }: { tool: Tool; serviceName: string | undefined }) {
  return (
    <li className="card tool-card">
      <div className="card-head">
        <h3>
          <Link href={`/tools/${tool.id}`}>{tool.name}</Link>
        </h3>
        <Badge value={tool.readiness} />
        {tool.deprecated ? <Badge value="deprecated" /> : null}
      </div>
      <p className="muted card-service">{serviceName ?? "Service"}</p>
      <p className="card-description">{tool.description}</p>
      {tool.deprecated && tool.deprecation_message ? <p className="muted">Deprecated: {tool.deprecation_message}</p> : null}
      <ReliabilityLine r={tool.reliability} />
      {tool.readiness === "needs_credential" ? (
        <p>
          <Link href={`/services/${tool.service_id}/connect`}>Connect {serviceName ?? "the service"}</Link> to call it.
        </p>
      ) : null}
    </li>
  );
}

function Discover() {
  const { api, orgId } = useSession();
  const recommended = useQuery({
    queryKey: ["recommended", orgId],
    queryFn: () => unwrap(api.GET("/v1/tools/recommended", { params: { query: { limit: 6 } } })),
  });
  return (
    <>
      <section aria-labelledby="recommended-title">
        <h2 id="recommended-title">Recommended tools</h2>
        {recommended.isPending ? <Loading what="Loading recommendations" /> : null}
        <ErrorNote error={recommended.error} />
        {recommended.data?.length === 0 ? <p className="muted">No recommendations yet: search above.</p> : null}
        {recommended.data && recommended.data.length > 0 ? (
          <ul className="cards" aria-label="Recommended tools">
            {recommended.data.map((r) => (
              <li key={r.tool_id} className="card">
                <h3>
                  <Link href={`/tools/${r.tool_id}`}>{r.tool_name}</Link>
                </h3>
                {r.service_name ? <p className="muted card-service">{r.service_name}</p> : null}
                <p className="card-description">{r.description}</p>
                <p className="stats">{r.reason}</p>
              </li>
            ))}
          </ul>
        ) : null}
      </section>
      <Services />
    </>
  );
}

/**
 * The public services, a page at a time: "More services" reads the next page (the cursor of the last
 * answer's `Link` header) and moves the focus to the first service it added.
 */
function Services() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const list = useRef<HTMLUListElement>(null);
  const services = useInfiniteQuery({
    queryKey: ["public-services", SERVICES_PAGE],
    staleTime: 5 * 60_000,
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) => {
      const page = await unwrapPage(
        api.GET("/v1/services/public", { params: { query: { limit: SERVICES_PAGE, cursor: pageParam } } }),
      );
      rememberServices(queryClient, page.items);
      return page;
    },
    getNextPageParam: (last) => last.next,
  });
  const shown = services.data?.pages.flatMap((p) => p.items) ?? [];
  // After "More services": the index of the first service added, to move the focus to once it shows.
  const [focusFrom, setFocusFrom] = useState<number | null>(null);
  useEffect(() => {
    if (focusFrom === null || shown.length <= focusFrom) return;
    list.current?.querySelectorAll(":scope > li")[focusFrom]?.querySelector<HTMLElement>("a")?.focus();
    setFocusFrom(null);
  }, [focusFrom, shown.length]);

  function more() {
    // Not `disabled` while it loads: the button keeps the focus until it moves to the services added.
    if (services.isFetchingNextPage) return;
    setFocusFrom(shown.length);
    void services.fetchNextPage();
  }

  return (
    <section aria-labelledby="services-title">
      <h2 id="services-title">Services</h2>
      {services.isPending ? <Loading what="Loading services" /> : null}
      {shown.length > 0 ? (
        <>
          <ul className="cards service-cards" aria-label="Services" ref={list}>
            {shown.map((s) => (
              <ServiceCard key={s.id} service={s} />
            ))}
          </ul>
          <p className="muted" role="status" data-testid="services-shown">
            {shown.length} service{shown.length === 1 ? "" : "s"} shown{services.hasNextPage ? "; more remain" : ""}.
          </p>
        </>
      ) : null}
      {services.isSuccess && shown.length === 0 ? <p className="muted">No public services yet.</p> : null}
      <ErrorNote error={services.error} />
      {services.hasNextPage ? (
        <button
          type="button"
          className="button-secondary"
          aria-disabled={services.isFetchingNextPage || undefined}
          onClick={more}
        >
          {services.isFetchingNextPage ? "Loading…" : "More services"}
        </button>
      ) : null}
    </section>
  );
}

function ServiceCard({ service }: { service: Service }) {
  return (
    <li className="card">
      <div className="card-head">
        <h3>{service.name}</h3>
        {service.verification_tier !== "unverified" ? <Badge value={service.verification_tier} /> : null}
        {service.is_demo ? <Badge value="demo" label="sample data" /> : null}
        {service.status !== "active" ? <Badge value={service.status} /> : null}
      </div>
      <p className="card-description">{service.summary || service.description}</p>
      <p className="stats">
        <span>
          {service.tool_count} tool{service.tool_count === 1 ? "" : "s"}
        </span>
        <Link href={`/catalog?q=${encodeURIComponent(service.name)}`}>
          Search <span className="visually-hidden">{service.name}</span> tools
        </Link>
      </p>
    </li>
  );
}
