/**
 * Outbound address policy (SSRF guard), shared by every service that dials addresses a caller chose
 * (execution: upstream calls; catalog: OpenAPI document URLs and MCP servers at import). Every
 * connection is checked on the address actually dialled: the host is resolved here (every A/AAAA record must be acceptable), and the
 * socket is opened to that checked address, so a DNS answer cannot change between check and connect
 * (rebinding). Literal IPs in any form the URL parser accepts (decimal `2130706433`, octal `0177.0.0.1`,
 * hex `0x7f.1`, IPv4-mapped IPv6 `[::ffff:127.0.0.1]`) arrive here already normalised by WHATWG URL
 * parsing and are checked the same way. Redirect hops open new connections and pass through here again.
 *
 * Refused: everything but global unicast. IPv4: unspecified, broadcast, multicast, link-local (cloud
 * metadata 169.254.169.254), loopback, CGNAT 100.64/10, private (RFC 1918), reserved/documentation/
 * benchmarking, AS112, AMT. IPv6: anything outside 2000::/3 (loopback, unspecified, link-local,
 * unique-local fc00::/7 incl. fd00:ec2::254, multicast, IPv4-compatible, site-local) and the special
 * ranges inside it (Teredo, 6to4, NAT64 64:ff9b::/96, ORCHID, documentation...). IPv4-mapped and
 * IPv4-embedding forms are judged by their IPv4 address. Uses ipaddr.js (>= 2.5).
 *
 * Operators allow local hosts with an allow list (EXECUTION_OUTBOUND_ALLOW, CATALOG_OUTBOUND_ALLOW): a
 * comma-separated list of host names, IPs or CIDR ranges, each optionally with a port (`api.internal`,
 * `10.1.2.0/24`, `127.0.0.1:8081`, `[::1]:9000`). A host-name entry allows whatever that name resolves
 * to; an address entry allows that address whatever name led to it.
 *
 * Names are resolved with `dns.lookup` (the system's resolver), or, when OUTBOUND_DNS_SERVERS names
 * servers (dns-servers.ts), by asking those servers for A and AAAA records. `localhost` and
 * `*.localhost` are 127.0.0.1 without asking (RFC 6761), so no resolver can make them anything else.
 */
import { lookup, Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { parseDnsServers } from "./dns-servers.js";

export class OutboundRefused extends Error {
  override name = "OutboundRefused";
  readonly code = "address_not_allowed";
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(
      address === host
        ? `outbound address ${address} is not allowed (${range})`
        : `outbound host ${host} resolves to ${address}, which is not allowed (${range})`,
    );
  }
}

interface AllowEntry {
  host?: string;
  range?: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port?: number;
}

/** Names that are loopback by definition (RFC 6761 section 6.3), with or without the root's trailing dot. */
const LOCALHOST = /(^|\.)localhost\.?$/i;

/** Resolver answers meaning "no such records", as opposed to a failure to ask. */
const NO_RECORDS = new Set(["ENODATA", "ENOTFOUND"]);

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");

/** Why an address may not be dialled, or undefined when it may. */
export function forbiddenRange(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return forbiddenRange(v6.toIPv4Address().toString());
    const range = v6.range();
    if (range === "rfc6145" || range === "rfc6052" || range === "6to4" || range === "teredo") {
      return `${range} (embeds an IPv4 address)`;
    }
    if (!v6.match(GLOBAL_UNICAST)) return range === "unicast" ? "not global unicast" : range;
    return range === "unicast" ? undefined : range;
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === "unicast" ? undefined : range;
}

export class AddressPolicy {
  private readonly allow: AllowEntry[];
  private readonly resolver?: Resolver;

  /**
   * `allowList`: the operator's entries (syntax above); `setting`: the variable they came from, named
   * when an entry is malformed; `dnsServers`: an OUTBOUND_DNS_SERVERS value (empty: the system resolver).
   */
  constructor(allowList = "", setting = "outbound allow list", options: { dnsServers?: string } = {}) {
    const servers = parseDnsServers(options.dnsServers ?? "");
    if (servers.length > 0) {
      this.resolver = new Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers(servers);
    }
    this.allow = allowList
      .split(/[,\s]+/)
      .map((s) => s.trim())
      .filter(Boolean)
      .map((raw) => parseAllowEntry(raw, setting));
  }

