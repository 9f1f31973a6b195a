/**
 * What a webhook may be: an `https://` URL (plain http only with WEBHOOKS_ALLOW_HTTP, for test set-ups)
 * whose host resolves to public addresses only (or ones WEBHOOKS_OUTBOUND_ALLOW names), checked here at
 * registration and PATCH and again on every attempt by the dialer; a non-empty set of the spec's events;
 * a short description. Each refusal is INVALID_ARGUMENT naming the field.
 */
import { invalidArgument } from "@toolport/kit/errors";
import { type AddressPolicy, checkOutboundUrl } from "@toolport/kit/outbound";
import { EVENT_NAMES } from "./events.js";

const bad = (field: string, reason: string, message: string) =>
  invalidArgument(reason, `${field}: ${message}`, { details: { field } });

export async function checkUrl(raw: string, options: { allowHttp: boolean; policy: AddressPolicy }): Promise<string> {
  const url = await checkOutboundUrl(raw, {
    policy: options.policy,
    protocols: options.allowHttp ? ["https:", "http:"] : ["https:"],
    whyPublic: "webhooks are delivered to public addresses only",
  });
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
