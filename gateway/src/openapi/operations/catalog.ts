/** The catalog routes' operations (gateway/src/routes/catalog.ts) and the schemas only they use. */
import type { OperationDoc, ParameterDoc, ResponseDoc } from "../describe.js";
import {
  arrayOf,
  boolean,
  closed,
  integer,
  number,
  oneOf,
  readiness,
  ref,
  type Schema,
  string,
  stringArray,
  stringOrNull,
  timestamp,
  timestampOrNull,
} from "../schemas.js";

// ---- shared pieces ----------------------------------------------------------------------------

/** SERVICE-SPEC: "In the machine-readable description, `parameters` of a tool is a JSON Schema object describing its inputs". */
const TOOL_NOTE =
  "The spec's Tool (full shape). In the machine-readable description, `parameters` of a tool is a JSON Schema " +
  "object describing its inputs: keyed by parameter name, each entry gives the parameter's type, location, " +
  "description and required, plus default, enum, minimum, maximum, encode_slashes and json_schema when set. " +
  "The same inputs as one JSON Schema are `input_schema` of `GET /tools/{tool_id}/describe`.";
const toolSchema: Schema = { ...ref("Tool"), description: TOOL_NOTE };
const tools: Schema = { ...arrayOf(toolSchema), description: "Tools (the spec's full shape)." };
const services: Schema = arrayOf(ref("Service"));

const visibility = oneOf("public", "private", "internal", "local_only");
const uuid = { type: "string", format: "uuid" };
const cents = { type: "integer", minimum: 0 };
const queryBool = (description: string): ParameterDoc => ({
  description: `${description} \`true\` or \`1\`; \`false\`, \`0\` or empty for false (default false).`,
  schema: { type: "boolean", default: false },
});
const searchQuery = {
  query: { description: "Words to match semantically against tool names and descriptions.", schema: string },
  q: { description: "The same as `query` (read when `query` is absent).", schema: string },
  service_id: { description: "Only tools of this service (its id or slug).", schema: string },
};

const toolId = { tool_id: { description: "The tool's id, or its slug.", schema: string } };
const serviceId = { service_id: { description: "The service's id, or its slug.", schema: string } };

const err = (description: string): ResponseDoc => ({ description, schema: ref("Error") });
const unsupportedMediaType = err("The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`.");
/** The publishing routes' 415: a YAML document is the usual first guess. */
const documentNotJson = err(
  "The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`. A YAML body " +
    "(`application/yaml`, `text/yaml`) is refused with a message saying to send the document, JSON or YAML, as text " +
    "in `api.document_text`.",
);
const slugTaken = (of: string) => err(`The slug is already used by another ${of} (\`slug_taken\`).`);
/** The auth middleware's lookup of `svc-org-id` (identity): a route without path parameters gets no 404 otherwise. */
const orgNotFound = err("The `svc-org-id` organization does not exist or the caller is not a member (`organization_not_found`).");
const deleted = closed({ deleted: { type: "boolean", const: true } });

const rateLimitHeaders: ResponseDoc["headers"] = {
  "RateLimit-Limit": { description: "Requests allowed per window.", schema: integer },
  "RateLimit-Remaining": { description: "Requests left in this window.", schema: integer },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: integer },
};

/** The list routes' paging (catalog domain/reads.ts LIST_DEFAULT_LIMIT and LIST_MAX_LIMIT). */
const pageParams = {
  limit: {
    description: "Page size: default 20; more than 500 gives 500; 0 or less is a 400 (`invalid_limit`).",
    schema: { type: "integer", minimum: 1, maximum: 500, default: 20 },
  },
  cursor: {
    description:
      "Where the page starts: the `cursor` of the previous answer's `Link` header (400 `invalid_cursor` for anything else).",
    schema: { type: "string" },
  },
} satisfies OperationDoc["query"];

const pageHeaders: ResponseDoc["headers"] = {
  Link: {
    description:
      'The next page, as `<url>; rel="next"` (RFC 8288), with the same `limit`; absent on the last page. Pages never ' +
      "repeat or skip an item when services are added or removed in between.",
    schema: { type: "string" },
  },
};

