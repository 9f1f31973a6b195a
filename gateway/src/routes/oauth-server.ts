/**
 * The OAuth 2.1 authorization server of Toolport's MCP server, at the gateway's origin (the issuer is
 * PUBLIC_URL): RFC 8414 metadata (and the OpenID discovery document with the same content),
 * `/oauth/authorize` (a browser arrives here and is sent on to the console's consent page),
 * `/oauth/token`, `/oauth/revoke` (RFC 7009) and, when the operator enables it, `/oauth/register` (RFC
 * 7591). The rules are identity's (services/identity/src/domain/oauth-server.ts); this module speaks
 * the protocol's HTTP: form bodies in, JSON and redirects out, errors as `{error, error_description}`
 * (RFC 6749 5.2) instead of the API's error shape, `Cache-Control: no-store` on tokens, and CORS open on
 * the endpoints a browser-based client calls (metadata, token, revoke, register), none of which act on
 * a cookie or ambient credential.
 */

import type { JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import Router from "@koa/router";
import { readError } from "@toolport/kit/errors";
import { isoTime } from "@toolport/kit/proto-json";
import type { Context, Middleware } from "koa";
import getRawBody from "raw-body";
import type { AppDeps } from "../deps.js";
import { HttpError } from "../http/errors.js";
import { badField, boolField, boolQuery, objectBody, stringField } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { oauthServerOps as ops } from "../openapi/operations/oauth-server.js";
import { keyJson, permissionsField } from "./identity-json.js";

const FORM_LIMIT_BYTES = 16 * 1024;
/** The one scope (identity's MCP_SCOPE). */
export const MCP_SCOPE = "mcp";

/** The authorization server's metadata (RFC 8414 2), for an issuer (PUBLIC_URL's origin). */
export function authorizationServerMetadata(issuer: string, dynamicRegistration: boolean): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    ...(dynamicRegistration ? { registration_endpoint: `${issuer}/oauth/register` } : {}),
    jwks_uri: `${issuer}/v1/auth/jwks.json`,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    // OpenID discovery requires these; no ID token is issued (this server grants API access, not sign-in).
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    service_documentation: `${issuer}/docs`,
  };
}

/** Sends an OAuth error (RFC 6749 5.2). */
function oauthError(ctx: Context, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.set("Cache-Control", "no-store");
  if (status === 401) ctx.set("WWW-Authenticate", `Bearer error="${error}"`);
  ctx.body = { error, error_description: description };
}

const isRefusal = (code: Code) => code === Code.InvalidArgument || code === Code.Unauthenticated;

/** An identity refusal as an OAuth error; anything else (a service down) rethrown for the error middleware. */
function answerRefusal(ctx: Context, err: unknown): void {
  if (!(err instanceof ConnectError)) throw err;
  const { reason, message, code } = readError(err);
  // Invalid argument and unauthenticated are the protocol's refusals; anything else is a fault.
  if (!isRefusal(code)) throw err;
  oauthError(ctx, reason === "invalid_client" || code === Code.Unauthenticated ? 401 : 400, reason, message);
}

