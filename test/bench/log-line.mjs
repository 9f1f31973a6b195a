// Cost of one log line, in process, side by side (issue 36: a CPU profile of the call path at
// concurrency 1 found logging at 8-10%, the access line's redaction about 25 µs of it).
//   before: pino with the redaction kit/logger.ts had until issue 36: 65 `redact` paths, most of them
//           wildcards (`*.key`, `*.*.key` for 13 key names), which pino runs on every key of every line;
//   after:  kit/logger.ts's createLogger as built (services/lib/kit/dist; build first);
//   none:   the same pino options without any redaction, the floor.
// The lines: the gateway's access line ({method, path, status, ms}, "request", inside a request scope so
// the request id is mixed in), an error line (a thrown Error with an enumerable code, "rpc failed") and a
// line that carries secrets at each depth the redaction covers (top level, headers, req.headers). Each
// logger writes to a stream that drops the text, so the figures are the formatting and redaction alone;
// the stream write (sonic-boom on stdout, asynchronous) is the same for all. Before and after must write
// the same text for the secret line (checked; the script fails otherwise). Rows take turns in rounds.
// Usage: node test/bench/log-line.mjs [lines per round=20000] [rounds=5]
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const kit = path.join(root, "services/lib/kit");
const { pino } = createRequire(path.join(kit, "package.json"))("pino");
const { createLogger } = await import(path.join(kit, "dist/logger.js"));
const { runInScope, currentRequestId } = await import(path.join(kit, "dist/context.js"));

const [perRound = 20_000, rounds = 5] = process.argv.slice(2).map(Number);

const oldKeys = [
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
const oldPaths = oldKeys.flatMap((k) => [`${k}`, `*.${k}`, `*.*.${k}`, `headers["${k}"]`, `req.headers["${k}"]`]);
const pinoOptions = (redact) => ({
  name: "gateway",
  level: "info",
  base: { service: "gateway" },
  timestamp: pino.stdTimeFunctions.isoTime,
  ...(redact ? { redact } : {}),
  formatters: { level: (label) => ({ level: label }) },
  mixin() {
    const requestId = currentRequestId();
    return requestId ? { request_id: requestId } : {};
  },
});

/** A destination that keeps only the last line (for the equality check). */
const sink = () => {
  const s = {
    last: "",
    write(line) {
      s.last = line;
    },
  };
  return s;
};
const loggers = {
  before: (dest) => pino(pinoOptions({ paths: oldPaths, censor: "[REDACTED]" }), dest),
  after: (dest) => createLogger("gateway", "info", dest),
  none: (dest) => pino(pinoOptions(undefined), dest),
};

const thrown = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", errno: -111 });
const kinds = {
  access: (log) =>
    log.info({ method: "POST", path: "/v1/tools/call/0b5e6c1e-2f7a-4a53-9d2b-52c1c4d6f0a1", status: 200, ms: 3 }, "request"),
  error: (log) =>
    log.error({ rpc: "CallTool", service: "toolport.execution.v1.Execution", code: 13, ms: 2, err: thrown }, "rpc failed"),
  secrets: (log) =>
    log.warn(
      {
        token: "tok-1",
        headers: { authorization: "Bearer abc", accept: "*/*" },
        req: { method: "GET", headers: { "svc-api-key": "svc_live_1", cookie: "s=1" } },
        config: { nested: { password: "pw" }, url: "http://x" },
        list: [{ secret: "s" }, "plain"],
      },
      "upstream refused",
    ),
};

const strip = (line) => line.replace(/"time":"[^"]*",/, "");
// The secret line must come out the same from before and after (apart from the time).
{
  const [b, a] = [sink(), sink()];
  runInScope({ requestId: "req-1" }, () => {
    kinds.secrets(loggers.before(b));
    kinds.secrets(loggers.after(a));
  });
  if (strip(b.last) !== strip(a.last)) {
    console.error(`before and after differ on the secret line:\n  before ${b.last}  after  ${a.last}`);
    process.exit(1);
  }
  for (const secret of ["tok-1", "Bearer abc", "svc_live_1", "s=1", '"pw"', '"s"'])
    if (a.last.includes(secret)) {
      console.error(`after leaks ${secret}: ${a.last}`);
      process.exit(1);
    }
}

const results = {};
for (const kind of Object.keys(kinds)) {
  results[kind] = Object.fromEntries(Object.keys(loggers).map((row) => [row, []]));
  const made = Object.fromEntries(Object.entries(loggers).map(([row, make]) => [row, make(sink())]));
  for (let round = 0; round <= rounds; round++) {
    for (const [row, log] of Object.entries(made)) {
      const write = kinds[kind];
      const started = process.hrtime.bigint();
      runInScope({ requestId: "9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b" }, () => {
        for (let i = 0; i < perRound; i++) write(log);
      });
      const us = Number(process.hrtime.bigint() - started) / 1e3 / perRound;
      if (round > 0) results[kind][row].push(us); // round 0 warms up
    }
  }
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(
  `µs per log line, median of ${rounds} rounds of ${perRound.toLocaleString("en-US")} lines (Node ${process.version}; rows alternate)`,
);
console.log(`  ${"line".padEnd(8)} ${"before".padStart(8)} ${"after".padStart(8)} ${"none".padStart(8)}   after/before`);
for (const [kind, r] of Object.entries(results)) {
  const [b, a, n] = [median(r.before), median(r.after), median(r.none)];
  console.log(
    `  ${kind.padEnd(8)} ${b.toFixed(2).padStart(8)} ${a.toFixed(2).padStart(8)} ${n.toFixed(2).padStart(8)}   ${(a / b).toFixed(2)}`,
  );
}
