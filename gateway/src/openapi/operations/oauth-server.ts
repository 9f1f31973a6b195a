/**
 * The /v1 routes of Toolport's own OAuth authorization server (gateway/src/routes/oauth-server.ts): the
 * consent page's reads and decision, the person's grants, and the MCP server's check of a token. The
 * protocol endpoints themselves (/oauth/*, /.well-known/*) are OAuth's, described by RFC 8414 metadata,
 * not here.
 */
import type { OperationDoc } from "../describe.js";
import { arrayOf, boolean, closed, ref, type Schema, string, stringOrNull, timestamp } from "../schemas.js";

const uuid = { type: "string", format: "uuid" };
const T = "2026-03-01T12:00:00.000Z";
const requestId = { request_id: { description: "The authorization request's id (the consent page's `request`).", schema: uuid } };
const exampleAuthorization = {
  request_id: "5b0f6c1e-8a2d-4e3f-9b1c-7d6e5f4a3b2c",
  client_id: "https://assistant.example.com/oauth/client.json",
  client_name: "Example Assistant",
  client_uri: "https://assistant.example.com",
  logo_uri: null,
  client_kind: "metadata_document",
  redirect_host: "assistant.example.com",
  first_time: true,
  scope: "mcp",
  resource: "https://toolport.example.com/mcp",
  expires_at: T,
};

export const oauthServerSchemas: Record<string, Schema> = {
  OAuthAuthorization: {
    description: "An MCP client's authorization request, as the consent page shows it to the signed-in person.",
    ...closed({
      request_id: uuid,
      client_id: { ...string, description: "An https URL (a client metadata document) or a registered client's id." },
      client_name: string,
      client_uri: stringOrNull,
      logo_uri: stringOrNull,
      client_kind: { type: "string", enum: ["metadata_document", "dynamic"] },
      redirect_host: { ...string, description: "Where the browser goes after the decision (host and port)." },
      first_time: { ...boolean, description: "True when this person never granted this client anything before." },
      scope: string,
      resource: { ...string, description: "The MCP server the token will be for (RFC 8707)." },
      expires_at: { ...timestamp, description: "The request is answered before this (10 minutes after it began)." },
    }),
  },
  OAuthGrant: {
    description: "A grant to an MCP client: the key its tokens act as, and the client.",
    ...closed({
      key: ref("ApiKey"),
      client_id: string,
      client_name: string,
      client_uri: stringOrNull,
    }),
  },
  OAuthTokenInfo: {
    description: "An active access token's facts (RFC 7662's names).",
    ...closed({
      active: { type: "boolean", const: true },
      client_id: string,
      resource: string,
      scope: string,
      exp: { type: "integer", description: "Expiry, seconds since the epoch." },
      key_id: { ...uuid, description: "The grant's key." },
    }),
  },
};

export const oauthServerOps = {
  getAuthorization: {
    operationId: "getOAuthAuthorization",
    summary: "An MCP client's authorization request (consent page)",
    description:
      "For the console's consent page, signed in (a JWT; API keys cannot grant). 404 " +
      "`authorization_request_not_found` once it was answered or expired.",
    tags: ["Agents"],
    path: requestId,
    responses: { 200: { description: "The request.", schema: ref("OAuthAuthorization"), example: exampleAuthorization } },
  } satisfies OperationDoc,
  decideAuthorization: {
    operationId: "decideOAuthAuthorization",
    summary: "Allow or deny an MCP client (consent page)",
    description:
      "The person's decision. Allowing names the organization the grant acts in (default: the personal one; viewers " +
      "cannot) and its permissions, with the same fields as an API key's (null: unrestricted). Nothing is granted " +
      "until the client redeems the code with its PKCE verifier: then the grant appears among the person's API keys " +
      "(`oauth_client_id` set). The answer is where to send the browser: the client's redirect_uri with `code`, " +
      "`state` and `iss`, or `error=access_denied`.",
    tags: ["Agents"],
    path: requestId,
    body: {
      schema: closed(
        { allow: boolean },
        {
          organization_id: uuid,
          permissions: { anyOf: [ref("ApiKeyPermissions"), { type: "null" }] },
        },
      ),
      example: {
        allow: true,
        permissions: {
          allowed_services: null,
          allowed_tools: null,
          max_cost_per_call_cents: 25,
          daily_spend_limit_cents: 500,
          require_confirmation: true,
        },
      },
    },
    responses: {
      200: {
        description: "Where the browser goes next.",
        schema: closed({ redirect_to: string }),
        example: {
          redirect_to: "https://assistant.example.com/callback?code=tpac_...&state=xyz&iss=https%3A%2F%2Ftoolport.example.com",
        },
      },
    },
  } satisfies OperationDoc,
  listGrants: {
    operationId: "listOAuthGrants",
    summary: "The person's grants to MCP clients",
    description:
      "Newest first. Each is an API key of the caller's (revoke it with DELETE /v1/api-keys/{key_id}: the next " +
      "request with its tokens is refused); its usage is the key's usage.",
    tags: ["Agents"],
    query: {
      include_revoked: {
        description: "Include revoked grants (`true`/`1`, default false).",
        schema: { type: "boolean", default: false },
      },
    },
    responses: {
      200: {
        description: "The grants.",
        schema: arrayOf(ref("OAuthGrant")),
        example: [
          {
            key: {
              id: "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
              key_prefix: "mcpgrant",
              name: "MCP: Example Assistant",
              created_at: T,
              last_used: T,
              permissions: null,
              organization_id: "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
              account_id: "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
              agent_name: "Example Assistant",
              agent_type: "assistant",
              purpose: "OAuth grant to the MCP client https://assistant.example.com/oauth/client.json",
              revoked_at: null,
              expires_at: null,
              created_by_key_id: null,
              console_key: null,
              oauth_client_id: "https://assistant.example.com/oauth/client.json",
            },
            client_id: "https://assistant.example.com/oauth/client.json",
            client_name: "Example Assistant",
            client_uri: "https://assistant.example.com",
          },
        ],
      },
    },
  } satisfies OperationDoc,
  tokenInfo: {
    operationId: "getOAuthTokenInfo",
    summary: "The facts of the OAuth access token sent (MCP server)",
    description:
      "Send an access token Toolport's authorization server issued as `Authorization: Bearer`: its client, resource, " +
      "scope, expiry and grant. The MCP server checks every request's token here, so an expired or revoked token (or " +
      "one whose grant was revoked) is refused on its next use. A token that is not active is a 401.",
    tags: ["Agents"],
    headers: {
      authorization: { description: "`Bearer <access token>`.", schema: string, required: true },
    },
    responses: {
      200: {
        description: "The token is active.",
        schema: ref("OAuthTokenInfo"),
        example: {
          active: true,
          client_id: "https://assistant.example.com/oauth/client.json",
          resource: "https://toolport.example.com/mcp",
          scope: "mcp",
          exp: 1772370000,
          key_id: "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
        },
      },
      401: { description: "No token, or one that is not active (`invalid_token`).", schema: ref("Error") },
    },
  } satisfies OperationDoc,
};
