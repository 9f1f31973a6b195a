-- The trace a run was started in (W3C traceparent and tracestate as a JSON object; NULL when tracing is
-- off): a run resumed by another process's sweeper goes on in the same trace, and its completion event
-- is published in it.
ALTER TABLE workflow_runs ADD COLUMN trace_context jsonb;
