/** The identity routes' operations (gateway/src/routes/identity.ts) and the schemas only they use. */
import type { OperationDoc, ResponseDoc } from "../describe.js";
import {
  arrayOf,
  boolean,
  closed,
  integer,
  oneOf,
  ref,
  type Schema,
  string,
  stringArray,
  stringOrNull,
  timestamp,
  timestampOrNull,
} from "../schemas.js";

const uuid = { type: "string", format: "uuid" };
const role = oneOf("owner", "admin", "member", "viewer");
const agentTypes = ["coding_agent", "assistant", "workflow", "service", "other"];
const agentTypeOrNull = {
  type: ["string", "null"],
  enum: [...agentTypes, null],
  description: "The key's agent type; null when none was given.",
};
const nullable = (schema: Schema) => ({ anyOf: [schema, { type: "null" }] });
// The spec's literal placeholder (SERVICE-SPEC item 35), not a template.
// biome-ignore lint/suspicious/noTemplateCurlyInString: the text ${DANUBE_API_KEY} is the point
const KEY_PLACEHOLDER = "${DANUBE_API_KEY}";

/** A key's fields as both its creation answer and the key list show them. */
const apiKeyFields = {
  id: string,
  key_prefix: { type: "string", minLength: 8, maxLength: 8, description: "The key's first 8 characters." },
  name: string,
  created_at: timestamp,
  last_used: timestampOrNull,
  permissions: { ...nullable(ref("ApiKeyPermissions")), description: "Null = unrestricted." },
  organization_id: { ...string, description: "The organization the key belongs to and runs in." },
  agent_name: stringOrNull,
  agent_type: agentTypeOrNull,
  purpose: stringOrNull,
  expires_at: { ...timestampOrNull, description: "When the key stops working by itself (a console key); null = never." },
  created_by_key_id: {
    ...stringOrNull,
    description: "The key this one was made with (it is never wider than that key); null when made with a JWT.",
  },
  console_key: {
    type: ["string", "null"],
    enum: ["session", "left_over", null],
    description:
      "`session`: made by the console for one sign-in, revoked on sign-out and expired with the sign-in; `left_over`: " +
      "made by an earlier console that kept a key per browser with no end (revoke it); null: not a console key.",
  },
};