const T = "2026-03-01T12:00:00.000Z";
const T2 = "2026-03-08T09:30:00.000Z";
const exampleService = {
  id: "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
  slug: "petstore",
  name: "Petstore",
  summary: "Pets for sale",
  description: "The pet store's API.",
  service_type: "api",
  category: "commerce",
  logo: "",
  contact: { name: "", url: "https://petstore.example", email: "" },
  documentation_url: "",
  verification_tier: "unverified",
  status: "active",
  visibility: "private",
  tool_count: 1,
  total_executions: 0,
  success_rate: 0,
  avg_rating: 0,
  rating_count: 0,
  is_popular: false,
  is_demo: false,
  version: "1.0.0",
  created_at: T,
  updated_at: T,
};
const exampleTool = {
  id: "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
  slug: "petstore-get-pet",
  name: "get_pet",
  description: "Find a pet by id",
  service_id: exampleService.id,
  status: "active",
  tags: ["pets"],
  method: "GET",
  path: "/pets/{pet_id}",
  parameters: {
    pet_id: { name: "pet_id", location: "path", description: "The pet's id", type: "integer", required: true },
  },
  output: null,
  tips: null,
  version: "1.0.0",
  is_paid: false,
  price_per_call_cents: 0,
  readiness: "needs_credential",
  configuration_url: "https://api.toolport.example/console/services/0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b/connect",
  reliability: null,
  deprecated: false,
  deprecation_message: null,
  sunset_date: null,
  created_at: T,
  updated_at: T,
};
/** The same service once its publisher made it public: what the public routes show. */
const examplePublicService = { ...exampleService, visibility: "public" };
/** The trimmed shape of `exampleTool`, as public search answers it. */
const examplePublicTool = {
  id: exampleTool.id,
  name: exampleTool.name,
  slug: exampleTool.slug,
  description: exampleTool.description,
  service_id: exampleTool.service_id,
  parameters: exampleTool.parameters,
  readiness: exampleTool.readiness,
  configuration_url: exampleTool.configuration_url,
  reliability: null,
  deprecated: false,
  deprecation_message: null,
  sunset_date: null,
};
const exampleCredential = {
  service_id: exampleService.id,
  scope: "caller",
  type: "api_key",
  is_reference: true,
  hint: null,
  created_at: T,
  updated_at: T,
};
const examplePublishing = {
  organization_id: "5d1f8a2e-9c4b-4e1a-8f3d-2b7c6a5e4d3c",
  owner_account_id: "a3c9e1f7-2b4d-4c6e-8a0f-1e3d5c7b9a2f",
  base_url: "https://petstore.example/v2",
  mcp_server_url: null,
  openapi_document_url: "https://petstore.example/openapi.json",
  security_schemes: [
    {
      name: "api_key",
      type: "apiKey",
      scheme: null,
      location: "header",
      parameter_name: "X-Api-Key",
      bearer_format: null,
      description: "",
      oauth_flows: null,
      connect_flow: null,
    },
  ],
  imported_at: T,
};

// ---- input schemas (what the handlers accept) --------------------------------------------------

const contactInput = {
  description: "Replaces the given keys of the contact (name, url = website, email).",
  ...closed({}, { name: string, url: string, email: string }),
};

/** The credential forms credentialMaterial() reads. */
const credentialInput: Schema = {
  description:
    "One of `api_key`, `bearer` or `basic`. A secret may instead be a reference `env://NAME` or `vault://path`, " +
    "resolved when a tool is called. `bearer_token` and `token` are accepted for `bearer`.",
  type: "object",
  properties: {
    api_key: {
      anyOf: [
        { ...string, description: "The key itself." },
        closed(
          { value: string },
          {
            parameter_name: { ...string, description: "Where the key goes, when not the service's scheme's name." },
            location: oneOf("header", "query", "cookie"),
          },
        ),
      ],
    },
    bearer: { anyOf: [string, closed({ token: string })] },
    bearer_token: string,
    token: string,
    basic: closed({ username: string, password: string }),
  },
};

const catalogInputSchemas: Record<string, Schema> = {
  OpenApiSource: {
    description:
      "Where the tools come from, for an `api` service: the OpenAPI 3 document inline (`document`, the JSON object or " +
      "JSON/YAML text; `document_text` is the same) or by `document_url` (fetched by the catalog; at most 25 MiB, and " +
      "never from loopback, private or link-local addresses), and optionally the upstream `base_url` (default: the " +
      "document's first server). The document itself (an object with an `openapi` or `swagger` key) or its text may " +
      "also be given as `api`.",
    anyOf: [
      { ...string, description: "The document's text (JSON or YAML)." },
      {
        type: "object",
        description: "The OpenAPI document itself.",
        anyOf: [{ required: ["openapi"] }, { required: ["swagger"] }],
      },
      {
        type: "object",
        properties: {
          document: { anyOf: [{ type: "object" }, string], description: "The OpenAPI document (object, or its text)." },
          document_text: { ...string, description: "The same as `document`, as text." },
          document_url: { ...string, format: "uri" },
          base_url: { ...string, format: "uri", description: "The upstream API's base URL (absolute http(s))." },
        },
      },
    ],
  },
  McpServerSource: {
    description:
      "An MCP server whose `tools/list` becomes the service's tools: its URL (alone, as a string, or `url`), and when " +
      "the server needs a credential, the `security_scheme` by which calls send one and a `credential` used only to " +
      "list the tools (never stored; it must hold the secret itself, not a reference). A server protected by OAuth " +
      "(MCP authorization: it answers 401 with a Bearer challenge) needs neither: Toolport discovers its authorization " +
      "server, registers as a client there, and publishes the service with an `oauth2` scheme and no tools yet (a " +
      "warning says so); the tools are listed by a re-import once the publisher has connected on the service's connect page.",
    anyOf: [
      { ...string, format: "uri" },
      closed(
        { url: { ...string, format: "uri" } },
        {
          security_scheme: {
            description:
              "An OpenAPI Security Scheme Object: `{type: http, scheme: bearer | basic}` or `{type: apiKey, in: header, name}`.",
            ...closed(
              { type: oneOf("http", "apiKey") },
              { scheme: oneOf("bearer", "basic"), in: { const: "header" }, name: string, description: string },
            ),
          },
          credential: credentialInput,
        },
      ),
    ],
  },
};

