/** What the execution domain needs from the outside world; implemented in store/ and clients/ and adapters/. */

import type { Json, JsonObject } from "@toolport/kit/json-values";
import type { StoredMeta } from "./cap.js";
import type { Resumption } from "./continuation.js";
import type { ErrorClassName } from "./failure.js";
import type { Caller, Credential, ServiceType, ToolForCall } from "./model.js";
import type { InjectedCredential, RedactionReport } from "./redaction/redact.js";

export interface CatalogPort {
  /** NOT_FOUND tool_not_found for unknown, invisible and sunset tools. */
  resolveTool(toolId: string, caller: Caller): Promise<ToolForCall>;
  /**
   * The caller's (or its organization's) connected credential, references unresolved. None connected:
   * undefined, or `{broken}` when the only one is an OAuth connection the provider refused to refresh.
   */
  resolveCredential(tool: ToolForCall, caller: Caller): Promise<Credential | { broken: string } | undefined>;
  /**
   * A fresh access token for an OAuth connection: when the stored one expires within `minValidSeconds`, or
   * is `rejectedToken` (the upstream answered 401). Throws ExecutionFailure (auth, oauth_connection_broken)
   * when the provider refused the refresh.
   */
  refreshOAuth(
    connectionId: string,
    caller: Caller,
    options: {
      minValidSeconds: number;
      rejectedToken?: string;
      /**
       * The upstream answered 403 insufficient_scope naming these (step-up): the catalog records them on
       * the connection and this throws ExecutionFailure (auth, insufficient_scope) instead of refreshing.
       */
      insufficientScope?: string[];
      /**
       * The upstream refused even the refreshed token (401 again): the catalog breaks the connection with
       * this reason and this throws ExecutionFailure (auth, oauth_connection_broken).
       */
      brokenReason?: string;
    },
  ): Promise<Credential>;
}

export interface BillingPort {
  /** Reserves the price; throws insufficient_balance (402) or spend_limit_exceeded (403). */
  hold(req: { executionId: string; caller: Caller; amountCents: bigint; toolId: string }): Promise<void>;
  /**
   * Charges the hold: `captured`. When billing refuses for good because there is nothing to charge (the
   * hold was released or expired meanwhile, or is unknown), `released`. Throws when billing cannot answer.
   */
  capture(executionId: string): Promise<FinalSettlement>;
  /**
   * Returns the held money: `released` (also when it was released or expired already, or is unknown).
   * `captured` when billing refuses because the hold was charged already. Throws when billing cannot answer.
   */
  release(executionId: string, reason: string): Promise<FinalSettlement>;
}

export interface RateWindow {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAt: Date;
  retryAfterSeconds: number;
}

export interface FreeTierUsage {
  allowed: boolean;
  callsThisMonth: bigint;
  limit: bigint;
  resetsAt: Date;
}

/** A block of a caller's tool-call allowance (identity's LeaseCallAllowance), see domain/allowance.ts. */
export interface Lease {
  /** Rate-limit hits granted; 0 = the rate limit is reached (`rate` says until when). */
  granted: number;
  rate: RateWindow;
  windowStart: Date;
  /** Free-tier calls granted, and the month's state (when asked for and hits were granted). */
  freeGranted: number;
  freeTier?: FreeTierUsage;
  month: string;
  /** How long the block may be spent, from when it was asked for. */
  ttlMs: number;
  /** Shape of what a block gives back when it is not used up. */
  giveBack?: { windowStart: Date; hits: number; month: string; freeCalls: number };
}

export interface IdentityPort {
  /**
   * Reserves up to `want` rate-limit hits of the caller's window and, with `freeTier`, as many free-tier
   * calls of the account's month, after giving back `giveBack`. With `keyCheck`, the caller's API key
   * is re-checked first (not revoked, owner still a member of the organization); when that fails nothing
   * is reserved and it throws UNAUTHENTICATED `unauthenticated`.
   */
  leaseCallAllowance(req: {
    subject: string;
    limit: number;
    windowSeconds: number;
    want: number;
    freeTier?: { accountId: string; want: number };
    keyCheck?: { keyId: string; accountId: string; organizationId: string };
    holder: string;
    giveBack?: Lease["giveBack"];
  }): Promise<Lease>;
}

export interface RunOutput {
  value: Json;
}

/** Runs a tool on its upstream (REST, MCP or built-in). Throws ExecutionFailure. */
export interface Runner {
  /** The credential with env:// and vault:// references resolved. */
  resolveSecrets(credential: Credential): Promise<Credential>;
  /** `resumption`: the caller's answers to the questions an MCP tool asked (domain/continuation.ts). */
  run(tool: ToolForCall, input: JsonObject, credential: Credential | undefined, resumption?: Resumption): Promise<RunOutput>;
  /** Every secret the call will send upstream, for exact-value masking. */
  injected(credential: Credential | undefined): InjectedCredential[];
}

export type Settlement = "none" | "captured" | "released" | "capture_pending" | "release_pending";
export type FinalSettlement = "captured" | "released";

export interface ExecutionRecord {
  id: string;
  caller: Caller;
  tool: ToolForCall;
  status: "success" | "error";
  error: string | null;
  errorClass: ErrorClassName | null;
  errorType: string | null;
  /** The redacted (and storage-capped) result; undefined for failures. */
  result: Json | undefined;
  storedMeta: StoredMeta | null;
  redaction: RedactionReport | null;
  passthroughReason: string | null;
  costCents: bigint;
  settlement: Settlement;
  durationMs: number;
  executedAt: Date;
  /** The call counted against its account's free tier. */
  freeTier: boolean;
}

export interface StoredExecution {
  id: string;
  accountId: string;
  toolId: string;
  serviceId: string;
  serviceType: ServiceType;
  status: "success" | "error";
  error: string | null;
  errorClass: ErrorClassName | null;
  /** The stored result (undefined for failures). */
  result: Json | undefined;
  storedMeta: StoredMeta | null;
  redaction: RedactionReport | null;
  passthroughReason: string | null;
  costCents: bigint;
  executedAt: Date;
}

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; executionId: string }
  | { kind: "running"; executionId: string }
  | { kind: "reused" };

export interface ExecutionStore {
  /** Marks a confirm token used; false when it already was. */
  useConsent(jti: string, expiresAt: Date): Promise<boolean>;
  /**
   * Claims an idempotency key for this execution. Same key + same input: replay (done) or running (in
   * flight); different input: reused. Keys older than 24 hours, and in-flight claims older than
   * `leaseMs` (a crashed run), are taken over.
   */
  claimIdempotency(
    accountId: string,
    key: string,
    inputHash: string,
    executionId: string,
    leaseMs: number,
  ): Promise<IdempotencyClaim>;
  /** Forgets a claim whose call was refused before running (nothing to replay). */
  releaseIdempotency(accountId: string, key: string, executionId: string): Promise<void>;
  /** Stores an execution, its event, and marks its idempotency key done, in one transaction. */
  record(record: ExecutionRecord, idempotency?: { accountId: string; key: string }): Promise<void>;
  setSettlement(executionId: string, settlement: Settlement): Promise<void>;
  find(executionId: string): Promise<StoredExecution | undefined>;
}
