/** The shared counters: rate limits (gateway, execution), the free tier and execution's quota leases. */

import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { invalidCredentials, keyOrganizationLeft } from "../domain/authenticate.js";
import { insufficientRole } from "../domain/authority.js";
import { rateLimitRequest } from "../domain/counters.js";
import { invalidField, isUuid } from "../domain/validation.js";
import { HOLDER_PATTERN } from "../events/lease-drops.js";
import { consumeFreeTierCall, consumeRateLimit } from "../store/counters.js";
import { leaseCallAllowance } from "../store/leases.js";
import { ts } from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<ServiceImpl<typeof IdentityService>, "consumeRateLimit" | "consumeFreeTierCall" | "leaseCallAllowance">;

/** The most a lease may ask for at once. */
const MAX_LEASE = 1000;
const blockCap = (limit: number) => Math.max(1, Math.floor(limit / 16));

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

    // Execution's quota lease (see store/leases.ts and migration 0002): a block of the caller's
    // tool-call allowance, with the key re-checked when key_check is present.
    async leaseCallAllowance(req) {
      const rate = req.rateLimit;
      if (!rate) throw invalidField("rate_limit", "is required");
      const request = rateLimitRequest(deps.rateLimitDefaults, {
        bucket: rate.bucket,
        subjectKey: rate.subjectKey,
        limit: rate.limit,
        windowSeconds: rate.windowSeconds,
        cost: 1,
      });
      if (!Number.isInteger(req.want) || req.want < 0 || req.want > MAX_LEASE)
        throw invalidField("want", `must be 0-${MAX_LEASE}`);
      if (req.freeWant < 0 || req.freeWant > MAX_LEASE) throw invalidField("free_want", `must be 0-${MAX_LEASE}`);
      if (req.freeTierAccountId !== undefined && !isUuid(req.freeTierAccountId))
        throw invalidField("free_tier_account_id", "must be an account UUID");
      if (!HOLDER_PATTERN.test(req.holder)) throw invalidField("holder", "must be 1-64 characters of A-Z, a-z, 0-9, _ and -");
      const check = req.keyCheck;
      if (check) {
        if (!isUuid(check.keyId)) throw invalidField("key_check.key_id", "must be an API key UUID");
        if (!isUuid(check.accountId)) throw invalidField("key_check.account_id", "must be an account UUID");
        if (!isUuid(check.organizationId)) throw invalidField("key_check.organization_id", "must be an organization UUID");
      }
      const back = req.giveBack;
      if (back) {
        if (!back.windowStart) throw invalidField("give_back.window_start", "is required");
        if (back.hits < 0 || back.freeCalls < 0n) throw invalidField("give_back", "hits and free_calls must not be negative");
        if (back.freeCalls > 0n && !/^\d{4}-\d{2}-01$/.test(back.month))
          throw invalidField("give_back.month", "must be YYYY-MM-01");
      }
      // No caller takes more than a sixteenth of a limit at once (at least one), so a block held by one
      // replica leaves most of the limit to the others.
      const freeLimit = deps.config.FREE_TIER_CALLS_PER_MONTH;
      const outcome = await leaseCallAllowance(deps.counterPool, {
        rate: request,
        want: Math.min(req.want, blockCap(request.limit)),
        free:
          req.freeTierAccountId !== undefined
            ? { accountId: req.freeTierAccountId, want: Math.min(req.freeWant, blockCap(freeLimit)), limit: freeLimit }
            : undefined,
        key: check,
        holder: req.holder,
        ttlMs: deps.config.ALLOWANCE_LEASE_MS,
        giveBack: back && {
          windowStart: timestampDate(back.windowStart!),
          hits: back.hits,
          month: back.month || "1970-01-01",
          freeCalls: Number(back.freeCalls),
        },
      });
      // The key was revoked, or its owner left the call's organization, since the principal was
      // resolved: refused like Authenticate refuses it, and nothing was reserved.
      if (!outcome.keyValid) throw await whyKeyRefused(deps, check!);
      // Made a viewer since the principal was resolved (docs/permissions.md): viewers do not call.
      if (!outcome.roleAllowsCalls) throw insufficientRole("viewer", "call this organization's tools");
      const refused = req.want > 0 && outcome.granted === 0;
      const retryAfterSeconds = refused
        ? Math.max(1, Math.ceil((outcome.windowEnd.getTime() - outcome.now.getTime()) / 1000))
        : 0;
      return {
        granted: outcome.granted,
        rateLimit: {
          allowed: !refused,
          limit: request.limit,
          remaining: Math.max(0, request.limit - outcome.hits),
          resetAt: ts(outcome.windowEnd),
          retryAfterSeconds,
        },
        windowStart: ts(outcome.windowStart),
        freeGranted: BigInt(outcome.freeGranted),
        freeTier:
          req.freeTierAccountId !== undefined
            ? {
                allowed: outcome.freeGranted > 0,
                callsThisMonth: BigInt(outcome.freeCalls),
                limit: BigInt(freeLimit),
                resetsAt: ts(outcome.resetsAt),
              }
            : undefined,
        month: outcome.month,
        ttlMs: outcome.ttlMs,
      };
    },
  };
}

/**
 * Why the lease's key check failed, worded as Authenticate would word it (looked up only on this rare
 * path): the key's owner left the organization the key is bound to, or the key is not valid.
 */
async function whyKeyRefused(deps: IdentityDeps, check: { keyId: string }): Promise<Error> {
  const key = await deps.keys.keyById(check.keyId);
  const live = key && !key.revokedAt && (!key.expiresAt || key.expiresAt > new Date());
  if (live && !(await deps.organizations.membership(key.organizationId, key.accountId))) return keyOrganizationLeft();
  return invalidCredentials();
}
