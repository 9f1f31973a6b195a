/**
 * A key's allow-lists in their one meaning, both must match: a tool is callable when it is in
 * `allowed_tools` (or that list is null) and its service is in `allowed_services` (or that list is null).
 * The summary a key list and a key page show, and the live set of callable tools the gateway computes
 * (`POST /v1/api-keys/callable-tools`) for a pair of lists, with its warnings.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { cents, ErrorNote } from "./index";

type Permissions = components["schemas"]["ApiKeyPermissions"];

/** A key whose `expires_at` has passed (a console key ends with its sign-in's token). */
export const isExpired = (key: { expires_at: string | null }) =>
  key.expires_at !== null && Date.parse(key.expires_at) <= Date.now();

const count = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The allow-lists in a few words: "Tools: 2 listed, within 1 service". */
export function allowListSummary(tools: string[] | null, services: string[] | null): string {
  if (tools !== null && tools.length === 0) return "Tools: none (an empty list of tools allows nothing)";
  if (services !== null && services.length === 0) return "Tools: none (an empty list of services allows nothing)";
  if (tools === null && services === null) return "Tools: every tool";
  if (services === null) return `Tools: ${tools!.length} listed, in any service`;
  if (tools === null) return `Tools: every tool of ${count(services.length, "listed service", "listed services")}`;
  return `Tools: ${tools.length} listed, within ${count(services.length, "service", "services")}`;
}

/** The allow-lists as a sentence: what a call must match. */
export function allowListMeaning(tools: string[] | null, services: string[] | null): string {
  if (tools === null && services === null) return "Calls any tool.";
  if (services === null) return "Calls only the tools listed.";
  if (tools === null) return "Calls only tools of the services listed.";
  return "Calls only tools listed that are also in the listed services.";
}

/** A key's permissions in one line: the allow-lists, then the caps and the confirmation flag. */
export function permissionSummary(p: Permissions | null): string {
  if (!p) return "Unrestricted: every tool, no caps.";
  const parts = [allowListSummary(p.allowed_tools, p.allowed_services)];
  if (p.max_cost_per_call_cents !== null) parts.push(`${cents(p.max_cost_per_call_cents)} a call at most`);
  if (p.daily_spend_limit_cents !== null) parts.push(`${cents(p.daily_spend_limit_cents)} a day at most`);
  if (p.require_confirmation) parts.push("confirmation before writes, sends, spends and deletes");
  return `${parts.join("; ")}.`;
}

/** `value` once it has stayed the same for `ms`, and whether a newer value is still waiting. */
function useSettled<T>(value: T, ms: number): [T, boolean] {
  const text = JSON.stringify(value);
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(text), ms);
    return () => clearTimeout(timer);
  }, [text, ms]);
  return [JSON.parse(settled) as T, settled !== text];
}

const SHOWN = 10;

/**
 * What a key with these allow-lists can call, from the gateway: the count, the first tools (name and
 * service), and a warning when the pair allows nothing. `settleMs` waits for the picking to pause; `who`
 * names what gets the lists ("key", or "assistant" on the consent page, whose grant is a key).
 */
export function CallableTools({
  tools,
  services,
  settleMs = 0,
  who = "key",
}: {
  tools: string[] | null;
  services: string[] | null;
  settleMs?: number;
  who?: string;
}) {
  const { api, orgId } = useSession();
  const [lists, waiting] = useSettled({ tools, services }, settleMs);
  const callable = useQuery({
    queryKey: ["callable-tools", orgId, lists.services, lists.tools],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap(
        api.POST("/v1/api-keys/callable-tools", {
          body: { allowed_services: lists.services, allowed_tools: lists.tools, limit: SHOWN },
        }),
      ),
  });
  const data = callable.data;
  const everything = lists.tools === null && lists.services === null;
  const busy = waiting || callable.isFetching;
  return (
    <div className="callable" data-testid="callable" aria-busy={busy}>
      <p role="status">
        {!data ? (
          callable.isError ? (
            `The tools this ${who} could call could not be counted.`
          ) : (
            `Counting the tools this ${who} could call…`
          )
        ) : everything ? (
          <>
            Nothing picked: the {who} may call every tool, <strong data-testid="callable-count">{data.count}</strong> now.
          </>
        ) : (
          <>
            The {who} may call <strong data-testid="callable-count">{data.count}</strong> {data.count === 1 ? "tool" : "tools"}
            {data.count > 0 ? ":" : "."}
          </>
        )}
      </p>
      {data && !everything && data.count === 0 ? (
        <div className="note note-warning" role="alert" data-testid="callable-nothing">
          <p>
            <strong>This {who} would be able to call nothing.</strong> A tool must be one of the tools picked and in one of the
            services picked.
          </p>
          {data.warnings.length > 0 ? (
            <ul>
              {data.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      {data && !everything && data.count > 0 ? (
        <>
          <ul className="callable-list" aria-label={`Tools the ${who} may call`}>
            {data.tools.map((t) => (
              <li key={t.id}>
                <Link href={`/tools/${t.id}`}>{t.name}</Link> <span className="muted">in {t.service_name}</span>
              </li>
            ))}
          </ul>
          {data.count > data.tools.length ? (
            <p className="muted">and {count(data.count - data.tools.length, "more", "more")}.</p>
          ) : null}
          {data.warnings.length > 0 ? (
            <div className="note note-warning" data-testid="callable-warnings">
              <ul>
                {data.warnings.map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            </div>
          ) : null}
        </>
      ) : null}
      <ErrorNote error={callable.error} />
    </div>
  );
}
