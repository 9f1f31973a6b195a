/**
 * One error type for expected failures. A DomainError carries a stable snake_case `reason` (the
 * HTTP body's `error.code`), a message a caller can act on, and optional details. At the gRPC
 * boundary it becomes a ConnectError with an ErrorDetail attached; the gateway turns that into an
 * HTTP status and the dual error body. Anything else becomes "internal error", its cause logged only.
 */
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import { fromJsonBytes, jsonBytes, objectFromJsonBytes } from "./json-bytes.js";

export { Code, ConnectError };

export interface DomainErrorOptions {
  /** Machine-readable facts for the body's `error.details` (ids, limits, balances). */
  details?: JsonObject;
  /** Replaces the message as the body's `detail` field, e.g. the 429 usage body. */
  detail?: JsonValue;
  cause?: unknown;
}

export class DomainError extends Error {
  override name = "DomainError";
  readonly details: JsonObject;
  readonly detail: JsonValue | undefined;

  constructor(
    readonly code: Code,
    readonly reason: string,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.details = options.details ?? {};
    this.detail = options.detail;
  }
}

// Constructors for the common cases, named for the HTTP outcome a reader expects.
export const invalidArgument = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.InvalidArgument, reason, message, o);
export const notFound = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.NotFound, reason, message, o);
export const permissionDenied = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.PermissionDenied, reason, message, o);
export const unauthenticated = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.Unauthenticated, reason, message, o);
export const conflict = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.AlreadyExists, reason, message, o);
export const failedPrecondition = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.FailedPrecondition, reason, message, o);
export const resourceExhausted = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.ResourceExhausted, reason, message, o);
export const unavailable = (reason: string, message: string, o?: DomainErrorOptions) =>
  new DomainError(Code.Unavailable, reason, message, o);

/** The ConnectError a DomainError travels as between processes. */
export function domainToConnect(err: DomainError): ConnectError {
  const detail = create(ErrorDetailSchema, {
    reason: err.reason,
    detailsJson: jsonBytes(err.details),
    detailJson: jsonBytes(err.detail),
  });
  return new ConnectError(err.message, err.code, undefined, [{ desc: ErrorDetailSchema, value: detail }], err);
}

/**
 * What a service returns for any thrown value: domain errors and ConnectErrors pass through
 * (translated), everything else is hidden behind "internal error". The caller logs the original.
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof DomainError) return domainToConnect(err);
  if (err instanceof ConnectError) return err;
  if (dependencyUnavailable(err)) {
    return domainToConnect(unavailable("service_unavailable", "temporarily unavailable; try again", { cause: err }));
  }
  return new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

/** SQLSTATEs of a database that is going away or not there: connection exceptions, shutdowns, starting up. */
const DATABASE_GONE = /^(08...|57P0[123])$/;
const DATABASE_GONE_MESSAGES =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/;

/**
 * Whether an error is the database (or another dependency) being unreachable: restarting, down, the
 * connection refused or cut. The caller may retry, so it is a 503, not a 500.
 */
function dependencyUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === "string" && (DATABASE_GONE.test(e.code) || e.code === "ECONNREFUSED" || e.code === "ECONNRESET")) {
    return true;
  }
  return typeof e?.message === "string" && DATABASE_GONE_MESSAGES.test(e.message);
}

export interface ReceivedError {
  code: Code;
  reason: string;
  message: string;
  details: JsonObject;
  detail: JsonValue | undefined;
}

/** Reads the error detail another service attached, with a default reason per code when absent. */
export function readError(err: ConnectError): ReceivedError {
  const [found] = err.findDetails(ErrorDetailSchema);
  // A peer that went away mid-call arrives as Unavailable through the kit's grpc-js client ("Connection
  // dropped"), but as Aborted (ECONNRESET, a destroyed stream) through connect-node's, and a reset HTTP/2
  // stream as Canceled through both: without a service's own detail, that is the service being
  // unavailable, not a conflict or a caller that gave up.
  const cut = !found && (err.code === Code.Aborted || err.code === Code.Canceled);
  const code = cut ? Code.Unavailable : err.code;
  return {
    code,
    reason: found?.reason || defaultReason(code),
    message: err.rawMessage,
    details: objectFromJsonBytes(found?.detailsJson),
    detail: fromJsonBytes(found?.detailJson),
  };
}

export function defaultReason(code: Code): string {
  switch (code) {
    case Code.InvalidArgument:
      return "invalid_request";
    case Code.Unauthenticated:
      return "unauthenticated";
    case Code.PermissionDenied:
      return "forbidden";
    case Code.NotFound:
      return "not_found";
    case Code.AlreadyExists:
    case Code.Aborted:
      return "conflict";
    case Code.FailedPrecondition:
      return "failed_precondition";
    case Code.ResourceExhausted:
      return "rate_limited";
    case Code.Unimplemented:
      return "not_implemented";
    case Code.Unavailable:
      return "service_unavailable";
    case Code.DeadlineExceeded:
      return "timeout";
    default:
      return "internal_error";
  }
}