/** The form fields of an application/x-www-form-urlencoded body; every value of a repeated field. */
async function formBody(ctx: Context): Promise<URLSearchParams | undefined> {
  const type = ctx.request.type;
  if (type !== "application/x-www-form-urlencoded") {
    oauthError(ctx, 400, "invalid_request", "the body must be application/x-www-form-urlencoded");
    return undefined;
  }
  try {
    return new URLSearchParams(await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf8" }));
  } catch {
    oauthError(ctx, 400, "invalid_request", `the body could not be read (at most ${FORM_LIMIT_BYTES} bytes)`);
    return undefined;
  }
}

const one = (params: URLSearchParams, name: string) => params.get(name) ?? undefined;

/** A parameter sent twice is an error (RFC 6749 3.1), except `resource`, which RFC 8707 repeats. */
function duplicate(params: URLSearchParams): string | undefined {
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (name === "resource") continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

const openCors: Middleware = async (ctx, next) => {
  ctx.set("Access-Control-Allow-Origin", "*");
  if (ctx.method === "OPTIONS") {
    ctx.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    ctx.set("Access-Control-Allow-Headers", "authorization, content-type, mcp-protocol-version");
    ctx.set("Access-Control-Max-Age", "600");
    ctx.status = 204;
    return;
  }
  await next();
};

/** Escapes text for HTML. */
const html = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

export function oauthServerRouter(deps: AppDeps): Router {
  const identity = deps.clients.identity;
  const issuer = new URL(deps.config.PUBLIC_URL).origin;
  const metadata = authorizationServerMetadata(issuer, deps.config.OAUTH_DYNAMIC_REGISTRATION);
  const router = new Router();

  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
    router.all(path, openCors, async (ctx) => {
      if (ctx.method !== "GET" && ctx.method !== "HEAD") {
        ctx.status = 405;
        ctx.set("Allow", "GET, HEAD, OPTIONS");
        return;
      }
      ctx.set("Cache-Control", "public, max-age=3600");
      ctx.body = metadata;
    });
  }

  router.get("/oauth/authorize", async (ctx) => {
    const q = new URLSearchParams(ctx.querystring);
    const twice = duplicate(q);
    const show = (status: number, error: string, description: string) => {
      ctx.status = status;
      ctx.set("Cache-Control", "no-store");
      if (ctx.accepts("html", "json") === "html") {
        ctx.type = "text/html; charset=utf-8";
        ctx.body =
          `<!doctype html><meta charset="utf-8"><title>Authorization failed</title>` +
          `<h1>This assistant could not be authorized</h1><p>${html(description)}</p><p><code>${html(error)}</code></p>`;
      } else ctx.body = { error, error_description: description };
    };
    if (twice) return show(400, "invalid_request", `the parameter ${twice} was sent more than once`);
    try {
      const { outcome } = await identity.startOAuthAuthorization({
        responseType: one(q, "response_type"),
        clientId: one(q, "client_id"),
        redirectUri: one(q, "redirect_uri"),
        state: one(q, "state"),
        codeChallenge: one(q, "code_challenge"),
        codeChallengeMethod: one(q, "code_challenge_method"),
        resource: q.getAll("resource"),
        scope: one(q, "scope"),
      });
      ctx.set("Cache-Control", "no-store");
      if (outcome.case === "requestId") {
        ctx.redirect(`${issuer}/console/oauth/authorize?request=${encodeURIComponent(outcome.value)}`);
      } else if (outcome.case === "redirectTo") {
        ctx.redirect(outcome.value);
      } else throw new Error("StartOAuthAuthorization answered no outcome");
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      const { reason, message, code } = readError(err);
      if (!isRefusal(code)) throw err;
      show(400, reason, message);
    }
  });

  router.all("/oauth/token", openCors, async (ctx) => {
    if (ctx.method !== "POST") return oauthError(ctx, 405, "invalid_request", "use POST");
    const form = await formBody(ctx);
    if (!form) return;
    const twice = duplicate(form);
    if (twice) return oauthError(ctx, 400, "invalid_request", `the parameter ${twice} was sent more than once`);
    if (ctx.get("authorization"))
      return oauthError(
        ctx,
        401,
        "invalid_client",
        "this server has public clients only: send client_id in the body, no client authentication",
      );
    try {
      const answer = await identity.exchangeOAuthToken({
        grantType: one(form, "grant_type"),
        clientId: one(form, "client_id"),
        code: one(form, "code"),
        redirectUri: one(form, "redirect_uri"),
        codeVerifier: one(form, "code_verifier"),
        refreshToken: one(form, "refresh_token"),
        resource: form.getAll("resource"),
        scope: one(form, "scope"),
      });
      ctx.set("Cache-Control", "no-store");
      ctx.set("Pragma", "no-cache");
      ctx.body = {
        access_token: answer.accessToken,
        token_type: "Bearer",
        expires_in: Number(answer.expiresIn),
        refresh_token: answer.refreshToken,
        scope: answer.scope,
      };
    } catch (err) {
      answerRefusal(ctx, err);
    }
  });

  router.all("/oauth/revoke", openCors, async (ctx) => {
    if (ctx.method !== "POST") return oauthError(ctx, 405, "invalid_request", "use POST");
    const form = await formBody(ctx);
    if (!form) return;
    try {
      await identity.revokeOAuthToken({
        token: one(form, "token") ?? "",
        tokenTypeHint: one(form, "token_type_hint"),
        clientId: one(form, "client_id"),
      });
      ctx.status = 200;
      ctx.body = "";
    } catch (err) {
      answerRefusal(ctx, err);
    }
  });

  router.all("/oauth/register", openCors, async (ctx) => {
    if (ctx.method !== "POST") return oauthError(ctx, 405, "invalid_request", "use POST");
    if (ctx.request.type !== "application/json")
      return oauthError(ctx, 400, "invalid_client_metadata", "the body must be application/json (RFC 7591)");
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf8" });
    } catch {
      return oauthError(ctx, 400, "invalid_client_metadata", `the body could not be read (at most ${FORM_LIMIT_BYTES} bytes)`);
    }
    try {
      const { clientJson } = await identity.registerOAuthClient({ metadataJson: text });
      ctx.status = 201;
      ctx.set("Cache-Control", "no-store");
      ctx.body = JSON.parse(clientJson);
    } catch (err) {
      answerRefusal(ctx, err);
    }
  });

  return router;
}

