/** @toolport/kit/outbound: the address policy (SSRF guard) and the HTTP client that dials through it. */
export { AddressPolicy, forbiddenRange, OutboundRefused } from "./address-policy.js";
export { checkOutboundUrl } from "./check-url.js";
export { outboundDnsEnv, parseDnsServers } from "./dns-servers.js";
export {
  findRefusal,
  Outbound,
  type OutboundFailureKind,
  type OutboundOptions,
  type OutboundRequest,
  type OutboundResponse,
  outboundFailureKind,
  ResponseTooLarge,
  TooManyRedirects,
} from "./guarded.js";
