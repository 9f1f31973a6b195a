-- Async batches (POST /v1/tools/call/batch with `Prefer: respond-async`, MCP tasks): the calls, who sent
-- them, and each element's outcome as it ends, so a batch can be followed by id and survives a restart of
-- whoever follows it. Finished batches are pruned EXECUTION_BATCH_RETENTION_MS after they end.
CREATE TABLE batches (
  id              uuid PRIMARY KEY,
  account_id      text        NOT NULL,
  organization_id text        NOT NULL,
  key_id          text,
  -- The caller's Principal (binary protobuf) as the gateway authenticated it at submission: the calls run
  -- on it (each call's allowance check still re-checks the key with identity).
  principal       bytea       NOT NULL,
  request_id      text        NOT NULL,
  status          text        NOT NULL CHECK (status IN ('working', 'completed', 'cancelled', 'failed')),
  cancel_requested boolean    NOT NULL DEFAULT false,
  calls_total     integer     NOT NULL CHECK (calls_total BETWEEN 1 AND 10),
  -- FAILED: the whole-batch refusal {code, reason, message, details, detail} (the sync route's 401/403).
  error           jsonb,
  -- The process running the batch, until when. A working batch whose lease ran out is taken over: its
  -- elements never started run, its started ones end as batch_interrupted (never run twice).
  lease_holder    text        NOT NULL,
  lease_until     timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX batches_lease_idx ON batches (lease_until) WHERE status = 'working';
CREATE INDEX batches_finished_idx ON batches (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE batch_elements (
  batch_id uuid    NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
  position integer NOT NULL,
  -- The call as the service validated it (tool id, tool_input as exact JSON text, options).
  call     text    NOT NULL,
  -- pending: not started (a cancel or a takeover may still decide it); started: handed to the executor;
  -- done: `outcome` holds the element (a CallResult, binary protobuf, as CallBatch answers it).
  state    text    NOT NULL CHECK (state IN ('pending', 'started', 'done')),
  outcome  bytea,
  PRIMARY KEY (batch_id, position)
);
