/** The authorization server's RPCs (domain/oauth-server.ts): proto in, domain call, proto out. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { OAuthAuthorizationSchema, OAuthGrantSchema } from "@toolport/proto/toolport/identity/v1/identity_oauth_pb";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import {
  decideAuthorization,
  describeAuthorization,
  exchangeToken,
  introspect,
  type OAuthServerDeps,
  registerClient,
  revokeToken,
  startAuthorization,
} from "../domain/oauth-server.js";
import { apiKeyToProto, permissionsFromProto, requireCaller, ts } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<
  ServiceImpl<typeof IdentityService>,
  | "startOAuthAuthorization"
  | "getOAuthAuthorization"
  | "decideOAuthAuthorization"
  | "exchangeOAuthToken"
  | "revokeOAuthToken"
  | "registerOAuthClient"
  | "introspectOAuthToken"
  | "listOAuthGrants"
>;

export function oauthServerHandlers(deps: IdentityDeps & { oauth: OAuthServerDeps }): Impl {
  const oauth = deps.oauth;
  return {
    async startOAuthAuthorization(req) {
      const started = await startAuthorization(oauth, {
        responseType: req.responseType,
        clientId: req.clientId,
        redirectUri: req.redirectUri,
        state: req.state,
        codeChallenge: req.codeChallenge,
        codeChallengeMethod: req.codeChallengeMethod,
        resource: req.resource,
        scope: req.scope,
      });
      return "requestId" in started
        ? { outcome: { case: "requestId", value: started.requestId } }
        : { outcome: { case: "redirectTo", value: started.redirectTo } };
    },

    async getOAuthAuthorization(req, context) {
      const view = await describeAuthorization(oauth, requireCaller(context), req.requestId);
      return {
        authorization: create(OAuthAuthorizationSchema, {
          requestId: view.request.id,
          clientId: view.client.clientId,
          clientName: view.client.clientName,
          clientUri: view.client.clientUri ?? undefined,
          logoUri: view.client.logoUri ?? undefined,
          clientKind: view.client.kind,
          redirectHost: view.redirectHost,
          firstTime: view.firstTime,
          scope: view.request.scope,
          resource: view.request.resource,
          expiresAt: ts(view.request.expiresAt),
        }),
      };
    },

    async decideOAuthAuthorization(req, context) {
      const caller = requireCaller(context);
      const redirectTo = await decideAuthorization(oauth, caller, req.requestId, {
        allow: req.allow,
        organizationId: req.organizationId,
        permissions: permissionsFromProto(req.permissions),
      });
      deps.log.info(
        { request_id: req.requestId, account_id: caller.accountId, allow: req.allow, organization_id: req.organizationId },
        "oauth authorization decided",
      );
      return { redirectTo };
    },

    async exchangeOAuthToken(req) {
      const answer = await exchangeToken(oauth, {
        grantType: req.grantType,
        clientId: req.clientId,
        code: req.code,
        redirectUri: req.redirectUri,
        codeVerifier: req.codeVerifier,
        refreshToken: req.refreshToken,
        resource: req.resource,
        scope: req.scope,
      });
      return {
        accessToken: answer.accessToken,
        refreshToken: answer.refreshToken,
        expiresIn: BigInt(answer.expiresIn),
        scope: answer.scope,
      };
    },

    async revokeOAuthToken(req) {
      await revokeToken(oauth, req.token, req.clientId);
      return {};
    },

    async registerOAuthClient(req) {
      const client = await registerClient(oauth, req.metadataJson);
      deps.log.info({ client_id: client.client_id }, "oauth client registered");
      return { clientJson: JSON.stringify(client) };
    },

    async introspectOAuthToken(req) {
      const active = await introspect(oauth, req.token);
      if (!active) return { active: false };
      return {
        active: true,
        clientId: active.clientId,
        resource: active.resource,
        scope: active.scope,
        expiresAt: ts(active.expiresAt),
        keyId: active.keyId,
      };
    },

    async listOAuthGrants(req, context) {
      const caller = requireCaller(context);
      const keys = (await deps.keys.keysOfAccount(caller.accountId, req.includeRevoked)).filter((k) => k.oauthClientId);
      const clients = new Map(
        await Promise.all(
          [...new Set(keys.map((k) => k.oauthClientId as string))].map(async (id) => [id, await oauth.store.client(id)] as const),
        ),
      );
      return {
        grants: keys.map((key) => {
          const client = clients.get(key.oauthClientId as string);
          return create(OAuthGrantSchema, {
            key: apiKeyToProto(key),
            clientId: key.oauthClientId as string,
            clientName: client?.clientName ?? (key.oauthClientId as string),
            clientUri: client?.clientUri ?? undefined,
          });
        }),
      };
    },
  };
}
