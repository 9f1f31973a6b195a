-- OAuth connections (issue 20): a publisher registers an OAuth client for a service; a caller connects
-- through the authorization-code flow (PKCE and state) or the client-credentials flow; the tokens are a
-- credential of type oauth2, sealed like every other, which the execution service refreshes through the
-- catalog before they expire.

ALTER TABLE credentials DROP CONSTRAINT credentials_type_check;
ALTER TABLE credentials ADD CONSTRAINT credentials_type_check CHECK (type IN ('api_key', 'bearer', 'basic', 'oauth2'));
ALTER TABLE credentials
  -- broken: the provider refused the refresh (invalid_grant): readiness is needs_credential again.
  ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'broken')),
  ADD COLUMN broken_reason text,
  -- oauth2 only: the flow that made it, the scopes granted, when the access token expires.
  ADD COLUMN oauth_flow text CHECK (oauth_flow IN ('authorization_code', 'client_credentials')),
  ADD COLUMN oauth_scopes text[] NOT NULL DEFAULT '{}',
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN refreshed_at timestamptz;

-- The OAuth scopes each operation's security requirements name, per scheme: {"oauth": ["items:read"]}.
ALTER TABLE tools ADD COLUMN security_scopes jsonb NOT NULL DEFAULT '{}';

-- One OAuth client per service, registered by its publisher.
CREATE TABLE oauth_clients (
  service_id uuid PRIMARY KEY REFERENCES services (id) ON DELETE CASCADE,
  scheme_name text NOT NULL,
  flow text NOT NULL CHECK (flow IN ('authorization_code', 'client_credentials')),
  client_id text NOT NULL,
  -- AES-256-GCM, like credentials.sealed; null for a public client (PKCE alone).
  sealed_secret bytea,
  client_auth text NOT NULL CHECK (client_auth IN ('client_secret_basic', 'client_secret_post')),
  authorization_url text,
  token_url text NOT NULL,
  revocation_url text,
  scopes text[] NOT NULL DEFAULT '{}',
  shared boolean NOT NULL DEFAULT false,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Authorizations started and not yet completed: the state (stored as its SHA-256), who started it and
-- the PKCE verifier (sealed). Single use, 10 minutes.
CREATE TABLE oauth_states (
  state_hash text PRIMARY KEY,
  service_id uuid NOT NULL REFERENCES services (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('caller', 'organization')),
  owner_id text NOT NULL,
  account_id text NOT NULL,
  sealed_verifier bytea NOT NULL,
  redirect_uri text NOT NULL,
  return_to text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_states_expiry ON oauth_states (expires_at);
