/**
 * One tool call from request to outcome, in the order DESIGN.md and the issue fix:
 *   tool exists and is not past sunset (404) -> key allow-lists (403 tool_not_permitted) -> input valid
 *   against the tool's JSON Schema and `fields` parse (400) -> [idempotency: replay or wait] -> consent
 *   (409 confirmation_required) -> rate limit and free tier (429) -> price hold (402 / 403) -> credential
 *   -> run -> redact -> store with its event -> settle the hold -> project and cap what is returned.
 * A refusal throws a DomainError (nothing ran, nothing stored); an execution that ran and failed is an
 * outcome with success false, stored as an error and published as toolport.execution.failed.
 */
import { createHash } from "node:crypto";
import {
  Code,
  DomainError,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
  resourceExhausted,
} from "@toolport/kit/errors";
import { timeOrderedUuid } from "@toolport/kit/ids";
import type { InputValidator } from "@toolport/kit/input-validator";
import type { Step } from "@toolport/kit/json-path";
import { canonicalJson, type Json, type JsonObject } from "@toolport/kit/json-values";
import type { Logger } from "@toolport/kit/logger";
import { clampResponseChars } from "@toolport/kit/response-limits";
import { type ActivityStore, LimitRefusals, RECORDED_REFUSALS } from "./activity.js";
import type { AllowanceLeases } from "./allowance.js";
import { capResponse, DEFAULT_STORE_MAX_CHARS, type ResponseMeta, storageForm } from "./cap.js";
import { type ConsentProblem, type ConsentTokens, consentProblemMessage, needsConsent } from "./consent.js";
import {
  type ContinuationProblem,
  type Continuations,
  continuationProblemMessage,
  type InputAsk,
  type InputResponses,
  type Resumption,
} from "./continuation.js";
import { envelopeText, isMcpError, unwrapMcpEnvelope } from "./envelope.js";
import { type ErrorClassName, ExecutionFailure, UpstreamAuthFailure } from "./failure.js";
import { checkRootParameters } from "./misplaced-input.js";
import type { Caller, Credential, ToolForCall } from "./model.js";
import type { BillingPort, CatalogPort, ExecutionStore, Runner, RunOutput, Settlement } from "./ports.js";
import { type ProjectionReport, parseFields, project } from "./projection.js";
import { type InjectedCredential, type RedactionReport, redact } from "./redaction/redact.js";

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface CallRequest {
  toolId: string;
  input: JsonObject;
  fields: string[];
  maxResponseChars?: number;
  confirmToken?: string;
  idempotencyKey?: string;
  /** The caller's answers to the questions of an earlier mcp_input_required failure of this call. */
  inputResponses?: InputResponses;
  /** The parameters came at the root of the body, not in `tool_input` (misplaced-input.ts checks them). */
  parametersAtRoot?: boolean;
  /**
   * When the caller stops listening (its deadline), if it set one: a duplicate of an idempotent call that
   * is still running stops waiting for it in time to answer 412 idempotency_key_in_flight, not a deadline.
   */
  answerBy?: number;
}

export interface ConsentObject {
  tool_id: string;
  tool_name: string;
  parameters: JsonObject;
  confirm_token: string;
  expires_at: string;
}

export interface CallOutcome {
  toolId: string;
  success: boolean;
  result: Json;
  error: string | null;
  executionId?: string;
  consent?: ConsentObject;
  projection?: ProjectionReport;
  truncated: boolean;
  responseMeta: ResponseMeta | null;
  cursor?: string;
  redaction?: RedactionReport;
  truncationNote?: string;
  passthroughReason?: string;
  errorClass?: ErrorClassName;
  /** Why a call was refused (batch elements), or the questions of a tool that asks (mcp_input_required). */
  refusal?: { reason: string; message: string; details: JsonObject };
  replayed: boolean;
  costCents: bigint;
}

export interface ExecutorLimits {
  storeMaxChars: number;
  upgradeUrl: string;
  /** How long a claimed idempotency key may stay in flight before another attempt takes it over. */
  idempotencyLeaseMs: number;
  /** An OAuth access token expiring within this many seconds is refreshed before use. */
  oauthRefreshBeforeSeconds: number;
}

