/**
 * The SSRF corpus: URLs every dialler (execution, catalog import, webhooks, site crawl) must refuse, each
 * labelled with its category. Every special-purpose range of RFC 6890 and its successors (IPv4 and IPv6),
 * the other spellings of an IPv4 address the URL parser accepts, IPv4-mapped, -compatible and NAT64 forms,
 * trailing dots, userinfo and backslash tricks, localhost names, names the test's DNS server resolves to
 * private addresses, rebinding between the check and the connection, redirects from the allowed server to
 * private addresses, and schemes other than http(s).
 *
 * Addresses on loopback carry the canary's port (`C`), so a leak reaches a canary and is counted; the
 * others cannot be reached from the test machine, so a leak there fails as a connection error, which is
 * not a refusal either.
 */
import type { DnsAnswer, TestDns } from "./dns-server.js";

export const CATEGORIES = [
  "IPv4 special-purpose",
  "IPv6 special-purpose",
  "IPv4 notation",
  "mapped / NAT64",
  "trailing dot",
  "userinfo / backslash",
  "localhost name",
  "DNS to private",
  "rebinding",
  "redirect",
  "scheme",
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface CorpusEntry {
  category: Category;
  label: string;
  /**
   * The URL for one dialler's attempt (`tag` names the attempt). Rebinding cases give each attempt a name
   * of its own, whose answers start again: the allowed address first, the private one after.
   */
  url(tag: string): string;
  /** Rebinding cases: the name's two answers (for a dialler that must hold the first one longer). */
  rebind?: { first: DnsAnswer; later: DnsAnswer };
}

export interface CorpusFixture {
  /** Port of the canary listening on every loopback address (`[::]`, IPv4 and IPv6). */
  canaryPort: number;
  /** The allowed server (127.0.0.1, named in every *_OUTBOUND_ALLOW); canaries listen on its port at 127.0.0.2 and ::1. */
  allowedPort: number;
  dns: TestDns;
  /** Registers a redirect on the allowed server; returns the URL that answers it. */
  redirect(status: number, location: string): string;
}

/** The zone: names resolving to private addresses (DNS to private, and redirect targets). */
function privateNames(dns: TestDns): void {
  const names: Record<string, DnsAnswer> = {
    "loopback.ssrf.test": { a: ["127.0.0.1"] },
    "metadata.ssrf.test": { a: ["169.254.169.254"] },
    "rfc1918.ssrf.test": { a: ["10.0.0.1"] },
    "cgnat.ssrf.test": { a: ["100.64.0.1"] },
    "zero.ssrf.test": { a: ["0.0.0.0"] },
    "v6-loopback.ssrf.test": { aaaa: ["::1"] },
    "v6-ula.ssrf.test": { aaaa: ["fd00::1"] },
    "v6-mapped.ssrf.test": { aaaa: ["::ffff:127.0.0.1"] },
    "v6-nat64.ssrf.test": { aaaa: ["64:ff9b::7f00:1"] },
    "public-and-private.ssrf.test": { a: ["8.8.8.8", "127.0.0.1"] },
    "public-a-private-aaaa.ssrf.test": { a: ["8.8.8.8"], aaaa: ["::1"] },
  };
  for (const [name, answer] of Object.entries(names)) dns.set(name, answer);
}

export function buildCorpus(f: CorpusFixture): CorpusEntry[] {
  privateNames(f.dns);
  const C = f.canaryPort;
  const W = f.allowedPort;
  const entries: CorpusEntry[] = [];
  const add = (category: Category, rows: Array<[string, string]>) => {
    for (const [label, url] of rows) entries.push({ category, label, url: () => url });
  };

  add("IPv4 special-purpose", [
    ["0.0.0.0/8 this network", `http://0.0.0.0:${C}/`],
    ["0.0.0.0/8 other", "http://0.1.2.3/"],
    ["10.0.0.0/8", "http://10.0.0.1/"],
    ["10.0.0.0/8 top", "http://10.255.255.254/"],
    ["100.64.0.0/10 CGNAT", "http://100.64.0.1/"],
    ["100.64.0.0/10 Alibaba metadata", "http://100.100.100.200/"],
    ["127.0.0.0/8", `http://127.0.0.1:${C}/`],
    ["127.0.0.0/8 other", `http://127.3.2.1:${C}/`],
    ["169.254.0.0/16 metadata", "http://169.254.169.254/latest/meta-data/"],
    ["169.254.0.0/16 ECS metadata", "http://169.254.170.2/v2/credentials"],
    ["172.16.0.0/12", "http://172.16.0.1/"],
    ["172.16.0.0/12 top", "http://172.31.255.254/"],
    ["192.0.0.0/24 IETF assignments", "http://192.0.0.8/"],
    ["192.0.2.0/24 TEST-NET-1", "http://192.0.2.1/"],
    ["192.31.196.0/24 AS112", "http://192.31.196.1/"],
    ["192.52.193.0/24 AMT", "http://192.52.193.1/"],
    ["192.88.99.0/24 6to4 relay", "http://192.88.99.1/"],
    ["192.168.0.0/16", "http://192.168.1.1/"],
    ["192.175.48.0/24 AS112 direct delegation", "http://192.175.48.1/"],
    ["198.18.0.0/15 benchmarking", "http://198.18.0.1/"],
    ["198.18.0.0/15 top", "http://198.19.255.254/"],
    ["198.51.100.0/24 TEST-NET-2", "http://198.51.100.1/"],
    ["203.0.113.0/24 TEST-NET-3", "http://203.0.113.1/"],
    ["224.0.0.0/4 multicast", "http://224.0.0.1/"],
    ["224.0.0.0/4 multicast (SSDP)", "http://239.255.255.250:1900/"],
    ["240.0.0.0/4 reserved", "http://240.0.0.1/"],
    ["255.255.255.255 broadcast", "http://255.255.255.255/"],
  ]);
  add("IPv6 special-purpose", [
    [":: unspecified", `http://[::]:${C}/`],
    ["::1 loopback", `http://[::1]:${C}/`],
    ["fe80::/10 link-local", "http://[fe80::1]/"],
    ["fc00::/7 unique-local", "http://[fc00::1]/"],
    ["fc00::/7 unique-local (fd)", "http://[fd12:3456:789a::1]/"],
    ["fd00:ec2::254 AWS metadata", "http://[fd00:ec2::254]/latest/meta-data/"],
    ["fec0::/10 site-local", "http://[fec0::1]/"],
    ["ff00::/8 multicast", "http://[ff02::1]/"],
    ["100::/64 discard", "http://[100::1]/"],
    ["2001:db8::/32 documentation", "http://[2001:db8::1]/"],
    ["2001::/32 Teredo", "http://[2001::1]/"],
    ["2001:2::/48 benchmarking", "http://[2001:2::1]/"],
    ["2001:10::/28 ORCHID", "http://[2001:10::1]/"],
    ["2001:20::/28 ORCHIDv2", "http://[2001:20::1]/"],
    ["2002::/16 6to4 of 127.0.0.1", "http://[2002:7f00:1::1]/"],
    ["2002::/16 6to4 of 192.168.1.1", "http://[2002:c0a8:101::1]/"],
    ["64:ff9b::/96 NAT64 of 10.0.0.1", "http://[64:ff9b::a00:1]/"],
    ["64:ff9b::/96 NAT64 of a public address", "http://[64:ff9b::808:808]/"],
    ["64:ff9b:1::/48 local-use NAT64", "http://[64:ff9b:1::a00:1]/"],
    ["::ffff:0:0/96 IPv4-mapped 10.0.0.1", "http://[::ffff:10.0.0.1]/"],
    ["::a.b.c.d IPv4-compatible", `http://[::127.0.0.1]:${C}/`],
  ]);
  add("IPv4 notation", [
    ["decimal", `http://2130706433:${C}/`],
    ["octal", `http://0177.0.0.1:${C}/`],
    ["hex", `http://0x7f.0.0.1:${C}/`],
    ["hex, one number", `http://0x7f000001:${C}/`],
    ["octal, one number", `http://017700000001:${C}/`],
    ["short form 127.1", `http://127.1:${C}/`],
    ["short form 0", `http://0:${C}/`],
    ["mixed hex and short", `http://0x7f.1:${C}/`],
    ["mixed octal, hex, decimal", `http://0177.0x0.0.1:${C}/`],
    ["zero-padded", `http://127.000.000.001:${C}/`],
    ["percent-encoded", `http://%31%32%37.0.0.1:${C}/`],
    ["full-width digits", `http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:${C}/`],
    ["decimal metadata", "http://2852039166/latest/meta-data/"],
    ["hex metadata", "http://0xa9.0xfe.0xa9.0xfe/"],
  ]);
  add("mapped / NAT64", [
    ["[::ffff:127.0.0.1]", `http://[::ffff:127.0.0.1]:${C}/`],
    ["[::ffff:7f00:1]", `http://[::ffff:7f00:1]:${C}/`],
    ["[0:0:0:0:0:ffff:127.0.0.1]", `http://[0:0:0:0:0:ffff:127.0.0.1]:${C}/`],
    ["[::ffff:a9fe:a9fe] metadata", "http://[::ffff:a9fe:a9fe]/"],
    ["[64:ff9b::7f00:1]", `http://[64:ff9b::7f00:1]:${C}/`],
    ["[64:ff9b::127.0.0.1]", `http://[64:ff9b::127.0.0.1]:${C}/`],
  ]);
  add("trailing dot", [
    ["localhost.", `http://localhost.:${C}/`],
    ["127.0.0.1.", `http://127.0.0.1.:${C}/`],
    ["name resolving private, trailing dot", `http://loopback.ssrf.test.:${C}/`],
  ]);
  add("userinfo / backslash", [
    ["public name as user, private host", `http://public.example@127.0.0.1:${C}/`],
    ["user and password, private host", `http://public.example:80@127.0.0.1:${C}/`],
    ["fragment hides @", `http://127.0.0.1:${C}#@public.example/`],
    ["backslash before @", `http://127.0.0.1:${C}\\@public.example/`],
    ["backslashes for slashes", `http:\\\\127.0.0.1:${C}\\admin`],
    ["credentials for metadata", "http://user:pass@169.254.169.254/latest/meta-data/"],
  ]);
  add("localhost name", [
    ["localhost", `http://localhost:${C}/`],
    ["LOCALHOST", `http://LOCALHOST:${C}/`],
    ["*.localhost", `http://api.localhost:${C}/`],
    ["*.*.localhost", `http://a.b.localhost:${C}/`],
  ]);
  add("DNS to private", [
    ["A 127.0.0.1", `http://loopback.ssrf.test:${C}/`],
    ["A 169.254.169.254", "http://metadata.ssrf.test/latest/meta-data/"],
    ["A 10.0.0.1", "http://rfc1918.ssrf.test/"],
    ["A 100.64.0.1", "http://cgnat.ssrf.test/"],
    ["A 0.0.0.0", `http://zero.ssrf.test:${C}/`],
    ["AAAA ::1", `http://v6-loopback.ssrf.test:${C}/`],
    ["AAAA fd00::1", "http://v6-ula.ssrf.test/"],
    ["AAAA ::ffff:127.0.0.1", `http://v6-mapped.ssrf.test:${C}/`],
    ["AAAA 64:ff9b::7f00:1", `http://v6-nat64.ssrf.test:${C}/`],
    ["A public + A private", `http://public-and-private.ssrf.test:${C}/`],
    ["A public + AAAA private", `http://public-a-private-aaaa.ssrf.test:${C}/`],
  ]);

  // Rebinding: the allowed server's address first (the check passes), then a private one, at its port.
  const first: DnsAnswer = { a: ["127.0.0.1"] };
  const rebind = (label: string, later: DnsAnswer) =>
    entries.push({
      category: "rebinding",
      label,
      rebind: { first, later },
      url: (tag) => {
        const name = `rebind-${tag}.ssrf.test`;
        f.dns.set(name, first, later);
        return `http://${name}:${W}/`;
      },
    });
  rebind("127.0.0.1 then 127.0.0.2", { a: ["127.0.0.2"] });
  rebind("127.0.0.1 then ::1", { aaaa: ["::1"] });
  rebind("127.0.0.1 then 169.254.169.254", { a: ["169.254.169.254"] });

  add("redirect", [
    ["302 to 127.0.0.1", f.redirect(302, `http://127.0.0.1:${C}/`)],
    ["307 to metadata", f.redirect(307, "http://169.254.169.254/latest/meta-data/")],
    ["301 to [::1]", f.redirect(301, `http://[::1]:${C}/`)],
    ["308 to decimal 2130706433", f.redirect(308, `http://2130706433:${C}/`)],
    ["303 to localhost", f.redirect(303, `http://localhost:${C}/`)],
    ["302 to 10.0.0.1", f.redirect(302, "http://10.0.0.1/")],
    ["302 to [::ffff:127.0.0.1]", f.redirect(302, `http://[::ffff:127.0.0.1]:${C}/`)],
    ["302 to a name resolving private", f.redirect(302, `http://loopback.ssrf.test:${C}/`)],
    ["302 scheme-relative //127.0.0.1", f.redirect(302, `//127.0.0.1:${C}/`)],
    ["302 to the allowed host on another port", f.redirect(302, `http://127.0.0.1:${C}/same-host`)],
    ["302 to a redirect to 127.0.0.1", f.redirect(302, f.redirect(302, `http://127.0.0.1:${C}/`))],
    ["302 to file:", f.redirect(302, "file:///etc/passwd")],
  ]);
  add("scheme", [
    ["file:", "file:///etc/passwd"],
    ["file: on a host", "file://127.0.0.1/etc/passwd"],
    ["gopher:", `gopher://127.0.0.1:${C}/_GET%20/%20HTTP/1.0`],
    ["ftp:", `ftp://127.0.0.1:${C}/`],
    ["dict:", `dict://127.0.0.1:${C}/info`],
    ["data:", "data:text/plain;base64,aGVsbG8="],
    ["ldap:", `ldap://127.0.0.1:${C}/`],
    ["ws:", `ws://127.0.0.1:${C}/`],
  ]);
  return entries;
}
