/**
 * Structured JSON logs (pino). Every line carries the process name and, inside a request, its
 * request id. Anything that looks like a credential is redacted by key name before it is written.
 *
 * The redaction is a walk of the logged object, not pino's `redact` paths: those need a wildcard path per
 * key name and depth (`*.token`, `*.*.token`), and pino runs every wildcard path on every key of every
 * line, about 25 µs for a four-field access line (test/bench/log-line.mjs). The walk looks each key up
 * in one set, descends only into objects, and copies only what it censors, so a line without secrets is
 * written as given.
 */
import { type DestinationStream, type Logger, pino } from "pino";
import { currentRequestId } from "./context.js";

export type { Logger } from "pino";

/** Keys whose values never reach a log, wherever they appear in a logged object (down to REDACT_DEPTH). */
const secretKeys = new Set([
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
]);
/**
 * How many levels of keys are looked at: the line's own keys (1), theirs (2: `headers.authorization`)
 * and theirs (3: `req.headers.cookie`, `err.config.token`); array indices count as a level.
 */
const REDACT_DEPTH = 3;
const CENSOR = "[REDACTED]";

/**
 * `value` with every secret key's value within `depth` levels replaced by CENSOR: the same object when
 * there is none, otherwise a copy of each object on the way to one (the caller's objects are never
 * changed). Binary data (Buffers, typed arrays) is not walked.
 */
function redacted(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = depth > 1 ? redacted(item, depth - 1) : item;
      if (next !== item) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const object = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    const next = secretKeys.has(key) ? (item === undefined ? item : CENSOR) : depth > 1 ? redacted(item, depth - 1) : item;
    if (next !== item) {
      copy ??= Object.assign(Object.create(Object.getPrototypeOf(object)), object) as Record<string, unknown>;
      copy[key] = next;
    }
  }
  return copy ?? object;
}

/**
 * The line's own keys, except `err`: its serializer runs after this formatter and reads the Error's
 * message and stack, which a copy would lose, so `err` is redacted after serializing (below).
 */
function redactLine(line: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in line) {
    if (key === "err" || !Object.hasOwn(line, key)) continue;
    const item = line[key];
    const next = secretKeys.has(key) ? (item === undefined ? item : CENSOR) : redacted(item, REDACT_DEPTH - 1);
    if (next !== item) {
      copy ??= { ...line };
      copy[key] = next;
    }
  }
  return copy ?? line;
}

const serializeErr = pino.stdSerializers.err;

/** The process's stdout writer, made by the first logger that needs it and shared by the rest. */
let stdoutWriter: DestinationStream | undefined;

/**
 * Where a logger without a destination writes: stdout, each line with one write(2) on the calling thread
 * before the log call returns, as Node writes to a pipe or a file on Linux itself. pino's default writer
 * (sonic-boom with `sync: false`) hands every line to libuv's thread pool instead and is woken when it is
 * written: at one request at a time that was a pool thread woken and an event-loop wake-up per access line,
 * about 5% of the one-process stack's CPU per call (row (c1x) of test/bench/execution-gateway.mjs), and a
 * line waited behind whatever else held the pool's four threads (DNS lookups, file reads), or was lost
 * in a crash while it waited. When something replaced `process.stdout.write` (a test runner capturing
 * output), lines go through it, as pino does then.
 */
function stdoutDestination(): DestinationStream {
  if (process.stdout.write !== Object.getPrototypeOf(process.stdout).write) return process.stdout;
  stdoutWriter ??= pino.destination({ dest: process.stdout.fd ?? 1, sync: true });
  return stdoutWriter;
}

/**
 * A logger named `name` writing JSON lines to stdout (stdoutDestination), or to `destination` (tests,
 * test/bench/log-line.mjs).
 */
export function createLogger(name: string, level = process.env.LOG_LEVEL ?? "info", destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: (err: Error) => redacted(serializeErr(err), REDACT_DEPTH - 1) },
    formatters: {
      level: (label: string) => ({ level: label }),
      log: redactLine,
    },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
  };
  const log = pino(options, destination ?? stdoutDestination());
  // A child's bindings (`log.child({...})`) are written once into its prefix, past `formatters.log`
  // (pino applies no formatter to a child's bindings): redacted here, for children of children too.
  const child = log.child;
  log.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redactLine(bindings), childOptions);
  } as typeof child;
  return log;
}
