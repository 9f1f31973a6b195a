/** The authorization server's tables (migrations/0004_oauth_server.sql): clients, requests and codes, tokens. */
import type { Pool } from "@toolport/kit/pg";
import type { AuthorizationRequestRecord, OAuthClientRecord, OAuthServerStore, RefreshOutcome } from "../domain/oauth-server.js";
import { fromStored, type StoredPermissions, toStored } from "./keys.js";

interface ClientRow {
  client_id: string;
  kind: OAuthClientRecord["kind"];
  client_name: string;
  client_uri: string | null;
  logo_uri: string | null;
  redirect_uris: string[];
  metadata: Record<string, unknown>;
  fetched_at: Date;
}

interface RequestRow {
  id: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  resource: string;
  scope: string;
  expires_at: Date;
  decided_at: Date | null;
  account_id: string | null;
  organization_id: string | null;
  permissions: StoredPermissions | null;
  code_expires_at: Date | null;
  code_used_at: Date | null;
  key_id: string | null;
}

const toClient = (r: ClientRow): OAuthClientRecord => ({
  clientId: r.client_id,
  kind: r.kind,
  clientName: r.client_name,
  clientUri: r.client_uri,
  logoUri: r.logo_uri,
  redirectUris: r.redirect_uris,
  metadata: r.metadata,
  fetchedAt: r.fetched_at,
});

const toRequest = (r: RequestRow): AuthorizationRequestRecord => ({
  id: r.id,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  state: r.state,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  scope: r.scope,
  expiresAt: r.expires_at,
  decidedAt: r.decided_at,
  accountId: r.account_id,
  organizationId: r.organization_id,
  permissions: fromStored(r.permissions),
  codeExpiresAt: r.code_expires_at,
  codeUsedAt: r.code_used_at,
});

const REQUEST_COLUMNS = `id, client_id, redirect_uri, state, code_challenge, resource, scope, expires_at, decided_at, account_id,
  organization_id, permissions, code_expires_at, code_used_at, key_id`;

