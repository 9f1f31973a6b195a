/**
 * What a webhook may be: an `https://` URL (plain http only with WEBHOOKS_ALLOW_HTTP, for test set-ups)
 * whose host resolves to public addresses only (or ones WEBHOOKS_OUTBOUND_ALLOW names), checked here at
 * registration and PATCH and again on every attempt by the dialer; a non-empty set of the spec's events;
 * a short description. Each refusal is INVALID_ARGUMENT naming the field.
 */
import { invalidArgument } from "@toolport/kit/errors";
import { type AddressPolicy, findRefusal } from "@toolport/kit/outbound";
import { EVENT_NAMES } from "./events.js";

const bad = (field: string, reason: string, message: string) =>
  invalidArgument(reason, `${field}: ${message}`, { details: { field } });

export async function checkUrl(raw: string, options: { allowHttp: boolean; policy: AddressPolicy }): Promise<string> {
  const text = raw.trim();
  if (text.length === 0) throw bad("url", "invalid_url", "is required");
  if (text.length > 2048) throw bad("url", "invalid_url", "must be at most 2048 characters");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("url", "invalid_url", "is not a URL");
  }
  if (url.protocol !== "https:" && !(options.allowHttp && url.protocol === "http:"))
    throw bad("url", "invalid_url", "must begin with https://");
  if (url.username || url.password) throw bad("url", "invalid_url", "must not carry a user name or password");
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  try {
    await options.policy.resolve(url.hostname, port);
  } catch (err) {
    const refused = findRefusal(err);
    if (refused) throw bad("url", "url_not_allowed", `${refused.message}; webhooks are delivered to public addresses only`);
    throw bad("url", "url_unresolvable", `the host ${url.hostname} does not resolve`);
  }
  return url.toString();
}

export function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw bad("events", "invalid_events", `must name at least one of ${EVENT_NAMES.join(", ")}`);
  const known = new Set<string>(EVENT_NAMES);
  for (const e of events) {
    if (!known.has(e)) throw bad("events", "invalid_events", `unknown event "${e}"; known: ${EVENT_NAMES.join(", ")}`);
  }
  return [...new Set(events)];
}

export function checkDescription(description: string): string {
  if (description.length > 500) throw bad("description", "invalid_request", "must be at most 500 characters");
  return description;
}
