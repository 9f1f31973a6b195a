/** API keys and their usage in identity's database. Only hashes of keys are stored. */
import type { Pool, PoolClient } from "@toolport/kit/pg";
import type { ApiKey, Permissions } from "../domain/model.js";
import type { KeyStore, KeyUsageSummary, NewApiKey } from "../domain/ports.js";

interface KeyRow {
  id: string;
  account_id: string;
  organization_id: string;
  name: string;
  key_prefix: string;
  permissions: StoredPermissions | null;
  agent_name: string | null;
  agent_type: ApiKey["agentType"];
  purpose: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** jsonb form; caps are decimal strings so no bigint passes through a JSON number. */
interface StoredPermissions {
  allowed_services: string[] | null;
  allowed_tools: string[] | null;
  max_cost_per_call_cents: string | null;
  daily_spend_limit_cents: string | null;
  require_confirmation: boolean;
}

const KEY_COLUMNS =
  "id, account_id, organization_id, name, key_prefix, permissions, agent_name, agent_type, purpose, created_at, last_used_at, revoked_at";

function toStored(p: Permissions | null): string | null {
  if (!p) return null;
  const stored: StoredPermissions = {
    allowed_services: p.allowedServices,
    allowed_tools: p.allowedTools,
    max_cost_per_call_cents: p.maxCostPerCallCents?.toString() ?? null,
    daily_spend_limit_cents: p.dailySpendLimitCents?.toString() ?? null,
    require_confirmation: p.requireConfirmation,
  };
  return JSON.stringify(stored);
}

function fromStored(s: StoredPermissions | null): Permissions | null {
  if (!s) return null;
  return {
    allowedServices: s.allowed_services,
    allowedTools: s.allowed_tools,
    maxCostPerCallCents: s.max_cost_per_call_cents === null ? null : BigInt(s.max_cost_per_call_cents),
    dailySpendLimitCents: s.daily_spend_limit_cents === null ? null : BigInt(s.daily_spend_limit_cents),
    requireConfirmation: s.require_confirmation,
  };
}

function toKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    organizationId: row.organization_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    permissions: fromStored(row.permissions),
    agentName: row.agent_name,
    agentType: row.agent_type,
    purpose: row.purpose,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export async function insertKey(client: Pool | PoolClient, key: NewApiKey): Promise<ApiKey> {
  const { rows } = await client.query<KeyRow>(
    `INSERT INTO api_keys (id, account_id, organization_id, name, key_hash, key_prefix, permissions, agent_name, agent_type, purpose)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${KEY_COLUMNS}`,
    [
      key.id,
      key.accountId,
      key.organizationId,
      key.name,
      key.hash,
      key.prefix,
      toStored(key.permissions),
      key.agentName,
      key.agentType,
      key.purpose,
    ],
  );
  return toKey(rows[0]!);
}

export function keyStore(pool: Pool): KeyStore {
  return {
    insertKey: (key) => insertKey(pool, key),

    async activeKeyByHash(hash) {
      const { rows } = await pool.query<KeyRow & { key_hash: Buffer }>(
        `SELECT ${KEY_COLUMNS}, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
        [hash],
      );
      return rows[0] ? { key: toKey(rows[0]), storedHash: rows[0].key_hash } : null;
    },

    async keyById(id) {
      const { rows } = await pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
      return rows[0] ? toKey(rows[0]) : null;
    },

    async keysOfAccount(accountId, includeRevoked) {
      const { rows } = await pool.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND ($2 OR revoked_at IS NULL) ORDER BY created_at DESC, id`,
        [accountId, includeRevoked],
      );
      return rows.map(toKey);
    },

    async keysOfOrganization(organizationId, includeRevoked) {
      const { rows } = await pool.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE organization_id = $1 AND ($2 OR revoked_at IS NULL) ORDER BY created_at DESC, id`,
        [organizationId, includeRevoked],
      );
      return rows.map(toKey);
    },

    async revokeKey(id, by) {
      const { rows } = await pool.query<KeyRow>(
        `UPDATE api_keys SET revoked_at = now(), revoked_by = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`,
        [id, by],
      );
      return rows[0] ? toKey(rows[0]) : null;
    },

    async touchKey(id) {
      // At most one write per key per minute: last_used is a hint, not an audit trail.
      await pool.query(
        "UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        [id],
      );
    },

    async usageOfKey(keyId, days) {
      const since = "now() - make_interval(days => $2)";
      const totals = await pool.query<{
        calls: bigint;
        successes: bigint;
        p50: number | null;
        paid_calls: bigint;
        spent_cents: bigint;
        first_call_at: Date | null;
        last_call_at: Date | null;
      }>(
        `SELECT count(*)::bigint AS calls,
                count(*) FILTER (WHERE success)::bigint AS successes,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
                count(*) FILTER (WHERE is_paid)::bigint AS paid_calls,
                coalesce(sum(cost_cents), 0)::bigint AS spent_cents,
                min(occurred_at) AS first_call_at,
                max(occurred_at) AS last_call_at
           FROM key_usage WHERE key_id = $1 AND occurred_at >= ${since}`,
        [keyId, days],
      );
      const top = await pool.query<{
        tool_id: string;
        tool_name: string;
        service_name: string;
        calls: bigint;
        successes: bigint;
      }>(
        `SELECT tool_id,
                (array_agg(tool_name ORDER BY occurred_at DESC))[1] AS tool_name,
                (array_agg(service_name ORDER BY occurred_at DESC))[1] AS service_name,
                count(*)::bigint AS calls,
                count(*) FILTER (WHERE success)::bigint AS successes
           FROM key_usage WHERE key_id = $1 AND occurred_at >= ${since}
          GROUP BY tool_id ORDER BY calls DESC, max(occurred_at) DESC LIMIT 10`,
        [keyId, days],
      );
      const t = totals.rows[0]!;
      const summary: KeyUsageSummary = {
        calls: t.calls,
        successes: t.successes,
        p50Seconds: t.p50,
        paidCalls: t.paid_calls,
        spentCents: t.spent_cents,
        firstCallAt: t.first_call_at,
        lastCallAt: t.last_call_at,
        topTools: top.rows.map((r) => ({
          toolId: r.tool_id,
          toolName: r.tool_name,
          serviceName: r.service_name,
          calls: r.calls,
          successes: r.successes,
        })),
      };
      return summary;
    },
  };
}

export interface KeyUsageRow {
  executionId: string;
  eventId: string;
  keyId: string;
  accountId: string;
  toolId: string;
  toolName: string;
  serviceId: string;
  serviceName: string;
  success: boolean;
  seconds: number;
  isPaid: boolean;
  costCents: bigint;
  occurredAt: Date;
}

/** Records one execution against its key, inside the consumer's transaction; a replay changes nothing. */
export async function recordKeyUsage(client: PoolClient, row: KeyUsageRow): Promise<void> {
  await client.query(
    `INSERT INTO key_usage (execution_id, event_id, key_id, account_id, tool_id, tool_name, service_id, service_name,
       success, seconds, is_paid, cost_cents, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (execution_id) DO NOTHING`,
    [
      row.executionId,
      row.eventId,
      row.keyId,
      row.accountId,
      row.toolId,
      row.toolName,
      row.serviceId,
      row.serviceName,
      row.success,
      row.seconds,
      row.isPaid,
      row.costCents,
      row.occurredAt,
    ],
  );
}
