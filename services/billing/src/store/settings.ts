/** Spending settings, one row per account, created with the defaults on first read. */
import type { Pool } from "@toolport/kit/pg";
import type { SettingsChange } from "../domain/settings.js";
import type { SpendingSettings } from "../domain/types.js";

interface SettingsRow {
  id: string;
  account_id: string;
  max_per_call_atomic: bigint;
  daily_limit_atomic: bigint | null;
  created_at: Date;
  updated_at: Date;
}

const toSettings = (r: SettingsRow): SpendingSettings => ({
  id: r.id,
  accountId: r.account_id,
  maxPerCallAtomic: r.max_per_call_atomic,
  dailyLimitAtomic: r.daily_limit_atomic,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SettingsStore {
  constructor(private readonly pool: Pool) {}

  async get(accountId: string): Promise<SpendingSettings> {
    const found = await this.pool.query<SettingsRow>("SELECT * FROM spending_settings WHERE account_id = $1", [accountId]);
    if (found.rows[0]) return toSettings(found.rows[0]);
    // Defaults (5,000,000 per call, no daily limit) come from the table's column defaults.
    const { rows } = await this.pool.query<SettingsRow>(
      `INSERT INTO spending_settings (account_id) VALUES ($1)
       ON CONFLICT (account_id) DO UPDATE SET account_id = EXCLUDED.account_id RETURNING *`,
      [accountId],
    );
    return toSettings(rows[0]!);
  }

  /** Changes only what `change` names; a null daily limit removes it. */
  async update(accountId: string, change: SettingsChange): Promise<SpendingSettings> {
    const setDaily = change.dailyLimitAtomic !== undefined;
    const { rows } = await this.pool.query<SettingsRow>(
      `INSERT INTO spending_settings (account_id, max_per_call_atomic, daily_limit_atomic)
       VALUES ($1, COALESCE($2::bigint, 5000000), CASE WHEN $4 THEN $3::bigint END)
       ON CONFLICT (account_id) DO UPDATE SET
         max_per_call_atomic = COALESCE($2::bigint, spending_settings.max_per_call_atomic),
         daily_limit_atomic = CASE WHEN $4 THEN $3::bigint ELSE spending_settings.daily_limit_atomic END,
         updated_at = now()
       RETURNING *`,
      [accountId, change.maxPerCallAtomic ?? null, change.dailyLimitAtomic ?? null, setDaily],
    );
    return toSettings(rows[0]!);
  }
}
