-- The relay claims a batch with a lease instead of holding row locks for the length of a transaction:
-- claiming and marking are then one statement each (no BEGIN/COMMIT), and a relay that dies mid-batch
-- leaves rows that any relay takes again once the lease has run out.
ALTER TABLE outbox ADD COLUMN claimed_until timestamptz;
