-- Webhooks: the registry (signing secrets sealed with WEBHOOKS_SECRET_KEY) and deliveries, each a series
-- of up to 3 attempts scheduled here (claimed with FOR UPDATE SKIP LOCKED and a lease), so several
-- replicas share the work and a crashed replica's attempts are taken up again.

CREATE TABLE webhooks (
  id uuid PRIMARY KEY,
  owner_id uuid NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  description text NOT NULL DEFAULT '',
  secret bytea NOT NULL,
  -- After a rotation the previous secret signs beside the new one until previous_secret_expires_at.
  previous_secret bytea,
  previous_secret_expires_at timestamptz,
  -- Set when Toolport paused the webhook (the circuit); cleared when its owner resumes it.
  disabled_reason text,
  -- First failed attempt since the last success: the circuit opens when this is older than WEBHOOKS_CIRCUIT_MS.
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_by_owner ON webhooks (owner_id, created_at DESC);

CREATE TABLE deliveries (
  id uuid PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event text NOT NULL,
  event_id text NOT NULL,
  -- The exact JSON body every attempt sends (only the signature's timestamp changes).
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- A redelivery starts the next series; attempts counts the current one's.
  series integer NOT NULL DEFAULT 1,
  attempts integer NOT NULL DEFAULT 0,
  attempt_history jsonb NOT NULL DEFAULT '[]',
  last_response_status integer,
  next_attempt_at timestamptz,
  -- Claimed by a sender until then; null when no attempt is in flight.
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_in_flight ON deliveries (webhook_id) WHERE locked_until IS NOT NULL;
CREATE INDEX deliveries_history ON deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX deliveries_expiry ON deliveries (created_at);

-- Every statement that adds deliveries wakes the senders of every replica (LISTEN toolport_webhooks);
-- one that adds none (an event no webhook wants) wakes nobody.
CREATE FUNCTION webhooks_notify_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM added) THEN
    PERFORM pg_notify('toolport_webhooks', '');
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER deliveries_added AFTER INSERT ON deliveries REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_notify_deliveries();
