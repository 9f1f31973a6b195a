-- Authority inside a tenant (README "Permissions"): keys record the key they were made with, console
-- keys the sign-in they belong to and when they end; the quota lease re-checks what Authenticate checks.

ALTER TABLE api_keys
  -- A key made with a key: never wider than it (domain/authority.ts); its maker may list and revoke it.
  ADD COLUMN created_by_key_id uuid REFERENCES api_keys (id),
  -- When the key stops working by itself (a console key ends with its sign-in's token).
  ADD COLUMN expires_at timestamptz,
  -- A console key: the sign-in (JWT jti) it was made for, or 'left_over' for one made by an earlier
  -- console that kept a key per browser with no end.
  ADD COLUMN console_session text;
CREATE INDEX api_keys_by_creator ON api_keys (created_by_key_id) WHERE created_by_key_id IS NOT NULL;
CREATE INDEX api_keys_by_console_session ON api_keys (account_id, console_session) WHERE console_session IS NOT NULL;

-- The keys the earlier console made: its name and purpose, exactly as it sent them.
UPDATE api_keys SET console_session = 'left_over'
 WHERE name = 'Toolport console'
   AND purpose = 'Calls tools, funds the wallet and runs workflows from the Toolport console in a browser';

-- The lease's key check now also refuses what Authenticate refuses: a key whose owner left the
-- organization the key is bound to, an expired key, and (role_ok false) a caller who is only a viewer
-- of the organization the call runs in (viewers read; they do not call its tools). A member demoted to
-- viewer is refused on the next lease: identity drops live leases on the demotion.
DROP FUNCTION lease_call_allowance(
  text, text, integer, integer, integer, uuid, bigint, bigint, uuid, uuid, uuid, text, integer, integer,
  timestamptz, integer, date, bigint);

CREATE FUNCTION lease_call_allowance(
  p_bucket text, p_subject text, p_limit integer, p_window_seconds integer, p_want integer,
  p_free_account uuid, p_free_want bigint, p_free_limit bigint,
  p_key uuid, p_key_account uuid, p_organization uuid,
  p_holder text, p_ttl_ms integer, p_last_used_seconds integer,
  p_back_window timestamptz, p_back_hits integer, p_back_month date, p_back_free bigint,
  OUT key_ok boolean, OUT role_ok boolean, OUT granted integer, OUT hits integer, OUT window_start timestamptz,
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
  role_ok := true;
  IF p_key IS NOT NULL THEN
    SELECT mb.role <> 'viewer' INTO role_ok FROM api_keys k
      JOIN memberships mb ON mb.account_id = k.account_id AND mb.organization_id = p_organization
      JOIN memberships bound ON bound.account_id = k.account_id AND bound.organization_id = k.organization_id
     WHERE k.id = p_key AND k.account_id = p_key_account AND k.revoked_at IS NULL
       AND (k.expires_at IS NULL OR k.expires_at > db_now)
       FOR SHARE OF k, mb, bound;
    key_ok := FOUND;
    IF NOT key_ok OR NOT role_ok THEN
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
