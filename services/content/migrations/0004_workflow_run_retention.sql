-- Finished runs by when they ended: the retention job (workflows/pruner.ts) deletes the oldest in batches.
CREATE INDEX workflow_runs_finished ON workflow_runs (finished_at) WHERE status IN ('completed', 'failed');
