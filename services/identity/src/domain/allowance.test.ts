import { DomainError } from "@toolport/kit/errors";
import { describe, expect, it } from "vitest";
import { type AllowanceDeps, type LeaseInput, type LeaseOutcome, type LeaseRequest, leaseAllowance } from "./allowance.js";

const ACCOUNT = "11111111-1111-4111-8111-111111111111";
const windowStart = new Date("2026-12-01T10:00:00Z");

/** The rules with a counters store that grants what it is asked for and remembers the requests. */
function rules(answer: Partial<LeaseOutcome> = {}) {
  const asked: LeaseRequest[] = [];
  const deps: AllowanceDeps = {
    allowanceLeases: {
      async lease(request) {
        asked.push(request);
        return {
          keyValid: true,
          roleAllowsCalls: true,
          granted: request.want,
          hits: request.want,
          windowStart,
          windowEnd: new Date(windowStart.getTime() + 60_000),
          now: new Date(windowStart.getTime() + 58_500),
          freeGranted: request.free?.want ?? 0,
          freeCalls: request.free?.want ?? 0,
          month: "2026-12-01",
          resetsAt: new Date("2027-01-01T00:00:00Z"),
          ttlMs: request.ttlMs,
          ...answer,
        };
      },
    },
    keys: {} as AllowanceDeps["keys"],
    organizations: {} as AllowanceDeps["organizations"],
    rateLimitDefaults: { tool_calls: { limit: 160, windowSeconds: 60 } },
    freeTierLimit: 48,
    leaseTtlMs: 5_000,
  };
  return { deps, asked };
}

const input = (over: Partial<LeaseInput> = {}): LeaseInput => ({
  rateLimit: { bucket: "tool_calls", subjectKey: "key:1", limit: 0, windowSeconds: 0 },
  want: 50,
  freeWant: 0,
  freeTierAccountId: undefined,
  holder: "exec-1",
  keyCheck: undefined,
  giveBack: undefined,
  ...over,
});

describe("execution's quota leases", () => {
  it("give one holder at most a sixteenth of a limit (at least one), of the calls and of the free tier", async () => {
    const { deps, asked } = rules();
    const grant = await leaseAllowance(deps, input({ freeTierAccountId: ACCOUNT, freeWant: 40 }));
    expect(asked[0]).toMatchObject({ want: 10, free: { accountId: ACCOUNT, want: 3, limit: 48 }, ttlMs: 5_000 });
    expect(grant).toMatchObject({
      granted: 10,
      rateLimit: { allowed: true, limit: 160, remaining: 150, retryAfterSeconds: 0 },
      freeGranted: 3,
      freeTier: { allowed: true, callsThisMonth: 3, limit: 48 },
    });

    await leaseAllowance(deps, input({ rateLimit: { bucket: "tiny", subjectKey: "k", limit: 5, windowSeconds: 60 } }));
    expect(asked[1]?.want).toBe(1);
  });

  it("answer a lease that got nothing as refused, retrying once the window ends (a whole second at least)", async () => {
    const { deps } = rules({ granted: 0, hits: 160 });
    const grant = await leaseAllowance(deps, input());
    expect(grant.rateLimit).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 2 });
    expect(grant.freeTier).toBeUndefined();
  });

  it("refuse what cannot be leased, naming the field, before anything is reserved", async () => {
    const { deps, asked } = rules();
    const field = (over: Partial<LeaseInput>) =>
      leaseAllowance(deps, input(over)).then(
        () => "accepted",
        (err) => (err instanceof DomainError ? String(err.details?.field ?? err.message) : "not a domain error"),
      );
    expect(await field({ rateLimit: undefined })).toBe("rate_limit");
    expect(await field({ want: 1001 })).toBe("want");
    expect(await field({ want: 1.5 })).toBe("want");
    expect(await field({ freeWant: -1 })).toBe("free_want");
    expect(await field({ freeTierAccountId: "nobody" })).toBe("free_tier_account_id");
    expect(await field({ holder: "a.b" })).toBe("holder");
    expect(await field({ keyCheck: { keyId: "k", accountId: ACCOUNT, organizationId: ACCOUNT } })).toBe("key_check.key_id");
    expect(await field({ giveBack: { windowStart: undefined, hits: 0, freeCalls: 0n, month: "" } })).toBe(
      "give_back.window_start",
    );
    expect(await field({ giveBack: { windowStart, hits: 1, freeCalls: 2n, month: "2026-12" } })).toBe("give_back.month");
    expect(asked).toEqual([]);
  });
});
