/** Everything identity's handlers need, built once per start in deps.ts. */
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import type { TokenService } from "../auth/tokens.js";
import type { IdentityConfig } from "../config.js";
import type { AllowanceLeaseStore } from "../domain/allowance.js";
import type { RateLimitDefaults } from "../domain/counters.js";
import { apiRoot, type PublicAddresses } from "../domain/guide.js";
import type { OAuthServerDeps } from "../domain/oauth-server.js";
import type { AccountStore, CatalogPort, KeyStore, OrganizationStore, WalletPort } from "../domain/ports.js";
import type { LeaseDropper } from "../events/lease-drops.js";

export interface IdentityDeps {
  config: IdentityConfig;
  log: Logger;
  pool: Pool;
  /**
   * Execution's quota leases on the per-call counters (LeaseCallAllowance), on connections that commit
   * with synchronous_commit off: see README "Counters on the call path".
   */
  allowanceLeases: AllowanceLeaseStore;
  accounts: AccountStore;
  organizations: OrganizationStore;
  keys: KeyStore;
  wallets: WalletPort;
  catalog: CatalogPort;
  /** Ready once the signing key is loaded (before the service reports SERVING). */
  tokens: Promise<TokenService>;
  rateLimitDefaults: RateLimitDefaults;
  /** TOOLPORT_ADMIN_EMAILS, lower-cased: their accounts are platform administrators. */
  adminEmails: ReadonlySet<string>;
  /** Drops execution's quota leases on a key once it is revoked or its owner leaves an organization. */
  leases: LeaseDropper;
  /** The OAuth authorization server of the MCP server (domain/oauth-server.ts). */
  oauth: OAuthServerDeps;
}

/** The public addresses a request names (the gateway sends its own), else the configured ones. */
export function addresses(config: IdentityConfig, req: { publicBaseUrl?: string; mcpUrl?: string }): PublicAddresses {
  return { baseUrl: apiRoot(req.publicBaseUrl || config.PUBLIC_URL), mcpUrl: req.mcpUrl || config.MCP_PUBLIC_URL };
}
