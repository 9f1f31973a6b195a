-- Calls per service and UTC day, kept by the executions consumer in the statement that records the facts
-- (only for facts it actually inserted, so a redelivered event counts once). A service's all-time
-- total_executions and success_rate, and its calls in the last 30 days, are read from here: the facts in
-- `executions` are now pruned past the reliability window (catalog role, hourly), as their comment always
-- said, instead of growing by a row per call for good and being scanned whole for every page of services.
CREATE TABLE service_calls (
  service_id text NOT NULL,
  day date NOT NULL,
  calls bigint NOT NULL,
  successes bigint NOT NULL,
  PRIMARY KEY (service_id, day)
);

-- The counts of every fact recorded so far (before any is pruned).
INSERT INTO service_calls (service_id, day, calls, successes)
SELECT service_id, (occurred_at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE success)
  FROM executions
 GROUP BY 1, 2;
