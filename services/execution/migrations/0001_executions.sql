-- Every execution (success or failure), its stored result, and what it cost.
CREATE TABLE executions (
  id                 uuid PRIMARY KEY,
  account_id         text        NOT NULL,
  organization_id    text        NOT NULL,
  key_id             text,
  tool_id            text        NOT NULL,
  tool_name          text        NOT NULL,
  service_id         text        NOT NULL,
  service_name       text        NOT NULL,
  service_type       text        NOT NULL CHECK (service_type IN ('api', 'mcp_server', 'internal')),
  status             text        NOT NULL CHECK (status IN ('success', 'error')),
  error              text,
  error_class        text CHECK (error_class IN ('auth', 'caller', 'platform', 'upstream')),
  error_type         text,
  -- The redacted result as JSON text (exact key order kept); NULL for failures.
  result_json        text,
  -- Set when the stored result is itself a capped form (see DEFAULT_STORE_MAX_CHARS).
  stored_meta        jsonb,
  -- The redaction report {count, fields, mode}; NULL when nothing was masked.
  redaction          jsonb,
  passthrough_reason text,
  cost_cents         bigint      NOT NULL DEFAULT 0 CHECK (cost_cents >= 0),
  -- Price hold settlement: none (free), captured, released, or *_pending while billing is unreachable.
  settlement         text        NOT NULL DEFAULT 'none'
                     CHECK (settlement IN ('none', 'captured', 'released', 'capture_pending', 'release_pending')),
  duration_ms        integer     NOT NULL,
  executed_at        timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX executions_account_idx ON executions (account_id, executed_at DESC);
CREATE INDEX executions_settlement_idx ON executions (settlement) WHERE settlement IN ('capture_pending', 'release_pending');

-- Confirm tokens already used (single use). Rows past expires_at can be pruned.
CREATE TABLE consent_uses (
  jti        uuid PRIMARY KEY,
  used_at    timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- Idempotency keys (Idempotency-Key header, idempotency_key in a batch element), per account, 24 hours.
CREATE TABLE idempotency_keys (
  account_id      text        NOT NULL,
  idempotency_key text        NOT NULL,
  input_hash      text        NOT NULL,
  execution_id    uuid        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('running', 'done')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, idempotency_key)
);