export interface ExecutorDeps {
  catalog: CatalogPort;
  billing: BillingPort;
  /** The callers' quota leases on identity's counters. */
  allowance: AllowanceLeases;
  store: ExecutionStore;
  runner: Runner;
  validator: InputValidator;
  consent: ConsentTokens;
  continuations: Continuations;
  limits: ExecutorLimits;
  log: Logger;
  /** Where refused calls are recorded for the call log (absent: not recorded). */
  activity?: Pick<ActivityStore, "recordRefusal">;
}

/** How often a duplicate of an idempotent call looks again whether the first has finished. */
const IN_FLIGHT_POLL_MS = 50;
/** Time kept before the caller's deadline for the in-flight refusal to reach it: 2 s, or a quarter of a short deadline. */
const ANSWER_MARGIN_MS = 2_000;

/**
 * Until when a duplicate waits for the attempt holding its idempotency key: until that claim may be taken
 * over (its lease, plus a little), but never past what the caller waits for. Without the second bound a
 * duplicate of a call whose process died waited out the 60 s lease behind a 30 s RPC deadline, and its
 * caller got a deadline (504) or nothing instead of the retryable 412.
 */
export function waitDeadline(now: number, leaseMs: number, answerBy: number | undefined): number {
  const lease = now + leaseMs + 5_000;
  if (answerBy === undefined) return lease;
  const margin = Math.min(ANSWER_MARGIN_MS, Math.max(0, answerBy - now) / 4);
  return Math.min(lease, answerBy - margin);
}

/** Free-tier accounts count calls of free, credential-free tools against their monthly allowance. */
function countsFreeTier(tool: ToolForCall, caller: Caller): boolean {
  return caller.tier === "free" && !tool.isPaid && tool.securitySchemes.length === 0;
}

export class Executor {
  /** Limit refusals are recorded once a minute per caller (activity.ts LIMIT_REFUSALS). */
  private readonly limitRefusals = new LimitRefusals();

  /** Told when a settlement is left pending here (the settlement sweeper then retries within its period). */
  onSettlementPending?: () => void;

  constructor(private readonly deps: ExecutorDeps) {}

  /** A single call: refusals throw. */
  async call(caller: Caller, req: CallRequest): Promise<CallOutcome> {
    const { catalog, store, validator, log } = this.deps;
    if (caller.callRefusal) throw caller.callRefusal;
    const tool = await catalog.resolveTool(req.toolId, caller);
    // A deactivated tool is refused like an unknown one (the catalog still describes it to its publisher).
    if (!tool?.active) throw notFound("tool_not_found", `tool ${req.toolId} not found`, { details: { tool_id: req.toolId } });
    try {
      checkPermission(tool, caller);
    } catch (err) {
      throw await this.refused(tool, caller, err);
    }
    const steps = parseFields(req.fields);
    if (req.parametersAtRoot) checkRootParameters(tool, req.input);
    validator.check(`${tool.id}:${tool.revision}`, tool.inputSchema, req.input);
    const resumption = req.inputResponses ? this.resumption(tool, caller, req, req.inputResponses) : undefined;
    const maxChars = clampResponseChars(req.maxResponseChars);
    const executionId = timeOrderedUuid();

    const idem =
      req.idempotencyKey !== undefined
        ? { accountId: caller.accountId, key: checkIdempotencyKey(req.idempotencyKey) }
        : undefined;
    if (idem) {
      const replayId = await this.claim(idem, tool, req, executionId);
      if (replayId) {
        log.info({ execution_id: replayId, tool_id: tool.id }, "idempotent replay");
        return this.replay(replayId, tool, req, steps, maxChars);
      }
    }

    let held = false;
    try {
      // Used once, and only by a call that goes on to run (an idempotent replay above does not use it).
      if (resumption) await this.useContinuation(tool, resumption);
      // A valid continuation was issued to this caller for this tool and input after the call passed its
      // consent check: answering the tool's question is that call going on, not a new one.
      if (!resumption) await this.checkConsent(tool, caller, req);
      await this.checkAllowance(tool, caller);
      if (tool.isPaid && tool.priceCents > 0n) {
        await this.deps.billing.hold({ executionId, caller, amountCents: tool.priceCents, toolId: tool.id });
        held = true;
      }
    } catch (err) {
      if (idem) await store.releaseIdempotency(idem.accountId, idem.key, executionId).catch(() => {});
      throw await this.refused(tool, caller, err);
    }
    return this.execute(executionId, tool, caller, req, steps, maxChars, held, idem, resumption);
  }