  /** Throws OutboundRefused unless `address` (dialled for `host`:`port`) is acceptable. */
  check(host: string, address: string, port: number): void {
    const range = forbiddenRange(address);
    if (range === undefined) return;
    if (this.allowed(host, address, port)) return;
    throw new OutboundRefused(host, address, range);
  }

  /**
   * Resolves `host` and returns the address to dial after checking every address it resolves to. IP
   * literals (with or without brackets) are checked as they are.
   */
  async resolve(host: string, port: number): Promise<{ address: string; family: 4 | 6 }> {
    const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
    const family = isIP(bare);
    if (family !== 0) {
      this.check(bare, bare, port);
      return { address: bare, family: family as 4 | 6 };
    }
    // RFC 6761: localhost and *.localhost are loopback, whatever a resolver says of them (or does not).
    const records = LOCALHOST.test(bare)
      ? [{ address: "127.0.0.1", family: 4 }]
      : this.resolver
        ? await this.query(this.resolver, bare)
        : await lookup(bare, { all: true, verbatim: true });
    if (records.length === 0) throw new Error(`host ${bare} did not resolve`);
    for (const r of records) this.check(bare, r.address, port);
    const first = records[0]!;
    return { address: first.address, family: first.family as 4 | 6 };
  }

  /** A and AAAA records from the configured servers; a family without records is no error, no records at all is ENOTFOUND. */
  private async query(resolver: Resolver, host: string): Promise<{ address: string; family: number }[]> {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const records = answers.flatMap((a, i) =>
      a.status === "fulfilled" ? a.value.map((address) => ({ address, family: i === 0 ? 4 : 6 })) : [],
    );
    if (records.length > 0) return records;
    const failure = answers.find((a) => a.status === "rejected" && !NO_RECORDS.has((a.reason as { code?: string }).code ?? ""));
    if (failure) throw (failure as PromiseRejectedResult).reason;
    throw Object.assign(new Error(`host ${host} did not resolve`), { code: "ENOTFOUND" });
  }

  private allowed(host: string, address: string, port: number): boolean {
    if (this.allow.length === 0) return false;
    let ip: ipaddr.IPv4 | ipaddr.IPv6 | undefined;
    try {
      ip = ipaddr.process(address);
    } catch {
      ip = undefined;
    }
    const name = host.toLowerCase();
    return this.allow.some((entry) => {
      if (entry.port !== undefined && entry.port !== port) return false;
      if (entry.host !== undefined) return entry.host === name;
      if (!entry.range || !ip || ip.kind() !== entry.range[0].kind()) return false;
      return ip.match(entry.range as never);
    });
  }
}

function parseAllowEntry(raw: string, setting: string): AllowEntry {
  let text = raw;
  let port: number | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) throw new Error(`${setting} entry ${raw}: unclosed [`);
    const rest = text.slice(close + 1);
    if (rest.startsWith(":")) port = parsePort(raw, rest.slice(1), setting);
    text = text.slice(1, close);
  } else if (text.split(":").length === 2) {
    const [h, p] = text.split(":") as [string, string];
    port = parsePort(raw, p, setting);
    text = h;
  }
  if (text.includes("/")) {
    try {
      const [addr, bits] = ipaddr.parseCIDR(text);
      return {
        range: [
          addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr,
          bits,
        ],
        port,
      };
    } catch {
      throw new Error(`${setting} entry ${raw}: not a CIDR range`);
    }
  }
  if (ipaddr.isValid(text)) {
    const addr = ipaddr.process(text);
    return { range: [addr, addr.kind() === "ipv4" ? 32 : 128], port };
  }
  if (!/^[a-z0-9.-]+$/i.test(text)) throw new Error(`${setting} entry ${raw}: not a host name, IP or CIDR range`);
  return { host: text.toLowerCase(), port };
}

function parsePort(raw: string, text: string, setting: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${setting} entry ${raw}: bad port`);
  return port;
}
