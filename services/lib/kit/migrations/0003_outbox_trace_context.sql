-- The trace context of the work that wrote an event (W3C traceparent and tracestate, as a JSON object of
-- those headers), carried to NATS by the relay so the consumers' spans join the producer's trace. NULL
-- when tracing is off.
ALTER TABLE outbox ADD COLUMN trace_context jsonb;