  /**
   * Records a refusal the call log shows (RECORDED_REFUSALS) and gives the error back to be thrown. The
   * record is awaited, so it is durable before the caller hears the refusal, but it never changes the
   * answer: a failed insert is logged and the caller still gets the refusal.
   */
  private async refused(tool: ToolForCall, caller: Caller, err: unknown): Promise<unknown> {
    const domain = asDomainError(err);
    const activity = this.deps.activity;
    if (!activity || !domain || !RECORDED_REFUSALS.has(domain.reason)) return err;
    if (!this.limitRefusals.shouldRecord(domain.reason, caller.keyId ?? caller.accountId)) return err;
    try {
      await activity.recordRefusal({
        id: timeOrderedUuid(),
        at: new Date(),
        accountId: caller.accountId,
        organizationId: caller.organizationId,
        keyId: caller.keyId,
        toolId: tool.id,
        toolName: tool.name,
        serviceId: tool.serviceId,
        serviceName: tool.serviceName,
        serviceType: tool.serviceType,
        reason: domain.reason,
        message: domain.message,
      });
    } catch (recordErr) {
      this.deps.log.warn({ err: recordErr, tool_id: tool.id, reason: domain.reason }, "recording a refused call failed");
    }
    return err;
  }

  /**
   * The continuation of `input_responses`, checked before anything runs: signature, expiry, caller, tool,
   * input and the answers' keys (400 invalid_input_responses). useContinuation then uses it once.
   */
  private resumption(
    tool: ToolForCall,
    caller: Caller,
    req: CallRequest,
    responses: InputResponses,
  ): Resumption & { jti: string; expiresAt: Date } {
    const check = this.deps.continuations.verify(responses, continuationSubject(tool, caller, req));
    if (!check.ok) throw continuationRefused(tool, check.problem);
    return { resume: check.resume, answers: responses.answers, jti: check.jti, expiresAt: check.expiresAt };
  }

  /** Records the continuation's id: a second use (a replayed answer) is refused and runs nothing. */
  private async useContinuation(tool: ToolForCall, resumption: { jti: string; expiresAt: Date }): Promise<void> {
    if (!(await this.deps.store.useConsent(resumption.jti, resumption.expiresAt))) throw continuationRefused(tool, "used");
  }

  /** The details of an mcp_input_required failure: the questions and the continuation to answer them with. */
  private askDetails(tool: ToolForCall, caller: Caller, req: CallRequest, ask: InputAsk): JsonObject {
    const { token, expiresAt } = this.deps.continuations.issue(continuationSubject(tool, caller, req), ask.resume);
    return {
      tool_id: tool.id,
      questions: ask.questions as unknown as Json,
      continuation: token,
      expires_at: expiresAt.toISOString(),
    };
  }

