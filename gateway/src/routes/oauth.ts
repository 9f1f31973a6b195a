/**
 * /v1 routes of OAuth connections (issue 20), served by the catalog: a publisher's OAuth client per service,
 * starting a connection, the provider's redirect back (`/oauth/callback`, no credential: the state names
 * the caller), and the caller's connections.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import type { Connection, OAuthClient } from "@toolport/proto/toolport/catalog/v1/catalog_oauth_pb";
import { CredentialScopeSchema } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import type { AppDeps } from "../deps.js";
import { boolField, objectBody, queryString, stringField, stringList } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { oauthOps as ops } from "../openapi/operations/oauth.js";
import { readinessJson } from "./catalog-json.js";

function clientJson(c: OAuthClient | undefined): JsonObject | null {
  if (!c) return null;
  return {
    service_id: c.serviceId,
    scheme_name: c.schemeName,
    flow: c.flow,
    client_id: c.clientId,
    has_client_secret: c.hasClientSecret,
    client_auth: c.clientAuth,
    authorization_url: c.authorizationUrl || null,
    token_url: c.tokenUrl,
    revocation_url: c.revocationUrl || null,
    scopes: c.scopes,
    shared: c.shared,
    redirect_uri: c.redirectUri,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

export function connectionJson(c: Connection | undefined): JsonObject | null {
  if (!c) return null;
  return {
    id: c.id,
    service_id: c.serviceId,
    service_name: c.serviceName,
    scheme_name: c.schemeName ?? null,
    scope: enumName(CredentialScopeSchema, c.scope),
    status: c.status,
    broken_reason: c.brokenReason || null,
    flow: c.flow,
    scopes: c.scopes,
    expires_at: isoTime(c.expiresAt),
    refreshed_at: isoTime(c.refreshedAt),
    configuration_url: c.configurationUrl,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

/**
 * Toolport's Client ID Metadata Document (MCP authorization, SEP-991): the same document the catalog
 * registers with dynamically (services/catalog/src/oauth/upstream.ts toolportClientMetadata), by value here
 * so the gateway needs nothing of the catalog to serve it.
 */
export function toolportClientMetadata(publicUrl: string): Record<string, unknown> {
  const base = publicUrl.replace(/\/$/, "");
  const redirect = `${base}/v1/oauth/callback`;
  const host = new URL(redirect).hostname;
  return {
    client_id: `${base}/v1/oauth/client-metadata.json`,
    client_name: "Toolport",
    client_uri: base,
    redirect_uris: [redirect],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(host) ? "native" : "web",
  };
}

export function oauthRoutes(api: DescribedRouter, deps: AppDeps): void {
  const catalog = deps.clients.catalog;
  const identity = deps.clients.identity;
  const none = auth(identity, "none");
  const caller = auth(identity, "api_key_or_jwt");

  api.put("/services/:service_id/oauth-client", ops.putOAuthClient, caller, async (ctx) => {
    const body = objectBody(ctx);
    const { client } = await catalog.putOAuthClient({
      serviceId: ctx.params.service_id as string,
      schemeName: stringField(body, "scheme_name"),
      clientId: stringField(body, "client_id") ?? "",
      clientSecret: stringField(body, "client_secret"),
      flow: stringField(body, "flow"),
      clientAuth: stringField(body, "client_auth"),
      authorizationUrl: stringField(body, "authorization_url"),
      tokenUrl: stringField(body, "token_url"),
      revocationUrl: stringField(body, "revocation_url"),
      scopes: stringList(body, "scopes") ?? [],
      shared: boolField(body, "shared"),
    });
    ctx.body = clientJson(client);
  });
  api.get("/services/:service_id/oauth-client", ops.getOAuthClient, caller, async (ctx) => {
    ctx.body = clientJson((await catalog.getOAuthClient({ serviceId: ctx.params.service_id as string })).client);
  });
  api.delete("/services/:service_id/oauth-client", ops.deleteOAuthClient, caller, async (ctx) => {
    ctx.body = { deleted: (await catalog.deleteOAuthClient({ serviceId: ctx.params.service_id as string })).deleted };
  });
  api.post("/services/:service_id/oauth/connect", ops.startOAuthConnection, caller, async (ctx) => {
    const body = objectBody(ctx);
    const res = await catalog.startOAuthConnection({
      serviceId: ctx.params.service_id as string,
      returnTo: stringField(body, "return_to"),
    });
    ctx.body = {
      flow: res.flow,
      authorization_url: res.authorizationUrl ?? null,
      expires_at: isoTime(res.expiresAt),
      connection: connectionJson(res.connection),
      readiness: res.connection ? readinessJson(res.readiness) : null,
    };
  });
  api.get("/oauth/callback", ops.oauthCallback, none, async (ctx) => {
    const res = await catalog.completeOAuthConnection({
      state: queryString(ctx, "state") ?? "",
      code: queryString(ctx, "code") ?? "",
      error: queryString(ctx, "error") ?? "",
      errorDescription: queryString(ctx, "error_description") ?? "",
      iss: queryString(ctx, "iss") ?? "",
    });
    // The code was in this address: no cache keeps it, and the next page's requests do not carry it.
    ctx.set("Cache-Control", "no-store");
    ctx.set("Referrer-Policy", "no-referrer");
    ctx.redirect(res.redirectTo);
  });
  api.get("/oauth/client-metadata.json", ops.oauthClientMetadata, none, async (ctx) => {
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.body = toolportClientMetadata(deps.config.PUBLIC_URL) as JsonObject;
  });
  api.get("/connections", ops.listConnections, caller, async (ctx) => {
    ctx.body = (await catalog.listConnections({})).connections.map(connectionJson) as JsonValue;
  });
  api.delete("/connections/:connection_id", ops.deleteConnection, caller, async (ctx) => {
    const res = await catalog.deleteConnection({ connectionId: ctx.params.connection_id as string });
    ctx.body = { deleted: res.deleted, revoked_at_provider: res.revokedAtProvider };
  });
}
