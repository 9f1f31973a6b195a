/** The identity service's own variables, on top of every service's (see @toolport/kit/service). */
import { commaList, flag, serviceUrls, url } from "@toolport/kit/config";
import { AddressPolicy, outboundDnsEnv } from "@toolport/kit/outbound";
import type { BaseConfig } from "@toolport/kit/service";
import { z } from "zod";

/** Used when IDENTITY_SECRET_KEY is unset: fine on a laptop, announced with a warning at start. */
export const DEV_SECRET_KEY = "toolport-local-development-secret-do-not-use-in-production";

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const identityEnv = {
  IDENTITY_SECRET_KEY: z
    .string()
    .min(32, "must be at least 32 characters (e.g. `openssl rand -base64 48`)")
    .optional()
    .describe("encrypts the JWT signing key at rest; unset = a fixed development key (a warning is logged)"),
  JWT_ISSUER: z.string().min(1).default("toolport").describe("`iss` of Toolport-issued JWTs"),
  JWT_AUDIENCE: z.string().min(1).default("toolport").describe("`aud` of Toolport-issued JWTs, checked on every token"),
  JWT_TTL_SECONDS: positiveInt(3600).describe("lifetime of a Toolport-issued JWT in seconds"),
  OIDC_JWKS_URL: url(["https", "http"])
    .optional()
    .describe("JWKS of a trusted external OIDC issuer (with OIDC_ISSUER, OIDC_AUDIENCE)"),
  OIDC_ISSUER: z.string().min(1).optional().describe("`iss` of the trusted external OIDC issuer"),
  OIDC_AUDIENCE: z.string().min(1).optional().describe("`aud` the external issuer's tokens must carry"),
  OIDC_ALGORITHMS: commaList("RS256,ES256")
    .pipe(z.array(z.enum(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"])).min(1))
    .describe("signature algorithms accepted from the external issuer (asymmetric only)"),
  FREE_TIER_CALLS_PER_MONTH: positiveInt(5000).describe("free-tier calls per account and UTC month on credential-free tools"),
  TOOL_CALLS_PER_MINUTE: positiveInt(120).describe("default per-key tool-call rate limit (bucket tool_calls, 60 s window)"),
  TOOLPORT_ADMIN_EMAILS: commaList()
    .transform((emails) => emails.map((e) => e.toLowerCase()))
    .describe("comma-separated emails whose accounts are platform administrators (skill review, operator routes)"),
  ALLOWANCE_LEASE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(10_000)
    .default(2000)
    .describe(
      "longest a quota lease of tool-call allowance lasts (100-10000 ms); also the longest a revoke waits for a holder that does not answer",
    ),
  REGISTRATIONS_PER_MINUTE: positiveInt(5).describe("default registration limit per client IP (bucket registration)"),
  PUBLIC_SEARCHES_PER_MINUTE: positiveInt(30).describe("default public search limit per client IP (bucket public_search)"),
  SEARCHES_PER_MINUTE: positiveInt(120).describe(
    "default authenticated search limit per account (bucket search: GET /v1/tools/search, 60 s window)",
  ),
  PUBLIC_URL: url(["http", "https"], "http://localhost:8080").describe(
    "gateway address for absolute links when a request does not carry one (without /v1)",
  ),
  MCP_PUBLIC_URL: url(["http", "https"], "http://localhost:8090/mcp").describe("MCP server address for the guide and .mcp.json"),
  OAUTH_ACCESS_LIFETIME_SECONDS: positiveInt(3600).describe(
    "lifetime of an access token Toolport's authorization server issues to an MCP client, in seconds",
  ),
  OAUTH_REFRESH_LIFETIME_SECONDS: positiveInt(30 * 24 * 3600).describe(
    "lifetime of a refresh token (each use rotates it), in seconds",
  ),
  OAUTH_DYNAMIC_REGISTRATION: flag(false).describe(
    "accept OAuth dynamic client registration (RFC 7591) at /oauth/register; off: clients identify by a client metadata document (an https client_id)",
  ),
  IDENTITY_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      try {
        new AddressPolicy(value, "IDENTITY_OUTBOUND_ALLOW");
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .describe(
      "private hosts, IPs or CIDR ranges (comma-separated, optional :port) identity may fetch OAuth client metadata documents from; public addresses are always allowed",
    ),
  ...outboundDnsEnv,
  CATALOG_URL: serviceUrls.CATALOG_URL,
  BILLING_URL: serviceUrls.BILLING_URL,
};

export type IdentityConfig = z.infer<z.ZodObject<typeof identityEnv>> & BaseConfig;
