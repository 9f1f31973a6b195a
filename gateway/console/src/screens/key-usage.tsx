/**
 * One key: its permissions (the allow-lists in their both-must-match meaning, with the tools they let
 * through, from the gateway) and its usage over 7, 30 or 90 days (`GET /v1/api-keys/{key_id}/usage`): the
 * totals, calls and success rate per day (and the median duration) as bar charts, and the most called tools.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, cents, ErrorNote, Field, Loading, Page, TableWrap, When } from "../ui/index";
import { agentTypeLabel } from "../ui/keys-agent";
import { type Bar, ColumnChart, RankChart } from "../ui/keys-chart";
import { clientHost } from "../ui/keys-grants";
import { allowListMeaning, CallableTools, isExpired, permissionSummary } from "../ui/keys-permissions";

type Usage = components["schemas"]["ApiKeyUsage"];
type ApiKey = components["schemas"]["ApiKey"];
/** One UTC date the window touches, oldest first, days without calls included. */
type DailyUsage = Usage["daily"][number];

const WINDOWS = [7, 30, 90] as const;

const percent = (rate: number | null) => (rate === null ? "no calls" : `${Math.round(rate * 1000) / 10}%`);
const seconds = (s: number | null) => (s === null ? "none" : s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(2)} s`);
const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

export default function KeyUsage({ keyId }: { keyId: string }) {
  const { api } = useSession();
  const [days, setDays] = useState<number>(30);
  const usage = useQuery({
    queryKey: ["key-usage", keyId, days],
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.GET("/v1/api-keys/{key_id}/usage", { params: { path: { key_id: keyId }, query: { days } } })),
  });
  const data = usage.data;

  return (
    <Page
      title={data ? `Usage of ${data.key.name}` : "Key usage"}
      actions={
        <>
          <Link href={`/activity?key_id=${encodeURIComponent(keyId)}`}>This key's calls</Link> <Link href="/keys">All keys</Link>
        </>
      }
    >
      <div className="usage-controls">
        <Field label="Window">
          {(props) => (
            <select {...props} value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {WINDOWS.map((d) => (
                <option key={d} value={d}>
                  Last {d} days
                </option>
              ))}
            </select>
          )}
        </Field>
        {usage.isFetching && data ? <Loading what="Updating" /> : null}
      </div>
      {usage.isPending ? <Loading what="Loading the usage" /> : null}
      <ErrorNote error={usage.error} />
      {data ? <UsageView usage={data} /> : null}
    </Page>
  );
}

/**
 * The key as the list shows it (the usage answer does not carry the permissions). A key of the person's
 * in another organization than the console's (an OAuth grant, which the keys screen lists whatever the
 * organization) is found among all the person's keys.
 */
function KeyPermissions({ keyId }: { keyId: string }) {
  const { api, orgId } = useSession();
  const keys = useQuery({
    queryKey: ["api-keys", orgId, true],
    queryFn: () => unwrap(api.GET("/v1/api-keys", { params: { query: { organization_id: orgId, include_revoked: true } } })),
  });
  const inOrganization = keys.data?.find((k) => k.id === keyId);
  const mine = useQuery({
    queryKey: ["api-keys", "of-account", true],
    enabled: keys.isSuccess && !inOrganization,
    queryFn: () => unwrap(api.GET("/v1/api-keys", { params: { query: { include_revoked: true } } })),
  });
  const key: ApiKey | undefined = inOrganization ?? mine.data?.find((k) => k.id === keyId);
  if (!key) return <ErrorNote error={keys.error ?? mine.error} />;
  const p = key.permissions;
  const ended = key.revoked_at !== null || isExpired(key);
  return (
    <section aria-labelledby="key-permissions">
      <h2 id="key-permissions">Permissions</h2>
      <p>
        {key.console_key === "left_over" ? <Badge value="left_over" label="left-over console key" /> : null}
        {key.console_key === "session" ? <Badge value="console" label="console key of a sign-in" /> : null}
        {key.oauth_client_id ? <Badge value="oauth" label={`OAuth grant to ${clientHost(key.oauth_client_id)}`} /> : null}
        {key.revoked_at ? <Badge value="revoked" /> : isExpired(key) ? <Badge value="expired" /> : null}{" "}
        <span data-testid="key-permissions">{permissionSummary(p)}</span>
        {p ? ` ${allowListMeaning(p.allowed_tools, p.allowed_services)}` : null}
      </p>
      {p && !ended && (p.allowed_tools !== null || p.allowed_services !== null) ? (
        <CallableTools tools={p.allowed_tools} services={p.allowed_services} />
      ) : null}
    </section>
  );
}

function UsageView({ usage }: { usage: Usage }) {
  const { key } = usage;
  return (
    <>
      <p className="muted">
        {key.agent_name ?? "No agent name"} ({agentTypeLabel(key.agent_type)}){key.purpose ? `: ${key.purpose}` : ""}. Created{" "}
        <When at={key.created_at} />.
      </p>
      <KeyPermissions keyId={key.id} />
      <section aria-labelledby="usage-totals">
        <h2 id="usage-totals">Last {plural(usage.window_days, "day", "days")}</h2>
        <dl className="totals">
          <div>
            <dt>Calls</dt>
            <dd data-testid="usage-calls">{usage.calls.toLocaleString("en-US")}</dd>
          </div>
          <div>
            <dt>Refused</dt>
            <dd data-testid="usage-refused">{usage.refused.toLocaleString("en-US")}</dd>
          </div>
          <div>
            <dt>Success rate</dt>
            <dd data-testid="usage-success-rate">{percent(usage.success_rate)}</dd>
          </div>
          <div>
            <dt>Median duration (p50)</dt>
            <dd>{seconds(usage.p50_seconds)}</dd>
          </div>
          <div>
            <dt>Paid calls</dt>
            <dd>{usage.paid_calls.toLocaleString("en-US")}</dd>
          </div>
          <div>
            <dt>Spent</dt>
            <dd>{cents(usage.spent_cents)}</dd>
          </div>
        </dl>
        <p className="muted" data-testid="usage-first-last">
          {usage.first_call_at ? (
            <>
              First call <When at={usage.first_call_at} />, last call <When at={usage.last_call_at} />.
            </>
          ) : usage.refused > 0 ? (
            "No call has run in this window: every call made with this key was refused (reasons below)."
          ) : (
            "No call made with this key in this window yet."
          )}
        </p>
        <Refusals usage={usage} />
      </section>
      <section aria-labelledby="usage-daily">
        <h2 id="usage-daily">Per day</h2>
        <p className="muted">Each UTC date the window touches: the first and the last are partial days.</p>
        <DailyCharts daily={usage.daily} windowDays={usage.window_days} />
      </section>
      <section aria-labelledby="usage-tools">
        <h2 id="usage-tools">Top tools</h2>
        <TopTools usage={usage} />
      </section>
    </>
  );
}

/** Refused calls did not run, so they are not in the calls above: how many, and why. */
function Refusals({ usage }: { usage: Usage }) {
  if (usage.refused === 0) return null;
  return (
    <div data-testid="usage-refusals">
      <p>
        {plural(usage.refused, "call was", "calls were")} refused before running:{" "}
        {usage.refused_reasons.map((r, i) => (
          <span key={r.reason}>
            {i > 0 ? ", " : ""}
            <code>{r.reason}</code> ({r.calls.toLocaleString("en-US")})
          </span>
        ))}
        . <Link href={`/activity?key_id=${encodeURIComponent(usage.key.id)}&status=refused`}>See them in Activity</Link>.
      </p>
    </div>
  );
}

function DailyCharts({ daily, windowDays }: { daily: DailyUsage[]; windowDays: number }) {
  const total = daily.reduce((sum, d) => sum + d.calls, 0);
  const busiest = daily.reduce<DailyUsage | null>((best, d) => (best === null || d.calls > best.calls ? d : best), null);
  const withCalls = daily.filter((d) => d.calls > 0);
  const calls: Bar[] = daily.map((d) => ({ label: d.date, value: d.calls, text: plural(d.calls, "call", "calls") }));
  const rates: Bar[] = daily.map((d) => ({
    label: d.date,
    value: d.calls > 0 ? d.successes / d.calls : null,
    text: d.calls > 0 ? `${percent(d.successes / d.calls)} (${d.successes} of ${d.calls})` : "no calls",
  }));
  const p50s: Bar[] = daily.map((d) => ({ label: d.date, value: d.p50_seconds, text: seconds(d.p50_seconds) }));
  const lowest = withCalls.reduce<DailyUsage | null>(
    (low, d) => (low === null || d.successes / d.calls < low.successes / low.calls ? d : low),
    null,
  );
  if (total === 0) {
    return (
      <div className="empty-state" data-testid="usage-empty">
        <p>No calls in the last {plural(windowDays, "day", "days")}, so there is nothing to chart yet.</p>
        <p>
          Make a first call with this key: give it to an agent, or open the <Link href="/catalog">catalog</Link>, pick a tool and
          run it. Calls made with the key show here and in <Link href="/activity">Activity</Link>.
        </p>
      </div>
    );
  }
  return (
    <div className="chart-grid">
      <ColumnChart
        title="Calls per day"
        summary={
          total === 0
            ? `no calls in the last ${plural(windowDays, "day", "days")}`
            : `${plural(total, "call", "calls")} in the last ${plural(windowDays, "day", "days")}, most on ${busiest?.date} (${busiest?.calls})`
        }
        bars={calls}
        valueHeading="Calls"
      />
      <ColumnChart
        title="Success rate per day"
        summary={
          lowest
            ? `lowest ${percent(lowest.successes / lowest.calls)} on ${lowest.date}, over ${plural(withCalls.length, "day", "days")} with calls`
            : "no calls to rate"
        }
        bars={rates}
        max={1}
        maxText="100%"
        valueHeading="Success rate"
      />
      <ColumnChart
        title="Median duration per day (p50)"
        summary={withCalls.length ? `over ${plural(withCalls.length, "day", "days")} with calls` : "no calls to time"}
        bars={p50s}
        valueHeading="p50"
      />
    </div>
  );
}

function TopTools({ usage }: { usage: Usage }) {
  if (usage.top_tools.length === 0) return <p className="muted">No calls in this window.</p>;
  return (
    <>
      <RankChart
        title="Calls by tool"
        bars={usage.top_tools.map((t) => ({ label: t.tool_name, value: t.calls, text: plural(t.calls, "call", "calls") }))}
      />
      <TableWrap label="Top tools">
        <table>
          <caption className="visually-hidden">The most called tools</caption>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Service</th>
              <th scope="col">Calls</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Success rate</th>
            </tr>
          </thead>
          <tbody>
            {usage.top_tools.map((t) => (
              <tr key={t.tool_id}>
                <td>
                  <Link href={`/tools/${t.tool_id}`}>{t.tool_name}</Link>
                </td>
                <td>{t.service_name}</td>
                <td>{t.calls.toLocaleString("en-US")}</td>
                <td>{t.successes.toLocaleString("en-US")}</td>
                <td>{percent(t.calls > 0 ? t.successes / t.calls : null)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}
