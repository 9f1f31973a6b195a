/** The OAuth connection routes' operations (gateway/src/routes/oauth.ts) and the schemas only they use. */
import type { OperationDoc } from "../describe.js";
import {
  arrayOf,
  boolean,
  closed,
  oneOf,
  ref,
  type Schema,
  string,
  stringArray,
  stringOrNull,
  timestamp,
  timestampOrNull,
} from "../schemas.js";

const T = "2026-03-01T12:00:00.000Z";
const uuid = { type: "string", format: "uuid" };
const serviceId = { service_id: { description: "The service's id, or its slug.", schema: string } };
const flow = oneOf("authorization_code", "client_credentials");
const clientAuth = oneOf("client_secret_basic", "client_secret_post");
const httpUrl = { type: "string", description: "An absolute http(s) URL." };

const exampleServiceId = "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b";
const exampleClient = {
  service_id: exampleServiceId,
  scheme_name: "oauth",
  flow: "authorization_code",
  client_id: "toolport-web",
  has_client_secret: true,
  client_auth: "client_secret_basic",
  authorization_url: "https://auth.example.com/authorize",
  token_url: "https://auth.example.com/token",
  revocation_url: "https://auth.example.com/revoke",
  scopes: ["items:read", "items:write"],
  shared: false,
  redirect_uri: "https://api.toolport.example/v1/oauth/callback",
  created_at: T,
  updated_at: T,
};
const exampleConnection = {
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  service_id: exampleServiceId,
  service_name: "Items API",
  scheme_name: "oauth",
  scope: "caller",
  status: "active",
  broken_reason: null,
  flow: "authorization_code",
  scopes: ["items:read", "items:write"],
  expires_at: "2026-03-01T13:00:00.000Z",
  refreshed_at: null,
  configuration_url: `https://api.toolport.example/console/services/${exampleServiceId}/connect`,
  created_at: T,
  updated_at: T,
};

export const oauthSchemas: Record<string, Schema> = {
  OAuthClient: {
    description: "A service's OAuth client registration, as its publisher sees it: never the client secret.",
    ...closed({
      service_id: string,
      scheme_name: { ...string, description: "The oauth2 (or openIdConnect) security scheme it serves." },
      flow: { ...flow, description: "How a connection is made: in a browser, or machine to machine." },
      client_id: string,
      has_client_secret: { ...boolean, description: "A client secret is stored (encrypted); false for a public client." },
      client_auth: { ...clientAuth, description: "How the client authenticates at the token endpoint." },
      authorization_url: { ...stringOrNull, description: "The provider's authorization endpoint; null for client credentials." },
      token_url: string,
      revocation_url: {
        ...stringOrNull,
        description: "The provider's RFC 7009 revocation endpoint; null when it offers none (tokens then expire on their own).",
      },
      scopes: {
        ...stringArray,
        description: "Every scope a connection asks for: the registration's own and those the tools' security requirements name.",
      },
      shared: { ...boolean, description: "One connection for the whole organization, made by its owners and admins." },
      redirect_uri: {
        ...string,
        description: "The callback to register at the provider: `{PUBLIC_URL}/v1/oauth/callback`.",
      },
      created_at: timestamp,
      updated_at: timestamp,
    }),
  },
  Connection: {
    description: "An OAuth connection: the tokens Toolport holds for a caller or an organization. Never a token.",
    ...closed({
      id: uuid,
      service_id: string,
      service_name: string,
      scheme_name: stringOrNull,
      scope: { ...oneOf("caller", "organization"), description: "Whom it serves." },
      status: {
        ...oneOf("active", "broken", "needs_consent"),
        description:
          "`broken` once the provider refused a refresh (`invalid_grant`: revoked or expired at the provider); the service's " +
          "tools are then `needs_credential` until it is reconnected at `configuration_url`. `needs_consent`: an " +
          "OAuth-protected MCP server refused a call for want of a scope the grant lacks (403 `insufficient_scope`); the " +
          "connection still serves what it covers, the tools are `needs_credential`, and connecting again asks for the wider scope.",
      },
      broken_reason: {
        ...stringOrNull,
        description: "Why it broke, or which scopes it needs consent to, in words; null while active.",
      },
      flow,
      scopes: { ...stringArray, description: "The scopes granted." },
      expires_at: { ...timestampOrNull, description: "When the current access token expires (refreshed before it does)." },
      refreshed_at: { ...timestampOrNull, description: "When the access token was last refreshed." },
      configuration_url: { ...string, description: "Where a person reconnects it (the console's connect page)." },
      created_at: timestamp,
      updated_at: timestamp,
    }),
  },
  OAuthConnectStarted: {
    description:
      "Authorization code: where to send the person (`authorization_url`, with state and a PKCE challenge). Client " +
      "credentials: the connection already made.",
    ...closed({
      flow,
      authorization_url: stringOrNull,
      expires_at: { ...timestampOrNull, description: "When the started authorization stops being accepted (10 minutes)." },
      connection: { oneOf: [ref("Connection"), { type: "null" }] },
      readiness: {
        type: ["string", "null"],
        enum: ["ready", "unavailable", null],
        description: "The service's tools' readiness once connected (client credentials); null until the person returns.",
      },
    }),
  },
};

