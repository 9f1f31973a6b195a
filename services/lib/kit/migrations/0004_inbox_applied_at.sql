-- A consumer whose inbox rows are pruned after some days (pruneInbox, ConsumerOptions.inboxDays) finds
-- the old ones by when they were applied. Rows are appended in that order, so a BRIN index (a few pages,
-- one summary per range of blocks) finds them without a B-tree entry per event.
CREATE INDEX inbox_applied_at ON inbox USING brin (applied_at);
