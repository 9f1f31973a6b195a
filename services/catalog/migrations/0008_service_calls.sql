-- A service's calls, kept by the executions consumer in the statement that records the facts (only for
-- facts it actually inserted, so a redelivered event counts once): all-time in service_call_totals (its
-- total_executions and success_rate), and per UTC day for the last days in service_calls (its calls in
-- the last 30 days). A page of services reads one total and at most a month of days per service, however
-- long it has been called. The facts in `executions` are now pruned past the reliability window (catalog
-- role, hourly), as their comment always said, instead of growing by a row per call for good and being
-- scanned whole for every page of services; the day rows are pruned with them.
CREATE TABLE service_call_totals (
  service_id text PRIMARY KEY,
  calls bigint NOT NULL,
  successes bigint NOT NULL
);
CREATE TABLE service_calls (
  service_id text NOT NULL,
  day date NOT NULL,
  calls bigint NOT NULL,
  successes bigint NOT NULL,
  PRIMARY KEY (service_id, day)
);

-- The counts of every fact recorded so far (before any is pruned), and the days the window still reads.
INSERT INTO service_call_totals (service_id, calls, successes)
SELECT service_id, count(*), count(*) FILTER (WHERE success) FROM executions GROUP BY 1;
INSERT INTO service_calls (service_id, day, calls, successes)
SELECT service_id, (occurred_at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE success)
  FROM executions
 WHERE occurred_at >= (now() AT TIME ZONE 'UTC')::date - 32
 GROUP BY 1, 2;
