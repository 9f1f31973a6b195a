/** API keys and their usage in identity's database. Only hashes of keys are stored. */
import type { Pool, PoolClient } from "@toolport/kit/pg";
import type { Account, ApiKey, Permissions, Role } from "../domain/model.js";
import type { KeyPrincipal, KeyStore, KeyUsageSummary, NewApiKey } from "../domain/ports.js";

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
  expires_at: Date | null;
  created_by_key_id: string | null;
  console_session: string | null;
  oauth_client_id: string | null;
}

/** jsonb form; caps are decimal strings so no bigint passes through a JSON number. */
export interface StoredPermissions {
  allowed_services: string[] | null;
  allowed_tools: string[] | null;
  max_cost_per_call_cents: string | null;
  daily_spend_limit_cents: string | null;
  require_confirmation: boolean;
}

const KEY_COLUMNS =
  "id, account_id, organization_id, name, key_prefix, permissions, agent_name, agent_type, purpose, created_at, last_used_at, revoked_at, expires_at, created_by_key_id, console_session, oauth_client_id";

/** Permissions as api_keys (and an authorization request's decision) store them. */
export function toStored(p: Permissions | null): string | null {
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

export function fromStored(s: StoredPermissions | null): Permissions | null {
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
    expiresAt: row.expires_at,
    createdByKeyId: row.created_by_key_id,
    consoleSession: row.console_session,
    oauthClientId: row.oauth_client_id,
  };
}

/**
 * `last_used_at` is rewritten at most once per this many seconds per key (README "`last_used` resolution"):
 * the first use sets it at once, later uses within the window leave it as it is.
 */
export const LAST_USED_RESOLUTION_SECONDS = 30;

interface AuthenticateRow extends KeyRow {
  key_hash: Buffer;
  a_kind: Account["kind"];
  a_name: string;
  a_email: string;
  a_tier: string;
  a_personal_organization_id: string;
  a_is_platform_admin: boolean;
  a_created_at: Date;
  m_organization_id: string | null;
  m_role: Role | null;
  b_role: Role | null;
}

/**
 * Authenticate's API-key path, one statement (prepared per connection as a named statement): the
 * active (not revoked, not expired) key by hash, its account, the account's membership of $2 (the key's
 * own organization when null) and of the key's own organization (a key whose owner left it is dead), and, only when that membership exists, the throttled `last_used_at` write. An UPDATE that
 * matches no row assigns no transaction id, so the read-only case commits without a WAL flush.
 * Concurrent uses of one key: the first takes the row lock and writes, the others re-check the
 * condition against the new value and skip.
 *
 * Written once for a key found by `match` (`$1` is the presented hash): `presented` is the column
 * compared in constant time afterwards (the key's hash, or an OAuth access token's), `extra` more columns.
 */
const authenticateStatement = (match: string, presented: string, extra = "") => `
WITH hit AS (
  SELECT k.id, k.account_id, k.organization_id, k.name, k.key_prefix, k.permissions, k.agent_name, k.agent_type,
         k.purpose, k.created_at, k.last_used_at, k.revoked_at, k.expires_at, k.created_by_key_id, k.console_session,
         k.oauth_client_id, ${presented} AS key_hash,${extra}
         a.kind AS a_kind, a.name AS a_name, a.email AS a_email, a.tier AS a_tier,
         a.personal_organization_id AS a_personal_organization_id, a.is_platform_admin AS a_is_platform_admin,
         a.created_at AS a_created_at,
         m.organization_id AS m_organization_id, m.role AS m_role, b.role AS b_role
    FROM api_keys k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN memberships m ON m.account_id = k.account_id AND m.organization_id = coalesce($2::uuid, k.organization_id)
    LEFT JOIN memberships b ON b.account_id = k.account_id AND b.organization_id = k.organization_id
   ${match} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
), touched AS (
  UPDATE api_keys t SET last_used_at = now()
    FROM hit
   WHERE t.id = hit.id AND hit.m_role IS NOT NULL AND hit.b_role IS NOT NULL
     AND (t.last_used_at IS NULL OR t.last_used_at < now() - make_interval(secs => ${LAST_USED_RESOLUTION_SECONDS}))
  RETURNING t.id
)
SELECT * FROM hit`;

