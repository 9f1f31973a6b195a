/** Accounts, organizations and memberships in identity's database. */
import { randomUUID } from "node:crypto";
import { type Pool, type PoolClient, withTransaction } from "@toolport/kit/pg";
import type { Account, Member, OrganizationMembership, Role } from "../domain/model.js";
import { uniqueSlug } from "../domain/organizations.js";
import type { AccountStore, NewAccount, NewApiKey, OrganizationStore } from "../domain/ports.js";
import { isUuid } from "../domain/validation.js";
import { insertKey } from "./keys.js";

interface AccountRow {
  id: string;
  kind: Account["kind"];
  name: string;
  email: string;
  tier: string;
  personal_organization_id: string;
  is_platform_admin: boolean;
  created_at: Date;
  password_hash: string | null;
}

const ACCOUNT_COLUMNS = "id, kind, name, email, tier, personal_organization_id, is_platform_admin, created_at, password_hash";

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    email: row.email,
    tier: row.tier,
    personalOrganizationId: row.personal_organization_id,
    isPlatformAdmin: row.is_platform_admin,
    createdAt: row.created_at,
  };
}

interface MembershipRow {
  id: string;
  name: string;
  slug: string;
  is_personal: boolean;
  created_at: Date;
  role: Role;
}

const toMembership = (row: MembershipRow): OrganizationMembership => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  isPersonal: row.is_personal,
  createdAt: row.created_at,
  role: row.role,
});

interface MemberRow {
  organization_id: string;
  account_id: string;
  name: string;
  email: string;
  role: Role;
  created_at: Date;
}

const toMember = (row: MemberRow): Member => ({
  organizationId: row.organization_id,
  accountId: row.account_id,
  name: row.name,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
});

/** Authenticate's JWT path, one statement (a named, per-connection prepared statement). */
const ACCOUNT_IN_ORGANIZATION = `SELECT a.${ACCOUNT_COLUMNS.split(", ").join(", a.")},
       m.organization_id AS m_organization_id, m.role AS m_role
  FROM accounts a
  LEFT JOIN memberships m ON m.account_id = a.id AND m.organization_id = coalesce($2::uuid, a.personal_organization_id)
 WHERE a.id = $1`;

export function accountStore(pool: Pool): AccountStore {
  return {
    async createAccount(account: NewAccount, firstKey?: Omit<NewApiKey, "accountId" | "organizationId">) {
      return withTransaction(pool, async (client) => {
        const orgId = randomUUID();
        await client.query("INSERT INTO organizations (id, name, slug, is_personal) VALUES ($1, $2, $3, true)", [
          orgId,
          account.name,
          uniqueSlug(account.name),
        ]);
        const { rows } = await client.query<AccountRow>(
          `INSERT INTO accounts (id, kind, name, email, password_hash, personal_organization_id, external_issuer,
             external_subject, registered_ip)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${ACCOUNT_COLUMNS}`,
          [
            account.id,
            account.kind,
            account.name,
            account.email,
            account.passwordHash,
            orgId,
            account.externalIssuer,
            account.externalSubject,
            account.registeredIp,
          ],
        );
        await client.query("INSERT INTO memberships (organization_id, account_id, role) VALUES ($1, $2, 'owner')", [
          orgId,
          account.id,
        ]);
        if (firstKey) await insertKey(client, { ...firstKey, accountId: account.id, organizationId: orgId });
        return toAccount(rows[0]!);
      });
    },

    async accountById(id) {
      if (!isUuid(id)) return null;
      const { rows } = await pool.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
      return rows[0] ? toAccount(rows[0]) : null;
    },

    async accountInOrganization(accountId, organizationId) {
      if (!isUuid(accountId)) return null;
      const { rows } = await pool.query<AccountRow & { m_organization_id: string | null; m_role: Role | null }>({
        name: "identity_account_in_organization",
        text: ACCOUNT_IN_ORGANIZATION,
        values: [accountId, organizationId],
      });
      const row = rows[0];
      if (!row) return null;
      return {
        account: toAccount(row),
        membership: row.m_role ? { organizationId: row.m_organization_id!, role: row.m_role } : null,
      };
    },

    async humanByEmail(email) {
      const { rows } = await pool.query<AccountRow>(
        `SELECT ${ACCOUNT_COLUMNS} FROM accounts
          WHERE kind = 'human' AND external_issuer IS NULL AND lower(email) = lower($1)`,
        [email],
      );
      return rows[0] ? { ...toAccount(rows[0]), passwordHash: rows[0].password_hash } : null;
    },

    async accountByExternalSubject(issuer, subject) {
      const { rows } = await pool.query<AccountRow>(
        `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE external_issuer = $1 AND external_subject = $2`,
        [issuer, subject],
      );
      return rows[0] ? toAccount(rows[0]) : null;
    },
  };
}