// ---- response schemas ---------------------------------------------------------------------------

const readinessGap = {
  description: "Why the tool is not ready for the caller, and where to fix it.",
  ...closed({
    kind: {
      ...string,
      description: "Open set: `credential`, `wallet_balance`, `key_permission`, `tool_inactive`, `service_retired`.",
    },
    message: string,
    configuration_url: stringOrNull,
  }),
};

const oauthFlowOrNull = {
  oneOf: [
    closed({
      authorization_url: stringOrNull,
      token_url: stringOrNull,
      refresh_url: stringOrNull,
      scopes: { ...stringArray, description: "The scope names the document lists." },
    }),
    { type: "null" },
  ],
};

const securityScheme = {
  description: "One security scheme of the service (from the OpenAPI document, or declared for an MCP server).",
  ...closed({
    name: { ...string, description: "Its key in the document's `components.securitySchemes`." },
    type: { ...string, description: "OpenAPI type: apiKey, http, oauth2, openIdConnect." },
    scheme: { ...stringOrNull, description: "For type http: bearer or basic." },
    location: {
      type: ["string", "null"],
      enum: ["path", "query", "header", "cookie", "body", null],
      description: "For type apiKey: where the key goes.",
    },
    parameter_name: { ...stringOrNull, description: "For type apiKey: the header, query or cookie name." },
    bearer_format: stringOrNull,
    description: string,
    oauth_flows: {
      oneOf: [closed({ authorization_code: oauthFlowOrNull, client_credentials: oauthFlowOrNull }), { type: "null" }],
      description: "For type oauth2: the document's authorizationCode and clientCredentials flows; null otherwise.",
    },
    connect_flow: {
      type: ["string", "null"],
      enum: ["authorization_code", "client_credentials", null],
      description:
        "Set where the publisher registered an OAuth client for this scheme: how a connection is made " +
        "(`POST /services/{service_id}/oauth/connect`). Null otherwise (only the tool's description sets it).",
    },
  }),
};

