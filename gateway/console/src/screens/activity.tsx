/**
 * Activity: the call log (`GET /v1/activity`), newest first, a page at a time. Who called what, when, the
 * outcome (refused calls with their reason), duration, cost, and the stored result of each call the person
 * made. Filters: key, tool, status, dates; `?key_id=` opens it on one key (the key usage page links here).
 * A plain table whose cells carry `data-label` (the column's name), so a stylesheet can lay rows out as
 * cards on a phone.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useSearch } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { StoredResult } from "../ui/activity-result";
import { Badge, cents, ErrorNote, Field, Loading, Page, TableWrap, When } from "../ui/index";

type Call = components["schemas"]["ActivityCall"];

const STATUSES = [
  { value: "", label: "Any outcome" },
  { value: "success", label: "Succeeded" },
  { value: "error", label: "Failed" },
  { value: "refused", label: "Refused" },
] as const;

const PAGE = 25;

/** A date input's value (a UTC day) as the start of that day, or of the next one for `until`. */
const dayStart = (day: string, next = false) =>
  day ? new Date(Date.parse(`${day}T00:00:00Z`) + (next ? 86_400_000 : 0)).toISOString() : undefined;

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);

export default function Activity() {
  const { api, orgId } = useSession();
  const params = new URLSearchParams(useSearch());
  const [keyId, setKeyId] = useState(params.get("key_id") ?? "");
  const [toolId, setToolId] = useState(params.get("tool_id") ?? "");
  const [status, setStatus] = useState(params.get("status") ?? "");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  /** Cursors of the pages before this one (the first page has none). */
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [opened, setOpened] = useState<string | null>(null);

  const filter = (set: (v: string) => void) => (v: string) => {
    set(v);
    setCursors([]);
    setOpened(null);
  };
  const keys = useQuery({
    queryKey: ["api-keys", orgId, true],
    queryFn: () => unwrap(api.GET("/v1/api-keys", { params: { query: { organization_id: orgId, include_revoked: true } } })),
  });
  const query = {
    key_id: keyId || undefined,
    tool_id: toolId || undefined,
    status: (status || undefined) as "success" | "error" | "refused" | undefined,
    since: dayStart(from),
    until: dayStart(to, true),
    limit: PAGE,
    cursor,
  };
  const page = useQuery({
    queryKey: ["activity", orgId, query],
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.GET("/v1/activity", { params: { query } })),
  });
  const calls = page.data?.calls ?? [];
  // The tool filter offers every tool seen on the pages read so far (the log names no other list).
  const [tools, setTools] = useState<Map<string, string>>(() => new Map(toolId ? [[toolId, toolId]] : []));
  useEffect(() => {
    const fresh = (page.data?.calls ?? []).filter((c) => tools.get(c.tool.id) !== c.tool.name);
    if (fresh.length > 0) setTools(new Map([...tools, ...fresh.map((c): [string, string] => [c.tool.id, c.tool.name])]));
  }, [page.data, tools]);
  const filtered = Boolean(keyId || toolId || status || from || to);

  return (
    <Page title="Activity" actions={<Link href="/keys">API keys</Link>}>
      <p className="muted">Every tool call in this organization you may see, newest first, refused calls included.</p>
      <form className="activity-filters" aria-label="Filter the calls" onSubmit={(e) => e.preventDefault()}>
        <Field label="Key">
          {(props) => (
            <select {...props} value={keyId} onChange={(e) => filter(setKeyId)(e.target.value)}>
              <option value="">Any key</option>
              {(keys.data ?? []).map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name}
                </option>
              ))}
              {keyId && !keys.data?.some((k) => k.id === keyId) ? <option value={keyId}>{keyId}</option> : null}
            </select>
          )}
        </Field>
        <Field label="Tool">
          {(props) => (
            <select {...props} value={toolId} onChange={(e) => filter(setToolId)(e.target.value)}>
              <option value="">Any tool</option>
              {[...tools].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Outcome">
          {(props) => (
            <select {...props} value={status} onChange={(e) => filter(setStatus)(e.target.value)}>
              {STATUSES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="From (UTC day)">
          {(props) => <input {...props} type="date" value={from} onChange={(e) => filter(setFrom)(e.target.value)} />}
        </Field>
        <Field label="To (UTC day)">
          {(props) => <input {...props} type="date" value={to} onChange={(e) => filter(setTo)(e.target.value)} />}
        </Field>
      </form>
      {page.isPending ? <Loading what="Loading the calls" /> : null}
      <ErrorNote error={page.error} />
      {page.data && calls.length === 0 ? (
        <div className="empty-state" data-testid="activity-empty">
          {filtered ? (
            <p>No call matches these filters.</p>
          ) : (
            <>
              <p>No calls yet.</p>
              <p>
                Make a first call: open the <Link href="/catalog">catalog</Link>, pick a tool and run it, or give an agent a key
                from <Link href="/keys">API keys</Link>. Each call shows here, refused ones too.
              </p>
            </>
          )}
        </div>
      ) : null}
      {calls.length > 0 ? <CallsTable calls={calls} opened={opened} onOpen={setOpened} /> : null}
      {opened ? (
        <section aria-labelledby="opened-result">
          <h2 id="opened-result">Stored result</h2>
          <StoredResult executionId={opened} />
        </section>
      ) : null}
      <nav className="pager" aria-label="Pages of calls">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer calls
        </button>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
        >
          Older calls
        </button>
      </nav>
    </Page>
  );
}

function CallsTable({ calls, opened, onOpen }: { calls: Call[]; opened: string | null; onOpen: (id: string) => void }) {
  return (
    <TableWrap label="Calls">
      <table className="activity-table">
        <caption className="visually-hidden">Tool calls, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Key</th>
            <th scope="col">Tool</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
            <th scope="col">Cost</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((c) => (
            <tr key={c.id} data-testid="activity-row" data-status={c.status}>
              <td data-label="When">
                <When at={c.at} />
              </td>
              <td data-label="Key">{c.key ? (c.key.name ?? c.key.id) : <span className="muted">signed in</span>}</td>
              <td data-label="Tool">
                <Link href={`/tools/${c.tool.id}`}>{c.tool.name}</Link> <span className="muted">({c.service.name})</span>
              </td>
              <td data-label="Outcome">
                <Badge
                  value={c.status === "success" ? "succeeded" : c.status === "error" ? "failed" : "pending"}
                  label={c.status === "success" ? "succeeded" : c.status === "error" ? "failed" : "refused"}
                />
                {c.reason ? <code className="activity-reason"> {c.reason}</code> : null}
                {c.message && c.status !== "success" ? <span className="muted activity-message"> {c.message}</span> : null}
              </td>
              <td data-label="Duration">{c.status === "refused" ? "" : duration(c.duration_ms)}</td>
              <td data-label="Cost">{cents(c.cost_cents)}</td>
              <td data-label="Result">
                {c.execution_id && c.result_url ? (
                  <button
                    type="button"
                    aria-pressed={opened === c.execution_id}
                    aria-label={`Open the result of ${c.tool.name}`}
                    onClick={() => onOpen(c.execution_id!)}
                  >
                    Open
                  </button>
                ) : (
                  <span className="muted">{c.status === "refused" ? "did not run" : "not yours to open"}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
