/** The shared counters: rate limits (gateway, execution), the free tier and execution's quota leases. */

import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { type AllowanceDeps, leaseAllowance } from "../domain/allowance.js";
import { freeTierRequest, rateLimitRequest } from "../domain/counters.js";
import { consumeFreeTierCall, consumeRateLimit } from "../store/counters.js";
import { ts } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<ServiceImpl<typeof IdentityService>, "consumeRateLimit" | "consumeFreeTierCall" | "leaseCallAllowance">;

export function counterHandlers(deps: IdentityDeps): Impl {
  const allowance: AllowanceDeps = {
    allowanceLeases: deps.allowanceLeases,
    keys: deps.keys,
    organizations: deps.organizations,
    rateLimitDefaults: deps.rateLimitDefaults,
    freeTierLimit: deps.config.FREE_TIER_CALLS_PER_MONTH,
    leaseTtlMs: deps.config.ALLOWANCE_LEASE_MS,
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
      const outcome = await consumeFreeTierCall(
        deps.pool,
        freeTierRequest(deps.config.FREE_TIER_CALLS_PER_MONTH, { accountId: req.accountId, executionId: req.executionId }),
      );
      return {
        allowed: outcome.allowed,
        callsThisMonth: outcome.callsThisMonth,
        limit: outcome.limit,
        resetsAt: ts(outcome.resetsAt),
      };
    },

    // Execution's quota lease (domain/allowance.ts): proto in, the allowance rules, proto out.
    async leaseCallAllowance(req) {
      const rate = req.rateLimit;
      const back = req.giveBack;
      const grant = await leaseAllowance(allowance, {
        rateLimit: rate && {
          bucket: rate.bucket,
          subjectKey: rate.subjectKey,
          limit: rate.limit,
          windowSeconds: rate.windowSeconds,
        },
        want: req.want,
        freeWant: req.freeWant,
        freeTierAccountId: req.freeTierAccountId,
        holder: req.holder,
        keyCheck: req.keyCheck && {
          keyId: req.keyCheck.keyId,
          accountId: req.keyCheck.accountId,
          organizationId: req.keyCheck.organizationId,
        },
        giveBack: back && {
          windowStart: back.windowStart && timestampDate(back.windowStart),
          hits: back.hits,
          freeCalls: back.freeCalls,
          month: back.month,
        },
      });
      return {
        granted: grant.granted,
        rateLimit: { ...grant.rateLimit, resetAt: ts(grant.rateLimit.resetAt) },
        windowStart: ts(grant.windowStart),
        freeGranted: BigInt(grant.freeGranted),
        freeTier: grant.freeTier && {
          allowed: grant.freeTier.allowed,
          callsThisMonth: BigInt(grant.freeTier.callsThisMonth),
          limit: BigInt(grant.freeTier.limit),
          resetsAt: ts(grant.freeTier.resetsAt),
        },
        month: grant.month,
        ttlMs: grant.ttlMs,
      };
    },
  };
}