const catalogResponseSchemas: Record<string, Schema> = {
  Recommendation: {
    description: "The spec's Recommendation: a tool, why it is recommended, and a score (higher is stronger).",
    ...closed({
      tool_id: string,
      tool_name: string,
      description: string,
      service_id: string,
      service_name: stringOrNull,
      service_logo: stringOrNull,
      reason: string,
      score: number,
    }),
  },
  ReadinessGap: readinessGap,
  ToolDescription: {
    description:
      "Everything to call the tool: the tool, its service (the shorter service shape), its inputs as one JSON Schema, " +
      "an example call body, where and how to call it, whether the caller can call it now (and if not, why), and the " +
      "credential it takes.",
    ...closed({
      tool: toolSchema,
      service: ref("ServiceSummary"),
      input_schema: { type: "object", description: "The tool's inputs as a JSON Schema object." },
      example_call: {
        description: "A body for `POST /tools/call/{tool_id}` with example inputs.",
        ...closed({ tool_input: { type: "object" } }),
      },
      execute: closed({
        method: { const: "POST" },
        url: { ...string, format: "uri", description: "`<PUBLIC_URL>/v1/tools/call/<tool id>`." },
        auth_header: { const: "svc-api-key" },
      }),
      readiness,
      configuration_url: {
        ...stringOrNull,
        description: "Where a person connects a credential, when one is missing: the console's connect page.",
      },
      missing: { ...arrayOf(ref("ReadinessGap")), description: "Empty when the tool is ready." },
      requires_confirmation: {
        ...boolean,
        description: "The caller's key requires consent and the tool writes, sends, spends or deletes: a call answers 409 first.",
      },
      security_schemes: {
        ...arrayOf(ref("ServiceSecurityScheme")),
        description:
          "How the tool's service takes the credential this tool needs: the service's security schemes the tool's " +
          "operation accepts (empty when it needs none). Descriptions only, never secrets; connect one at " +
          "`configuration_url` or with `PUT /services/{service_id}/credentials` (`scheme_name`).",
      },
    }),
  },
  ServiceSecurityScheme: securityScheme,
  ServicePublishing: {
    description: "The publisher-only facts of a service.",
    ...closed({
      organization_id: { ...stringOrNull, description: "The owning organization; null for platform services." },
      owner_account_id: { ...stringOrNull, description: "The account that published it; null for platform services." },
      base_url: { ...stringOrNull, description: "The upstream base URL of an `api` service." },
      mcp_server_url: { ...stringOrNull, description: "The endpoint of an `mcp_server` service." },
      openapi_document_url: { ...stringOrNull, description: "Where the document was fetched from, when imported by URL." },
      security_schemes: arrayOf(ref("ServiceSecurityScheme")),
      imported_at: { ...timestampOrNull, description: "When the tools were last imported from the source." },
    }),
  },
  ServiceWithPublishing: {
    description: "A service and its publishing facts.",
    ...closed({ service: ref("Service"), publishing: ref("ServicePublishing") }),
  },
  PublishedService: {
    description:
      "The service just published, its publishing facts, the tools imported (the spec's full Tool, readiness for the " +
      "caller) and what the import skipped or changed, in words.",
    ...closed({
      service: ref("Service"),
      publishing: ref("ServicePublishing"),
      tools: tools,
      warnings: stringArray,
    }),
  },
  PublishPreview: {
    description:
      "What publishing the source would create, read and checked exactly as `POST /services` reads it, with nothing " +
      "stored: the service's name and kind, the tools with their inputs, and the import's warnings.",
    ...closed({
      name: { ...string, description: "The name the service would get (the document's `info.title`, the server's name)." },
      service_type: oneOf("api", "mcp_server"),
      description: string,
      version: string,
      base_url: { ...stringOrNull, description: "The upstream base URL the document names (`api`); null otherwise." },
      security_schemes: { ...stringArray, description: "Names of the security schemes calls will need a credential for." },
      tools: arrayOf(
        closed({
          name: string,
          description: string,
          method: { ...string, description: "The HTTP method (`api`); empty for an MCP server's tool." },
          path: { ...string, description: "The request path (`api`); empty for an MCP server's tool." },
          parameters: { ...stringArray, description: "The names of the tool's inputs." },
          deprecated: boolean,
          side_effecting: { ...boolean, description: "It writes, sends, spends or deletes (consent applies)." },
        }),
      ),
      warnings: stringArray,
    }),
  },
  ReimportedService: {
    description:
      "The service after a re-import: the tools of the source now (new and updated ones), the ids of the tools the " +
      "source no longer has (set `inactive`, not deleted), and the import's warnings.",
    ...closed({
      service: ref("Service"),
      tools: tools,
      deactivated_tool_ids: stringArray,
      warnings: stringArray,
    }),
  },
  CredentialSummary: {
    description: "A connected credential, without its secret.",
    ...closed({
      service_id: string,
      scope: { ...oneOf("caller", "organization"), description: "Who it serves: the caller, or its whole organization." },
      type: {
        ...oneOf("api_key", "bearer", "basic", "oauth2"),
        description: "oauth2: an OAuth connection (see `/connections`).",
      },
      is_reference: { ...boolean, description: "The secret is an `env://` or `vault://` reference." },
      hint: { ...stringOrNull, description: "The last four characters of a stored secret of 12 or more; null otherwise." },
      created_at: timestamp,
      updated_at: timestamp,
    }),
  },
};

export const catalogSchemas: Record<string, Schema> = { ...catalogInputSchemas, ...catalogResponseSchemas };

// ---- bodies -----------------------------------------------------------------------------------

const serviceFields = {
  name: { ...string, minLength: 1, description: "Default: the document's or server's title." },
  slug: { ...string, description: "Lower-case words and hyphens; default: from the name." },
  summary: string,
  description: string,
  category: string,
  logo: { ...string, description: "A logo URL." },
  contact: contactInput,
  documentation_url: string,
  version: string,
  visibility: { ...visibility, description: "Default private (the organization's members only)." },
};

const createServiceBody: Schema = {
  type: "object",
  description: "The tools' source (`api` or `mcp_server`; with both, `api` is used) and the service's fields.",
  anyOf: [{ required: ["api"] }, { required: ["mcp_server"] }],
  properties: {
    api: ref("OpenApiSource"),
    mcp_server: ref("McpServerSource"),
    ...serviceFields,
    organization_id: { ...string, description: "Publish into this organization (default: the caller's)." },
    default_price_per_call_cents: { ...cents, description: "The price of every imported tool (default 0, free)." },
  },
};

