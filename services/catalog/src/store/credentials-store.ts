/** Stored upstream credentials: sealed material plus the facts shown to their owner. */
import { randomUUID } from "node:crypto";
import type { CredentialScope, CredentialSummary, CredentialType } from "../domain/model.js";
import type { Queryable } from "./rows.js";

export interface SealedCredential extends CredentialSummary {
  id: string;
  ownerId: string;
  sealed: Buffer;
}

function fromRow(r: Record<string, unknown>): SealedCredential {
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
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export interface CredentialWrite {
  serviceId: string;
  scope: CredentialScope;
  ownerId: string;
  type: CredentialType;
  schemeName: string | null;
  isReference: boolean;
  hint: string;
  sealed: Buffer;
  createdBy: string;
}

/** Replaces the credential of the same service, scope and owner. */
export async function putCredential(q: Queryable, c: CredentialWrite): Promise<SealedCredential> {
  const { rows } = await q.query(
    `INSERT INTO credentials (id, service_id, scope, owner_id, type, scheme_name, is_reference, hint, sealed, created_by)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
     ON CONFLICT (service_id, scope, owner_id) DO UPDATE SET type = EXCLUDED.type, scheme_name = EXCLUDED.scheme_name,
       is_reference = EXCLUDED.is_reference, hint = EXCLUDED.hint, sealed = EXCLUDED.sealed, updated_at = now()
     RETURNING *`,
    [randomUUID(), c.serviceId, c.scope, c.ownerId, c.type, c.schemeName, c.isReference, c.hint, c.sealed, c.createdBy],
  );
  return fromRow(rows[0]);
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
  return rows.map(fromRow);
}

/** Ids of the services among `serviceIds` where the caller or its organization has a credential. */
export async function servicesWithCredential(
  q: Queryable,
  serviceIds: string[],
  accountId: string,
  organizationId: string,
): Promise<Set<string>> {
  if (serviceIds.length === 0) return new Set();
  const { rows } = await q.query<{ service_id: string }>(
    `SELECT DISTINCT service_id FROM credentials
      WHERE service_id = ANY($1::uuid[]) AND ((scope = 'caller' AND owner_id = $2) OR (scope = 'organization' AND owner_id = $3))`,
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
