/**
 * Execution's quota leases (LeaseCallAllowance): a block of a caller's tool-call allowance, and of its
 * free tier, reserved at once on the shared counters, with the key re-checked when a key check comes
 * along. The rules: what a request may ask for, how much one holder may take at once, and how a refusal
 * is worded. The reservation itself is one statement in the store (store/leases.ts, migration 0002).
 */
import { invalidCredentials, keyOrganizationLeft } from "./authenticate.js";
import { insufficientRole } from "./authority.js";
import { type RateLimitDefaults, type RateLimitRequest, rateLimitRequest } from "./counters.js";
import type { KeyStore, OrganizationStore } from "./ports.js";
import { invalidField, isUuid } from "./validation.js";

/** The most a lease may ask for at once. */
export const MAX_LEASE = 1000;

/** Holder ids are one NATS subject token (events/lease-drops.ts asks a holder to drop its leases there). */
export const HOLDER_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** No caller takes more than a sixteenth of a limit at once (at least one). */
const blockCap = (limit: number) => Math.max(1, Math.floor(limit / 16));

/** The key a lease is for, checked in the same statement: not revoked, its owner still a member. */
export interface KeyCheck {
  keyId: string;
  accountId: string;
  organizationId: string;
}

/** What the store reserves in one statement. */
export interface LeaseRequest {
  rate: RateLimitRequest;
  want: number;
  free?: { accountId: string; want: number; limit: number };
  key?: KeyCheck;
  holder: string;
  ttlMs: number;
  giveBack?: { windowStart: Date; hits: number; month: string; freeCalls: number };
}

export interface LeaseOutcome {
  keyValid: boolean;
  /** False when the caller is only a viewer of the organization the call runs in (nothing reserved). */
  roleAllowsCalls: boolean;
  granted: number;
  hits: number;
  windowStart: Date;
  windowEnd: Date;
  now: Date;
  freeGranted: number;
  freeCalls: number;
  /** First day of the UTC month, YYYY-MM-DD. */
  month: string;
  resetsAt: Date;
  ttlMs: number;
}

/** The counters' side of a lease (store/leases.ts, on the pool that does not wait for the WAL flush). */
export interface AllowanceLeaseStore {
  lease(request: LeaseRequest): Promise<LeaseOutcome>;
}

export interface AllowanceDeps {
  allowanceLeases: AllowanceLeaseStore;
  keys: KeyStore;
  organizations: OrganizationStore;
  rateLimitDefaults: RateLimitDefaults;
  /** FREE_TIER_CALLS_PER_MONTH. */
  freeTierLimit: number;
  /** ALLOWANCE_LEASE_MS. */
  leaseTtlMs: number;
}

/** A lease as the caller asks for it. */
export interface LeaseInput {
  rateLimit: { bucket: string; subjectKey: string; limit: number; windowSeconds: number } | undefined;
  want: number;
  freeWant: number;
  freeTierAccountId: string | undefined;
  holder: string;
  keyCheck: KeyCheck | undefined;
  /** What the holder's previous lease did not use; `windowStart` undefined when the caller left it out. */
  giveBack: { windowStart: Date | undefined; hits: number; freeCalls: bigint; month: string } | undefined;
}

export interface LeaseGrant {
  granted: number;
  rateLimit: { allowed: boolean; limit: number; remaining: number; resetAt: Date; retryAfterSeconds: number };
  windowStart: Date;
  freeGranted: number;
  /** Present when the lease asked for free-tier calls. */
  freeTier: { allowed: boolean; callsThisMonth: number; limit: number; resetsAt: Date } | undefined;
  month: string;
  ttlMs: number;
}

/** Checks the request, reserves what the rules allow, and answers the grant or the refusal. */
export async function leaseAllowance(deps: AllowanceDeps, input: LeaseInput): Promise<LeaseGrant> {
  const rate = input.rateLimit;
  if (!rate) throw invalidField("rate_limit", "is required");
  const request = rateLimitRequest(deps.rateLimitDefaults, { ...rate, cost: 1 });
  if (!Number.isInteger(input.want) || input.want < 0 || input.want > MAX_LEASE)
    throw invalidField("want", `must be 0-${MAX_LEASE}`);
  if (input.freeWant < 0 || input.freeWant > MAX_LEASE) throw invalidField("free_want", `must be 0-${MAX_LEASE}`);
  if (input.freeTierAccountId !== undefined && !isUuid(input.freeTierAccountId))
    throw invalidField("free_tier_account_id", "must be an account UUID");
  if (!HOLDER_PATTERN.test(input.holder)) throw invalidField("holder", "must be 1-64 characters of A-Z, a-z, 0-9, _ and -");
  const check = input.keyCheck;
  if (check) {
    if (!isUuid(check.keyId)) throw invalidField("key_check.key_id", "must be an API key UUID");
    if (!isUuid(check.accountId)) throw invalidField("key_check.account_id", "must be an account UUID");
    if (!isUuid(check.organizationId)) throw invalidField("key_check.organization_id", "must be an organization UUID");
  }
  const back = input.giveBack;
  if (back) {
    if (!back.windowStart) throw invalidField("give_back.window_start", "is required");
    if (back.hits < 0 || back.freeCalls < 0n) throw invalidField("give_back", "hits and free_calls must not be negative");
    if (back.freeCalls > 0n && !/^\d{4}-\d{2}-01$/.test(back.month)) throw invalidField("give_back.month", "must be YYYY-MM-01");
  }
  // No caller takes more than a sixteenth of a limit at once (at least one), so a block held by one
  // replica leaves most of the limit to the others.
  const freeLimit = deps.freeTierLimit;
  const outcome = await deps.allowanceLeases.lease({
    rate: request,
    want: Math.min(input.want, blockCap(request.limit)),
    free:
      input.freeTierAccountId !== undefined
        ? { accountId: input.freeTierAccountId, want: Math.min(input.freeWant, blockCap(freeLimit)), limit: freeLimit }
        : undefined,
    key: check,
    holder: input.holder,
    ttlMs: deps.leaseTtlMs,
    giveBack: back && {
      windowStart: back.windowStart!,
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
  const refused = input.want > 0 && outcome.granted === 0;
  const retryAfterSeconds = refused ? Math.max(1, Math.ceil((outcome.windowEnd.getTime() - outcome.now.getTime()) / 1000)) : 0;
  return {
    granted: outcome.granted,
    rateLimit: {
      allowed: !refused,
      limit: request.limit,
      remaining: Math.max(0, request.limit - outcome.hits),
      resetAt: outcome.windowEnd,
      retryAfterSeconds,
    },
    windowStart: outcome.windowStart,
    freeGranted: outcome.freeGranted,
    freeTier:
      input.freeTierAccountId !== undefined
        ? { allowed: outcome.freeGranted > 0, callsThisMonth: outcome.freeCalls, limit: freeLimit, resetsAt: outcome.resetsAt }
        : undefined,
    month: outcome.month,
    ttlMs: outcome.ttlMs,
  };
}

/**
 * Why the lease's key check failed, worded as Authenticate would word it (looked up only on this rare
 * path): the key's owner left the organization the key is bound to, or the key is not valid.
 */
async function whyKeyRefused(deps: AllowanceDeps, check: KeyCheck): Promise<Error> {
  const key = await deps.keys.keyById(check.keyId);
  const live = key && !key.revokedAt && (!key.expiresAt || key.expiresAt > new Date());
  if (live && !(await deps.organizations.membership(key.organizationId, key.accountId))) return keyOrganizationLeft();
  return invalidCredentials();
}
