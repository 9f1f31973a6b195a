/**
 * The checks a URL a caller registers (a webhook, a site to crawl) goes through before anything dials
 * it: a URL of an accepted scheme, without credentials, at most 2048 characters, whose host resolves to
 * addresses the policy accepts. Each refusal is INVALID_ARGUMENT naming the field: `invalid_url`,
 * `url_not_allowed` (a private or internal address) or `url_unresolvable`. The dialer checks again at
 * every request, on the address it dials.
 */
import { invalidArgument } from "../errors.js";
import type { AddressPolicy } from "./address-policy.js";
import { findRefusal } from "./guarded.js";

export async function checkOutboundUrl(
  raw: string,
  options: { policy: AddressPolicy; protocols: string[]; field?: string; whyPublic: string },
): Promise<URL> {
  const field = options.field ?? "url";
  const bad = (reason: string, message: string) => invalidArgument(reason, `${field}: ${message}`, { details: { field } });
  const text = raw.trim();
  if (text.length === 0) throw bad("invalid_url", "is required");
  if (text.length > 2048) throw bad("invalid_url", "must be at most 2048 characters");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("invalid_url", "is not a URL");
  }
  if (!options.protocols.includes(url.protocol))
    throw bad("invalid_url", `must begin with ${options.protocols.map((p) => `${p}//`).join(" or ")}`);
  if (url.username || url.password) throw bad("invalid_url", "must not carry a user name or password");
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  try {
    await options.policy.resolve(url.hostname, port);
  } catch (err) {
    const refused = findRefusal(err);
    if (refused) throw bad("url_not_allowed", `${refused.message}; ${options.whyPublic}`);
    throw bad("url_unresolvable", `the host ${url.hostname} does not resolve`);
  }
  return url;
}
