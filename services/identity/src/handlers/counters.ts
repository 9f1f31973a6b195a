/** The shared counters: rate limits (gateway, execution) and the free tier (execution). */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { invalidCredentials } from "../domain/authenticate.js";
import { rateLimitRequest } from "../domain/counters.js";
import { invalidField, isUuid } from "../domain/validation.js";
import { consumeCallAllowance, consumeFreeTierCall, consumeRateLimit } from "../store/counters.js";
import { ts } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<ServiceImpl<typeof IdentityService>, "consumeRateLimit" | "consumeFreeTierCall" | "consumeCallAllowance">;

export function counterHandlers(deps: IdentityDeps): Impl {
  const freeTierRequest = (req: { accountId: string; executionId: string }) => {
    if (!isUuid(req.accountId)) throw invalidField("account_id", "must be an account UUID");
    const executionId = req.executionId.trim();
    if (executionId === "" || executionId.length > 128) throw invalidField("execution_id", "must be 1-128 characters");
    return { accountId: req.accountId, executionId, limit: deps.config.FREE_TIER_CALLS_PER_MONTH };
  };
  return {
    async consumeRateLimit(req) {
      const request = rateLimitRequest(deps.rateLimitDefaults, {
        bucket: req.bucket,
        subjectKey: req.subjectKey,
        limit: req.limit,
        windowSeconds: req.windowSeconds,
        cost: req.cost,
      });
      const outcome = await consumeRateLimit(deps.pool, request);
      return {
        allowed: outcome.allowed,
        limit: outcome.limit,
        remaining: outcome.remaining,
        resetAt: ts(outcome.resetAt),
        retryAfterSeconds: outcome.retryAfterSeconds,
      };
    },

    async consumeFreeTierCall(req) {
      const outcome = await consumeFreeTierCall(deps.pool, freeTierRequest(req));
      return {
        allowed: outcome.allowed,
        callsThisMonth: outcome.callsThisMonth,
        limit: outcome.limit,
        resetsAt: ts(outcome.resetsAt),
      };
    },

    // Execution's per-call counters in one round trip, with the key re-checked when key_check is
    // present (see store/counters.ts consumeCallAllowance).
    async consumeCallAllowance(req) {
      const rate = req.rateLimit;
      if (!rate) throw invalidField("rate_limit", "is required");
      const request = rateLimitRequest(deps.rateLimitDefaults, {
        bucket: rate.bucket,
        subjectKey: rate.subjectKey,
        limit: rate.limit,
        windowSeconds: rate.windowSeconds,
        cost: rate.cost,
      });
      const free = req.freeTier ? freeTierRequest(req.freeTier) : undefined;
      const check = req.keyCheck;
      if (check) {
        if (!isUuid(check.keyId)) throw invalidField("key_check.key_id", "must be an API key UUID");
        if (!isUuid(check.accountId)) throw invalidField("key_check.account_id", "must be an account UUID");
        if (!isUuid(check.organizationId)) throw invalidField("key_check.organization_id", "must be an organization UUID");
      }
      const outcome = await consumeCallAllowance(deps.counterPool, request, free, check);
      // The key was revoked, or its owner left the call's organization, since the principal was
      // resolved: refused like Authenticate refuses it, and nothing was counted.
      if (!outcome.keyValid) throw invalidCredentials();
      return {
        rateLimit: {
          allowed: outcome.rateLimit.allowed,
          limit: outcome.rateLimit.limit,
          remaining: outcome.rateLimit.remaining,
          resetAt: ts(outcome.rateLimit.resetAt),
          retryAfterSeconds: outcome.rateLimit.retryAfterSeconds,
        },
        freeTier: outcome.freeTier && {
          allowed: outcome.freeTier.allowed,
          callsThisMonth: outcome.freeTier.callsThisMonth,
          limit: outcome.freeTier.limit,
          resetsAt: ts(outcome.freeTier.resetsAt),
        },
      };
    },
  };
}