export const identitySchemas: Record<string, Schema> = {
  GettingStarted: {
    description:
      "The registration guide: what a new agent needs for its first successful call. Every URL is absolute, " +
      "for this deployment. In a registration answer the examples carry the new key; in the public guide the " +
      "placeholder `<API_KEY>`.",
    ...closed({
      free_tier: closed({
        calls_per_month: integer,
        note: { ...string, description: "What needs funding or a credential." },
      }),
      endpoints: closed({
        mcp: { ...string, description: "The MCP connection address." },
        search: string,
        describe: string,
        execute: string,
        auth_header: { ...string, description: "The header to send, e.g. `svc-api-key: <API_KEY>`." },
      }),
      try_first: {
        type: "array",
        maxItems: 3,
        description: "Up to three credential-free tools, each with a ready-to-send call (empty when the catalog has none).",
        items: closed({
          tool_id: string,
          name: string,
          service: { ...string, description: "The tool's service's name." },
          description: string,
          parameters: { type: "object", description: "The tool's input, as a JSON Schema." },
          execute: closed({
            method: { const: "POST" },
            url: string,
            headers: { type: "object", additionalProperties: string },
            body: closed({ tool_input: { type: "object" } }),
          }),
        }),
      },
      steps: { ...stringArray, description: "Four sentences on the shortest path to a first success." },
      read_next: closed({
        skill: { ...string, description: "The agent skill file (`GET /v1/agents/skill.md`), ending with every route." },
        quickstart: { ...string, description: "The quickstart (`GET /v1/agents/quickstart.md`)." },
        reference: { ...string, description: "The API reference page (`GET /docs`)." },
        openapi: { ...string, description: "This description (`GET /v1/openapi.json`)." },
      }),
    }),
  },
  AgentRegistration: {
    description: 'Spec "Agent registration response": the new account, its API key (shown only here) and its wallet.',
    ...closed({
      agent_id: { ...string, description: "The new account's id." },
      api_key: { ...string, description: "The API key, in plaintext: shown once, store it now." },
      wallet_id: string,
      balance_usdc: { type: "string", pattern: "^\\d+\\.\\d{6}$", description: "Six decimals; normally `0.000000`." },
      deposit_address: {
        ...stringOrNull,
        description: "Where to send USDC on the deposit network; null when none is configured.",
      },
      registration_url: { ...string, description: "The public registration guide (`GET /v1/agents/getting-started`)." },
      getting_started: ref("GettingStarted"),
    }),
  },
  Account: {
    description: "An account: a self-registered agent or a person.",
    ...closed({
      id: string,
      kind: oneOf("agent", "human"),
      name: { ...string, description: "The agent's name or the person's display name." },
      email: { ...string, description: "The operator's email (agents) or the login email (people)." },
      tier: { ...string, description: "`free` at registration." },
      personal_organization_id: string,
      is_platform_admin: boolean,
      created_at: timestamp,
    }),
  },
  ApiKeyPermissions: {
    description:
      "What a key may do. Both allow-lists must match: a tool is callable when it is in `allowed_tools` (or that list " +
      "is null) and its service is in `allowed_services` (or that list is null). Caps in cents, null = none; with " +
      "`require_confirmation`, calls that write, send, spend or delete need the consent handshake. A key with " +
      "permissions (a restricted key) cannot manage the catalog, credentials, spending settings, organizations or " +
      "other keys (403 `key_restricted`).",
    ...closed({
      allowed_services: {
        type: ["array", "null"],
        items: string,
        description: "Service ids; null = all. A tool must also pass `allowed_tools`.",
      },
      allowed_tools: {
        type: ["array", "null"],
        items: string,
        description: "Tool ids; null = all. A tool must also pass `allowed_services`.",
      },
      max_cost_per_call_cents: { type: ["integer", "null"] },
      daily_spend_limit_cents: { type: ["integer", "null"] },
      require_confirmation: boolean,
    }),
  },
  CreatedApiKey: {
    description: 'Spec "API key" create response: the plaintext `key` appears here and nowhere else.',
    ...closed({
      ...apiKeyFields,
      key: { ...string, description: "The key, in plaintext: returned once." },
      last_used: { ...timestampOrNull, description: "Null on creation." },
    }),
  },
  ApiKey: {
    description: "A key as listed: never the secret.",
    ...closed({
      ...apiKeyFields,
      account_id: { ...string, description: "The account that owns the key." },
      revoked_at: { ...timestampOrNull, description: "Null while the key works." },
      oauth_client_id: {
        ...stringOrNull,
        description:
          "A grant to an MCP client through OAuth (its access tokens act as this key; no plaintext key exists): the " +
          "client's id. Null for every other key. Revoking the key ends the grant.",
      },
    }),
  },
  ApiKeyUsage: {
    description: 'Spec "API key usage": the calls made with this key over the window (synthetic probe calls excluded).',
    ...closed({
      key: closed({
        id: string,
        name: string,
        agent_name: stringOrNull,
        agent_type: agentTypeOrNull,
        purpose: stringOrNull,
        created_at: timestamp,
      }),
      window_days: { type: "integer", minimum: 1, maximum: 90 },
      calls: integer,
      successes: integer,
      success_rate: { type: ["number", "null"], minimum: 0, maximum: 1, description: "Null without calls." },
      p50_seconds: { type: ["number", "null"] },
      paid_calls: integer,
      spent_cents: integer,
      first_call_at: timestampOrNull,
      last_call_at: timestampOrNull,
      top_tools: {
        type: "array",
        maxItems: 10,
        description: "The most called tools, most calls first.",
        items: closed({ tool_id: string, tool_name: string, service_name: string, calls: integer, successes: integer }),
      },
      refused: {
        ...integer,
        minimum: 0,
        description:
          "Calls made with this key over the window that were refused before running (not in `calls`): key permission, " +
          "consent required, rate or free-tier limit, insufficient balance, spend cap. Beyond the spec's fields.",
      },
      refused_reasons: {
        type: "array",
        description: "The refused calls by reason code, most first (GET /v1/activity?status=refused lists them).",
        items: closed({ reason: string, calls: integer }),
      },
      daily: {
        type: "array",
        maxItems: 91,
        description:
          "One entry per UTC date the window touches (window_days + 1: the first and the last are partial), oldest " +
          "first, days without calls included; the days' calls add up to `calls`. Beyond the spec's fields, for charts.",
        items: closed({
          date: { type: "string", format: "date" },
          calls: integer,
          successes: integer,
          p50_seconds: { type: ["number", "null"], description: "Null on a day without calls." },
        }),
      },
    }),
  },
  OrganizationContext: {
    description: 'Spec "Organization context": the organization and the caller\'s role in it.',
    ...closed({ org_id: string, org_name: string, org_slug: string, role }),
  },
  Organization: {
    description: "An organization, with the caller's role in it.",
    ...closed({
      id: string,
      name: string,
      slug: string,
      is_personal: { ...boolean, description: "The account's personal organization (created with it)." },
      role,
      created_at: timestamp,
    }),
  },
  OrganizationMember: {
    description: "A member of an organization.",
    ...closed({ organization_id: string, account_id: string, name: string, email: string, role, created_at: timestamp }),
  },
  McpJson: {
    description: "The client helper's answer (spec item 35): a project-scope `.mcp.json` to commit, holding no secret.",
    ...closed({
      file: { const: ".mcp.json" },
      scope: { const: "project" },
      mcp_json: closed({
        mcpServers: closed({
          danube: closed({
            type: { const: "http" },
            url: { ...string, description: "The MCP connection address." },
            headers: closed(
              { "svc-api-key": { const: KEY_PLACEHOLDER, description: "The literal placeholder, expanded by the client." } },
              { "svc-org-id": { ...string, description: "Present when an organization resolved." } },
            ),
          }),
        }),
      }),
      org: { ...nullable(ref("OrganizationContext")), description: "Null when no organization resolved." },
      instructions: { ...string, description: "Human-readable commit text with the equivalent add-server command." },
    }),
  },
};

