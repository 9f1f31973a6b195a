/**
 * The 400 a publisher gets when an import URL (api.document_url, mcp_server.url) leads to an address the
 * outbound guard refuses (@toolport/kit/outbound: private, loopback, link-local, metadata, CGNAT and other
 * special-purpose ranges, unless CATALOG_OUTBOUND_ALLOW names the host). Nothing was fetched: the check
 * runs before a connection is opened. The message names the field and the kind of address; it names the
 * host only when the caller wrote it (a redirect's target and what a name resolves to are not repeated).
 */
import { DomainError, invalidArgument } from "@toolport/kit/errors";
import { findRefusal } from "@toolport/kit/outbound";

const RANGE_WORDS: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private (RFC 1918) address",
  linkLocal: "a link-local address (where cloud metadata services answer)",
  carrierGradeNat: "a carrier-grade NAT address",
  uniqueLocal: "a unique-local address",
  unspecified: "the unspecified address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
};

/** The address_not_allowed error for `err` when the guard refused the connection, else undefined. */
export function addressNotAllowed(err: unknown, field: string, url: URL): DomainError | undefined {
  if (err instanceof DomainError) return undefined;
  const refusal = findRefusal(err);
  if (!refusal) return undefined;
  const details = { field, range: refusal.range };
  if (refusal.range === "scheme") {
    return invalidArgument("address_not_allowed", `${field} redirects to a non-http(s) URL, which the catalog does not follow`, {
      details,
    });
  }
  const what = RANGE_WORDS[refusal.range] ?? `a special-purpose address (${refusal.range})`;
  const asked = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const target =
    refusal.host.toLowerCase() !== asked
      ? `${field} redirects to ${what}`
      : refusal.host === refusal.address
        ? `${field} host ${asked} is ${what}`
        : `${field} host ${asked} resolves to ${what}`;
  return invalidArgument(
    "address_not_allowed",
    `${target}; the catalog connects only to public addresses (an operator can allow hosts with CATALOG_OUTBOUND_ALLOW)`,
    { details },
  );
}
