/**
 * How every error leaves the gateway: an HTTP status from the gRPC code, and the dual body from
 * DESIGN.md so clients of either shape parse it:
 *   {"detail": <message or override>, "error": {"code": <snake_case>, "message": <message>, "details": {}}}
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ReceivedError, readError } from "@toolport/kit/errors";

/** gRPC code -> HTTP status, one row per code a service may return. */
const statusByCode: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 412,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** Reasons whose HTTP status is more specific than their gRPC code's (see proto/README.md). */
const statusByReason: Record<string, number> = {
  insufficient_balance: 402,
  idempotency_key_reused: 422,
  skill_too_large: 413,
};

export function httpStatusFor(code: Code, reason?: string): number {
  return (reason && statusByReason[reason]) || statusByCode[code] || 500;
}

export interface ErrorBody {
  detail: JsonValue;
  error: { code: string; message: string; details: JsonObject };
}

export function errorBody(code: string, message: string, details: JsonObject = {}, detail?: JsonValue): ErrorBody {
  return { detail: detail ?? message, error: { code, message, details } };
}

/** An error the gateway raises itself (bad JSON, unknown route, missing credentials). */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: JsonObject = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * A tool call that waits for a person's consent (execution's `confirmation_required`): nothing ran. The
 * error middleware answers it 409 with the error body and, where a client looks first, `confirm_token`
 * and `consent` at the top level.
 */
export class ConsentRequired extends Error {
  override name = "ConsentRequired";
  constructor(readonly received: ReceivedError) {
    super(received.message);
  }

  /** For a call's `.catch`: execution's confirmation_required becomes a ConsentRequired; anything else goes on as it is. */
  static rethrow(err: unknown): never {
    if (err instanceof ConnectError) {
      const received = readError(err);
      if (received.reason === "confirmation_required") throw new ConsentRequired(received);
    }
    throw err;
  }
}