const updateServiceBody: Schema = {
  type: "object",
  properties: {
    ...serviceFields,
    visibility,
    status: oneOf("active", "degraded", "retired"),
    verification_tier: { ...oneOf("unverified", "verified", "official"), description: "Platform admins only (403 otherwise)." },
    base_url: { ...string, description: "The upstream base URL (absolute http(s))." },
    mcp_server_url: { ...string, description: "The MCP endpoint (absolute http(s))." },
  },
};

const updateToolBody: Schema = {
  type: "object",
  properties: {
    name: { ...string, minLength: 1 },
    slug: string,
    description: string,
    tips: { ...string, description: "Usage tips for agents; empty clears them." },
    tags: stringArray,
    output: { type: "object", description: "The declared output fields." },
    version: string,
    price_per_call_cents: cents,
    side_effecting: { ...boolean, description: "The tool writes, sends, spends or deletes (consent applies)." },
    status: oneOf("active", "inactive"),
    deprecated: { ...boolean, description: "false also clears the message and the sunset date." },
    deprecation_message: { ...string, description: "Needs the tool to be (or become) deprecated." },
    sunset_date: {
      ...timestamp,
      description: "After it the tool leaves search and refuses calls; needs the tool to be (or become) deprecated.",
    },
    passthrough_reason: {
      ...string,
      description: "Why results are not redacted (tools whose purpose is to return a new credential); empty clears it.",
    },
  },
};

const credentialBody: Schema = {
  type: "object",
  description:
    "The credential, as `credential` or at the root of the body, for the caller alone (`scope` caller, the default) " +
    "or for the caller's whole organization (owners and admins).",
  properties: {
    scope: oneOf("caller", "organization"),
    scheme_name: { ...string, description: "Which of the service's security schemes it is for (default: the first)." },
    credential: credentialInput,
    ...(credentialInput as { properties: Record<string, Schema> }).properties,
  },
};

// ---- operations -------------------------------------------------------------------------------

