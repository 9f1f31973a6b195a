-- Identity: accounts (agents and humans), organizations and memberships, API keys, JWT signing keys,
-- the shared rate-limit and free-tier counters, and key usage projected from execution events.

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  -- An account's personal organization (one per account, created with it).
  is_personal boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('agent', 'human')),
  name text NOT NULL,
  -- Operator email (agents, not unique) or login email (humans, unique case-insensitively).
  email text NOT NULL,
  tier text NOT NULL DEFAULT 'free',
  -- scrypt$N$r$p$salt$hash (humans who signed up with a password); null for agents and OIDC users.
  password_hash text,
  is_platform_admin boolean NOT NULL DEFAULT false,
  personal_organization_id uuid NOT NULL REFERENCES organizations (id),
  -- Humans from a trusted external OIDC issuer: (iss, sub) of their tokens.
  external_issuer text,
  external_subject text,
  -- Client IP of a self-registration, for abuse review.
  registered_ip text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_human_email ON accounts (lower(email)) WHERE kind = 'human' AND external_issuer IS NULL;
CREATE UNIQUE INDEX accounts_external ON accounts (external_issuer, external_subject) WHERE external_issuer IS NOT NULL;

CREATE TABLE memberships (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, account_id)
);
CREATE INDEX memberships_by_account ON memberships (account_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  -- SHA-256 of the plaintext key; the plaintext is never stored.
  key_hash bytea NOT NULL UNIQUE,
  -- First 8 characters of the plaintext, shown in listings.
  key_prefix text NOT NULL,
  -- Null = unrestricted; else {allowed_services, allowed_tools, max_cost_per_call_cents,
  -- daily_spend_limit_cents, require_confirmation}.
  permissions jsonb,
  agent_name text,
  agent_type text CHECK (agent_type IN ('coding_agent', 'assistant', 'workflow', 'service', 'other')),
  purpose text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_by uuid
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at DESC);
CREATE INDEX api_keys_by_organization ON api_keys (organization_id, created_at DESC);

-- ES256 key pairs for Toolport-issued JWTs. The private JWK is AES-256-GCM encrypted with a key
-- derived from IDENTITY_SECRET_KEY (iv || tag || ciphertext).
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  public_jwk jsonb NOT NULL,
  private_jwk_encrypted bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);

-- Fixed-window counters shared by every gateway and execution replica.
CREATE TABLE rate_limit_windows (
  bucket text NOT NULL,
  subject_key text NOT NULL,
  window_start timestamptz NOT NULL,
  window_seconds integer NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (bucket, subject_key, window_start)
);
CREATE INDEX rate_limit_windows_expiry ON rate_limit_windows (window_start);

-- Free-tier calls per account and UTC month; each execution counted once.
CREATE TABLE free_tier_usage (
  account_id uuid NOT NULL,
  month date NOT NULL,
  calls bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, month)
);
CREATE TABLE free_tier_calls (
  execution_id text PRIMARY KEY,
  account_id uuid NOT NULL,
  month date NOT NULL,
  counted_at timestamptz NOT NULL DEFAULT now()
);

-- One row per key-stamped, non-probe execution, from toolport.execution.* events.
CREATE TABLE key_usage (
  execution_id text PRIMARY KEY,
  event_id text NOT NULL,
  key_id text NOT NULL,
  account_id text NOT NULL,
  tool_id text NOT NULL,
  tool_name text NOT NULL,
  service_id text NOT NULL,
  service_name text NOT NULL,
  success boolean NOT NULL,
  seconds double precision NOT NULL,
  is_paid boolean NOT NULL,
  cost_cents bigint NOT NULL,
  occurred_at timestamptz NOT NULL
);
CREATE INDEX key_usage_by_key ON key_usage (key_id, occurred_at);
