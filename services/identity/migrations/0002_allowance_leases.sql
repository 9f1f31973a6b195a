-- Quota leases: execution reserves tool-call allowance in blocks (LeaseCallAllowance) instead of one
-- counter statement per call. The counters (rate_limit_windows.hits, free_tier_usage.calls) are raised
-- by what a lease grants, so replicas together never count past a limit; unused parts are given back.
-- Revoking a key, or removing its owner from an organization, asks every live holder of a lease on it
-- to drop the lease before the revoke answers (store/leases.ts).

-- Who holds a live lease for an API key in an organization: one row per execution process (holder),
-- key and organization, its end pushed forward by each new lease. Rows whose end has passed are pruned.
CREATE TABLE allowance_leases (
  holder text NOT NULL,
  key_id uuid NOT NULL,
  account_id uuid NOT NULL,
  organization_id uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, organization_id, holder)
);
CREATE INDEX allowance_leases_by_member ON allowance_leases (account_id, organization_id);
CREATE INDEX allowance_leases_expiry ON allowance_leases (expires_at);

-- Free-tier calls are recorded from execution events (the key-usage consumer); a month that has ended
-- is reconciled to their count.
CREATE INDEX free_tier_calls_by_month ON free_tier_calls (account_id, month);

-- One lease in one round trip, in this order:
--  1. the give-back of an earlier lease of the same caller (hits of its window, calls of its month);
--  2. the key check, locking the key and membership rows FOR SHARE: a revoke (UPDATE) or a member's
--     removal (DELETE) waits for this transaction, and then sees its holder row; a lease that starts
--     after the revoke committed re-reads the rows and fails the check. On failure nothing is reserved;
--  3. the throttled last_used_at write of Authenticate (p_last_used_seconds resolution);
--  4. up to p_want hits of the current window, never past p_limit (the row is locked while it is read
--     and raised);
--  5. when hits were granted and p_free_want > 0, up to p_free_want calls of the account's UTC month,
--     never past p_free_limit;
--  6. for a key, the holder row, so a revoke can find this lease.
-- The lease lasts p_ttl_ms, cut at the window's end and, with free-tier calls, at the month's end.
CREATE FUNCTION lease_call_allowance(
  p_bucket text, p_subject text, p_limit integer, p_window_seconds integer, p_want integer,
  p_free_account uuid, p_free_want bigint, p_free_limit bigint,
  p_key uuid, p_key_account uuid, p_organization uuid,
  p_holder text, p_ttl_ms integer, p_last_used_seconds integer,
  p_back_window timestamptz, p_back_hits integer, p_back_month date, p_back_free bigint,
  OUT key_ok boolean, OUT granted integer, OUT hits integer, OUT window_start timestamptz,
  OUT window_end timestamptz, OUT db_now timestamptz, OUT free_granted bigint, OUT free_calls bigint,
  OUT month date, OUT resets_at timestamptz, OUT ttl_ms integer)
LANGUAGE plpgsql AS $$
-- Conflict targets are named by constraint: the OUT parameters share names with columns.
DECLARE
  lease_end timestamptz;