export const catalogOps = {
  listTools: {
    operationId: "listTools",
    summary: "Every tool the caller may see",
    description:
      "Active, not-sunset tools of the services visible to the caller, a page at a time (follow the `Link` header): " +
      "real services' tools before sample-data ones, tools the caller can call now first, then by service and tool name.",
    tags: ["Tools"],
    query: {
      ...pageParams,
      service_id: {
        description: "Only this service's tools (id or slug); one the caller does not see gives an empty list.",
        schema: string,
      },
    },
    responses: {
      200: { description: "One page of tools.", schema: tools, example: [exampleTool], headers: pageHeaders },
      400: err("`limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`)."),
      404: orgNotFound,
    },
  },
  searchTools: {
    operationId: "searchTools",
    summary: "Search tools",
    description:
      "Semantic match on names and descriptions, among the tools visible to the caller (public ones, and the private " +
      "and organization tools of the caller's organization), with each tool's readiness for the caller; `limit` matches " +
      "(default 20, at most 50). Without a query, the first `limit` tools the filters keep, in the order of `GET /tools` " +
      "(which pages through all). Limited per account, not per address (120 a minute by default); past it, 429 " +
      "`rate_limited` with `Retry-After`.",
    tags: ["Tools"],
    query: {
      ...searchQuery,
      tags: {
        description: "Only tools with every one of these tags: repeated (`tags=a&tags=b`, or `tags[]=`) or comma-separated.",
        schema: stringArray,
      },
      ready_only: queryBool("Keep only tools the caller can call now."),
      limit: {
        description: "Most matches: default 20; more than 50 gives 50; 0 gives none; below 0 is a 400 (`invalid_limit`).",
        schema: { type: "integer", minimum: 0, default: 20 },
      },
    },
    responses: {
      200: { description: "Matching tools, best first.", schema: tools, example: [exampleTool] },
      404: orgNotFound,
    },
  },
  publicSearchTools: {
    operationId: "publicSearchTools",
    summary: "Search public tools (no credentials needed)",
    description:
      "Public services' tools in the trimmed shape. An empty or blank query returns an empty list. Exact name or slug " +
      "matches come first; sample-data services go behind real ones unless the query names them; deprecated tools " +
      "are listed until their sunset. An API key or JWT changes only readiness and ranking. Limited per client IP " +
      "(30 a minute by default).",
    tags: ["Tools"],
    query: {
      ...searchQuery,
      query: { description: "Words to match semantically (default empty: no results).", schema: { ...string, default: "" } },
      limit: {
        description: "At most this many (default 20; never more than 30 are returned).",
        schema: { type: "integer", minimum: 0, default: 20 },
      },
      ready_only: queryBool("Keep only tools the caller can call now; applied before `limit`."),
      min_success_rate: {
        description:
          "Drop tools whose known 30-day success rate is below this (0 to 1); tools without a meaningful sample are kept.",
        schema: { type: "number", minimum: 0, maximum: 1 },
      },
    },
    responses: {
      200: {
        description: "Matching tools, best first.",
        schema: arrayOf(ref("PublicTool")),
        example: [examplePublicTool],
        headers: rateLimitHeaders,
      },
      404: orgNotFound,
      503: {
        description: "Search could not run (`search_unavailable`, e.g. while the index starts); retry after `Retry-After` (1).",
        schema: ref("Error"),
        headers: { "Retry-After": { description: "Seconds to wait before trying again (1).", schema: integer } },
      },
    },
  },
  getRecommendations: {
    operationId: "getRecommendations",
    summary: "Recommended tools",
    description:
      "With `tool_id`: tools used together with it, then tools of its service, then tools sharing a tag. Without: for " +
      "a signed-in caller, tools related to the ones it used; otherwise popular tools. Anonymous callers get public " +
      "tools only.",
    tags: ["Tools"],
    query: {
      tool_id: { description: "Recommend around this tool (id or slug); 404 when it is not visible.", schema: string },
      limit: {
        description: "At most this many (default 5, at most 50).",
        schema: { type: "integer", minimum: 0, default: 5 },
      },
    },
    responses: {
      200: {
        description: "Recommendations, strongest first.",
        schema: arrayOf(ref("Recommendation")),
        example: [
          {
            tool_id: exampleTool.id,
            tool_name: "get_pet",
            description: "Find a pet by id",
            service_id: exampleService.id,
            service_name: "Petstore",
            service_logo: null,
            reason: "Another tool of Petstore, the service of list_pets",
            score: 0.5,
          },
        ],
      },
      404: err(
        "`tool_id` names no tool visible to the caller (`tool_not_found`), or the `svc-org-id` organization does not " +
          "exist or the caller is not a member (`organization_not_found`).",
      ),
    },
  },
  getToolByName: {
    operationId: "getToolByName",
    summary: "A tool by name",
    description:
      "Names are not unique across services: the match is case-insensitive, visible and not sunset; an active tool of " +
      "a real service before a demo one, then the oldest.",
    tags: ["Tools"],
    path: { tool_name: { description: "The tool's name.", schema: string } },
    responses: { 200: { description: "The tool.", schema: toolSchema, example: exampleTool } },
  },
  describeTool: {
    operationId: "describeTool",
    summary: "Describe a tool before calling it",
    tags: ["Tools"],
    path: toolId,
    responses: {
      200: {
        description:
          "The tool, its inputs as one JSON Schema, an example call, the caller's readiness and the credential it takes.",
        schema: ref("ToolDescription"),
        example: {
          tool: exampleTool,
          service: {
            id: exampleService.id,
            name: "Petstore",
            description: "The pet store's API.",
            summary: "Pets for sale",
            url: "https://petstore.example",
            logo_url: "",
            version: "1.0.0",
          },
          input_schema: {
            type: "object",
            properties: { pet_id: { type: "integer", description: "The pet's id" } },
            required: ["pet_id"],
          },
          example_call: { tool_input: { pet_id: 1 } },
          execute: {
            method: "POST",
            url: `https://api.toolport.example/v1/tools/call/${exampleTool.id}`,
            auth_header: "svc-api-key",
          },
          readiness: "needs_credential",
          configuration_url: exampleTool.configuration_url,
          missing: [
            {
              kind: "credential",
              message: "connect a credential for Petstore",
              configuration_url: exampleTool.configuration_url,
            },
          ],
          requires_confirmation: false,
          security_schemes: examplePublishing.security_schemes,
        },
      },
    },
  },
  getTool: {
    operationId: "getTool",
    summary: "A tool",
    description: "By id or slug. Unknown, invisible and sunset tools are 404.",
    tags: ["Tools"],
    path: toolId,
    responses: { 200: { description: "The tool.", schema: toolSchema, example: exampleTool } },
  },
  listPublicServices: {
    operationId: "listPublicServices",
    summary: "Public services",
    description: "Every public service, a page at a time (follow the `Link` header): real ones before sample-data ones, by name.",
    tags: ["Services"],
    query: pageParams,
    responses: {
      200: {
        description: "One page of public services.",
        schema: services,
        example: [examplePublicService],
        headers: pageHeaders,
      },
      400: err("`limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`)."),
    },
  },
  getPublicService: {
    operationId: "getPublicService",
    summary: "A public service",
    tags: ["Services"],
    path: serviceId,
    responses: { 200: { description: "The service.", schema: ref("Service"), example: examplePublicService } },
  },
  listPublicServiceTools: {
    operationId: "listPublicServiceTools",
    summary: "The tools of a public service",
    description: "Its active, not-sunset tools by name, a page at a time (follow the `Link` header).",
    tags: ["Services"],
    path: serviceId,
    query: pageParams,
    responses: {
      200: { description: "One page of tools.", schema: tools, example: [exampleTool], headers: pageHeaders },
      400: err("`limit` or `cursor` is not valid (`invalid_limit`, `invalid_cursor`)."),
    },
  },
  createService: {
    operationId: "createService",
    summary: "Publish a service",
    description:
      "Creates a service from an OpenAPI 3 document (`api`) or from an MCP server whose `tools/list` is imported " +
      "(`mcp_server`), in the caller's organization (owners and admins; platform admins anywhere). Bodies up to " +
      "25 MiB. A document or server that cannot be read, or that is refused, is a 400 naming the field " +
      "(`invalid_openapi_document`, `document_unreachable`, `document_too_large`, `address_not_allowed`, " +
      "`mcp_server_unreachable`, `mcp_server_unauthorized`, ...).",
    tags: ["Services"],
    body: {
      schema: createServiceBody,
      example: {
        api: { document_url: "https://petstore.example/openapi.json", base_url: "https://petstore.example/v2" },
        slug: "petstore",
        visibility: "private",
      },
    },
    responses: {
      201: {
        description: "Published: the service, its publishing facts, its tools and the import's warnings.",
        schema: ref("PublishedService"),
        example: { service: exampleService, publishing: examplePublishing, tools: [exampleTool], warnings: [] },
      },
      404: orgNotFound,
      409: slugTaken("service"),
      415: documentNotJson,
    },
  },
  previewService: {
    operationId: "previewService",
    summary: "Preview a publish: the tools a source would create",
    description:
      "Reads `api` or `mcp_server` as `POST /services` would (same body, same checks, same 400s naming the document's " +
      "defect and where it is) and answers what it would create, storing nothing. Other fields of the body are " +
      "ignored. An MCP server that answers 401 is not probed for OAuth here (that registers a client); the answer " +
      "says so in `warnings`.",
    tags: ["Services"],
    body: {
      schema: createServiceBody,
      example: { api: { document_url: "https://petstore.example/openapi.json" } },
    },
    responses: {
      200: {
        description: "What the publish would create.",
        schema: ref("PublishPreview"),
        example: {
          name: "Petstore",
          service_type: "api",
          description: "",
          version: "1.0.0",
          base_url: "https://petstore.example/v2",
          security_schemes: [],
          tools: [
            {
              name: "List pets",
              description: "Every pet.",
              method: "GET",
              path: "/pets",
              parameters: ["limit"],
              deprecated: false,
              side_effecting: false,
            },
          ],
          warnings: [],
        },
      },
      404: orgNotFound,
      415: documentNotJson,
    },
  },
  listServices: {
    operationId: "listServices",
    summary: "The services of the caller's organization",
    description: "Every visibility and status. Platform admins see every service, or one organization's.",
    tags: ["Services"],
    query: {
      organization_id: {
        description:
          "Only this organization's (platform admins); anyone else may name only its own (404 `organization_not_found` otherwise, as for an organization that does not exist).",
        schema: uuid,
      },
    },
    responses: { 200: { description: "Services.", schema: services, example: [exampleService] }, 404: orgNotFound },
  },
  getService: {
    operationId: "getService",
    summary: "A service, with its publishing facts",
    description:
      "For the members of the service's organization (every role reads) and those who manage it (platform admins); " +
      "others who see the service get 403 `not_service_owner`.",
    tags: ["Services"],
    path: serviceId,
    responses: {
      200: {
        description: "The service and its publishing facts.",
        schema: ref("ServiceWithPublishing"),
        example: { service: exampleService, publishing: examplePublishing },
      },
    },
  },
  listServiceTools: {
    operationId: "listServiceTools",
    summary: "Every tool of a service (publisher)",
    description: "Inactive and sunset tools included. Readable as the service is (members of its organization, managers).",
    tags: ["Services"],
    path: serviceId,
    responses: { 200: { description: "Tools.", schema: tools, example: [exampleTool] } },
  },
  updateService: {
    operationId: "updateService",
    summary: "Change a service (publisher)",
    description: "Only the fields given change.",
    tags: ["Services"],
    path: serviceId,
    body: { schema: updateServiceBody, required: false, example: { summary: "Pets for sale and adoption", status: "degraded" } },
    responses: {
      200: {
        description: "The service as changed, and its publishing facts.",
        schema: ref("ServiceWithPublishing"),
        example: {
          service: { ...exampleService, summary: "Pets for sale and adoption", status: "degraded", updated_at: T2 },
          publishing: examplePublishing,
        },
      },
      409: slugTaken("service"),
      415: unsupportedMediaType,
    },
  },
  reimportService: {
    operationId: "reimportService",
    summary: "Re-import a service's tools from its source",
    description:
      "An `api` service reads `api` (a new document, or a new `document_url`), else the URL it was imported from (one " +
      "imported from an inline document needs `api.document_text`: 400 `missing_document`). An `mcp_server` service " +
      "lists its server's tools again, with the caller's connected credential; the body is not read. Tools the source " +
      "no longer has are set inactive. Built-in services have no source (400 `not_reimportable`).",
    tags: ["Services"],
    path: serviceId,
    body: {
      schema: { type: "object", properties: { api: ref("OpenApiSource") } },
      required: false,
      example: { api: { document_url: "https://petstore.example/openapi.json" } },
    },
    responses: {
      200: {
        description: "Re-imported.",
        schema: ref("ReimportedService"),
        example: { service: exampleService, tools: [exampleTool], deactivated_tool_ids: [], warnings: [] },
      },
      415: documentNotJson,
    },
  },
  deleteService: {
    operationId: "deleteService",
    summary: "Delete a service and its tools (publisher)",
    tags: ["Services"],
    path: serviceId,
    responses: { 200: { description: "Deleted, for good.", schema: deleted, example: { deleted: true } } },
  },
  updateTool: {
    operationId: "updateTool",
    summary: "Change a tool (publisher)",
    description:
      "Only the fields given change: edit, price, deactivate, or deprecate (`deprecated: true` with an optional " +
      "message and sunset date; a message or date without it is 400 `invalid_deprecation`).",
    tags: ["Tools"],
    path: toolId,
    body: {
      schema: updateToolBody,
      required: false,
      example: { deprecated: true, deprecation_message: "use get_pet_v2", sunset_date: "2026-09-01T00:00:00Z" },
    },
    responses: {
      200: {
        description: "The tool as changed.",
        schema: toolSchema,
        example: {
          ...exampleTool,
          deprecated: true,
          deprecation_message: "use get_pet_v2",
          sunset_date: "2026-09-01T00:00:00.000Z",
          updated_at: T2,
        },
      },
      409: slugTaken("tool"),
      415: unsupportedMediaType,
    },
  },
  deleteTool: {
    operationId: "deleteTool",
    summary: "Delete a tool (publisher)",
    tags: ["Tools"],
    path: toolId,
    responses: { 200: { description: "Deleted, for good.", schema: deleted, example: { deleted: true } } },
  },
  putServiceCredential: {
    operationId: "putServiceCredential",
    summary: "Connect a credential to a service",
    description:
      "For any service the caller can see: the tools that need it turn `ready` for the caller (or its organization). " +
      "Replaces the one of the same scope. The secret is stored encrypted and never returned.",
    tags: ["Services"],
    path: serviceId,
    body: { schema: credentialBody, example: { credential: { api_key: "env://PETSTORE_KEY" }, scope: "caller" } },
    responses: {
      200: {
        description: "Connected.",
        schema: closed({
          credential: ref("CredentialSummary"),
          readiness: { ...oneOf("ready", "unavailable"), description: "`unavailable` when the service is retired." },
        }),
        example: { credential: exampleCredential, readiness: "ready" },
      },
      415: unsupportedMediaType,
    },
  },
  listServiceCredentials: {
    operationId: "listServiceCredentials",
    summary: "The credentials connected to a service for the caller",
    description: "The caller's own and its organization's, without secrets.",
    tags: ["Services"],
    path: serviceId,
    responses: {
      200: {
        description: "Credentials.",
        schema: arrayOf(ref("CredentialSummary")),
        example: [exampleCredential],
      },
    },
  },
  deleteServiceCredential: {
    operationId: "deleteServiceCredential",
    summary: "Disconnect a credential",
    description:
      "The caller's (default) or its organization's (owners and admins); `scope` in the query or the body. 404 when " +
      "none of that scope is connected.",
    tags: ["Services"],
    path: serviceId,
    query: { scope: { description: "Default caller.", schema: oneOf("caller", "organization") } },
    body: {
      schema: { type: "object", properties: { scope: oneOf("caller", "organization") } },
      required: false,
      description: "`scope`, when not in the query.",
      example: { scope: "organization" },
    },
    responses: {
      200: { description: "Disconnected.", schema: deleted, example: { deleted: true } },
      415: unsupportedMediaType,
    },
  },
} satisfies Record<string, OperationDoc>;
