/**
 * The identity service's parts, built once per start (role.ts `deps`): stores on identity's own
 * database, clients of billing (wallets) and catalog (starter tools, allow-list checks), and the JWT
 * token service (its signing key loads from the database at start).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import type { ServiceContext } from "@toolport/kit/service";
import { loadSigningKey } from "./auth/signing-keys.js";
import { TokenService, type TokenSettings } from "./auth/tokens.js";
import { billingWallets, catalogPort } from "./clients.js";
import { DEV_SECRET_KEY, type IdentityConfig } from "./config.js";
import { GRANT_KEY_PREFIX, grantKeyName, type OAuthServerDeps } from "./domain/oauth-server.js";
import { leaseDropper } from "./events/lease-drops.js";
import type { IdentityDeps } from "./handlers/deps.js";
import { accountStore, organizationStore } from "./store/accounts.js";
import { keyStore } from "./store/keys.js";
import { allowanceLeaseStore } from "./store/leases.js";
import { oauthServerStore } from "./store/oauth-server.js";

function tokenSettings(config: IdentityConfig): TokenSettings {
  const oidc = [config.OIDC_JWKS_URL, config.OIDC_ISSUER, config.OIDC_AUDIENCE];
  const given = oidc.filter(Boolean).length;
  if (given !== 0 && given !== 3) {
    throw new Error("invalid configuration: OIDC_JWKS_URL, OIDC_ISSUER and OIDC_AUDIENCE are set together or not at all");
  }
  return {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    ttlSeconds: config.JWT_TTL_SECONDS,
    oidc:
      given === 3
        ? {
            jwksUrl: config.OIDC_JWKS_URL!,
            issuer: config.OIDC_ISSUER!,
            audience: config.OIDC_AUDIENCE!,
            algorithms: config.OIDC_ALGORITHMS,
          }
        : undefined,
  };
}

export function createDeps(ctx: ServiceContext<IdentityConfig>): IdentityDeps {
  const { config, log, pool } = ctx;
  const settings = tokenSettings(config);
  if (!config.IDENTITY_SECRET_KEY) {
    log.warn(
      "IDENTITY_SECRET_KEY is not set: the JWT signing key is encrypted with the development default; set it in production",
    );
  }
  const tokens = loadSigningKey(pool, config.IDENTITY_SECRET_KEY ?? DEV_SECRET_KEY, log).then(
    (key) => new TokenService(key, settings, log),
  );
  tokens.catch(() => {}); // awaited (and fatal) in the background start-up; see role.ts
  const base = {
    config,
    log,
    pool,
    // The per-call counters commit without waiting for the WAL flush: a Postgres crash may forget the last
    // few hundred milliseconds of counted calls, never corrupt them, and every limit stays enforced by
    // the same atomic statements. Everything else (keys, accounts) keeps the durable pool.
    allowanceLeases: allowanceLeaseStore(ctx.relaxedPool(10)),
    accounts: accountStore(pool),
    organizations: organizationStore(pool),
    keys: keyStore(pool),
    wallets: billingWallets(config.BILLING_URL, log),
    catalog: catalogPort(config.CATALOG_URL, log),
    tokens,
    leases: leaseDropper({ pool, nc: ctx.nc, log }),
    adminEmails: new Set(config.TOOLPORT_ADMIN_EMAILS),
    rateLimitDefaults: {
      registration: { limit: config.REGISTRATIONS_PER_MINUTE, windowSeconds: 60 },
      public_search: { limit: config.PUBLIC_SEARCHES_PER_MINUTE, windowSeconds: 60 },
      search: { limit: config.SEARCHES_PER_MINUTE, windowSeconds: 60 },
      tool_calls: { limit: config.TOOL_CALLS_PER_MINUTE, windowSeconds: 60 },
    },
  };
  return { ...base, oauth: oauthServerDeps(config, base) };
}

/** The authorization server's parts (domain/oauth-server.ts) on identity's stores. */
function oauthServerDeps(config: IdentityConfig, base: Omit<IdentityDeps, "oauth">): OAuthServerDeps {
  const outbound = new Outbound({
    policy: new AddressPolicy(config.IDENTITY_OUTBOUND_ALLOW, "IDENTITY_OUTBOUND_ALLOW", {
      dnsServers: config.OUTBOUND_DNS_SERVERS,
    }),
    connectionsPerOrigin: 4,
  });
  return {
    settings: {
      issuer: new URL(config.PUBLIC_URL).origin,
      resource: config.MCP_PUBLIC_URL,
      accessTokenTtlSeconds: config.OAUTH_ACCESS_LIFETIME_SECONDS,
      refreshTokenTtlSeconds: config.OAUTH_REFRESH_LIFETIME_SECONDS,
      dynamicRegistration: config.OAUTH_DYNAMIC_REGISTRATION,
    },
    store: oauthServerStore(base.pool),
    keys: base.keys,
    organizations: base.organizations,
    catalog: base.catalog,
    documents: {
      async fetch(url) {
        const res = await outbound.send(
          { method: "GET", url, headers: { accept: "application/json" } },
          { timeoutMs: 5_000, maxBytes: 64 * 1024 },
        );
        return { status: res.status, contentType: res.headers["content-type"] ?? "", body: res.body };
      },
    },
    grants: {
      async makeGrantKey({ accountId, organizationId, permissions, client }) {
        const key = await base.keys.insertKey({
          id: randomUUID(),
          accountId,
          organizationId,
          name: grantKeyName(client),
          // No plaintext is ever issued for a grant: its hash is of random bytes nobody keeps.
          hash: createHash("sha256").update(randomBytes(32)).digest(),
          prefix: GRANT_KEY_PREFIX,
          permissions,
          agentName: client.clientName.slice(0, 100),
          agentType: "assistant",
          purpose: `OAuth grant to the MCP client ${client.clientId}`.slice(0, 200),
          oauthClientId: client.clientId,
        });
        return key.id;
      },
      async revokeGrantKey(keyId) {
        const key = await base.keys.keyById(keyId);
        if (!key) return;
        if (!key.revokedAt) await base.keys.revokeKey(keyId, key.accountId);
        await base.leases.drop({ keyId });
      },
    },
  };
}