const rateLimitHeaders: ResponseDoc["headers"] = {
  "RateLimit-Limit": { description: "Requests allowed per window.", schema: integer },
  "RateLimit-Remaining": { description: "Requests left in this window.", schema: integer },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: integer },
};
const error = (description: string): ResponseDoc => ({ description, schema: ref("Error") });
/** Authenticated routes read `svc-org-id`: one naming an organization the caller is not in is a 404. */
const orgSelectorNotFound = error("The organization `svc-org-id` names does not exist or the caller is not a member.");

const keyId = {
  key_id: { description: "The key's `id` (not the key value); any other id is 404.", schema: string },
};
const organizationId = { organization_id: { description: "The organization's id.", schema: uuid } };
const memberPath = {
  ...organizationId,
  account_id: { description: "The member's account id.", schema: uuid },
};
const name100 = { type: "string", minLength: 1, maxLength: 100 };
const email = { type: "string", format: "email", maxLength: 254 };
const idList = {
  type: ["array", "null"],
  maxItems: 1000,
  items: uuid,
};
const cents = { type: ["integer", "null"], minimum: 0 };

const guideExample = {
  free_tier: { calls_per_month: 5000, note: "Credential-free tools are free for 5,000 calls a month. ..." },
  endpoints: {
    mcp: "https://mcp.example.com/mcp",
    search: "https://api.example.com/v1/tools/search?query={query}",
    describe: "https://api.example.com/v1/tools/{tool_id}/describe",
    execute: "https://api.example.com/v1/tools/call/{tool_id}",
    auth_header: "svc-api-key: <API_KEY>",
  },
  try_first: [],
  steps: ["Send your API key in the svc-api-key header on every call; it was shown once, so store it now.", "..."],
  read_next: {
    skill: "https://api.example.com/v1/agents/skill.md",
    quickstart: "https://api.example.com/v1/agents/quickstart.md",
    reference: "https://api.example.com/docs",
    openapi: "https://api.example.com/v1/openapi.json",
  },
};

// One cast for every example: the agent "Research bot" (registered, then owner of the organization Acme),
// the person Ada (signed up, then added to Acme) and the agent's key "ci".
const agentId = "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b";
const agentOrgId = "b1f3a3b0-6932-45ec-aff3-cb39a15072eb";
const adaId = "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41";
const adaOrgId = "dd4011fe-36e7-4bb4-af38-5c9286199fb4";
const acmeId = "68280f26-54a3-4b1a-a5c1-bb9833addb25";
const ciKey = "tp_zZz1liDMvG5IVTmupgoAANnDgQy6BjbSudkqy1Zejey";
const accessToken =
  "eyJhbGciOiJFUzI1NiIsImtpZCI6IlRQb1RWcnRWVFlQV3hySHUxdV9QeWZqV21vMzFud3JRY0RuZFNheUp6SVUifQ" +
  ".eyJzdWIiOiIzZjZjMmE5ZS0xYjdkLTRjOGUtOWEyZi01ZDFlN2IzYzlhNDEiLCJpYXQiOjE3NjA1MjYwMDAsImV4cCI6MTc2MDUyOTYwMH0" +
  ".G_z7O_guSv9StlGqJ7md3IaSVDcsw2Tls3P6px5S3ZRvdcoPxw9AnWJuwUKAIqfda7ETCeBRZQiCwHi6o8HHGg";

