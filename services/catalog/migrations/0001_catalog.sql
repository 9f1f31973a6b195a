-- The catalog: services, their tools, stored upstream credentials and the execution facts the
-- reliability block and recommendations are computed from.

CREATE TABLE services (
  id uuid PRIMARY KEY,
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  summary text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  -- api, mcp_server, internal
  service_type text NOT NULL CHECK (service_type IN ('api', 'mcp_server', 'internal')),
  category text NOT NULL DEFAULT '',
  logo text NOT NULL DEFAULT '',
  contact jsonb NOT NULL DEFAULT '{}',
  documentation_url text NOT NULL DEFAULT '',
  verification_tier text NOT NULL DEFAULT 'unverified' CHECK (verification_tier IN ('unverified', 'verified', 'official')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'degraded', 'retired')),
  visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private', 'internal', 'local_only')),
  is_demo boolean NOT NULL DEFAULT false,
  version text NOT NULL DEFAULT '',
  -- Owning organization; null for the platform's own (built-in and demo) services.
  organization_id text,
  owner_account_id text,
  base_url text,
  mcp_server_url text,
  openapi_document_url text,
  -- Flattened components.securitySchemes: [{name, type, scheme, location, parameter_name, ...}]
  security_schemes jsonb NOT NULL DEFAULT '[]',
  imported_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX services_organization ON services (organization_id);

CREATE TABLE tools (
  id uuid PRIMARY KEY,
  service_id uuid NOT NULL REFERENCES services (id) ON DELETE CASCADE,
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  tags text[] NOT NULL DEFAULT '{}',
  method text NOT NULL DEFAULT '',
  path text NOT NULL DEFAULT '',
  -- The identity of the operation in its source (`GET /pets/{id}`, an MCP tool name, a builtin
  -- handler), so a re-import updates the same tool and keeps its id and slug.
  source_key text NOT NULL,
  -- Input name -> {name, location, description, type, required, default, enum, minimum, maximum,
  -- encode_slashes, json_schema}
  parameters jsonb NOT NULL DEFAULT '{}',
  input_schema jsonb NOT NULL DEFAULT '{"type": "object", "properties": {}}',
  request_body_schema jsonb,
  request_body_content_type text NOT NULL DEFAULT '',
  output jsonb,
  -- A valid input that runs, when the publisher gave one (the describe endpoint's example call).
  example jsonb,
  tips text,
  version text NOT NULL DEFAULT '',
  price_per_call_cents bigint NOT NULL DEFAULT 0 CHECK (price_per_call_cents >= 0),
  side_effecting boolean NOT NULL DEFAULT false,
  deprecated boolean NOT NULL DEFAULT false,
  deprecation_message text,
  sunset_date timestamptz,
  passthrough_reason text,
  -- Names of the service's security schemes this operation accepts (any one); empty = no credential.
  security text[] NOT NULL DEFAULT '{}',
  mcp_tool_name text NOT NULL DEFAULT '',
  internal_handler text NOT NULL DEFAULT '',
  revision bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (service_id, source_key)
);
CREATE INDEX tools_service ON tools (service_id);
CREATE INDEX tools_lower_name ON tools (lower(name));

-- Upstream credentials connected by a caller (scope caller) or for its organization (scope
-- organization). The secret material is AES-256-GCM encrypted JSON; references (env://, vault://)
-- are stored the same way.
CREATE TABLE credentials (
  id uuid PRIMARY KEY,
  service_id uuid NOT NULL REFERENCES services (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('caller', 'organization')),
  -- account id for scope caller, organization id for scope organization
  owner_id text NOT NULL,
  type text NOT NULL CHECK (type IN ('api_key', 'bearer', 'basic')),
  scheme_name text,
  is_reference boolean NOT NULL,
  hint text NOT NULL DEFAULT '',
  -- version byte || iv (12) || auth tag (16) || ciphertext
  sealed bytea NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (service_id, scope, owner_id)
);

-- One row per execution event (toolport.execution.*): the facts behind reliability and
-- recommendations. Kept for the window plus a margin; older rows are pruned.
CREATE TABLE executions (
  execution_id text PRIMARY KEY,
  tool_id uuid NOT NULL,
  service_id text NOT NULL,
  account_id text NOT NULL,
  organization_id text NOT NULL DEFAULT '',
  success boolean NOT NULL,
  seconds double precision NOT NULL,
  error_class text,
  error_type text,
  error text,
  is_probe boolean NOT NULL DEFAULT false,
  occurred_at timestamptz NOT NULL
);
CREATE INDEX executions_tool_time ON executions (tool_id, occurred_at DESC);
CREATE INDEX executions_account_time ON executions (account_id, occurred_at DESC);
CREATE INDEX executions_time ON executions (occurred_at);
