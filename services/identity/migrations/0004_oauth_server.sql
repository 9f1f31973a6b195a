-- Identity as an OAuth 2.1 authorization server for Toolport's MCP server (issue 32; README "MCP
-- authorization"). A person grants an MCP client access on a consent page; the grant is an API key row
-- (oauth_client_id set, no plaintext ever issued) carrying the permissions picked there, so tokens are
-- stamped, counted, limited and revoked exactly as that key is. Only hashes of codes and tokens are kept.

-- Clients: a Client ID Metadata Document (client_id is the https URL of the document, fetched and
-- cached) or a dynamically registered client (RFC 7591; client_id generated here).
CREATE TABLE oauth_server_clients (
  client_id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('metadata_document', 'dynamic')),
  client_name text NOT NULL,
  client_uri text,
  logo_uri text,
  redirect_uris text[] NOT NULL,
  -- The document as fetched (metadata_document) or as registered (dynamic).
  metadata jsonb NOT NULL,
  fetched_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- An authorization request between /oauth/authorize and the person's decision, then its code until
-- redeemed. One row per request; the code (hash) is set when the person allows.
CREATE TABLE oauth_authorization_requests (
  id uuid PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_server_clients (client_id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  state text,
  code_challenge text NOT NULL,
  resource text NOT NULL,
  scope text NOT NULL,
  expires_at timestamptz NOT NULL,
  -- Set by the decision: who decided, and for an allow, the organization and permissions the grant
  -- will have. The grant (key_id) is made only when the code is redeemed with the right verifier.
  decided_at timestamptz,
  account_id uuid REFERENCES accounts (id),
  organization_id uuid REFERENCES organizations (id),
  permissions jsonb,
  key_id uuid REFERENCES api_keys (id),
  code_hash bytea UNIQUE,
  code_expires_at timestamptz,
  code_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_authorization_requests_expiry ON oauth_authorization_requests (expires_at);

ALTER TABLE api_keys
  -- A grant to an MCP client: the client it was given to (its tokens act as this key).
  ADD COLUMN oauth_client_id text REFERENCES oauth_server_clients (client_id);
CREATE INDEX api_keys_by_oauth_client ON api_keys (account_id, oauth_client_id) WHERE oauth_client_id IS NOT NULL;

-- Access and refresh tokens. A refresh token is single use: redeeming it marks it used and issues a new
-- pair in the same family (the grant); presenting a used one again revokes the grant (RFC 9700 4.14).
CREATE TABLE oauth_tokens (
  token_hash bytea PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  key_id uuid NOT NULL REFERENCES api_keys (id),
  client_id text NOT NULL,
  resource text NOT NULL,
  scope text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_by_key ON oauth_tokens (key_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
