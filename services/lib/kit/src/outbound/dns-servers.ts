/**
 * OUTBOUND_DNS_SERVERS: the name servers the address policy asks for callers' host names instead of the
 * system's resolver (`dns.lookup`), for operators who want those names resolved by a resolver of their
 * choosing (and tests that point them at their own). A comma-separated list of `ip` or `ip:port`, IPv6
 * in brackets (`10.0.0.53`, `10.0.0.53:5353`, `[fd00::53]:53`). Read by every service that dials
 * addresses a caller chose (catalog, execution, webhooks, content).
 */
import { isIP } from "node:net";
import { z } from "zod";

/** The servers of an OUTBOUND_DNS_SERVERS value, in the form `Resolver.setServers` takes; throws on a bad entry. */
export function parseDnsServers(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((raw) => {
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
      const plain = /^([^:]+)(?::(\d+))?$/.exec(raw);
      const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : plain ? [plain[1]!, plain[2]] : [raw, undefined];
      const family = isIP(address);
      if (family === 0 || (family === 6 && !bracketed) || (family === 4 && bracketed))
        throw new Error(`OUTBOUND_DNS_SERVERS entry ${raw}: not an IP address or ip:port (IPv6 in brackets)`);
      if (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
        throw new Error(`OUTBOUND_DNS_SERVERS entry ${raw}: bad port`);
      return raw;
    });
}

/** The setting, spread into the environment of each service that dials callers' addresses. */
export const outboundDnsEnv = {
  OUTBOUND_DNS_SERVERS: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      try {
        parseDnsServers(value);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .describe(
      "name servers (ip or ip:port, IPv6 in brackets, comma-separated) that resolve the host names of callers' URLs; unset = the system resolver",
    ),
};
