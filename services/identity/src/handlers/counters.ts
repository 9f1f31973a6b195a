/** The shared counters: rate limits (gateway, execution) and the free tier (execution). */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { rateLimitRequest } from "../domain/counters.js";
import { invalidField, isUuid } from "../domain/validation.js";
import { consumeFreeTierCall, consumeRateLimit } from "../store/counters.js";
import { ts } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<ServiceImpl<typeof IdentityService>, "consumeRateLimit" | "consumeFreeTierCall">;

export function counterHandlers(deps: IdentityDeps): Impl {
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
      if (!isUuid(req.accountId)) throw invalidField("account_id", "must be an account UUID");
      const executionId = req.executionId.trim();
      if (executionId === "" || executionId.length > 128) throw invalidField("execution_id", "must be 1-128 characters");
      const outcome = await consumeFreeTierCall(deps.pool, {
        accountId: req.accountId,
        executionId,
        limit: deps.config.FREE_TIER_CALLS_PER_MONTH,
      });
      return {
        allowed: outcome.allowed,
        callsThisMonth: outcome.callsThisMonth,
        limit: outcome.limit,
        resetsAt: ts(outcome.resetsAt),
      };
    },
  };
}
