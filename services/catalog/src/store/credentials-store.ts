/** Stored upstream credentials: sealed material plus the facts shown to their owner. */
import { randomUUID } from "node:crypto";
import type { ConnectionStatus, CredentialScope, CredentialType, OAuthFlowName } from "../domain/model.js";
import type { CredentialWrite, SealedCredential } from "../domain/ports.js";
import { prepared, type Queryable } from "./rows.js";

export function sealedCredentialFromRow(r: Record<string, unknown>): SealedCredential {
  return {
    id: String(r.id),
    serviceId: String(r.service_id),
    scope: r.scope as CredentialScope,
    ownerId: String(r.owner_id),
    type: r.type as CredentialType,
    schemeName: r.scheme_name === null ? null : String(r.scheme_name),
    isReference: Boolean(r.is_reference),
    hint: String(r.hint ?? ""),
    sealed: r.sealed as Buffer,
    status: (r.status as ConnectionStatus) ?? "active",
    brokenReason: r.broken_reason === null || r.broken_reason === undefined ? null : String(r.broken_reason),
    oauthFlow: (r.oauth_flow as OAuthFlowName | null) ?? null,
    oauthScopes: (r.oauth_scopes as string[]) ?? [],
    oauthWantedScopes: (r.oauth_wanted_scopes as string[] | undefined) ?? [],
    expiresAt: (r.expires_at as Date | null) ?? null,
    refreshedAt: (r.refreshed_at as Date | null) ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

/** Replaces the credential of the same service, scope and owner (a broken connection becomes active again). */
export async function putCredential(q: Queryable, c: CredentialWrite): Promise<SealedCredential> {
  const { rows } = await q.query(
    `INSERT INTO credentials (id, service_id, scope, owner_id, type, scheme_name, is_reference, hint, sealed, created_by,
       oauth_flow, oauth_scopes, expires_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)
     ON CONFLICT (service_id, scope, owner_id) DO UPDATE SET type = EXCLUDED.type, scheme_name = EXCLUDED.scheme_name,
       is_reference = EXCLUDED.is_reference, hint = EXCLUDED.hint, sealed = EXCLUDED.sealed, status = 'active',
       broken_reason = NULL, oauth_flow = EXCLUDED.oauth_flow, oauth_scopes = EXCLUDED.oauth_scopes,
       expires_at = EXCLUDED.expires_at, refreshed_at = NULL, oauth_wanted_scopes = '{}', updated_at = now()
     RETURNING *`,
    [
      randomUUID(),
      c.serviceId,
      c.scope,
      c.ownerId,
      c.type,
      c.schemeName,
      c.isReference,
      c.hint,
      c.sealed,
      c.createdBy,
      c.oauth?.flow ?? null,
      c.oauth?.scopes ?? [],
      c.oauth?.expiresAt ?? null,
    ],
  );
  return sealedCredentialFromRow(rows[0]);
}

/** The caller's and its organization's credentials for a service, caller-scoped first. */
export async function credentialsFor(
  q: Queryable,
  serviceId: string,
  accountId: string,
  organizationId: string,
): Promise<SealedCredential[]> {
  const { rows } = await q.query(
    `SELECT * FROM credentials
      WHERE service_id = $1 AND ((scope = 'caller' AND owner_id = $2) OR (scope = 'organization' AND owner_id = $3))
      ORDER BY CASE scope WHEN 'caller' THEN 0 ELSE 1 END`,
    [serviceId, accountId, organizationId],
  );
  return rows.map(sealedCredentialFromRow);
}

/** Ids of the services among `serviceIds` where the caller or its organization has a working credential. */
export async function servicesWithCredential(
  q: Queryable,
  serviceIds: string[],
  accountId: string,
  organizationId: string,
): Promise<Set<string>> {
  if (serviceIds.length === 0) return new Set();
  const { rows } = await prepared<{ service_id: string }>(
    q,
    `SELECT DISTINCT service_id FROM credentials
      WHERE service_id = ANY($1::uuid[]) AND status = 'active'
        AND oauth_wanted_scopes <@ oauth_scopes
        AND ((scope = 'caller' AND owner_id = $2) OR (scope = 'organization' AND owner_id = $3))`,
    [serviceIds, accountId, organizationId],
  );
  return new Set(rows.map((r) => r.service_id));
}

export async function deleteCredential(
  q: Queryable,
  serviceId: string,
  scope: CredentialScope,
  ownerId: string,
): Promise<boolean> {
  const { rowCount } = await q.query("DELETE FROM credentials WHERE service_id = $1 AND scope = $2 AND owner_id = $3", [
    serviceId,
    scope,
    ownerId,
  ]);
  return (rowCount ?? 0) > 0;
}