BEGIN
  db_now := now();
  window_start := to_timestamp(floor(extract(epoch FROM db_now) / p_window_seconds) * p_window_seconds);
  window_end := window_start + make_interval(secs => p_window_seconds);
  month := date_trunc('month', db_now AT TIME ZONE 'UTC')::date;
  resets_at := (month + interval '1 month')::timestamp AT TIME ZONE 'UTC';
  granted := 0;
  free_granted := 0;
  ttl_ms := 0;

  IF coalesce(p_back_hits, 0) > 0 THEN
    UPDATE rate_limit_windows SET hits = greatest(0, rate_limit_windows.hits - p_back_hits)
     WHERE bucket = p_bucket AND subject_key = p_subject AND rate_limit_windows.window_start = p_back_window;
  END IF;
  IF coalesce(p_back_free, 0) > 0 AND p_free_account IS NOT NULL THEN
    UPDATE free_tier_usage SET calls = greatest(0, calls - p_back_free)
     WHERE account_id = p_free_account AND free_tier_usage.month = p_back_month;
  END IF;

  key_ok := true;
  IF p_key IS NOT NULL THEN
    PERFORM 1 FROM api_keys k
      JOIN memberships mb ON mb.account_id = k.account_id AND mb.organization_id = p_organization
     WHERE k.id = p_key AND k.account_id = p_key_account AND k.revoked_at IS NULL
       FOR SHARE OF k, mb;
    key_ok := FOUND;
    IF NOT key_ok THEN
      RETURN;
    END IF;
    UPDATE api_keys SET last_used_at = db_now
     WHERE id = p_key AND (last_used_at IS NULL OR last_used_at < db_now - make_interval(secs => p_last_used_seconds));
  END IF;

  IF p_want > 0 THEN
    INSERT INTO rate_limit_windows (bucket, subject_key, window_start, window_seconds, hits)
    VALUES (p_bucket, p_subject, window_start, p_window_seconds, 0)
    ON CONFLICT ON CONSTRAINT rate_limit_windows_pkey DO NOTHING;
    SELECT r.hits INTO hits FROM rate_limit_windows r
     WHERE r.bucket = p_bucket AND r.subject_key = p_subject AND r.window_start = lease_call_allowance.window_start
       FOR UPDATE;
    granted := greatest(0, least(p_want, p_limit - hits));
    IF granted > 0 THEN
      UPDATE rate_limit_windows r SET hits = r.hits + granted
       WHERE r.bucket = p_bucket AND r.subject_key = p_subject AND r.window_start = lease_call_allowance.window_start;
      hits := hits + granted;
    END IF;
  ELSE
    SELECT coalesce(max(r.hits), 0) INTO hits FROM rate_limit_windows r
     WHERE r.bucket = p_bucket AND r.subject_key = p_subject AND r.window_start = lease_call_allowance.window_start;
  END IF;

  IF p_free_account IS NOT NULL THEN
    IF granted > 0 AND p_free_want > 0 THEN
      INSERT INTO free_tier_usage (account_id, month, calls) VALUES (p_free_account, month, 0)
      ON CONFLICT ON CONSTRAINT free_tier_usage_pkey DO NOTHING;
      SELECT u.calls INTO free_calls FROM free_tier_usage u
       WHERE u.account_id = p_free_account AND u.month = lease_call_allowance.month
         FOR UPDATE;
      free_granted := greatest(0, least(p_free_want, p_free_limit - free_calls));
      IF free_granted > 0 THEN
        UPDATE free_tier_usage u SET calls = u.calls + free_granted
         WHERE u.account_id = p_free_account AND u.month = lease_call_allowance.month;
        free_calls := free_calls + free_granted;
      END IF;
    ELSE
      SELECT coalesce(max(u.calls), 0) INTO free_calls FROM free_tier_usage u
       WHERE u.account_id = p_free_account AND u.month = lease_call_allowance.month;
    END IF;
  END IF;

  IF granted > 0 THEN
    lease_end := least(db_now + make_interval(secs => p_ttl_ms / 1000.0), window_end);
    IF free_granted > 0 THEN
      lease_end := least(lease_end, resets_at);
    END IF;
    ttl_ms := floor(extract(epoch FROM lease_end - db_now) * 1000);
    IF p_key IS NOT NULL THEN
      INSERT INTO allowance_leases AS l (holder, key_id, account_id, organization_id, expires_at)
      VALUES (p_holder, p_key, p_key_account, p_organization, lease_end)
      ON CONFLICT ON CONSTRAINT allowance_leases_pkey DO UPDATE SET expires_at = greatest(l.expires_at, EXCLUDED.expires_at);
    END IF;
  END IF;
END
$$;