  /**
   * A batch: the elements run concurrently and independently, in input order. The one refusal that is
   * not the element's own is the caller's credentials (the API key revoked, or its owner removed from
   * the organization, since the gateway resolved the principal): then the whole batch is refused
   * (401), once every element has settled. Elements that ran before the refusal stay recorded.
   */
  async batch(caller: Caller, reqs: CallRequest[]): Promise<CallOutcome[]> {
    // A caller who may not call at all (a viewer) is refused as a whole, not element by element.
    if (caller.callRefusal) throw caller.callRefusal;
    const settled = await Promise.allSettled(reqs.map((r) => this.callElement(caller, r)));
    const refused = settled.find((s) => s.status === "rejected");
    if (refused) throw refused.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<CallOutcome>).value);
  }

  /**
   * A batch element: refusals become the element's error (and consent object). Only an
   * UNAUTHENTICATED refusal (the caller's key, see batch) and nothing else throws.
   */
  async callElement(caller: Caller, req: CallRequest): Promise<CallOutcome> {
    try {
      return await this.call(caller, req);
    } catch (err) {
      const domain = asDomainError(err);
      // The caller's own refusals, found by the allowance's re-check: its key, or its role since demoted.
      if (domain?.code === Code.Unauthenticated || domain?.reason === "insufficient_role") throw domain;
      if (!domain) {
        this.deps.log.error({ err, tool_id: req.toolId }, "batch element failed");
        return refusalOutcome(req.toolId, { reason: "internal_error", message: "internal error", details: {} });
      }
      const outcome = refusalOutcome((domain.details.tool_id as string | undefined) ?? req.toolId, {
        reason: domain.reason,
        message: domain.message,
        details: domain.details,
      });
      if (domain.reason === "confirmation_required") outcome.consent = domain.details.consent as unknown as ConsentObject;
      return outcome;
    }
  }

  private async claim(
    idem: { accountId: string; key: string },
    tool: ToolForCall,
    req: CallRequest,
    executionId: string,
  ): Promise<string | undefined> {
    // Answers make another call: the same key with them (or other answers) is a reused key, not a replay.
    const answered = req.inputResponses ? { input_responses: req.inputResponses as unknown as Json } : {};
    const inputHash = createHash("sha256")
      .update(canonicalJson({ tool_id: tool.id, tool_input: req.input, ...answered }))
      .digest("hex");
    const deadline = waitDeadline(Date.now(), this.deps.limits.idempotencyLeaseMs, req.answerBy);
    for (;;) {
      const claim = await this.deps.store.claimIdempotency(
        idem.accountId,
        idem.key,
        inputHash,
        executionId,
        this.deps.limits.idempotencyLeaseMs,
      );
      if (claim.kind === "claimed") return undefined;
      if (claim.kind === "replay") return claim.executionId;
      if (claim.kind === "reused") {
        throw invalidArgument("idempotency_key_reused", "this Idempotency-Key was already used with different input", {
          details: { idempotency_key: idem.key },
        });
      }
      // Another attempt with this key is running: wait for its outcome.
      if (Date.now() + IN_FLIGHT_POLL_MS > deadline) {
        throw failedPrecondition("idempotency_key_in_flight", "a call with this Idempotency-Key is still running; retry later", {
          details: { idempotency_key: idem.key, retry_after_seconds: 1 },
        });
      }
      await new Promise((r) => setTimeout(r, IN_FLIGHT_POLL_MS));
    }
  }

  private async checkConsent(tool: ToolForCall, caller: Caller, req: CallRequest): Promise<void> {
    if (
      !needsConsent(
        { serviceType: tool.serviceType, method: tool.method, sideEffecting: tool.sideEffecting },
        caller.requireConfirmation,
      )
    )
      return;
    const subject = { subject: caller.keyId ?? caller.accountId, toolId: tool.id, parameters: req.input };
    let problem: ConsentProblem | "used" | undefined;
    if (req.confirmToken) {
      const check = this.deps.consent.verify(req.confirmToken, subject);
      if (check.ok) {
        if (await this.deps.store.useConsent(check.jti, check.expiresAt)) return;
        problem = "used";
      } else problem = check.problem;
    }
    const { token, expiresAt } = this.deps.consent.issue(subject);
    const consent: ConsentObject = {
      tool_id: tool.id,
      tool_name: tool.name,
      parameters: req.input,
      confirm_token: token,
      expires_at: expiresAt.toISOString(),
    };
    const why = problem ? `${consentProblemMessage[problem]}; ` : "";
    throw new DomainError(
      Code.Aborted,
      "confirmation_required",
      `${why}${tool.name} writes, sends, spends or deletes: repeat the call with confirm_token to run it`,
      {
        details: {
          tool_id: tool.id,
          consent: consent as unknown as JsonObject,
          confirm_token: token,
          ...(problem ? { token_problem: problem } : {}),
        },
      },
    );
  }

  /**
   * Rate limit, then free tier (free-tier accounts count calls of free, credential-free tools, 5000 a
   * month, kept by identity), spent from the caller's quota lease (domain/allowance.ts): identity is
   * asked only when the lease is used up or has ended. The lease re-checks an API key when it is taken,
   * and a revoke drops it everywhere before it answers, so a revoked key (or one whose owner left the
   * organization) is refused here (401) although the gateway caches principals for tool calls.
   */
  private async checkAllowance(tool: ToolForCall, caller: Caller): Promise<void> {
    const free = countsFreeTier(tool, caller);
    const allowance = await this.deps.allowance.take(caller, free);
    if (allowance.ok) return;
    if ("rate" in allowance) {
      const window = allowance.rate;
      const message = `rate limit of ${window.limit} tool calls per minute reached; retry in ${window.retryAfterSeconds} s`;
      throw resourceExhausted("rate_limited", message, {
        details: { retry_after_seconds: window.retryAfterSeconds, limit: window.limit },
        detail: {
          message,
          usage: {
            limit: window.limit,
            remaining: window.remaining,
            window_seconds: 60,
            resets_at: window.resetAt.toISOString(),
          },
          upgrade_url: this.deps.limits.upgradeUrl,
        },
      });
    }
    const usage = allowance.freeTier;
    const message = `free tier usage limit of ${usage.limit} calls this month reached`;
    throw resourceExhausted("usage_limit_reached", message, {
      details: {
        calls_this_month: Number(usage.callsThisMonth),
        limit: Number(usage.limit),
        resets_at: usage.resetsAt.toISOString(),
      },
      detail: {
        message,
        usage: {
          calls_this_month: Number(usage.callsThisMonth),
          limit: Number(usage.limit),
          resets_at: usage.resetsAt.toISOString(),
        },
        upgrade_url: this.deps.limits.upgradeUrl,
      },
    });
  }

  private async execute(
    executionId: string,
    tool: ToolForCall,
    caller: Caller,
    req: CallRequest,
    steps: Step[][],
    maxChars: number,
    held: boolean,
    idem: { accountId: string; key: string } | undefined,
    resumption?: Resumption,
  ): Promise<CallOutcome> {
    const { runner, store, log } = this.deps;
    const executedAt = new Date();
    const started = performance.now();
    let injected: InjectedCredential[] = [];
    let stored: Json | undefined;
    let storedMeta = null;
    let report: RedactionReport | null = null;
    let failure: ExecutionFailure | undefined;
    try {
      const credential = await this.credentialFor(tool, caller);
      injected = runner.injected(credential);
      let output: RunOutput;
      try {
        output = await runner.run(tool, req.input, credential, resumption);
      } catch (err) {
        // Step-up: the upstream wants a wider scope than the connection's grant; the catalog records it and
        // says how to grant it (connect again), which is this call's error.
        if (credential?.kind === "oauth" && err instanceof UpstreamAuthFailure && err.scopes) {
          await this.deps.catalog.refreshOAuth(credential.connectionId, caller, {
            minValidSeconds: this.deps.limits.oauthRefreshBeforeSeconds,
            insufficientScope: err.scopes,
          });
          throw err;
        }
        // A provider may end an access token before its expiry (revoked, keys rotated): one refresh and one
        // retry. A 401 means the upstream did not act on the request, so sending it again is safe.
        const unauthorized =
          err instanceof ExecutionFailure &&
          (err.errorType === "http_401" || (err instanceof UpstreamAuthFailure && err.status === 401));
        if (credential?.kind !== "oauth" || !unauthorized) throw err;
        const fresh = await this.deps.catalog.refreshOAuth(credential.connectionId, caller, {
          minValidSeconds: this.deps.limits.oauthRefreshBeforeSeconds,
          rejectedToken: credential.token,
        });
        injected = [...injected, ...runner.injected(fresh)];
        try {
          output = await runner.run(tool, req.input, fresh, resumption);
        } catch (again) {
          // An MCP server that refuses even the fresh token will not take this grant: the connection breaks
          // (readiness asks to connect again) rather than every call refreshing in vain.
          if (!(again instanceof UpstreamAuthFailure) || again.status !== 401 || fresh.kind !== "oauth") throw again;
          await this.deps.catalog.refreshOAuth(fresh.connectionId, caller, {
            minValidSeconds: this.deps.limits.oauthRefreshBeforeSeconds,
            brokenReason: "the MCP server refused a freshly refreshed token (HTTP 401); connect again",
          });
          throw again;
        }
      }
      if (tool.serviceType === "mcp_server" && isMcpError(output.value)) {
        const text = envelopeText(output.value) ?? "the MCP tool reported an error";
        throw new ExecutionFailure("upstream", "mcp_tool_error", text.slice(0, 2000));
      }
      const redacted = await redact(output.value, { injected, passthrough: tool.passthroughReason !== undefined });
      report = redacted.report.count > 0 ? redacted.report : null;
      const form = storageForm(redacted.value, this.deps.limits.storeMaxChars || DEFAULT_STORE_MAX_CHARS);
      stored = form.value;
      storedMeta = form.meta;
    } catch (err) {
      failure =
        err instanceof ExecutionFailure
          ? err
          : new ExecutionFailure("platform", "internal", "the call failed inside Toolport", { cause: err });
      if (failure.errorClass === "platform")
        log.error({ err, tool_id: tool.id, execution_id: executionId }, "execution failed on our side");
    }
    const durationMs = Math.round(performance.now() - started);
    const success = failure === undefined;
    const error = failure ? await safeMessage(failure.message, injected) : null;
    const settlement: Settlement = held ? (success ? "capture_pending" : "release_pending") : "none";
    await store.record(
      {
        id: executionId,
        caller,
        tool,
        status: success ? "success" : "error",
        error,
        errorClass: failure?.errorClass ?? null,
        errorType: failure?.errorType ?? null,
        result: stored,
        storedMeta,
        redaction: report,
        passthroughReason: tool.passthroughReason ?? null,
        costCents: success && held ? tool.priceCents : 0n,
        settlement,
        durationMs,
        executedAt,
        freeTier: countsFreeTier(tool, caller),
      },
      idem,
    );
    if (held) await this.settle(executionId, success);
    if (!success) {
      const ask = failure!.ask;
      return {
        toolId: tool.id,
        success: false,
        result: null,
        error,
        executionId,
        truncated: false,
        responseMeta: null,
        errorClass: failure!.errorClass,
        ...(ask
          ? { refusal: { reason: failure!.errorType, message: error!, details: this.askDetails(tool, caller, req, ask) } }
          : {}),
        replayed: false,
        costCents: 0n,
      };
    }
    return this.render(executionId, tool, stored!, report, req, steps, maxChars, false, success && held ? tool.priceCents : 0n);
  }

  /**
   * The credential a call sends: none for a tool that needs none; secret references resolved; an OAuth
   * access token refreshed first when it expires within the refresh margin (single-flight per connection).
   */
  private async credentialFor(tool: ToolForCall, caller: Caller): Promise<Credential | undefined> {
    if (tool.securitySchemes.length === 0) return undefined;
    const found = await this.deps.catalog.resolveCredential(tool, caller);
    if (!found) {
      throw new ExecutionFailure(
        "auth",
        "missing_credential",
        `no credential is connected for ${tool.serviceName}; connect one before calling this tool`,
      );
    }
    if ("broken" in found) {
      throw new ExecutionFailure(
        "auth",
        "oauth_connection_broken",
        `the OAuth connection for ${tool.serviceName} is broken (${found.broken}); reconnect at the service's configuration_url`,
      );
    }
    if (found.kind !== "oauth") return this.deps.runner.resolveSecrets(found);
    const margin = this.deps.limits.oauthRefreshBeforeSeconds;
    if (found.expiresAt && found.expiresAt.getTime() - Date.now() < margin * 1000) {
      return this.deps.catalog.refreshOAuth(found.connectionId, caller, { minValidSeconds: margin });
    }
    return found;
  }

  /**
   * Captures or releases a hold; when billing is unreachable the row stays *_pending for the sweeper.
   * When billing refuses for good (a capture of a hold that expired while billing was unreachable), the
   * row records what billing did, so the sweeper stops retrying it and it cannot block newer ones.
   */
  async settle(executionId: string, success: boolean): Promise<void> {
    try {
      const settled = success
        ? await this.deps.billing.capture(executionId)
        : await this.deps.billing.release(executionId, "execution_failed");
      if (settled !== (success ? "captured" : "released")) {
        this.deps.log.error(
          { execution_id: executionId, settlement: settled },
          success ? "billing had released the hold: the execution was not charged" : "billing had captured the hold already",
        );
      }
      await this.deps.store.setSettlement(executionId, settled);
    } catch (err) {
      this.deps.log.warn({ err, execution_id: executionId }, "settling the price hold failed; the sweeper will retry");
      this.onSettlementPending?.();
    }
  }

  private async replay(
    executionId: string,
    tool: ToolForCall,
    req: CallRequest,
    steps: Step[][],
    maxChars: number,
  ): Promise<CallOutcome> {
    const found = await this.deps.store.find(executionId);
    if (!found) throw notFound("execution_not_found", "the execution this Idempotency-Key recorded is gone");
    if (found.status === "error") {
      return {
        toolId: found.toolId,
        success: false,
        result: null,
        error: found.error,
        executionId,
        truncated: false,
        responseMeta: null,
        errorClass: found.errorClass ?? undefined,
        replayed: true,
        costCents: 0n,
      };
    }
    return this.render(executionId, tool, found.result ?? null, found.redaction, req, steps, maxChars, true, found.costCents);
  }

  private render(
    executionId: string,
    tool: ToolForCall,
    stored: Json,
    report: RedactionReport | null,
    req: CallRequest,
    steps: Step[][],
    maxChars: number,
    replayed: boolean,
    costCents: bigint,
  ): CallOutcome {
    const payload = tool.serviceType === "mcp_server" ? unwrapMcpEnvelope(stored) : stored;
    let value = payload;
    let projection: ProjectionReport | undefined;
    if (req.fields.length > 0) {
      const projected = project(payload, req.fields, steps);
      value = projected.value;
      projection = projected.report;
    }
    const capped = capResponse(value, maxChars, payload);
    return {
      toolId: tool.id,
      success: true,
      result: capped.value,
      error: null,
      executionId,
      projection,
      truncated: capped.truncated,
      responseMeta: capped.meta,
      cursor: capped.cursor,
      redaction: report ?? undefined,
      truncationNote: capped.note,
      passthroughReason: tool.passthroughReason,
      replayed,
      costCents,
    };
  }
}

