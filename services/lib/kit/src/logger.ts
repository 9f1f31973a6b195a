/**
 * Structured JSON logs (pino). Every line carries the process name and, inside a request, its
 * request id. Anything that looks like a credential is redacted by key name before it is written.
 */
import { type Logger, pino } from "pino";
import { currentRequestId } from "./context.js";

export type { Logger } from "pino";

/** Keys whose values never reach a log, wherever they appear in a logged object. */
const secretKeys = [
  "password",
  "api_key",
  "apiKey",
  "key",
  "secret",
  "token",
  "authorization",
  "svc-api-key",
  "cookie",
  "credential",
  "credentials",
  "private_key",
  "signing_secret",
];
const redactPaths = secretKeys.flatMap((k) => [`${k}`, `*.${k}`, `*.*.${k}`, `headers["${k}"]`, `req.headers["${k}"]`]);

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: redactPaths, censor: "[REDACTED]" },
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
  });
}
