-- Activity (issue 33): the call log reads this table a page at a time, newest first, and refused calls are
-- recorded in it too, so a log and a key's usage can show them with their reason.
--
-- A refused call (key permission, consent required, rate or free-tier limit, insufficient balance, spend cap)
-- is one row with status 'refused': error_type holds the reason code, error the message; nothing ran, so it
-- has no result, no cost and no settlement, it is never published as an execution event and its id opens
-- no stored result.
ALTER TABLE executions DROP CONSTRAINT executions_status_check;
ALTER TABLE executions ADD CONSTRAINT executions_status_check CHECK (status IN ('success', 'error', 'refused'));

-- One index per scope a page is read in (an organization's owners and admins; a member's own calls; one
-- key), each ending in (executed_at, id): the page is an index range scan from the cursor, whatever the
-- table's size. The account index replaces executions_account_idx (same leading column).
CREATE INDEX executions_org_activity_idx ON executions (organization_id, executed_at DESC, id DESC);
CREATE INDEX executions_account_activity_idx ON executions (account_id, organization_id, executed_at DESC, id DESC);
CREATE INDEX executions_key_activity_idx ON executions (key_id, executed_at DESC, id DESC) WHERE key_id IS NOT NULL;
-- The tool filter: without it a rarely called tool's page walks the organization's whole index (measured
-- with test/bench/activity-page.mjs: ~90 ms at 300,000 rows, growing with the log, against ~1 ms with it).
CREATE INDEX executions_org_tool_activity_idx ON executions (organization_id, tool_id, executed_at DESC, id DESC);
DROP INDEX executions_account_idx;