export function oauthServerStore(pool: Pool): OAuthServerStore {
  return {
    async client(clientId) {
      const { rows } = await pool.query<ClientRow>(
        `SELECT client_id, kind, client_name, client_uri, logo_uri, redirect_uris, metadata, fetched_at
           FROM oauth_server_clients WHERE client_id = $1`,
        [clientId],
      );
      return rows[0] ? toClient(rows[0]) : null;
    },

    async saveClient(c) {
      await pool.query(
        `INSERT INTO oauth_server_clients (client_id, kind, client_name, client_uri, logo_uri, redirect_uris, metadata, fetched_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name, client_uri = EXCLUDED.client_uri,
           logo_uri = EXCLUDED.logo_uri, redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata,
           fetched_at = EXCLUDED.fetched_at`,
        [c.clientId, c.kind, c.clientName, c.clientUri, c.logoUri, c.redirectUris, JSON.stringify(c.metadata), c.fetchedAt],
      );
    },

    async insertRequest(r) {
      // Requests a day past their expiry (answered or not: a code lives 60 seconds) are swept here, a few
      // at a time, rather than by a job of their own.
      await pool.query(
        `DELETE FROM oauth_authorization_requests WHERE id IN (
           SELECT id FROM oauth_authorization_requests WHERE expires_at < now() - interval '1 day' LIMIT 100)`,
      );
      await pool.query(
        `INSERT INTO oauth_authorization_requests (id, client_id, redirect_uri, state, code_challenge, resource, scope, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [r.id, r.clientId, r.redirectUri, r.state, r.codeChallenge, r.resource, r.scope, r.expiresAt],
      );
    },

    async request(id) {
      const { rows } = await pool.query<RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM oauth_authorization_requests WHERE id = $1`, [
        id,
      ]);
      return rows[0] ? toRequest(rows[0]) : null;
    },

    async claim(id, accountId) {
      const { rows } = await pool.query<{ viewer_id: string }>(
        `UPDATE oauth_authorization_requests SET viewer_id = coalesce(viewer_id, $2)
          WHERE id = $1 AND decided_at IS NULL AND expires_at > now()
          RETURNING viewer_id`,
        [id, accountId],
      );
      return rows[0]?.viewer_id ?? null;
    },

    async decide(id, d) {
      const { rowCount } = await pool.query(
        `UPDATE oauth_authorization_requests
            SET decided_at = now(), account_id = $2, organization_id = $3, permissions = $4, code_hash = $5, code_expires_at = $6
          WHERE id = $1 AND decided_at IS NULL AND expires_at > now()`,
        [id, d.accountId, d.organizationId, toStored(d.permissions), d.codeHash, d.codeExpiresAt],
      );
      return rowCount === 1;
    },

    async redeemCode(codeHash) {
      // The first redemption sets code_used_at; a later one finds it set (FOR UPDATE orders two at once).
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<RequestRow>(
          `SELECT ${REQUEST_COLUMNS} FROM oauth_authorization_requests WHERE code_hash = $1 FOR UPDATE`,
          [codeHash],
        );
        const row = rows[0];
        if (!row) {
          await client.query("COMMIT");
          return null;
        }
        const reused = row.code_used_at !== null;
        if (!reused) await client.query("UPDATE oauth_authorization_requests SET code_used_at = now() WHERE id = $1", [row.id]);
        await client.query("COMMIT");
        return { request: toRequest(row), reused, keyId: row.key_id };
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },

    async linkGrant(requestId, keyId) {
      await pool.query("UPDATE oauth_authorization_requests SET key_id = $2 WHERE id = $1", [requestId, keyId]);
    },

    async insertTokens(tokens) {
      // Tokens a day past their expiry can do nothing (a used refresh token is kept until then for reuse
      // detection): swept a few at a time as new ones are issued, so the table holds live tokens only.
      await pool.query(
        `DELETE FROM oauth_tokens WHERE token_hash IN (
           SELECT token_hash FROM oauth_tokens WHERE expires_at < now() - interval '1 day' LIMIT 200)`,
      );
      await pool.query(
        `INSERT INTO oauth_tokens (token_hash, kind, key_id, client_id, resource, scope, expires_at)
         SELECT * FROM unnest($1::bytea[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
        [
          tokens.map((t) => t.hash),
          tokens.map((t) => t.kind),
          tokens.map((t) => t.keyId),
          tokens.map((t) => t.clientId),
          tokens.map((t) => t.resource),
          tokens.map((t) => t.scope),
          tokens.map((t) => t.expiresAt),
        ],
      );
    },

    async rotateRefresh(hash): Promise<RefreshOutcome> {
      const { rows } = await pool.query<{ key_id: string; client_id: string; resource: string; scope: string }>(
        `UPDATE oauth_tokens SET used_at = now()
          WHERE token_hash = $1 AND kind = 'refresh' AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
          RETURNING key_id, client_id, resource, scope`,
        [hash],
      );
      const row = rows[0];
      if (row) return { status: "rotated", keyId: row.key_id, clientId: row.client_id, resource: row.resource, scope: row.scope };
      const { rows: seen } = await pool.query<{ key_id: string; client_id: string; used_at: Date | null }>(
        "SELECT key_id, client_id, used_at FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh'",
        [hash],
      );
      const used = seen[0];
      return used?.used_at ? { status: "reused", keyId: used.key_id, clientId: used.client_id } : { status: "unknown" };
    },

    async revokeToken(hash, clientId) {
      const { rows } = await pool.query<{ kind: "access" | "refresh"; key_id: string }>(
        `UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now())
          WHERE token_hash = $1 AND ($2::text IS NULL OR client_id = $2)
          RETURNING kind, key_id`,
        [hash, clientId],
      );
      return rows[0] ? { kind: rows[0].kind, keyId: rows[0].key_id } : null;
    },

    async revokeTokensOfKey(keyId) {
      await pool.query("UPDATE oauth_tokens SET revoked_at = now() WHERE key_id = $1 AND revoked_at IS NULL", [keyId]);
    },

    async activeAccessToken(hash) {
      const { rows } = await pool.query<{ key_id: string; client_id: string; resource: string; scope: string; expires_at: Date }>(
        `SELECT t.key_id, t.client_id, t.resource, t.scope, t.expires_at
           FROM oauth_tokens t JOIN api_keys k ON k.id = t.key_id
          WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > now()
            AND k.revoked_at IS NULL`,
        [hash],
      );
      const row = rows[0];
      return row
        ? { keyId: row.key_id, clientId: row.client_id, resource: row.resource, scope: row.scope, expiresAt: row.expires_at }
        : null;
    },

    async hasGranted(accountId, clientId) {
      const { rows } = await pool.query("SELECT 1 FROM api_keys WHERE account_id = $1 AND oauth_client_id = $2 LIMIT 1", [
        accountId,
        clientId,
      ]);
      return rows.length > 0;
    },
  };
}
