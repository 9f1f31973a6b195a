-- Content, part 2: workflows (ordered chains of catalog tools) and their runs. A run is advanced one step
-- per transaction by the process holding its lease; a process that dies leaves the lease to run out, and
-- the sweeper of any process resumes the run from its next step. Each step calls execution with the
-- idempotency key `<run_id>:<step_number>`, so a resumed step gets the stored outcome, never a second call.

CREATE TABLE workflows (
  id uuid PRIMARY KEY,
  owner_id uuid NOT NULL,
  -- The organization the workflow was created in.
  organization_id uuid,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- [{step_number, tool_id, tool_name, description, input_mapping}], in order.
  steps jsonb NOT NULL,
  -- JSON Schema of a run's inputs; null = any object.
  input_schema jsonb,
  visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
  tags text[] NOT NULL DEFAULT '{}',
  -- Runs that ended (completed or failed), and those that completed: updated with the run's last step.
  total_executions bigint NOT NULL DEFAULT 0,
  successful_executions bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflows_by_owner ON workflows (owner_id, created_at DESC);
CREATE INDEX workflows_public_newest ON workflows (created_at DESC) WHERE visibility = 'public';
CREATE INDEX workflows_public_popular ON workflows (total_executions DESC, created_at DESC) WHERE visibility = 'public';

CREATE TABLE workflow_runs (
  id uuid PRIMARY KEY,
  -- No foreign key: a run outlives a deleted workflow (it finishes from its own copy of the steps).
  workflow_id uuid NOT NULL,
  workflow_name text NOT NULL,
  -- The account that ran it, and its principal (binary toolport.common.v1.Principal): every step calls
  -- execution as this caller, also when another process resumes the run.
  runner_id uuid NOT NULL,
  organization_id uuid NOT NULL,
  principal bytea NOT NULL,
  request_id text,
  status text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'awaiting_confirmation')),
  -- The workflow's steps when the run started.
  steps jsonb NOT NULL,
  inputs jsonb NOT NULL,
  max_response_chars integer NOT NULL,
  -- The step to run next (steps_total + 1 once completed).
  next_step integer NOT NULL DEFAULT 1,
  -- The confirm token given for next_step (ConfirmWorkflowRun), used by its next attempt.
  confirm_token text,
  -- The consent object while awaiting_confirmation.
  consent jsonb,
  -- The last step's result, capped like a call, once completed.
  result jsonb,
  truncated boolean NOT NULL DEFAULT false,
  response_meta jsonb,
  error text,
  -- Attempts at next_step by a resuming process; the run fails when they run out.
  attempts integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_until timestamptz,
  started_at timestamptz NOT NULL DEFAULT now(),
  -- Time spent running (awaiting confirmation excluded): active_ms so far plus now - resumed_at.
  active_ms bigint NOT NULL DEFAULT 0,
  resumed_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  execution_time_ms bigint
);
CREATE INDEX workflow_runs_by_runner ON workflow_runs (runner_id, workflow_id, started_at DESC);
CREATE INDEX workflow_runs_due ON workflow_runs (lease_until) WHERE status = 'running';

CREATE TABLE workflow_run_steps (
  run_id uuid NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
  step_number integer NOT NULL,
  status text NOT NULL CHECK (status IN ('completed', 'failed', 'awaiting_confirmation')),
  tool_id text NOT NULL,
  tool_name text NOT NULL,
  tool_input jsonb,
  execution_id uuid,
  error text,
  error_code text,
  duration_ms bigint NOT NULL DEFAULT 0,
  -- The step's result as its call returned it, kept only when a later step's template refers to it; when
  -- the call's result was cut to its cap (500,000 characters), templates read execution's stored result.
  result jsonb,
  result_truncated boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, step_number)
);
