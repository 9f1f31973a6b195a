/**
 * DNS rebinding protection for /mcp (MCP security best practices, "Local MCP server compromise"; the
 * transports' security warning). A web page the person opens can point a name it owns at 127.0.0.1 and
 * post to this server from the browser: the request then carries that name in `Host` and the page's
 * origin in `Origin`. So `Host` must name this server, and an `Origin`, when a browser sent one, must be
 * one this server allows. A refused request gets 403 before anything runs. Clients that are not browsers
 * (assistants, SDK clients) send no `Origin` and a `Host` that is the address they dialled.
 *
 * Which names `Host` may carry: the loopback names when the server listens on a loopback interface,
 * the host of MCP_PUBLIC_URL (the address clients are given), and MCP_ALLOWED_HOSTS. An IP address is
 * always served: rebinding needs a name the attacker controls, and a page whose origin is an address
 * was served from that address (a pod or Service IP in Kubernetes, probes, clients that dial an IP). A
 * server listening on every interface with no names configured cannot know them and checks `Host`
 * against nothing (it says so at start); the `Origin` rule still holds.
 *
 * Which origins: MCP_ALLOWED_ORIGINS, plus any origin on a name `Host` may carry (a page served
 * by this deployment itself).
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const LOOPBACK_INTERFACES = new Set(["127.0.0.1", "::1", "localhost", "[::1]"]);

export interface OriginPolicy {
  /** Lowercase host names (no port) `Host` may carry; null: not checked. */
  hosts: ReadonlySet<string> | null;
  /** Origins (`scheme://host[:port]`, as URL.origin writes them) allowed beyond those on `hosts`. */
  origins: ReadonlySet<string>;
}

export interface OriginSettings {
  /** The interface the server listens on (HOST). */
  listenHost: string;
  /** MCP_PUBLIC_URL, when set. */
  publicUrl?: string | undefined;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

export function originPolicy(settings: OriginSettings): OriginPolicy {
  const hosts = new Set(settings.allowedHosts.map((h) => h.trim().toLowerCase()).filter(Boolean));
  if (LOOPBACK_INTERFACES.has(settings.listenHost.trim().toLowerCase())) for (const name of LOOPBACK_NAMES) hosts.add(name);
  if (settings.publicUrl) hosts.add(new URL(settings.publicUrl).hostname.toLowerCase());
  const origins = new Set(settings.allowedOrigins.map((o) => new URL(o.trim()).origin));
  return { hosts: hosts.size > 0 ? hosts : null, origins };
}

/** The host name (no port) of a `Host` header, lowercase; undefined when it is not one. */
function hostName(header: string | undefined): string | undefined {
  // A name or an address and a port, nothing a URL parser would read as user info or a path.
  if (!header || !/^[A-Za-z0-9.\-[\]:]+$/.test(header)) return undefined;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** An IPv4 or IPv6 address (URL.hostname writes IPv6 in brackets). */
function isAddress(name: string): boolean {
  return isIP(name.replace(/^\[(.*)\]$/, "$1")) !== 0;
}

/** Why the request must be refused (403), or undefined when it may go on. */
export function rebindingRefusal(req: IncomingMessage, policy: OriginPolicy): string | undefined {
  const host = hostName(req.headers.host);
  if (policy.hosts && (host === undefined || !(policy.hosts.has(host) || isAddress(host)))) {
    return `Host ${JSON.stringify(req.headers.host ?? "")} is not a name of this MCP server (MCP_ALLOWED_HOSTS)`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {}
  if (parsed && (parsed.protocol === "http:" || parsed.protocol === "https:")) {
    if (policy.origins.has(parsed.origin)) return undefined;
    const name = parsed.hostname.toLowerCase();
    if (policy.hosts ? policy.hosts.has(name) || (isAddress(name) && name === host) : name === host) return undefined;
  }
  return `Origin ${JSON.stringify(origin)} may not call this MCP server (MCP_ALLOWED_ORIGINS)`;
}