/**
 * The key's allow-lists (docs/permissions.md): both must match. The tool must be in allowed_tools (or
 * that list absent) AND its service in allowed_services (or that list absent).
 */
export function permits(caller: Pick<Caller, "allowedServices" | "allowedTools">, toolId: string, serviceId: string): boolean {
  const has = (list: string[], id: string) => list.some((x) => x.toLowerCase() === id.toLowerCase());
  return (
    (!caller.allowedTools || has(caller.allowedTools, toolId)) &&
    (!caller.allowedServices || has(caller.allowedServices, serviceId))
  );
}

export function checkPermission(tool: ToolForCall, caller: Caller): void {
  if (permits(caller, tool.id, tool.serviceId)) return;
  throw permissionDenied("tool_not_permitted", `this API key is not permitted to call ${tool.name}`, {
    details: { tool_id: tool.id, service_id: tool.serviceId },
  });
}

function checkIdempotencyKey(key: string): string {
  const trimmed = key.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidArgument("invalid_idempotency_key", `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, {
      details: { field: "idempotency_key" },
    });
  }
  return trimmed;
}

/** Who a continuation is for: the key (else the account) in its organization, the tool and the exact input. */
function continuationSubject(tool: ToolForCall, caller: Caller, req: CallRequest) {
  return { subject: `${caller.keyId ?? caller.accountId}@${caller.organizationId}`, toolId: tool.id, input: req.input };
}

function continuationRefused(tool: ToolForCall, problem: ContinuationProblem | "used"): DomainError {
  return invalidArgument("invalid_input_responses", `${continuationProblemMessage[problem]}; nothing ran`, {
    details: { tool_id: tool.id, field: "input_responses.continuation", problem },
  });
}

export function refusalOutcome(toolId: string, refusal: { reason: string; message: string; details: JsonObject }): CallOutcome {
  return {
    toolId,
    success: false,
    result: null,
    error: refusal.message,
    truncated: false,
    responseMeta: null,
    refusal,
    replayed: false,
    costCents: 0n,
  };
}

function asDomainError(err: unknown): DomainError | undefined {
  return err instanceof Error && err.name === "DomainError" ? (err as DomainError) : undefined;
}

/** A failure message with every secret masked (upstream error bodies can echo credentials). */
async function safeMessage(message: string, injected: InjectedCredential[]): Promise<string> {
  const { value } = await redact(message, { injected });
  return value as string;
}