export const oauthOps = {
  putOAuthClient: {
    operationId: "putOAuthClient",
    summary: "Register the service's OAuth client (publisher)",
    description:
      "The OAuth client Toolport uses to connect callers to this service. The authorization and token URLs default to " +
      "the document's oauth2 scheme flows (`authorizationCode`, else `clientCredentials`); the scopes asked for are " +
      "these plus those the operations' security requirements name. Register `redirect_uri` (in the answer) at the " +
      "provider. The client secret is stored encrypted and never returned. Replaces an earlier registration.",
    tags: ["Services"],
    path: serviceId,
    body: {
      schema: closed(
        { client_id: string },
        {
          client_secret: { ...string, description: "Absent for a public client (PKCE alone)." },
          scheme_name: { ...string, description: "Default: the service's first oauth2 or openIdConnect scheme." },
          flow: { ...flow, description: "Default: authorization_code when the scheme has that flow, else client_credentials." },
          client_auth: { ...clientAuth, description: "Default client_secret_basic." },
          authorization_url: httpUrl,
          token_url: httpUrl,
          revocation_url: { ...httpUrl, description: "The provider's RFC 7009 endpoint, when it has one." },
          scopes: { ...stringArray, description: "Scopes to ask for beside the ones the tools name." },
          shared: {
            ...boolean,
            description: "One connection for the whole organization (default: true for client credentials, else false).",
          },
        },
      ),
      example: {
        client_id: "toolport-web",
        client_secret: "s3cr3t-from-the-provider",
        revocation_url: "https://auth.example.com/revoke",
      },
    },
    responses: {
      200: { description: "Registered.", schema: ref("OAuthClient"), example: exampleClient },
      415: { description: "The body is not JSON.", schema: ref("Error") },
    },
  },
  getOAuthClient: {
    operationId: "getOAuthClient",
    summary: "The service's OAuth client (publisher)",
    description:
      "For those who manage the service: its organization's owners and admins, and platform admins (others who see " +
      "the service get 403 `not_service_owner`). The client secret is never returned.",
    tags: ["Services"],
    path: serviceId,
    responses: { 200: { description: "The registration.", schema: ref("OAuthClient"), example: exampleClient } },
  },
  deleteOAuthClient: {
    operationId: "deleteOAuthClient",
    summary: "Remove the service's OAuth client (publisher)",
    description: "Connections already made stay until deleted, but can no longer be refreshed.",
    tags: ["Services"],
    path: serviceId,
    responses: {
      200: { description: "Removed.", schema: closed({ deleted: boolean }), example: { deleted: true } },
    },
  },
  startOAuthConnection: {
    operationId: "startOAuthConnection",
    summary: "Connect a service through its OAuth flow",
    description:
      "Authorization code (RFC 6749 with PKCE, RFC 7636): answers the provider's authorization URL with a single-use " +
      "`state` and an S256 code challenge; send the person's browser there. The provider returns it to " +
      "`/v1/oauth/callback`, which exchanges the code and sends the browser on to `return_to` with `oauth=connected` " +
      "(or `oauth_error=<code>`). Client credentials: the token is fetched now and the connection answered. A " +
      "connection serves the caller, or the whole organization when the publisher's client is `shared` (owners and " +
      "admins only). 409 `oauth_not_configured` when the publisher registered no OAuth client.",
    tags: ["Services"],
    path: serviceId,
    body: {
      schema: {
        type: "object",
        properties: {
          return_to: {
            ...string,
            description: "A path on this gateway to return the browser to (default: the service's connect page in the console).",
          },
        },
      },
      required: false,
      example: { return_to: `/console/services/${exampleServiceId}/connect` },
    },
    responses: {
      200: {
        description: "Started (authorization code) or connected (client credentials).",
        schema: ref("OAuthConnectStarted"),
        example: {
          flow: "authorization_code",
          authorization_url:
            "https://auth.example.com/authorize?response_type=code&client_id=toolport-web&redirect_uri=https%3A%2F%2Fapi.toolport.example%2Fv1%2Foauth%2Fcallback&scope=items%3Aread&state=Qm9v&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
          expires_at: "2026-03-01T12:10:00.000Z",
          connection: null,
          readiness: null,
        },
      },
      409: {
        description: "`oauth_not_configured`: the service has no OAuth client; connect a bearer token instead.",
        schema: ref("Error"),
      },
      412: {
        description: "`oauth_token_request_failed`: the provider refused the client-credentials token request.",
        schema: ref("Error"),
      },
      415: { description: "The body is not JSON.", schema: ref("Error") },
    },
  },
  oauthCallback: {
    operationId: "oauthCallback",
    summary: "Where the OAuth provider returns the browser",
    description:
      "Not called by programs: the provider redirects the person's browser here (RFC 6749 §4.1.2). The code is " +
      "exchanged with the PKCE verifier of the authorization its `state` names (each state once, for 10 minutes), and " +
      "the browser is sent on to the `return_to` given when the connection started, with `oauth=connected`, or " +
      "`oauth_error=<code>` (`access_denied`, `exchange_failed` with `reason`, `state_expired`...) and nothing stored. A " +
      "state that names no started authorization (unknown, used, missing) is a 400 `invalid_oauth_state`: there is " +
      "nowhere safe to send the browser.",
    tags: ["Services"],
    query: {
      state: { description: "The state the authorization started with.", schema: string },
      code: { description: "The authorization code.", schema: string },
      error: { description: "The provider's error code, when the person refused or it failed.", schema: string },
      error_description: { description: "The provider's words about the error.", schema: string },
      iss: {
        description:
          "The provider's issuer (RFC 9207): for an OAuth-protected MCP server it must equal its authorization server's " +
          "issuer (and is required when that server says it sends it), else the connection fails with `oauth_error=invalid_issuer`.",
        schema: string,
      },
    },
    responses: {
      302: {
        description: "To `return_to` with `oauth=connected` or `oauth_error=<code>`.",
        headers: { Location: { description: "Where the browser goes next.", schema: string } },
      },
    },
  },
  oauthClientMetadata: {
    operationId: "oauthClientMetadata",
    summary: "Toolport's OAuth Client ID Metadata Document",
    description:
      "Toolport as an OAuth client of OAuth-protected MCP servers (issue 32): an authorization server that supports " +
      "Client ID Metadata Documents takes this document's own URL as Toolport's `client_id` and reads the client's name " +
      "and redirect URI here, so no registration is needed. `client_id` is this URL; `redirect_uris` is the gateway's " +
      "`/v1/oauth/callback`; a public client (`token_endpoint_auth_method: none`, PKCE) with the authorization-code " +
      "and refresh-token grants. Used only when PUBLIC_URL is https (authorization servers require it); otherwise " +
      "Toolport registers dynamically.",
    tags: ["Services"],
    responses: {
      200: {
        description: "The client metadata document (RFC 7591 fields).",
        schema: {
          type: "object",
          required: ["client_id", "client_name", "redirect_uris", "grant_types", "token_endpoint_auth_method"],
          properties: {
            client_id: { type: "string", description: "This document's own URL." },
            client_name: { type: "string" },
            client_uri: { type: "string" },
            redirect_uris: { type: "array", items: { type: "string" } },
            grant_types: { type: "array", items: { type: "string" } },
            response_types: { type: "array", items: { type: "string" } },
            token_endpoint_auth_method: { type: "string" },
            application_type: { type: "string", enum: ["web", "native"] },
          },
        },
        example: {
          client_id: "https://toolport.example.com/v1/oauth/client-metadata.json",
          client_name: "Toolport",
          client_uri: "https://toolport.example.com",
          redirect_uris: ["https://toolport.example.com/v1/oauth/callback"],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
          application_type: "web",
        },
      },
    },
  },
  listConnections: {
    operationId: "listConnections",
    summary: "The caller's OAuth connections",
    description: "The caller's own and its organization's, newest first; never a token.",
    tags: ["Services"],
    responses: {
      200: { description: "Connections.", schema: arrayOf(ref("Connection")), example: [exampleConnection] },
    },
  },
  deleteConnection: {
    operationId: "deleteConnection",
    summary: "Delete an OAuth connection",
    description:
      "Revokes its tokens at the provider first when the client registration names an RFC 7009 endpoint (best effort: " +
      "`revoked_at_provider` says whether the provider confirmed), then forgets them. An organization's connection is " +
      "deleted by its owners and admins.",
    tags: ["Services"],
    path: { connection_id: { description: "The connection's id.", schema: string } },
    responses: {
      200: {
        description: "Deleted.",
        schema: closed({ deleted: boolean, revoked_at_provider: boolean }),
        example: { deleted: true, revoked_at_provider: true },
      },
    },
  },
} satisfies Record<string, OperationDoc>;