const accountExample = {
  id: agentId,
  kind: "agent",
  name: "Research bot",
  email: "ops@example.com",
  tier: "free",
  personal_organization_id: agentOrgId,
  is_platform_admin: false,
  created_at: "2025-10-01T09:12:44Z",
};
const keyPermissionsExample = {
  allowed_services: null,
  allowed_tools: null,
  max_cost_per_call_cents: 25,
  daily_spend_limit_cents: 1000,
  require_confirmation: true,
};
const keyFields = {
  id: "ecf4e346-4c8b-4c34-add9-27c5149d8da3",
  key_prefix: ciKey.slice(0, 8),
  name: "ci",
  created_at: "2025-10-02T14:03:10Z",
};
const exampleServiceId = "2f0c3c57-0f4b-4a5e-9d59-3c1c4d9e7a11";
const exampleToolId = "7a1d9c2e-5b3f-4e8a-b6c4-0d2e9f1a3b5c";
const keyAgentFields = { agent_name: "build bot", agent_type: "coding_agent", purpose: "Runs the nightly checks" };
const createdKeyExample = {
  ...keyFields,
  key: ciKey,
  last_used: null,
  permissions: keyPermissionsExample,
  organization_id: agentOrgId,
  ...keyAgentFields,
  expires_at: null,
  created_by_key_id: null,
  console_key: null,
};
const apiKeyExample = {
  ...keyFields,
  last_used: "2025-10-14T02:30:05Z",
  permissions: keyPermissionsExample,
  organization_id: agentOrgId,
  account_id: agentId,
  ...keyAgentFields,
  revoked_at: null,
  expires_at: null,
  created_by_key_id: null,
  console_key: null,
  oauth_client_id: null,
};
const acmeContextExample = { org_id: acmeId, org_name: "Acme", org_slug: "acme", role: "owner" };
const acmeExample = {
  id: acmeId,
  name: "Acme",
  slug: "acme",
  is_personal: false,
  role: "owner",
  created_at: "2025-10-03T08:00:00Z",
};
const adaMemberExample = {
  organization_id: acmeId,
  account_id: adaId,
  name: "Ada",
  email: "ada@example.com",
  role: "member",
  created_at: "2025-10-05T11:20:31Z",
};
const mcpUrl = "https://mcp.example.com/mcp";

