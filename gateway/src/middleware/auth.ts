/**
 * Authentication per route, as the spec's endpoint auth table says: none, optional, API key, JWT, or
 * either. The credential is resolved by one identity call into a principal; the rest of the request
 * runs with that principal in scope, so every service call carries it.
 *
 * Principal cache (the `cache` option): ONLY the two tool-call routes (POST /tools/call/:tool_id and
 * POST /tools/call/batch) use it, and only for API keys and the OAuth access tokens of Toolport's own
 * authorization server, which act as their grant's key (never JWTs). A successful Authenticate is
 * kept for GATEWAY_AUTH_CACHE_MS (default 30 s; 0 = off), and never past an access token's expiry,
 * under sha256(credential) + the `svc-org-id` value (principal-cache.ts), so a warm tool call makes two
 * service hops instead of three. Every other route authenticates on every request. Revoking a grant is
 * revoking its key, immediate as below; an access token revoked alone (RFC 7009) may still call tools
 * here for up to the TTL, but not through the MCP server, which checks the token on every request.
 *
 * Revocation stays immediate on every replica: execution spends each caller's allowance from a quota
 * lease (services/execution/src/domain/allowance.ts) that identity grants only after re-checking that
 * the key is not revoked and that its owner is still a member of the principal's organization, and a
 * revoke (or a member's removal) drops every live lease on the key before it answers. The next call then
 * asks identity for a lease, which is refused: nothing is counted and the call is a 401
 * `unauthenticated`. A 401 coming back for a request that used the cache drops the entry, so the next
 * request re-authenticates with identity (and gets identity's own 401). Accepted consequences: checks
 * run in the order (tool exists -> permissions -> input -> consent -> allowance), so a revoked
 * key calling an unknown tool may see 404 (or 403 / 400 / 409) before the allowance check refuses it;
 * and principal attributes other than key validity and membership (tier, key permissions, role) may
 * be up to the TTL old on tool calls.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { currentScope, runInScope } from "@toolport/kit/context";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import type { Middleware } from "koa";
import type { ServiceClients } from "../clients.js";
import { HttpError } from "../http/errors.js";
import { PrincipalCache } from "./principal-cache.js";

export type AuthMode = "none" | "optional" | "api_key" | "jwt" | "api_key_or_jwt";

declare module "koa" {
  interface DefaultState {
    principal?: Principal;
  }
}

interface Presented {
  apiKey?: string;
  bearer?: string;
}

function presented(header: (name: string) => string): Presented {
  const apiKey = header("svc-api-key").trim() || undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header("authorization"));
  return { apiKey, bearer: match?.[1] };
}

export interface AuthOptions {
  /**
   * Send `svc-org-id` to identity to select the organization (default). Off for a route that resolves
   * the organization itself (the client helper, where a query `org_id` overrides the header).
   */
  orgHeader?: boolean;
  /**
   * Reuse principals of API keys from this cache (tool-call routes only: their allowance check
   * re-checks the key on every call; see the header comment). Ignored when the cache is disabled.
   */
  cache?: PrincipalCache;
}

/** What an auth middleware accepts, for the API description (openapi/describe.ts reads it off the route). */
export interface AuthDescription {
  mode: AuthMode;
  orgHeader: boolean;
}
const described = new WeakMap<Middleware, AuthDescription>();

/** The auth an `auth()` middleware applies; undefined for any other middleware. */
export function authOf(middleware: Middleware): AuthDescription | undefined {
  return described.get(middleware);
}

export function auth(identity: ServiceClients["identity"], mode: AuthMode, options: AuthOptions = {}): Middleware {
  const useOrgHeader = options.orgHeader ?? true;
  const cache = options.cache?.enabled ? options.cache : undefined;
  const middleware: Middleware = async (ctx, next) => {
    if (mode === "none") return next();
    const { apiKey, bearer } = presented((n) => ctx.get(n));
    const useKey = apiKey !== undefined && mode !== "jwt";
    // An OAuth access token of Toolport's own authorization server acts as the key of its grant, so a
    // route that takes an API key takes it too (the MCP server forwards its clients' tokens); a route
    // only for people (JWT) does not.
    const grantToken = bearer !== undefined && isGrantToken(bearer);
    const useJwt = bearer !== undefined && !useKey && (grantToken ? mode !== "jwt" : mode !== "api_key");
    if (!useKey && !useJwt) {
      if (mode === "optional") return next();
      throw new HttpError(401, "unauthenticated", missingMessage(mode));
    }
    const orgId = useOrgHeader ? ctx.get("svc-org-id").trim() || undefined : undefined;
    // A grant's access token is cached like a key, never past its own expiry (see the header comment).
    const cached = useKey ? apiKey : grantToken && useJwt ? bearer : undefined;
    const cacheKey = cache && cached ? PrincipalCache.keyOf(cached, orgId) : undefined;
    let principal = cacheKey ? cache!.get(cacheKey) : undefined;
    if (!principal) {
      ({ principal } = await identity.authenticate({
        credential: useKey ? { case: "apiKey", value: apiKey } : { case: "bearerToken", value: bearer as string },
        organizationId: orgId,
      }));
      if (!principal) throw new HttpError(401, "unauthenticated", "credentials were not accepted");
      if (cacheKey) cache!.set(cacheKey, principal, timestampMs(principal.credentialExpiresAt));
    }
    ctx.state.principal = principal;
    // The request's scope (its id, when its answer is due) with the caller in it.
    const outer = currentScope();
    const scope = { ...outer, requestId: outer?.requestId ?? String(ctx.state.requestId), principal };
    if (!cacheKey) return runInScope(scope, next);
    try {
      await runInScope(scope, next);
    } catch (err) {
      // The key was refused downstream (revoked, or its owner left the organization): forget it.
      if (isUnauthenticated(err)) cache!.delete(cacheKey);
      throw err;
    }
  };
  described.set(middleware, { mode, orgHeader: useOrgHeader });
  return middleware;
}

const timestampMs = (t: { seconds: bigint; nanos: number } | undefined) =>
  t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : undefined;

/** An access token of Toolport's authorization server (identity's `tpat_` tokens), not a JWT. */
export function isGrantToken(bearer: string): boolean {
  return bearer.startsWith("tpat_");
}

function isUnauthenticated(err: unknown): boolean {
  if (err instanceof ConnectError) return err.code === Code.Unauthenticated;
  return err instanceof HttpError && err.status === 401;
}

function missingMessage(mode: AuthMode): string {
  switch (mode) {
    case "jwt":
      return "this endpoint needs a JWT: send Authorization: Bearer <token>";
    case "api_key":
      return "this endpoint needs an API key: send the svc-api-key header";
    default:
      return "this endpoint needs credentials: send the svc-api-key header or Authorization: Bearer <token>";
  }
}