const MEMBERSHIP_SELECT = `SELECT o.id, o.name, o.slug, o.is_personal, o.created_at, m.role
  FROM organizations o JOIN memberships m ON m.organization_id = o.id`;

const MEMBER_SELECT = `SELECT m.organization_id, m.account_id, a.name, a.email, m.role, m.created_at
  FROM memberships m JOIN accounts a ON a.id = m.account_id`;

async function memberOf(client: Pool | PoolClient, orgId: string, accountId: string): Promise<Member | null> {
  const { rows } = await client.query<MemberRow>(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND m.account_id = $2`, [
    orgId,
    accountId,
  ]);
  return rows[0] ? toMember(rows[0]) : null;
}

export function organizationStore(pool: Pool): OrganizationStore {
  return {
    async membership(organizationId, accountId) {
      const { rows } = await pool.query<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE o.id = $1 AND m.account_id = $2`, [
        organizationId,
        accountId,
      ]);
      return rows[0] ? toMembership(rows[0]) : null;
    },

    async organizationExists(organizationId) {
      const { rowCount } = await pool.query("SELECT 1 FROM organizations WHERE id = $1", [organizationId]);
      return rowCount === 1;
    },

    async createOrganization({ id, name, slug, ownerId }) {
      return withTransaction(pool, async (client) => {
        await client.query("INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $3)", [id, name, slug]);
        await client.query("INSERT INTO memberships (organization_id, account_id, role) VALUES ($1, $2, 'owner')", [id, ownerId]);
        const { rows } = await client.query<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE o.id = $1 AND m.account_id = $2`, [
          id,
          ownerId,
        ]);
        return toMembership(rows[0]!);
      });
    },

    async organizationsOf(accountId) {
      const { rows } = await pool.query<MembershipRow>(
        `${MEMBERSHIP_SELECT} WHERE m.account_id = $1 ORDER BY o.is_personal DESC, o.created_at`,
        [accountId],
      );
      return rows.map(toMembership);
    },

    async members(organizationId) {
      const { rows } = await pool.query<MemberRow>(`${MEMBER_SELECT} WHERE m.organization_id = $1 ORDER BY m.created_at`, [
        organizationId,
      ]);
      return rows.map(toMember);
    },

    async addMember(organizationId, accountId, role) {
      await pool.query("INSERT INTO memberships (organization_id, account_id, role) VALUES ($1, $2, $3)", [
        organizationId,
        accountId,
        role,
      ]);
      return (await memberOf(pool, organizationId, accountId))!;
    },

    async updateMember(organizationId, accountId, role) {
      await pool.query("UPDATE memberships SET role = $3 WHERE organization_id = $1 AND account_id = $2", [
        organizationId,
        accountId,
        role,
      ]);
      return memberOf(pool, organizationId, accountId);
    },

    async removeMember(organizationId, accountId) {
      const { rowCount } = await pool.query("DELETE FROM memberships WHERE organization_id = $1 AND account_id = $2", [
        organizationId,
        accountId,
      ]);
      return rowCount === 1;
    },

    async ownerCount(organizationId) {
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1 AND role = 'owner'",
        [organizationId],
      );
      return rows[0]?.n ?? 0;
    },
  };
}