export const identityOps = {
  registerAgent: {
    operationId: "registerAgent",
    summary: "Register an agent",
    description:
      "Creates a free-tier account, an API key (returned once) and a USDC wallet, with no human in the loop. " +
      "Limited to 5 registrations per minute per client IP. When the wallet cannot be created nothing is " +
      "(503 `wallet_unavailable`, with `Retry-After`).",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        required: ["name", "operator_email"],
        properties: {
          name: { ...name100, description: "Shown in the dashboard and audit entries." },
          operator_email: { ...email, description: "For account notices; never public." },
        },
      },
      example: { name: "Research bot", operator_email: "ops@example.com" },
    },
    responses: {
      200: {
        description: "The new account, its key and wallet, and the guide to a first call.",
        schema: ref("AgentRegistration"),
        headers: rateLimitHeaders,
        example: {
          agent_id: "6f1c0d9e-2b7a-4c1e-9a35-0c1d2e3f4a5b",
          api_key: "tp_QjwO4eQvKMvadYJXlcUyKGhyfrZlTgC6PdK54GyqBY0",
          wallet_id: "0bfcae00-acdf-42a5-bab0-06ec58e670aa",
          balance_usdc: "0.000000",
          deposit_address: null,
          registration_url: "https://api.example.com/v1/agents/getting-started",
          getting_started: guideExample,
        },
      },
    },
  },
  gettingStarted: {
    operationId: "getAgentGuide",
    summary: "The registration guide",
    description: "The `getting_started` block of a registration, for anyone, with `<API_KEY>` where the key goes.",
    tags: ["Agents"],
    responses: {
      200: {
        description: "The guide and where to read it.",
        schema: closed({ registration_url: string, getting_started: ref("GettingStarted") }),
        example: { registration_url: "https://api.example.com/v1/agents/getting-started", getting_started: guideExample },
      },
    },
  },
  skillMd: {
    operationId: "getAgentSkillMd",
    summary: "The agent skill file",
    description: "The guide as an agent skill (markdown with YAML frontmatter); `read_next.skill` points here.",
    tags: ["Agents"],
    responses: { 200: { description: "The skill file.", contentType: "text/markdown", schema: string } },
  },
  quickstartMd: {
    operationId: "getAgentQuickstartMd",
    summary: "The quickstart",
    description: "The guide as markdown; `read_next.quickstart` points here.",
    tags: ["Agents"],
    responses: { 200: { description: "The quickstart.", contentType: "text/markdown", schema: string } },
  },
  signup: {
    operationId: "signUp",
    summary: "Sign up (a person)",
    description:
      "Creates a person's account and its personal organization, and answers a session token (ES256 JWT) to send " +
      "as `Authorization: Bearer`. 409 `email_taken` when the email has an account.",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        required: ["email", "password"],
        properties: {
          email,
          password: { type: "string", minLength: 10, maxLength: 1024 },
          name: { type: "string", maxLength: 100, description: "Display name; default: the email's local part." },
        },
      },
      example: { email: "ada@example.com", password: "correct horse battery staple", name: "Ada" },
    },
    responses: {
      200: {
        description: "The account, its personal organization and a session token.",
        schema: closed({
          account_id: string,
          organization_id: { ...string, description: "The personal organization." },
          access_token: string,
          token_type: { const: "Bearer" },
          expires_in: { ...integer, description: "Seconds the token is valid." },
        }),
        example: {
          account_id: adaId,
          organization_id: adaOrgId,
          access_token: accessToken,
          token_type: "Bearer",
          expires_in: 3600,
        },
      },
      409: error("An account with this email exists (`email_taken`); log in instead."),
    },
  },
  login: {
    operationId: "logIn",
    summary: "Log in (a person)",
    description: "A session token for email and password. Limited to 20 attempts per minute per client IP.",
    tags: ["Agents"],
    body: {
      schema: { type: "object", required: ["email", "password"], properties: { email: string, password: string } },
      example: { email: "ada@example.com", password: "correct horse battery staple" },
    },
    responses: {
      200: {
        description: "A session token.",
        headers: rateLimitHeaders,
        schema: closed({
          account_id: string,
          access_token: string,
          token_type: { const: "Bearer" },
          expires_in: { ...integer, description: "Seconds the token is valid." },
        }),
        example: { account_id: adaId, access_token: accessToken, token_type: "Bearer", expires_in: 3600 },
      },
      401: error("Email or password is wrong (`invalid_credentials`)."),
    },
  },
  jwks: {
    operationId: "getJwks",
    summary: "The token signing keys (JWKS)",
    description: "The public keys that verify Toolport-issued session tokens (ES256).",
    tags: ["Agents"],
    responses: {
      200: {
        description: "A JSON Web Key Set (cacheable for 5 minutes).",
        headers: { "Cache-Control": { description: "`public, max-age=300`.", schema: string } },
        schema: closed({
          keys: arrayOf(closed({ kty: string, crv: string, x: string, y: string, kid: string, alg: string, use: string })),
        }),
        example: {
          keys: [
            {
              kty: "EC",
              crv: "P-256",
              x: "L5h0nuFcy1XnDG9iENFyMcBtAlmxi-cVyV5agFngz6Q",
              y: "uQMLqggvjtMnHhihGI5Q_kvMTfrPSS1618C4UJBzvQQ",
              kid: "TPoTVrtVTYPWxrHu1u_PyfjWmo31nwrQcDndSayJzIU",
              alg: "ES256",
              use: "sig",
            },
          ],
        },
      },
    },
  },
  me: {
    operationId: "getMyAccount",
    summary: "The caller's account",
    tags: ["Agents"],
    responses: {
      200: { description: "The account.", schema: ref("Account"), example: accountExample },
      404: orgSelectorNotFound,
    },
  },
  createKey: {
    operationId: "createApiKey",
    summary: "Create an API key",
    description:
      "An agent may create keys with its own key. The key belongs to `organization_id` (default: the caller's " +
      "personal organization; for a key that acts only in its own organization, that one), which the caller must " +
      "be a member of (403 `not_a_member`; viewers 403 `insufficient_role`; unknown 404 `organization_not_found`). " +
      "Calls made with the key then run in that organization without an org header; its owners and admins can " +
      "revoke it. Ids in the allow-lists must exist in the catalog (400 naming the element; 503 " +
      "`catalog_unavailable` when it cannot be checked). A key made with a key is never wider than that key: lists " +
      "a subset of its lists (null only under null), caps no higher, `require_confirmation` kept, the same " +
      "organization; asking for more is 403 `permission_exceeds_key` with `details.field` naming the field, and " +
      "nothing is created.",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        required: ["name"],
        properties: {
          name: name100,
          permissions: {
            type: ["object", "null"],
            description:
              "Omitted or null = unrestricted (refused to a restricted key: `permission_exceeds_key`). Any other field " +
              "is refused. Both allow-lists must match for a tool to be callable.",
            additionalProperties: false,
            properties: {
              allowed_services: { ...idList, description: "Service ids; null = all. A tool must also pass `allowed_tools`." },
              allowed_tools: { ...idList, description: "Tool ids; null = all. A tool must also pass `allowed_services`." },
              max_cost_per_call_cents: { ...cents, description: "Per-call cost cap in cents; null = none." },
              daily_spend_limit_cents: { ...cents, description: "Daily spend cap in cents; null = none." },
              require_confirmation: {
                type: ["boolean", "null"],
                description: "Calls that write, send, spend or delete need the consent handshake.",
              },
            },
          },
          agent_name: { type: "string", maxLength: 100 },
          agent_type: oneOf(...agentTypes),
          purpose: { type: "string", maxLength: 200, description: "One line." },
          organization_id: { ...uuid, description: "The organization the key belongs to; default: the personal one." },
        },
      },
      example: { name: keyFields.name, permissions: keyPermissionsExample, ...keyAgentFields },
    },
    responses: {
      200: {
        description: "The key, with its plaintext (shown once).",
        schema: ref("CreatedApiKey"),
        example: createdKeyExample,
      },
      404: error(
        "The organization does not exist (`organization_not_found`), or the one `svc-org-id` names is not the caller's.",
      ),
    },
  },
  listKeys: {
    operationId: "listApiKeys",
    summary: "The caller's API keys",
    description:
      "Newest first, never the secret. With `organization_id`: that organization's keys (all of them for its owners " +
      "and admins, the caller's own otherwise). A restricted key lists only itself and the keys it made.",
    tags: ["Agents"],
    query: {
      organization_id: { description: "List this organization's keys; 404 when the caller is not a member.", schema: uuid },
      include_revoked: {
        description: "Include revoked keys (`true`/`1`, default false).",
        schema: { type: "boolean", default: false },
      },
    },
    responses: {
      200: { description: "The keys.", schema: arrayOf(ref("ApiKey")), example: [apiKeyExample] },
      404: error("The organization does not exist or the caller is not a member (`organization_not_found`)."),
    },
  },
  revokeKey: {
    operationId: "revokeApiKey",
    summary: "Revoke an API key",
    description:
      "By the key's own account, or an owner or admin of the key's organization, an owner's key included (anyone " +
      "else gets 404). A restricted key revokes only itself and the keys it made (403 `key_restricted`). The keys " +
      "made with it (and with those) are revoked with it. Immediate on every replica; revoking a revoked key " +
      "answers it again.",
    tags: ["Agents"],
    path: keyId,
    responses: {
      200: {
        description: "Revoked.",
        schema: closed({ id: string, revoked: { type: "boolean", const: true }, key: ref("ApiKey") }),
        example: {
          id: apiKeyExample.id,
          revoked: true,
          key: { ...apiKeyExample, revoked_at: "2025-10-15T16:45:00Z" },
        },
      },
    },
  },
  consoleKey: {
    operationId: "issueConsoleKey",
    summary: "The console key of this sign-in",
    description:
      "For the console: the API key that runs the few key-only operations (calling a tool, funding, running a " +
      "workflow) for the signed-in person, in the organization `svc-org-id` (or `organization_id`) names. The same " +
      "sign-in (session token) and organization always get the same key, however many screens ask at once, so " +
      "console keys do not pile up. It is unrestricted, bound to the organization, expires with the session token " +
      "(`expires_at`) and is revoked by `POST /v1/auth/logout`; asked again after that, 401 `console_session_ended`. " +
      "Only a Toolport session token gets one (403 `session_required`).",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        properties: { organization_id: { ...uuid, description: "Default: the organization the request runs in." } },
      },
      example: {},
      required: false,
    },
    responses: {
      200: {
        description: "The key, with its plaintext (the same for every call of this sign-in and organization).",
        schema: ref("CreatedApiKey"),
        example: {
          ...createdKeyExample,
          name: "Toolport console",
          permissions: null,
          agent_name: null,
          agent_type: "other",
          purpose: "Calls tools, funds the wallet and runs workflows from the Toolport console, for one sign-in",
          expires_at: "2025-10-02T15:03:10Z",
          created_by_key_id: null,
          console_key: "session",
        },
      },
      404: error("The organization does not exist (`organization_not_found`)."),
    },
  },
  logout: {
    operationId: "logOut",
    summary: "End this sign-in",
    description: "Revokes every console key made for this sign-in (session token), at once on every replica.",
    tags: ["Agents"],
    responses: {
      200: {
        description: "The sign-in's console keys are revoked.",
        schema: closed({ revoked_keys: { ...integer, minimum: 0, description: "How many console keys were revoked." } }),
        example: { revoked_keys: 1 },
      },
    },
  },
  callableTools: {
    operationId: "listCallableTools",
    summary: "What a key with these allow-lists could call",
    description:
      "The tools, among those the caller sees, that a key with these allow-lists could call: a tool counts when it " +
      "is in `allowed_tools` (or that list is null) and its service is in `allowed_services` (or that list is null), " +
      "exactly as calls are checked. `warnings` says why a pair of lists lets less through than it seems to (a " +
      "listed tool outside every listed service, a listed service with none of the listed tools).",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        properties: {
          allowed_services: { ...idList, description: "Service ids; null or omitted = all." },
          allowed_tools: { ...idList, description: "Tool ids; null or omitted = all." },
          limit: { type: "integer", minimum: 1, maximum: 100, description: "How many tools to list (default 20)." },
        },
      },
      example: { allowed_services: [exampleServiceId], allowed_tools: null },
    },
    responses: {
      200: {
        description: "The count, the first tools (by service name, then tool name) and warnings.",
        schema: closed({
          count: { ...integer, minimum: 0 },
          tools: {
            type: "array",
            items: closed({ id: string, name: string, service_id: string, service_name: string }),
          },
          warnings: { type: "array", items: string },
        }),
        example: {
          count: 1,
          tools: [{ id: exampleToolId, name: "get_forecast", service_id: exampleServiceId, service_name: "Weather" }],
          warnings: [],
        },
      },
    },
  },
  keyUsage: {
    operationId: "getApiKeyUsage",
    summary: "An API key's usage",
    description:
      "Only the key's own account sees it (anyone else gets 404). Only executions stamped with this key count. " +
      "503 `usage_unavailable` when it cannot be computed right now.",
    tags: ["Agents"],
    path: keyId,
    query: {
      days: {
        description: "The window in days (default 30; clamped to 1..90).",
        schema: { type: "integer", default: 30 },
      },
    },
    responses: {
      200: {
        description: "The usage.",
        schema: ref("ApiKeyUsage"),
        example: {
          key: { id: keyFields.id, name: keyFields.name, ...keyAgentFields, created_at: keyFields.created_at },
          window_days: 7,
          calls: 42,
          successes: 40,
          success_rate: 0.952,
          p50_seconds: 0.84,
          paid_calls: 3,
          spent_cents: 12,
          first_call_at: "2025-10-08T14:10:22Z",
          last_call_at: "2025-10-14T02:30:05Z",
          top_tools: [
            {
              tool_id: "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10",
              tool_name: "get_pet",
              service_name: "Petstore",
              calls: 42,
              successes: 40,
            },
          ],
          daily: [
            { date: "2025-10-07", calls: 0, successes: 0, p50_seconds: null },
            { date: "2025-10-08", calls: 6, successes: 6, p50_seconds: 0.8 },
            { date: "2025-10-09", calls: 0, successes: 0, p50_seconds: null },
            { date: "2025-10-10", calls: 12, successes: 11, p50_seconds: 0.91 },
            { date: "2025-10-11", calls: 0, successes: 0, p50_seconds: null },
            { date: "2025-10-12", calls: 9, successes: 9, p50_seconds: 0.77 },
            { date: "2025-10-13", calls: 11, successes: 10, p50_seconds: 0.86 },
            { date: "2025-10-14", calls: 4, successes: 4, p50_seconds: 0.84 },
          ],
          refused: 3,
          refused_reasons: [
            { reason: "tool_not_permitted", calls: 2 },
            { reason: "rate_limited", calls: 1 },
          ],
        },
      },
    },
  },
  mcpJson: {
    operationId: "getMcpJson",
    summary: "A `.mcp.json` for a coding client",
    description:
      "The organization resolves in order: the explicit selector (query `org_id`, else header `svc-org-id`), the " +
      "key's bound organization, the personal organization. A selected organization that does not exist or the " +
      "caller is not in is 404; any other failure to resolve still answers the template, with `org` null and no org header.",
    tags: ["Agents"],
    query: {
      org_id: { description: "The organization (membership required); wins over the header.", schema: uuid },
    },
    headers: {
      "svc-org-id": {
        description: "Equivalent to `org_id`; ignored when the query value is present.",
        schema: string,
      },
    },
    responses: {
      200: {
        description: "The file to commit.",
        schema: ref("McpJson"),
        example: {
          file: ".mcp.json",
          scope: "project",
          mcp_json: {
            mcpServers: {
              danube: { type: "http", url: mcpUrl, headers: { "svc-api-key": KEY_PLACEHOLDER, "svc-org-id": acmeId } },
            },
          },
          org: acmeContextExample,
          instructions: [
            "Save this as .mcp.json at the root of your project and commit it: it holds no secret, only the",
            `${KEY_PLACEHOLDER} placeholder, which each developer sets in their own environment`,
            "(export DANUBE_API_KEY=<your API key>).",
            'Calls run in the organization "Acme" (acme).',
            "Equivalent add-server command:",
            `claude mcp add --transport http --scope project danube ${mcpUrl} --header 'svc-api-key: ${KEY_PLACEHOLDER}' --header 'svc-org-id: ${acmeId}'`,
          ].join("\n"),
        },
      },
      404: error("The selected organization does not exist or the caller is not a member (`organization_not_found`)."),
    },
  },
  createOrganization: {
    operationId: "createOrganization",
    summary: "Create an organization",
    description: "The caller becomes its owner. Without a slug one is made from the name; 409 `slug_taken` for a taken one.",
    tags: ["Agents"],
    body: {
      schema: {
        type: "object",
        required: ["name"],
        properties: {
          name: name100,
          slug: {
            type: "string",
            pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$",
            description: "1-64 lowercase letters, digits and inner hyphens.",
          },
        },
      },
      example: { name: "Acme", slug: "acme" },
    },
    responses: {
      200: { description: "The organization (role `owner`).", schema: ref("Organization"), example: acmeExample },
      404: orgSelectorNotFound,
      409: error("The slug is taken (`slug_taken`)."),
    },
  },
  listOrganizations: {
    operationId: "listOrganizations",
    summary: "The caller's organizations",
    description: "The personal organization first, then the others by creation.",
    tags: ["Agents"],
    responses: {
      200: {
        description: "The organizations.",
        schema: arrayOf(ref("Organization")),
        example: [
          {
            id: agentOrgId,
            name: "Research bot",
            slug: "research-bot-4f9a2c",
            is_personal: true,
            role: "owner",
            created_at: accountExample.created_at,
          },
          acmeExample,
        ],
      },
      404: orgSelectorNotFound,
    },
  },
  organizationContext: {
    operationId: "getOrganizationContext",
    summary: "The organization a request runs in",
    description: "`org_id` when given, else the organization the credentials select (`svc-org-id`, the key's, the personal one).",
    tags: ["Agents"],
    query: { org_id: { description: "This organization instead (membership required).", schema: uuid } },
    responses: {
      200: {
        description: "The organization and the caller's role.",
        schema: ref("OrganizationContext"),
        example: acmeContextExample,
      },
      404: error("The organization does not exist or the caller is not a member (`organization_not_found`)."),
    },
  },
  listMembers: {
    operationId: "listOrganizationMembers",
    summary: "An organization's members",
    description: "Any member may read them, by joining date.",
    tags: ["Agents"],
    path: organizationId,
    responses: {
      200: {
        description: "The members.",
        schema: arrayOf(ref("OrganizationMember")),
        example: [
          {
            organization_id: acmeId,
            account_id: agentId,
            name: "Research bot",
            email: "ops@example.com",
            role: "owner",
            created_at: acmeExample.created_at,
          },
          adaMemberExample,
        ],
      },
    },
  },
  addMember: {
    operationId: "addOrganizationMember",
    summary: "Add a member",
    description:
      "Owners and admins (403 `insufficient_role` otherwise; only owners add owners). The account, by id or a person's " +
      "email, must exist (404 `account_not_found`); 409 `already_a_member`.",
    tags: ["Agents"],
    path: organizationId,
    body: {
      schema: {
        type: "object",
        required: ["role"],
        properties: {
          account_id: { ...uuid, description: "The account; wins over `email`." },
          email: { type: "string", description: "A person's login email." },
          role,
        },
        anyOf: [{ required: ["account_id"] }, { required: ["email"] }],
      },
      example: { email: "ada@example.com", role: "member" },
    },
    responses: {
      200: { description: "The new member.", schema: ref("OrganizationMember"), example: adaMemberExample },
      409: error("The account is already a member (`already_a_member`); change its role instead."),
    },
  },
  updateMember: {
    operationId: "updateOrganizationMember",
    summary: "Change a member's role",
    description:
      "Owners and admins; only owners make or unmake owners. 412 `last_owner`: an organization keeps at least one owner.",
    tags: ["Agents"],
    path: memberPath,
    body: { schema: { type: "object", required: ["role"], properties: { role } }, example: { role: "admin" } },
    responses: {
      200: {
        description: "The member as changed.",
        schema: ref("OrganizationMember"),
        example: { ...adaMemberExample, role: "admin" },
      },
      412: error("The organization would lose its last owner (`last_owner`)."),
    },
  },
  removeMember: {
    operationId: "removeOrganizationMember",
    summary: "Remove a member",
    description:
      "Owners and admins, or members removing themselves; only owners remove owners. The member's keys stop working " +
      "in the organization at once. 412 for the last owner or a personal organization.",
    tags: ["Agents"],
    path: memberPath,
    responses: {
      200: {
        description: "Removed.",
        schema: closed({ removed: { type: "boolean", const: true } }),
        example: { removed: true },
      },
      412: error("The last owner (`last_owner`), or a personal organization's owner (`personal_organization`)."),
    },
  },
} satisfies Record<string, OperationDoc>;
