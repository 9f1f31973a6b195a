import { DomainError } from "@toolport/kit/errors";
import { describe, expect, it } from "vitest";
import { assertSameOrganization, assertWithin, grantsOf, maySelectOrganization, roleGrantsOf } from "./authority.js";
import type { Permissions } from "./model.js";

const S1 = "11111111-1111-4111-8111-111111111111";
const S2 = "22222222-2222-4222-8222-222222222222";
const T1 = "33333333-3333-4333-8333-333333333333";
const T2 = "44444444-4444-4444-8444-444444444444";

const perms = (p: Partial<Permissions> = {}): Permissions => ({
  allowedServices: null,
  allowedTools: null,
  maxCostPerCallCents: null,
  dailySpendLimitCents: null,
  requireConfirmation: false,
  ...p,
});

/** The field a refusal names, or null when the permissions were accepted. */
function refusedField(maker: Permissions | null, asked: Permissions | null): string | null {
  try {
    assertWithin(maker, asked);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).reason).toBe("permission_exceeds_key");
    return (err as DomainError).details.field as string;
  }
}

describe("grants", () => {
  it("a viewer neither calls nor manages credentials or the catalog; a restricted key only calls", () => {
    expect(grantsOf("member", null)).toEqual(roleGrantsOf("member"));
    expect(grantsOf("viewer", null)).not.toContain("call_tools");
    expect(grantsOf("viewer", null)).not.toContain("manage_credentials");
    expect(grantsOf("viewer", null)).not.toContain("manage_catalog");
    expect(grantsOf("viewer", null)).toContain("manage_keys");
    expect(grantsOf("owner", { permissions: perms({ requireConfirmation: true }) })).toEqual(["call_tools"]);
    expect(grantsOf("viewer", { permissions: perms() })).toEqual([]);
    expect(grantsOf("owner", { permissions: null })).toHaveLength(6);
  });

  it("only an unrestricted key of the personal organization may select another organization", () => {
    expect(maySelectOrganization({ permissions: null, organizationId: S1 }, S1)).toBe(true);
    expect(maySelectOrganization({ permissions: null, organizationId: S2 }, S1)).toBe(false);
    expect(maySelectOrganization({ permissions: perms(), organizationId: S1 }, S1)).toBe(false);
  });
});

describe("a key made with a key", () => {
  it("anything under an unrestricted key", () => {
    expect(refusedField(null, null)).toBeNull();
    expect(refusedField(null, perms({ allowedTools: [T1] }))).toBeNull();
  });

  it("narrower on every field is accepted", () => {
    const maker = perms({
      allowedServices: [S1, S2],
      allowedTools: [T1, T2],
      maxCostPerCallCents: 10n,
      dailySpendLimitCents: 100n,
      requireConfirmation: true,
    });
    const asked = perms({
      allowedServices: [S2.toUpperCase()],
      allowedTools: [],
      maxCostPerCallCents: 10n,
      dailySpendLimitCents: 0n,
      requireConfirmation: true,
    });
    expect(refusedField(maker, asked)).toBeNull();
  });

  it("wider on any field is refused, naming it", () => {
    const maker = perms({
      allowedServices: [S1],
      allowedTools: [T1],
      maxCostPerCallCents: 10n,
      dailySpendLimitCents: 100n,
      requireConfirmation: true,
    });
    const within = { ...maker };
    expect(refusedField(maker, null)).toBe("permissions");
    expect(refusedField(maker, { ...within, allowedServices: null })).toBe("permissions.allowed_services");
    expect(refusedField(maker, { ...within, allowedServices: [S1, S2] })).toBe("permissions.allowed_services");
    expect(refusedField(maker, { ...within, allowedTools: null })).toBe("permissions.allowed_tools");
    expect(refusedField(maker, { ...within, allowedTools: [T2] })).toBe("permissions.allowed_tools");
    expect(refusedField(maker, { ...within, maxCostPerCallCents: null })).toBe("permissions.max_cost_per_call_cents");
    expect(refusedField(maker, { ...within, maxCostPerCallCents: 11n })).toBe("permissions.max_cost_per_call_cents");
    expect(refusedField(maker, { ...within, dailySpendLimitCents: 101n })).toBe("permissions.daily_spend_limit_cents");
    expect(refusedField(maker, { ...within, requireConfirmation: false })).toBe("permissions.require_confirmation");
  });

  it("stays in the making key's organization when the key cannot select others", () => {
    expect(() => assertSameOrganization(S1, S1.toUpperCase())).not.toThrow();
    expect(() => assertSameOrganization(S1, S2)).toThrow(/organization_id/);
  });
});
