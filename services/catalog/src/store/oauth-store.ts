/** OAuth client registrations, started authorizations and the connection rows' OAuth columns. */
import type { CredentialScope, OAuthClientAuth, OAuthClientRecord, OAuthFlowName } from "../domain/model.js";
import type { PendingAuthorization, StoredConnection } from "../domain/ports.js";
import { sealedCredentialFromRow } from "./credentials-store.js";
import type { Queryable } from "./rows.js";

function clientFromRow(r: Record<string, unknown>): OAuthClientRecord {
  return {
    serviceId: String(r.service_id),
    schemeName: String(r.scheme_name),
    flow: r.flow as OAuthFlowName,
    clientId: String(r.client_id),
    sealedSecret: (r.sealed_secret as Buffer | null) ?? null,
    clientAuth: r.client_auth as OAuthClientAuth,
    authorizationUrl: (r.authorization_url as string | null) ?? null,
    tokenUrl: String(r.token_url),
    revocationUrl: (r.revocation_url as string | null) ?? null,
    scopes: (r.scopes as string[]) ?? [],
    shared: Boolean(r.shared),
    resource: (r.resource as string | null) ?? null,
    issuer: (r.issuer as string | null) ?? null,
    issSupported: Boolean(r.iss_supported),
    registration: (r.registration as OAuthClientRecord["registration"]) ?? "manual",
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export async function putOAuthClient(
  q: Queryable,
  c: Omit<OAuthClientRecord, "createdAt" | "updatedAt">,
  createdBy: string,
): Promise<OAuthClientRecord> {
  const { rows } = await q.query(
    `INSERT INTO oauth_clients (service_id, scheme_name, flow, client_id, sealed_secret, client_auth, authorization_url,
       token_url, revocation_url, scopes, shared, created_by, resource, issuer, iss_supported, registration)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)
     ON CONFLICT (service_id) DO UPDATE SET scheme_name = EXCLUDED.scheme_name, flow = EXCLUDED.flow,
       client_id = EXCLUDED.client_id, sealed_secret = EXCLUDED.sealed_secret, client_auth = EXCLUDED.client_auth,
       authorization_url = EXCLUDED.authorization_url, token_url = EXCLUDED.token_url,
       revocation_url = EXCLUDED.revocation_url, scopes = EXCLUDED.scopes, shared = EXCLUDED.shared,
       resource = EXCLUDED.resource, issuer = EXCLUDED.issuer, iss_supported = EXCLUDED.iss_supported,
       registration = EXCLUDED.registration, updated_at = now()
     RETURNING *`,
    [
      c.serviceId,
      c.schemeName,
      c.flow,
      c.clientId,
      c.sealedSecret,
      c.clientAuth,
      c.authorizationUrl,
      c.tokenUrl,
      c.revocationUrl,
      c.scopes,
      c.shared,
      createdBy,
      c.resource,
      c.issuer,
      c.issSupported,
      c.registration,
    ],
  );
  return clientFromRow(rows[0]);
}

export async function findOAuthClient(q: Queryable, serviceId: string): Promise<OAuthClientRecord | null> {
  const { rows } = await q.query("SELECT * FROM oauth_clients WHERE service_id = $1", [serviceId]);
  return rows[0] ? clientFromRow(rows[0]) : null;
}

/** The registrations of these services (for describe's connect_flow), by service id. */
export async function oauthClientsOf(q: Queryable, serviceIds: string[]): Promise<Map<string, OAuthClientRecord>> {
  if (serviceIds.length === 0) return new Map();
  const { rows } = await q.query("SELECT * FROM oauth_clients WHERE service_id = ANY($1::uuid[])", [serviceIds]);
  return new Map(rows.map((r) => [String(r.service_id), clientFromRow(r)]));
}

export async function deleteOAuthClient(q: Queryable, serviceId: string): Promise<boolean> {
  const { rowCount } = await q.query("DELETE FROM oauth_clients WHERE service_id = $1", [serviceId]);
  return (rowCount ?? 0) > 0;
}

export async function insertPendingAuthorization(q: Queryable, p: PendingAuthorization): Promise<void> {
  // Expired ones are of no use to anybody: cleared as new ones come.
  await q.query("DELETE FROM oauth_states WHERE expires_at < now() - interval '1 hour'");
  await q.query(
    `INSERT INTO oauth_states (state_hash, service_id, scope, owner_id, account_id, sealed_verifier, redirect_uri,
       return_to, scopes, expires_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
    [
      p.stateHash,
      p.serviceId,
      p.scope,
      p.ownerId,
      p.accountId,
      p.sealedVerifier,
      p.redirectUri,
      p.returnTo,
      p.scopes,
      p.expiresAt,
    ],
  );
}

/** Takes (deletes and returns) a started authorization: a state is good for one callback only. */
export async function takePendingAuthorization(q: Queryable, stateHash: string): Promise<PendingAuthorization | null> {
  const { rows } = await q.query("DELETE FROM oauth_states WHERE state_hash = $1 RETURNING *", [stateHash]);
  const r = rows[0];
  if (!r) return null;
  return {
    stateHash: String(r.state_hash),
    serviceId: String(r.service_id),
    scope: r.scope as CredentialScope,
    ownerId: String(r.owner_id),
    accountId: String(r.account_id),
    sealedVerifier: r.sealed_verifier as Buffer,
    redirectUri: String(r.redirect_uri),
    returnTo: String(r.return_to),
    scopes: (r.scopes as string[]) ?? [],
    expiresAt: r.expires_at as Date,
  };
}

/** OAuth connections (credentials of type oauth2) with their service's name. */
const CONNECTIONS = `SELECT c.*, s.name AS service_name FROM credentials c JOIN services s ON s.id = c.service_id
  WHERE c.type = 'oauth2'`;

function connectionFromRow(r: Record<string, unknown>): StoredConnection {
  const credential = sealedCredentialFromRow(r);
  return { ...credential, serviceName: String(r.service_name), flow: credential.oauthFlow ?? "authorization_code" };
}

/** The OAuth connections of a caller and of its organization, newest first. */
export async function connectionsOf(q: Queryable, accountId: string, organizationId: string): Promise<StoredConnection[]> {
  const { rows } = await q.query(
    `${CONNECTIONS} AND ((c.scope = 'caller' AND c.owner_id = $1) OR (c.scope = 'organization' AND c.owner_id = $2))
      ORDER BY c.created_at DESC, c.id`,
    [accountId, organizationId],
  );
  return rows.map(connectionFromRow);
}

/** One OAuth connection by id, locked for the rest of the transaction when `lock` is set. */
export async function findConnection(q: Queryable, id: string, lock = false): Promise<StoredConnection | null> {
  const { rows } = await q.query(`${CONNECTIONS} AND c.id = $1${lock ? " FOR UPDATE OF c" : ""}`, [id]);
  return rows[0] ? connectionFromRow(rows[0]) : null;
}

export async function storeRefreshedTokens(
  q: Queryable,
  id: string,
  sealed: Buffer,
  expiresAt: Date | null,
  scopes: string[] | undefined,
): Promise<void> {
  await q.query(
    `UPDATE credentials SET sealed = $2, expires_at = $3, oauth_scopes = COALESCE($4, oauth_scopes), status = 'active',
       broken_reason = NULL, refreshed_at = now(), updated_at = now()
     WHERE id = $1`,
    [id, sealed, expiresAt, scopes ?? null],
  );
}

/**
 * Step-up: the scopes an upstream asked this connection for (403 insufficient_scope), added to those
 * already wanted. The connection stays active (its other calls still work); readiness says it needs consent.
 */
export async function addWantedScopes(q: Queryable, id: string, scopes: string[]): Promise<void> {
  await q.query(
    `UPDATE credentials SET oauth_wanted_scopes = ARRAY(SELECT DISTINCT unnest(oauth_wanted_scopes || $2::text[])),
       updated_at = now()
     WHERE id = $1 AND type = 'oauth2'`,
    [id, scopes],
  );
}

export async function markConnectionBroken(q: Queryable, id: string, reason: string): Promise<void> {
  await q.query(
    "UPDATE credentials SET status = 'broken', broken_reason = $2, updated_at = now() WHERE id = $1 AND type = 'oauth2'",
    [id, reason],
  );
}

export async function deleteConnection(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query("DELETE FROM credentials WHERE id = $1 AND type = 'oauth2'", [id]);
  return (rowCount ?? 0) > 0;
}
