/**
 * Signing and verification of Toolport webhook deliveries.
 *
 * Every delivery carries `X-Svc-Signature: t=<unix seconds>,sha256=<hex>[,sha256=<hex>...]`. Each digest is
 * HMAC-SHA256, keyed with the UTF-8 bytes of a whole signing secret (`whsec_...`), over `<t>.<raw body>`.
 * During a secret rotation the old and the new secret both sign, so a header may hold several digests.
 * Only node:crypto is used.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Tolerance between the header's timestamp and now, in seconds, unless told otherwise. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Bytes in a SHA-256 digest; a digest of any other length never matches. */
const DIGEST_BYTES = 32;

/** Why a delivery was not accepted. */
export type VerificationFailureReason =
  | "missing_header"
  | "malformed_header"
  | "timestamp_out_of_tolerance"
  | "no_matching_signature";

/** What `verify` and `verifyOrThrow` take. */
export interface VerifyOptions {
  /** The signing secret, or several while the receiver rotates its own (any one may match). */
  secret: string | string[];
  /** The raw request body, exactly as received (not re-serialized JSON). */
  body: string | Buffer;
  /** The `X-Svc-Signature` header as Node gives it (`req.headers["x-svc-signature"]`). */
  header: string | string[] | undefined;
  /** Largest accepted distance between the header's timestamp and now, in seconds; default 300. */
  toleranceSeconds?: number;
  /** The current time in unix seconds, for tests; default the clock. */
  now?: number;
}

/** The outcome of `verify`: the signed timestamp, or why the delivery must be rejected. */
export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: VerificationFailureReason };

/** Thrown by `verifyOrThrow`; `reason` is the same as `verify` would return. */
export class WebhookVerificationError extends Error {
  readonly reason: VerificationFailureReason;

  constructor(reason: VerificationFailureReason) {
    super(`webhook signature verification failed: ${reason}`);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/**
 * The hex HMAC-SHA256 of `<timestamp>.<body>` keyed with `secret` (its UTF-8 bytes).
 * @throws RangeError when `timestamp` is not a non-negative integer (no receiver would accept it).
 */
export function sign(secret: string, body: string | Buffer, timestamp: number): string {
  assertTimestamp(timestamp);
  return digest(secret, body, timestamp).toString("hex");
}

/**
 * The `X-Svc-Signature` value `t=<timestamp>,sha256=<hex>[,sha256=<hex>...]`, one digest per secret, in order.
 * @throws RangeError when `secrets` is empty or `timestamp` is not a non-negative integer.
 */
export function signatureHeader(secrets: string[], body: string | Buffer, timestamp: number): string {
  assertTimestamp(timestamp);
  if (secrets.length === 0) throw new RangeError("signatureHeader needs at least one secret");
  return [`t=${timestamp}`, ...secrets.map((secret) => `sha256=${sign(secret, body, timestamp)}`)].join(",");
}

/**
 * Checks an `X-Svc-Signature` header against the raw body: succeeds when any of its digests matches any of
 * the secrets (compared in constant time) and its timestamp is within the tolerance of now. The signature
 * is checked before the timestamp, so `timestamp_out_of_tolerance` means an authentic but stale (or
 * future-dated) delivery, typically a replay or a skewed clock. Never throws: empty secrets are ignored,
 * and an invalid `toleranceSeconds` or `now` falls back to the default.
 */
export function verify(options: VerifyOptions): VerifyResult {
  const parsed = parseHeader(options.header);
  if (!parsed.ok) return parsed;
  const { timestamp, digests } = parsed;

  const secrets = (Array.isArray(options.secret) ? options.secret : [options.secret]).filter(
    (secret): secret is string => typeof secret === "string" && secret.length > 0,
  );
  // A parsed JSON object instead of the raw body cannot match; say so rather than throw.
  const body: unknown = options.body;
  if (typeof body !== "string" && !(body instanceof Uint8Array)) return { ok: false, reason: "no_matching_signature" };
  const expected = secrets.map((secret) => digest(secret, body, timestamp));
  const matched = digests.some((received) =>
    expected.some((candidate) => received.length === candidate.length && timingSafeEqual(received, candidate)),
  );
  if (!matched) return { ok: false, reason: "no_matching_signature" };

  const tolerance =
    typeof options.toleranceSeconds === "number" && options.toleranceSeconds >= 0
      ? options.toleranceSeconds
      : DEFAULT_TOLERANCE_SECONDS;
  const now = typeof options.now === "number" && Number.isFinite(options.now) ? options.now : Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: "timestamp_out_of_tolerance" };

  return { ok: true, timestamp };
}

/**
 * Like `verify`, for code that prefers exceptions.
 * @returns the signed timestamp (unix seconds).
 * @throws WebhookVerificationError with the reason the delivery must be rejected.
 */
export function verifyOrThrow(options: VerifyOptions): number {
  const result = verify(options);
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  return result.timestamp;
}

type ParsedHeader = { ok: true; timestamp: number; digests: Buffer[] } | { ok: false; reason: VerificationFailureReason };

/**
 * Splits the header into its timestamp and digests. Node joins a repeated header with ", " (or gives an
 * array), so the parts of every value are read together; they must agree on one `t`. Entries with other
 * keys are ignored (room for future schemes); a hex digest of the wrong length is kept and never matches.
 */
function parseHeader(header: unknown): ParsedHeader {
  const values = (Array.isArray(header) ? header : [header]).filter((v): v is string => typeof v === "string");
  const parts = values
    .flatMap((value) => value.split(","))
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (parts.length === 0) return { ok: false, reason: "missing_header" };

  let timestamp: number | undefined;
  const digests: Buffer[] = [];
  for (const part of parts) {
    const eq = part.indexOf("=");
    if (eq <= 0) return { ok: false, reason: "malformed_header" };
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (!/^\d{1,15}$/.test(value)) return { ok: false, reason: "malformed_header" };
      const t = Number(value);
      if (timestamp !== undefined && timestamp !== t) return { ok: false, reason: "malformed_header" };
      timestamp = t;
    } else if (key === "sha256") {
      if (!/^[0-9a-f]+$/i.test(value)) return { ok: false, reason: "malformed_header" };
      // Buffer.from drops a trailing odd nibble; such a digest has the wrong length either way.
      digests.push(value.length === DIGEST_BYTES * 2 ? Buffer.from(value, "hex") : Buffer.alloc(0));
    }
  }
  if (timestamp === undefined || digests.length === 0) return { ok: false, reason: "malformed_header" };
  return { ok: true, timestamp, digests };
}

function digest(secret: string, body: string | Uint8Array, timestamp: number): Buffer {
  const hmac = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.`, "utf8");
  if (typeof body === "string") hmac.update(body, "utf8");
  else hmac.update(body);
  return hmac.digest();
}

function assertTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be a non-negative integer of unix seconds, got ${timestamp}`);
  }
}
