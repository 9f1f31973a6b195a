import { DomainError } from "@toolport/kit/errors";
import { describe, expect, it } from "vitest";
import type { Permissions } from "./model.js";
import { clampUsageDays, parseAgentType, requireEmail, requireText, validatePermissions } from "./validation.js";

const field = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).reason).toBe("invalid_request");
    return (err as DomainError).details.field as string;
  }
  return undefined;
};

const open: Permissions = {
  allowedServices: null,
  allowedTools: null,
  maxCostPerCallCents: null,
  dailySpendLimitCents: null,
  requireConfirmation: false,
};

describe("input rules", () => {
  it("name the field of a bad permission", () => {
    expect(field(() => validatePermissions({ ...open, maxCostPerCallCents: -1n }))).toBe("permissions.max_cost_per_call_cents");
    expect(field(() => validatePermissions({ ...open, dailySpendLimitCents: -1n }))).toBe("permissions.daily_spend_limit_cents");
    const id = "0b8f9a4e-8a61-4c0e-9d59-7a0b6c7d2e11";
    expect(field(() => validatePermissions({ ...open, allowedTools: [id, "slug"] }))).toBe("permissions.allowed_tools[1]");
    expect(field(() => validatePermissions({ ...open, allowedServices: ["x"] }))).toBe("permissions.allowed_services[0]");
  });

  it("keep valid permissions, deduplicating ids and keeping an empty list (= nothing allowed) apart from null (= all)", () => {
    const id = "0B8F9A4E-8A61-4C0E-9D59-7A0B6C7D2E11";
    const p = validatePermissions({
      ...open,
      allowedTools: [id, id.toLowerCase()],
      allowedServices: [],
      maxCostPerCallCents: 0n,
    });
    expect(p).toEqual({ ...open, allowedTools: [id.toLowerCase()], allowedServices: [], maxCostPerCallCents: 0n });
  });

  it("check emails, texts and agent types", () => {
    expect(requireEmail("operator_email", " ops@example.com ")).toBe("ops@example.com");
    for (const bad of ["", "ops", "ops@", "@example.com", "ops@example", "o ps@example.com", `${"a".repeat(250)}@example.com`]) {
      expect(field(() => requireEmail("operator_email", bad))).toBe("operator_email");
    }
    expect(field(() => requireText("name", "x".repeat(101), 100))).toBe("name");
    expect(field(() => requireText("name", "a\u0007b", 100))).toBe("name");
    expect(requireText("name", "  Bot  ", 100)).toBe("Bot");
    expect(parseAgentType("coding_agent")).toBe("coding_agent");
    expect(parseAgentType("")).toBeNull();
    expect(field(() => parseAgentType("robot"))).toBe("agent_type");
  });

  it("clamp usage days to 1..90 with a default of 30", () => {
    expect([clampUsageDays(undefined), clampUsageDays(0), clampUsageDays(-4), clampUsageDays(7), clampUsageDays(91)]).toEqual([
      30, 1, 1, 7, 90,
    ]);
  });
});