const AUTHENTICATE_KEY = authenticateStatement("WHERE k.key_hash = $1", "k.key_hash");

/** An OAuth access token (domain/oauth-server.ts): unrevoked, unexpired, and its grant key active. */
const AUTHENTICATE_ACCESS_TOKEN = authenticateStatement(
  `JOIN oauth_tokens t ON t.key_id = k.id AND t.token_hash = $1 AND t.kind = 'access'
                        AND t.revoked_at IS NULL AND t.expires_at > now()
   WHERE true`,
  "t.token_hash",
  " t.expires_at AS token_expires_at,",
);

const INSERT_KEY = `INSERT INTO api_keys (id, account_id, organization_id, name, key_hash, key_prefix, permissions, agent_name,
   agent_type, purpose, created_by_key_id, expires_at, console_session, oauth_client_id)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

const keyValues = (key: NewApiKey) => [
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
  key.createdByKeyId ?? null,
  key.expiresAt ?? null,
  key.consoleSession ?? null,
  key.oauthClientId ?? null,
];

export async function insertKey(client: Pool | PoolClient, key: NewApiKey): Promise<ApiKey> {
  const { rows } = await client.query<KeyRow>(`${INSERT_KEY} RETURNING ${KEY_COLUMNS}`, keyValues(key));
  return toKey(rows[0]!);
}

/**
 * A recursive CTE `made`: the ids of the keys matching `roots` and of every key made with them, directly
 * or through keys they made (followed by `created_by_key_id`).
 */
const madeFrom = (roots: string) => `made AS (
  SELECT id FROM api_keys WHERE ${roots}
  UNION
  SELECT k.id FROM api_keys k JOIN made ON k.created_by_key_id = made.id
)`;

/**
 * Revokes the keys matching `roots` and every key made with them (a key never outlives the key that made
 * it), in one statement; the keys revoked now.
 */
async function revokeMade(pool: Pool, roots: string, values: unknown[], by: string): Promise<ApiKey[]> {
  const { rows } = await pool.query<KeyRow>(
    `WITH RECURSIVE ${madeFrom(roots)}
     UPDATE api_keys SET revoked_at = now(), revoked_by = $${values.length + 1}
      WHERE id IN (SELECT id FROM made) AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`,
    [...values, by],
  );
  return rows.map(toKey);
}

function keyPrincipalOf(row: AuthenticateRow): KeyPrincipal {
  return {
    key: toKey(row),
    storedHash: row.key_hash,
    account: {
      id: row.account_id,
      kind: row.a_kind,
      name: row.a_name,
      email: row.a_email,
      tier: row.a_tier,
      personalOrganizationId: row.a_personal_organization_id,
      isPlatformAdmin: row.a_is_platform_admin,
      createdAt: row.a_created_at,
    },
    membership: row.m_role ? { organizationId: row.m_organization_id!, role: row.m_role } : null,
    boundMembership: row.b_role !== null,
  };
}

export function keyStore(pool: Pool): KeyStore {
  return {
    insertKey: (key) => insertKey(pool, key),

    async authenticateKey(hash, organizationId) {
      const { rows } = await pool.query<AuthenticateRow>({
        name: "identity_authenticate_key",
        text: AUTHENTICATE_KEY,
        values: [hash, organizationId],
      });
      return rows[0] ? keyPrincipalOf(rows[0]) : null;
    },

    async authenticateAccessToken(hash, organizationId) {
      const { rows } = await pool.query<AuthenticateRow & { token_expires_at: Date }>({
        name: "identity_authenticate_access_token",
        text: AUTHENTICATE_ACCESS_TOKEN,
        values: [hash, organizationId],
      });
      return rows[0] ? { ...keyPrincipalOf(rows[0]), tokenExpiresAt: rows[0].token_expires_at } : null;
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

    async keyAndDescendants(id) {
      const { rows } = await pool.query<KeyRow>(
        `WITH RECURSIVE ${madeFrom("id = $1")}
         SELECT ${KEY_COLUMNS} FROM api_keys WHERE id IN (SELECT id FROM made) ORDER BY created_at DESC, id`,
        [id],
      );
      return rows.map(toKey);
    },

    async issueConsoleKey(key) {
      // The same sign-in and organization derive the same key: the first insert wins, every other one
      // (two screens at once) finds its row.
      await pool.query(`${INSERT_KEY} ON CONFLICT (key_hash) DO NOTHING`, keyValues(key));
      const { rows } = await pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [key.hash]);
      return rows[0] ? toKey(rows[0]) : null;
    },

    async revokeSessionKeys(accountId, session) {
      return revokeMade(pool, "account_id = $1 AND console_session = $2", [accountId, session], accountId);
    },

    async revokeKey(id, by) {
      return revokeMade(pool, "id = $1", [id], by);
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
      const daily = await pool.query<{ date: string; calls: bigint; successes: bigint; p50: number | null }>(
        `WITH w AS (SELECT ${since} AS since),
              per_day AS (
                SELECT (occurred_at AT TIME ZONE 'UTC')::date AS day,
                       count(*)::bigint AS calls,
                       count(*) FILTER (WHERE success)::bigint AS successes,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50
                  FROM key_usage, w WHERE key_id = $1 AND occurred_at >= w.since
                 GROUP BY 1)
         SELECT to_char(d, 'YYYY-MM-DD') AS date, coalesce(p.calls, 0)::bigint AS calls,
                coalesce(p.successes, 0)::bigint AS successes, p.p50
           FROM w, generate_series((w.since AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS d
           LEFT JOIN per_day p ON p.day = d::date
          ORDER BY d`,
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
        daily: daily.rows.map((r) => ({ date: r.date, calls: r.calls, successes: r.successes, p50Seconds: r.p50 })),
      };
      return summary;
    },
  };
}

export interface KeyUsageRow {
  executionId: string;
  eventId: string;
  /** Null for a call that is recorded only as a free-tier call (no key, or a probe). */
  keyId: string | null;
  freeTier: boolean;
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

/**
 * Records executions against their keys, and free-tier calls against their account's month, as the
 * consumer kit's one-statement form (applyStatement, without inbox): the rows of the batch's events
 * (`fresh`), from the JSON array in $1 (keyUsageJson's shape); a replay changes nothing (both inserts skip
 * an execution already recorded).
 */
export const RECORD_KEY_USAGE_SQL = `, u AS (
     SELECT u.* FROM jsonb_to_recordset($1::jsonb) AS u(event_id text, execution_id text, usage_event_id text, key_id text,
       account_id text, tool_id text, tool_name text, service_id text, service_name text, success boolean,
       seconds double precision, is_paid boolean, cost_cents bigint, occurred_at timestamptz, free_tier boolean)
       JOIN fresh ON fresh.event_id = u.event_id
   ), free AS (
     INSERT INTO free_tier_calls (execution_id, account_id, month)
     SELECT u.execution_id, u.account_id::uuid, date_trunc('month', u.occurred_at AT TIME ZONE 'UTC')::date
       FROM u WHERE u.free_tier
     ON CONFLICT DO NOTHING
   )
   INSERT INTO key_usage (execution_id, event_id, key_id, account_id, tool_id, tool_name, service_id,
     service_name, success, seconds, is_paid, cost_cents, occurred_at)
   SELECT u.execution_id, u.usage_event_id, u.key_id, u.account_id, u.tool_id, u.tool_name, u.service_id, u.service_name,
     u.success, u.seconds, u.is_paid, u.cost_cents, u.occurred_at
     FROM u WHERE u.key_id IS NOT NULL
   ON CONFLICT (execution_id) DO NOTHING`;

/** A usage row as one element of RECORD_KEY_USAGE_SQL's $1. */
export function keyUsageJson(r: KeyUsageRow): Record<string, unknown> {
  return {
    execution_id: r.executionId,
    usage_event_id: r.eventId,
    key_id: r.keyId,
    free_tier: r.freeTier,
    account_id: r.accountId,
    tool_id: r.toolId,
    tool_name: r.toolName,
    service_id: r.serviceId,
    service_name: r.serviceName,
    success: r.success,
    seconds: r.seconds,
    is_paid: r.isPaid,
    // bigint as its decimal text: JSON has no integer type wide enough, and Postgres reads the text.
    cost_cents: r.costCents.toString(),
    occurred_at: r.occurredAt.toISOString(),
  };
}
