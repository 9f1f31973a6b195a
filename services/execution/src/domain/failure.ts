/**
 * Why an execution that ran did not succeed, and who is to blame. The class feeds the reliability block
 * and the events (auth, caller, platform, upstream); the type is finer (timeout, http_502, invalid_json,
 * mcp_error, address_not_allowed, ...). The message is what the caller reads: never a secret, never a
 * stack.
 */
import type { InputAsk } from "./continuation.js";

export type ErrorClassName = "auth" | "caller" | "platform" | "upstream";

export class ExecutionFailure extends Error {
  override name = "ExecutionFailure";
  /** An MCP tool's questions (mcp_input_required), when the caller can answer them. */
  readonly ask: InputAsk | undefined;
  constructor(
    readonly errorClass: ErrorClassName,
    readonly errorType: string,
    message: string,
    options?: {
      cause?: unknown;
      /** An MCP tool's questions (mcp_input_required): the caller may answer them and call again. */
      ask?: InputAsk;
    },
  ) {
    super(message, options);
    this.ask = options?.ask;
  }
}

/** Blame for an upstream HTTP status that is not a success. */
export function classifyHttpStatus(status: number): ErrorClassName {
  if (status === 401 || status === 403 || status === 407) return "auth";
  if (status === 408 || status === 429) return "upstream";
  if (status >= 400 && status < 500) return "caller";
  return "upstream";
}

/**
 * An upstream refused the call's credential: 401 (the token is not, or no longer, good), or 403. A 403
 * with `error="insufficient_scope"` (RFC 6750 §3.1) names in `scopes` what the call needs (step-up).
 */
export class UpstreamAuthFailure extends ExecutionFailure {
  constructor(
    readonly status: 401 | 403,
    message: string,
    readonly scopes?: string[],
    options?: { cause?: unknown },
  ) {
    super("auth", scopes ? "insufficient_scope" : "mcp_auth", message, options);
  }
}