/** The /v1 routes of the authorization server: the consent page's, the person's grants, the MCP server's token check. */
export function oauthServerApiRoutes(api: DescribedRouter, deps: AppDeps): void {
  const identity = deps.clients.identity;
  const person = auth(identity, "jwt");
  const none = auth(identity, "none");

  api.get("/oauth/authorizations/:request_id", ops.getAuthorization, person, async (ctx) => {
    const { authorization: a } = await identity.getOAuthAuthorization({ requestId: ctx.params.request_id as string });
    if (!a) throw new Error("GetOAuthAuthorization answered no authorization");
    ctx.set("Cache-Control", "no-store");
    ctx.body = {
      request_id: a.requestId,
      client_id: a.clientId,
      client_name: a.clientName,
      client_uri: a.clientUri ?? null,
      logo_uri: a.logoUri ?? null,
      client_kind: a.clientKind,
      redirect_host: a.redirectHost,
      first_time: a.firstTime,
      scope: a.scope,
      resource: a.resource,
      expires_at: isoTime(a.expiresAt),
    };
  });

  api.post("/oauth/authorizations/:request_id", ops.decideAuthorization, person, async (ctx) => {
    const body = objectBody(ctx);
    const allow = boolField(body, "allow");
    if (allow === undefined) throw badField("allow", "is required: true allows the client, false denies it");
    for (const name of Object.keys(body))
      if (!["allow", "organization_id", "permissions"].includes(name))
        throw badField(name, "is not a field of a decision; use allow, organization_id, permissions");
    const { redirectTo } = await identity.decideOAuthAuthorization({
      requestId: ctx.params.request_id as string,
      allow,
      organizationId: stringField(body, "organization_id"),
      permissions: permissionsField(body),
    });
    ctx.set("Cache-Control", "no-store");
    ctx.body = { redirect_to: redirectTo };
  });

  api.get("/oauth/grants", ops.listGrants, person, async (ctx) => {
    const { grants } = await identity.listOAuthGrants({
      includeRevoked: boolQuery(ctx.query.include_revoked, "include_revoked"),
    });
    ctx.body = grants.map((g) => ({
      key: g.key ? keyJson(g.key) : null,
      client_id: g.clientId,
      client_name: g.clientName,
      client_uri: g.clientUri ?? null,
    })) as JsonValue;
  });

  api.get("/oauth/token-info", ops.tokenInfo, none, async (ctx) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get("authorization"));
    const refuse = (description: string) => {
      ctx.set("WWW-Authenticate", `Bearer error="invalid_token", error_description="${description}"`);
      return new HttpError(401, "invalid_token", description);
    };
    if (!match) throw refuse("send the access token as Authorization: Bearer <token>");
    const info = await identity.introspectOAuthToken({ token: match[1] as string });
    if (!info.active) throw refuse("the access token is unknown, expired or revoked");
    ctx.set("Cache-Control", "no-store");
    ctx.body = {
      active: true,
      client_id: info.clientId,
      resource: info.resource,
      scope: info.scope,
      exp: Math.floor(info.expiresAt ? Number(info.expiresAt.seconds) : 0),
      key_id: info.keyId,
    };
  });
}
