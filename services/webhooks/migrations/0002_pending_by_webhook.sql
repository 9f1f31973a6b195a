-- The sender claims per webhook (a skip scan over the webhooks with pending deliveries, then each one's
-- earliest due deliveries, as many as it has free slots), so one webhook's backlog never holds up the
-- others' and a claim reads only what it takes. This index serves both steps.
CREATE INDEX deliveries_pending_by_webhook ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
DROP INDEX deliveries_due;
