-- The deposit watcher (src/chain/deposit-watcher.ts): where it stands on the deposit network, per network
-- and token contract, so a restart resumes at the next block and a changed contract starts afresh.
-- `next_block` is the first block not scanned yet: every transfer in the blocks before it is credited.
CREATE TABLE deposit_watch_cursors (
  network text NOT NULL,
  token text NOT NULL,
  next_block bigint NOT NULL CHECK (next_block >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (network, token)
);

-- Who credited a deposit: a caller's confirm-deposit by hash, or the watcher. Either way the primary key
-- (one row per transaction hash) is the one guard, so a transfer is credited once whichever comes first.
ALTER TABLE deposits ADD COLUMN credited_by text NOT NULL DEFAULT 'confirm' CHECK (credited_by IN ('confirm', 'watcher'));
