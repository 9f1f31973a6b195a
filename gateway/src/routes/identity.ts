/**
 * /v1 routes served by the identity service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const identityRouteTable: RpcRoute[] = [
  ["post", "/agents", "none", "registerAgent"],
  ["get", "/agents/getting-started", "none", "getGettingStarted"],
  ["post", "/auth/signup", "none", "signup"],
  ["post", "/auth/login", "none", "login"],
  ["get", "/auth/jwks.json", "none", "getJwks"],
  ["post", "/api-keys", "api_key_or_jwt", "createApiKey"],
  ["get", "/api-keys", "api_key_or_jwt", "listApiKeys"],
  ["delete", "/api-keys/:key_id", "api_key_or_jwt", "revokeApiKey"],
  ["get", "/api-keys/:key_id/usage", "api_key_or_jwt", "getApiKeyUsage"],
  ["get", "/coding-client/mcp-json", "api_key_or_jwt", "getMcpJson"],
];

export function identityRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, IdentityService, deps.clients.identity, identityRouteTable);
}
