/** CatalogService OAuth RPCs: client registration, connecting, connections and (internal) refresh. */

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Connection,
  ConnectionSchema,
  type OAuthClient,
  OAuthClientSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_oauth_pb";
import {
  type CredentialMaterial as CredentialMaterialMsg,
  CredentialMaterialSchema,
  OAuthAccessTokenSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { Readiness } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import type { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { CatalogDeps } from "../domain/deps.js";
import type { ConnectionView, OAuthTokens } from "../domain/model.js";
import {
  completeOAuthConnection,
  deleteConnection,
  getOAuthClient,
  listConnections,
  type OAuthClientView,
  putOAuthClient,
  refreshOAuthConnection,
  removeOAuthClient,
  startOAuthConnection,
} from "../domain/oauth.js";
import { callerOf } from "./caller.js";
import { credentialScopeToProto, readinessToProto, ts } from "./convert.js";

type Impl = Pick<
  ServiceImpl<typeof CatalogService>,
  | "putOAuthClient"
  | "getOAuthClient"
  | "deleteOAuthClient"
  | "startOAuthConnection"
  | "completeOAuthConnection"
  | "listConnections"
  | "deleteConnection"
  | "refreshOAuthConnection"
>;

function clientToProto(v: OAuthClientView): OAuthClient {
  const c = v.client;
  return create(OAuthClientSchema, {
    serviceId: c.serviceId,
    schemeName: c.schemeName,
    flow: c.flow,
    clientId: c.clientId,
    hasClientSecret: c.sealedSecret !== null,
    clientAuth: c.clientAuth,
    authorizationUrl: c.authorizationUrl ?? "",
    tokenUrl: c.tokenUrl,
    revocationUrl: c.revocationUrl ?? "",
    scopes: v.scopes,
    shared: c.shared,
    redirectUri: v.redirectUri,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}

function connectionToProto(c: ConnectionView): Connection {
  return create(ConnectionSchema, {
    id: c.id,
    serviceId: c.serviceId,
    serviceName: c.serviceName,
    schemeName: c.schemeName ?? undefined,
    scope: credentialScopeToProto[c.scope],
    status: c.status,
    brokenReason: c.brokenReason ?? "",
    flow: c.flow,
    scopes: c.scopes,
    expiresAt: ts(c.expiresAt),
    refreshedAt: ts(c.refreshedAt),
    configurationUrl: c.configurationUrl,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}

/** An OAuth connection's access token as ResolveCredential and RefreshOAuthConnection hand it to execution. */
export function oauthMaterialToProto(t: OAuthTokens, connectionId: string): CredentialMaterialMsg {
  return create(CredentialMaterialSchema, {
    kind: {
      case: "oauth",
      value: create(OAuthAccessTokenSchema, {
        accessToken: t.accessToken,
        tokenType: t.tokenType,
        expiresAt: t.expiresAt ? timestampFromDate(new Date(t.expiresAt)) : undefined,
        connectionId,
      }),
    },
  });
}

export function createOAuthHandlers(deps: CatalogDeps): Impl {
  return {
    async putOAuthClient(req, context) {
      const view = await putOAuthClient(
        deps,
        {
          serviceId: req.serviceId,
          schemeName: req.schemeName,
          clientId: req.clientId,
          clientSecret: req.clientSecret,
          flow: req.flow,
          clientAuth: req.clientAuth,
          authorizationUrl: req.authorizationUrl,
          tokenUrl: req.tokenUrl,
          revocationUrl: req.revocationUrl,
          scopes: req.scopes,
          shared: req.shared,
        },
        callerOf(context),
      );
      return { client: clientToProto(view) };
    },
    async getOAuthClient(req, context) {
      return { client: clientToProto(await getOAuthClient(deps, req.serviceId, callerOf(context))) };
    },
    async deleteOAuthClient(req, context) {
      return { deleted: await removeOAuthClient(deps, req.serviceId, callerOf(context)) };
    },
    async startOAuthConnection(req, context) {
      const started = await startOAuthConnection(deps, { serviceId: req.serviceId, returnTo: req.returnTo }, callerOf(context));
      return {
        flow: started.flow,
        authorizationUrl: started.authorizationUrl,
        expiresAt: ts(started.expiresAt),
        connection: started.connection ? connectionToProto(started.connection) : undefined,
        readiness: started.readiness ? readinessToProto[started.readiness] : Readiness.UNSPECIFIED,
      };
    },
    async completeOAuthConnection(req) {
      const done = await completeOAuthConnection(deps, {
        state: req.state,
        code: req.code,
        error: req.error,
        errorDescription: req.errorDescription,
        iss: req.iss,
      });
      return { redirectTo: done.redirectTo };
    },
    async listConnections(_req, context) {
      return { connections: (await listConnections(deps, callerOf(context))).map(connectionToProto) };
    },
    async deleteConnection(req, context) {
      const { revokedAtProvider } = await deleteConnection(deps, req.connectionId, callerOf(context));
      return { deleted: true, revokedAtProvider };
    },
    async refreshOAuthConnection(req) {
      const { tokens, refreshed } = await refreshOAuthConnection(deps, {
        connectionId: req.connectionId,
        accountId: req.accountId,
        organizationId: req.organizationId,
        minValidSeconds: req.minValidSeconds ?? 60,
        rejectedAccessToken: req.rejectedAccessToken,
        insufficientScope: req.insufficientScope.length > 0 ? req.insufficientScope : undefined,
        brokenReason: req.brokenReason,
      });
      return { credential: oauthMaterialToProto(tokens, req.connectionId), refreshed };
    },
  };
}
