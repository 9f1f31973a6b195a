-- Transactional outbox: a service writes its events here in the same transaction as the state
-- change they describe; the relay publishes them to JetStream with Nats-Msg-Id = id.
CREATE TABLE outbox (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  subject text NOT NULL,
  payload bytea NOT NULL,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  last_error text
);
CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;

-- Inbox: each event a consumer applied, recorded in the same transaction as its effect, so a
-- redelivered event changes nothing.
CREATE TABLE inbox (
  consumer text NOT NULL,
  event_id text NOT NULL,
  subject text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);

-- Poison messages: terminated (never retried forever) and kept here for an operator to inspect.
CREATE TABLE dead_letters (
  id bigserial PRIMARY KEY,
  consumer text NOT NULL,
  event_id text,
  subject text NOT NULL,
  payload bytea NOT NULL,
  error text NOT NULL,
  deliveries integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
