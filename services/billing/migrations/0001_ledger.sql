-- Billing: wallets on a double-entry ledger, price holds, spending settings, funding records.
--
-- Money is BIGINT USDC atomic units (6 decimals). The ledger is append-only: every movement is a
-- ledger_transaction whose entries sum to zero (checked at commit by a deferred constraint trigger),
-- so the sum over all accounts is always zero. A wallet's balances are the sums of its accounts'
-- entries; ledger_accounts.balance caches that sum for wallet accounts only, and only the entry
-- trigger may change it (in the same transaction as the entry), so it can never drift from the entries.

CREATE SEQUENCE wallet_deposit_index AS bigint MINVALUE 0 START 0;

CREATE TABLE wallets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- identity's account id; one wallet per account.
  account_id text NOT NULL UNIQUE,
  -- HD child index under the platform's deposit xpub (path <xpub>/0/<index>): one address per wallet.
  deposit_index bigint NOT NULL UNIQUE DEFAULT nextval('wallet_deposit_index'),
  -- Lower-case 0x address derived from deposit_index; set once, when a deposit xpub is configured.
  deposit_address text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- wallet_available: what holds can take; wallet_held: open holds of the wallet.
-- platform_revenue: captured prices; external_onchain / external_card: where deposits come from
-- (their balances are negative: money that entered the system).
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('wallet_available', 'wallet_held', 'platform_revenue', 'external_onchain', 'external_card')),
  wallet_id uuid REFERENCES wallets (id),
  -- Cached sum of this account's entries, kept for wallet accounts only (platform accounts are summed
  -- on demand, so captures on many wallets never queue on one hot row).
  balance bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind IN ('wallet_available', 'wallet_held')) = (wallet_id IS NOT NULL)),
  CHECK ((wallet_id IS NOT NULL) = (balance IS NOT NULL)),
  -- A wallet can never go below zero, whatever the code above this table does.
  CHECK (balance IS NULL OR balance >= 0),
  UNIQUE (wallet_id, kind)
);

CREATE UNIQUE INDEX ledger_accounts_platform_kind ON ledger_accounts (kind) WHERE wallet_id IS NULL;

INSERT INTO ledger_accounts (kind) VALUES ('platform_revenue'), ('external_onchain'), ('external_card');

CREATE TABLE ledger_transactions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('deposit', 'card_payment', 'hold', 'capture', 'release', 'refund')),
  -- tx hash, checkout session id or execution id: one transaction of each kind per reference, so a
  -- deposit, a checkout session or a capture can never be booked twice.
  reference text NOT NULL,
  wallet_id uuid NOT NULL REFERENCES wallets (id),
  -- The movement as the wallet's owner sees it (see README: Ledger view) and the wallet's balance
  -- (holds included) after it; both computed from the entries in the same transaction.
  wallet_amount bigint NOT NULL,
  wallet_balance_after bigint NOT NULL,
  memo text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (kind, reference)
);

CREATE INDEX ledger_transactions_wallet ON ledger_transactions (wallet_id, created_at DESC);

CREATE TABLE ledger_entries (
  id bigserial PRIMARY KEY,
  transaction_id uuid NOT NULL REFERENCES ledger_transactions (id),
  account_id uuid NOT NULL REFERENCES ledger_accounts (id),
  -- Signed: positive adds to the account, negative takes from it.
  amount bigint NOT NULL CHECK (amount <> 0),
  -- The account's balance after this entry (wallet accounts only).
  balance_after bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id);

-- The cached balance moves with each entry, inside the inserting transaction.
CREATE FUNCTION ledger_apply_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts SET balance = balance + NEW.amount
   WHERE id = NEW.account_id AND balance IS NOT NULL
   RETURNING balance INTO NEW.balance_after;
  RETURN NEW;
END $$;

CREATE TRIGGER ledger_entries_apply BEFORE INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_apply_entry();

-- Every ledger transaction balances: checked once its entries are all in, at commit.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
  n integer;
BEGIN
  SELECT COALESCE(SUM(amount), 0), COUNT(*) INTO total, n FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
  IF total <> 0 OR n < 2 THEN
    RAISE EXCEPTION 'ledger transaction % is not balanced (sum %, % entries)', NEW.transaction_id, total, n
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

-- Append-only: entries and transactions are never changed or removed; a correction is a new transaction.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();

-- A cached balance is never edited in place: only the entry trigger (depth > 0) may move it.
CREATE FUNCTION ledger_guard_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 AND NEW.balance IS DISTINCT FROM OLD.balance THEN
    RAISE EXCEPTION 'ledger_accounts.balance changes only through ledger entries' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER ledger_accounts_balance_guard BEFORE UPDATE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_guard_balance();

CREATE TABLE holds (
  -- The execution service's execution id: the idempotency key of Hold, Capture and Release.
  execution_id text PRIMARY KEY,
  wallet_id uuid NOT NULL REFERENCES wallets (id),
  account_id text NOT NULL,
  key_id text,
  tool_id text NOT NULL DEFAULT '',
  organization_id text NOT NULL DEFAULT '',
  amount bigint NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('held', 'captured', 'released', 'expired', 'refunded')),
  -- UTC day the hold counts against for daily limits.
  day date NOT NULL,
  -- The key's daily cap at hold time, for the 80% warning at capture.
  key_daily_limit_cents bigint,
  release_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  settled_at timestamptz
);

CREATE INDEX holds_account_day ON holds (account_id, day) WHERE status IN ('held', 'captured');
CREATE INDEX holds_key_day ON holds (key_id, day) WHERE key_id IS NOT NULL AND status IN ('held', 'captured');
CREATE INDEX holds_open_expiry ON holds (expires_at) WHERE status = 'held';

CREATE TABLE spending_settings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id text NOT NULL UNIQUE,
  max_per_call_atomic bigint NOT NULL DEFAULT 5000000 CHECK (max_per_call_atomic BETWEEN 0 AND 5000000),
  daily_limit_atomic bigint CHECK (daily_limit_atomic >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One toolport.spend.limit_approaching per key per UTC day.
CREATE TABLE spend_warnings (
  key_id text NOT NULL,
  day date NOT NULL,
  account_id text NOT NULL,
  daily_limit_cents bigint NOT NULL,
  spent_today_cents bigint NOT NULL,
  event_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key_id, day)
);

-- Confirmed on-chain deposits, one per transaction hash.
CREATE TABLE deposits (
  tx_hash text PRIMARY KEY,
  wallet_id uuid NOT NULL REFERENCES wallets (id),
  amount bigint NOT NULL CHECK (amount > 0),
  block_number bigint NOT NULL,
  transaction_id uuid NOT NULL REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Hosted card checkouts created for a wallet, and when each was credited.
CREATE TABLE card_checkouts (
  session_id text PRIMARY KEY,
  wallet_id uuid NOT NULL REFERENCES wallets (id),
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  credited_at timestamptz,
  transaction_id uuid REFERENCES ledger_transactions (id)
);
