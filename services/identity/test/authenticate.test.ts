/**
 * Authenticate on a running identity process: key -> account -> membership -> role in one statement,
 * the organization selector, the throttled `last_used_at` write, and revocation on the next call.
 */

import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { readError } from "@toolport/kit/errors";
import { createPool, type Pool } from "@toolport/kit/pg";
import { createServiceClient } from "@toolport/kit/rpc";
import { OrgRole } from "@toolport/proto/toolport/common/v1/principal_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../test/harness/stack.js";

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const newPlaintext = () => `tp_${Array.from(randomBytes(43), (b) => base62[b % 62]).join("")}`;

async function refusal(promise: Promise<unknown>): Promise<{ code: Code; reason: string }> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const { code, reason } = readError(err as ConnectError);
  return { code, reason };
}

describe("identity Authenticate", () => {
  let stack: Stack;
  let pool: Pool;
  let identity: ReturnType<typeof createServiceClient<typeof IdentityService>>;

  beforeAll(async () => {
    stack = await startStack(["identity"]);
    identity = createServiceClient(IdentityService, `http://127.0.0.1:${stack.ports.identity}`);
    pool = createPool(stack.env.IDENTITY_DATABASE_URL!, 2);
  });
  afterAll(async () => {
    await pool?.end();
    await stack?.stopAll();
  });

  /** An account owning its personal organization, a member of a team, with a key bound to the team. */
  async function seed() {
    const account = randomUUID();
    const personal = randomUUID();
    const team = randomUUID();
    const keyId = randomUUID();
    const plaintext = newPlaintext();
    await pool.query("INSERT INTO organizations (id, name, slug, is_personal) VALUES ($1, 'p', $3, true), ($2, 't', $4, false)", [
      personal,
      team,
      `p-${personal}`,
      `t-${team}`,
    ]);
    await pool.query(
      "INSERT INTO accounts (id, kind, name, email, personal_organization_id) VALUES ($1, 'agent', 'a', 'a@example.com', $2)",
      [account, personal],
    );
    await pool.query("INSERT INTO memberships (organization_id, account_id, role) VALUES ($1, $3, 'owner'), ($2, $3, 'member')", [
      personal,
      team,
      account,
    ]);
    await pool.query(
      "INSERT INTO api_keys (id, account_id, organization_id, name, key_hash, key_prefix) VALUES ($1, $2, $3, 'k', $4, $5)",
      [keyId, account, team, createHash("sha256").update(plaintext).digest(), plaintext.slice(0, 8)],
    );
    const lastUsed = async () =>
      (await pool.query<{ last_used_at: Date | null }>("SELECT last_used_at FROM api_keys WHERE id = $1", [keyId])).rows[0]!
        .last_used_at;
    const withKey = (organizationId?: string) =>
      identity.authenticate({ credential: { case: "apiKey", value: plaintext }, organizationId });
    /** Another key of the account, bound to `organization` with these stored permissions. */
    const addKey = async (organization: string, permissions: object | null) => {
      const other = newPlaintext();
      await pool.query(
        "INSERT INTO api_keys (id, account_id, organization_id, name, key_hash, key_prefix, permissions) VALUES ($1, $2, $3, 'k2', $4, $5, $6)",
        [randomUUID(), account, organization, createHash("sha256").update(other).digest(), other.slice(0, 8), permissions],
      );
      return (organizationId?: string) => identity.authenticate({ credential: { case: "apiKey", value: other }, organizationId });
    };
    return { account, personal, team, keyId, plaintext, lastUsed, withKey, addKey };
  }

  it("resolves key, account and role in the key's organization, or in a selected one the account belongs to", async () => {
    const s = await seed();
    const bound = (await s.withKey()).principal!;
    expect(bound).toMatchObject({
      accountId: s.account,
      organizationId: s.team,
      keyId: s.keyId,
      orgRole: OrgRole.MEMBER,
      personalOrganizationId: s.personal,
    });
    // A key bound to a shared organization acts only there (README "Permissions").
    expect(await refusal(s.withKey(s.personal))).toEqual({ code: Code.PermissionDenied, reason: "key_organization_mismatch" });
    // An unrestricted key of the personal organization selects any organization its owner belongs to.
    const personalKey = await s.addKey(s.personal, null);
    const selected = (await personalKey(s.team)).principal!;
    expect(selected).toMatchObject({ organizationId: s.team, orgRole: OrgRole.MEMBER });
    expect(selected.keyPermissions).toBeUndefined();
    // A restricted one does not.
    const restricted = await s.addKey(s.personal, {
      allowed_services: null,
      allowed_tools: null,
      max_cost_per_call_cents: null,
      daily_spend_limit_cents: null,
      require_confirmation: true,
    });
    expect((await restricted()).principal!.organizationId).toBe(s.personal);
    expect(await refusal(restricted(s.team))).toEqual({ code: Code.PermissionDenied, reason: "key_organization_mismatch" });
  });

  it("sets last_used on the first use, skips rewrites within 30 seconds, rewrites after", async () => {
    const s = await seed();
    expect(await s.lastUsed()).toBeNull();
    await s.withKey();
    const first = await s.lastUsed();
    expect(first).toBeInstanceOf(Date);
    await s.withKey();
    await s.withKey(s.team);
    expect(await s.lastUsed()).toEqual(first);
    // Older than the window: the next use writes it again.
    await pool.query("UPDATE api_keys SET last_used_at = now() - interval '31 seconds' WHERE id = $1", [s.keyId]);
    const stale = await s.lastUsed();
    await s.withKey();
    expect((await s.lastUsed())!.getTime()).toBeGreaterThan(stale!.getTime());
  });

  it("refuses a selector the account does not belong to with 404, after checking the credential, without recording a use", async () => {
    const s = await seed();
    const stranger = randomUUID();
    expect(await refusal(s.withKey(stranger))).toEqual({ code: Code.NotFound, reason: "organization_not_found" });
    expect(await refusal(s.withKey("not-a-uuid"))).toEqual({ code: Code.NotFound, reason: "organization_not_found" });
    expect(await s.lastUsed()).toBeNull();
    // A wrong key with a malformed selector is refused as a wrong key.
    const wrong = identity.authenticate({ credential: { case: "apiKey", value: newPlaintext() }, organizationId: "not-a-uuid" });
    expect(await refusal(wrong)).toEqual({ code: Code.Unauthenticated, reason: "unauthenticated" });
  });

  it("refuses a key whose owner left its organization, and a revoked key on its next use", async () => {
    const s = await seed();
    await s.withKey();
    await pool.query("DELETE FROM memberships WHERE organization_id = $1 AND account_id = $2", [s.team, s.account]);
    expect(await refusal(s.withKey())).toEqual({ code: Code.Unauthenticated, reason: "key_organization_left" });
    // Dead everywhere: an organization the owner still belongs to does not revive it.
    expect(await refusal(s.withKey(s.personal))).toEqual({ code: Code.Unauthenticated, reason: "key_organization_left" });
    // Back in the organization it works again, until revoked.
    await pool.query("INSERT INTO memberships (organization_id, account_id, role) VALUES ($1, $2, 'member')", [
      s.team,
      s.account,
    ]);
    expect((await s.withKey()).principal!.organizationId).toBe(s.team);
    await pool.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [s.keyId]);
    expect(await refusal(s.withKey())).toEqual({ code: Code.Unauthenticated, reason: "unauthenticated" });
  });

  it("resolves a Toolport JWT's account in its personal organization or a selected one", async () => {
    const email = `jwt-${randomUUID()}@example.com`;
    const signed = await identity.signup({ email, password: "correct horse battery staple" });
    const token = { case: "bearerToken" as const, value: signed.accessToken };
    const own = (await identity.authenticate({ credential: token })).principal!;
    expect(own).toMatchObject({ accountId: signed.accountId, organizationId: signed.organizationId, orgRole: OrgRole.OWNER });
    const stranger = randomUUID();
    expect(await refusal(identity.authenticate({ credential: token, organizationId: stranger }))).toEqual({
      code: Code.NotFound,
      reason: "organization_not_found",
    });
  });
});
