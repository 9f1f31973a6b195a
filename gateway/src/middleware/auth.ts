/**
 * Authentication per route, as the spec's endpoint auth table says: none, optional, API key, JWT, or
 * either. The credential is resolved by one identity call into a principal (no cache of valid keys,
 * so a revoked key is refused on its next use); the rest of the request runs with that principal in
 * scope, so every service call carries it.
 */
import { currentScope, runInScope } from "@toolport/kit/context";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import type { Middleware } from "koa";
import type { ServiceClients } from "../clients.js";
import { HttpError } from "../http/errors.js";

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
}

export function auth(identity: ServiceClients["identity"], mode: AuthMode, options: AuthOptions = {}): Middleware {
  const useOrgHeader = options.orgHeader ?? true;
  return async (ctx, next) => {
    if (mode === "none") return next();
    const { apiKey, bearer } = presented((n) => ctx.get(n));
    const useKey = apiKey !== undefined && mode !== "jwt";
    const useJwt = bearer !== undefined && mode !== "api_key" && !useKey;
    if (!useKey && !useJwt) {
      if (mode === "optional") return next();
      throw new HttpError(401, "unauthenticated", missingMessage(mode));
    }
    const orgId = useOrgHeader ? ctx.get("svc-org-id").trim() || undefined : undefined;
    const { principal } = await identity.authenticate({
      credential: useKey ? { case: "apiKey", value: apiKey } : { case: "bearerToken", value: bearer as string },
      organizationId: orgId,
    });
    if (!principal) throw new HttpError(401, "unauthenticated", "credentials were not accepted");
    ctx.state.principal = principal;
    const requestId = currentScope()?.requestId ?? String(ctx.state.requestId);
    return runInScope({ requestId, principal }, next);
  };
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
