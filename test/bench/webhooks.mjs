// Webhook delivery benchmark: how many deliveries per second the webhooks path makes to a local HTTPS
// receiver, and how long an event takes from its commit to the receiver's 2xx, at per-endpoint
// concurrency 1 and 50 (WEBHOOKS_ENDPOINT_CONCURRENCY).
//
// Set-up, on free ports in a temporary folder (removed on exit, also after an error or Ctrl-C):
//  - Postgres with production durability (fsync, synchronous_commit on: deploy/local/infra.mjs defaults),
//    databases bench_identity and bench_webhooks; NATS with JetStream.
//  - ONE Toolport process, `services/host/dist/main.js --roles=identity,webhooks,gateway` (identity and
//    gateway for the signup, the JWT and the /v1/webhooks API; webhooks for the fan-out and the sender).
//    A human signup creates no wallet, so billing and catalog are not needed. LOG_LEVEL=warn (so no
//    ready line: the process is ready once the gateway answers, which starts after the services); its
//    output goes to a log file whose warnings and errors are summed up after each level.
//    WEBHOOKS_OUTBOUND_ALLOW=127.0.0.1:<receiver port>, NODE_EXTRA_CA_CERTS=<the bench CA>,
//    WEBHOOKS_ENDPOINT_CONCURRENCY=<level>: the process is restarted for each level (same databases, same
//    durable consumers in the same NATS_NAMESPACE; nothing is pending between levels).
//  - The receiver: a node:https server in a child process of its own (its CPU tracked apart, and not
//    competing with this process's event loop), with a leaf certificate for IP:127.0.0.1 signed by a CA,
//    both made with the `openssl` binary (EC P-256). It answers 200 "ok" as soon as the body is read and
//    writes one line per request to stdout: the event's sequence number (from the body's tool_name), the
//    X-Svc-Delivery header and its clock at that moment, performance.timeOrigin + performance.now(), the
//    same clock this process stamps publishes with (both high-resolution wall clock, so comparable across
//    processes to well under a millisecond).
//  - One user (POST /v1/auth/signup) with ONE webhook for tool.execution.completed pointing at the receiver.
// Events: `toolport.execution.completed` ExecutionEvent messages (eventId, occurredAt, executionId, toolId,
// toolName "bench-<seq>", accountId = the user's account, status SUCCESS, seconds) published straight to
// JetStream (msgID = eventId), as execution's outbox relay does after its commit. "The event's commit" is
// the moment just before the publish call: this leaves out execution's relay delay (commit -> NOTIFY ->
// relay -> publish), which is execution's, not the webhooks path's.
// Per level (default 1, then 50):
//  0. warm-up: BENCH_WARMUP events (300), paced at BENCH_RATE/s (at most 200/s), all waited for; not counted.
//  1. throughput: a burst of N events published as fast as JetStream acks them (256 publishes in flight),
//     deliveries/s = N / (first publish -> the N-th distinct event's 2xx at the receiver); the CPU per
//     delivery of the Toolport process, Postgres (with all its backends), NATS, with the receiver and this
//     bench shown beside the sum (CPU taken from the first publish until all N arrived, plus 100 ms for
//     the last attempts to be recorded).
//  2. latency: events paced at BENCH_RATE/s (200) for BENCH_SECONDS (10), but never faster than half of
//     the throughput just measured at this level (so that it stays well below capacity: at concurrency
//     1 each delivery waits for the previous one's durable commit); p50/p99/max of receiver time minus
//     publish time.
// At concurrency 1 the one webhook's attempts run strictly one after another (claim, POST, durable record of
// the attempt, then the next claim), so its throughput is 1 / that cycle, whatever the machine's CPUs.
// Missing deliveries (published events whose 2xx never came within BENCH_STALL_MS of no progress) and
// duplicates (a delivery id received twice, or an event delivered under two delivery ids) are counted
// per phase; they should be 0. Goals (the issue): >= 1,000 deliveries/s and p50 < 50 ms, for each level.
// Usage: node test/bench/webhooks.mjs [events=5000]
//   (build first: pnpm build; Toolport runs from dist/)
//   BENCH_LEVELS=1,50 the per-endpoint concurrencies; BENCH_RATE=200 events/s and BENCH_SECONDS=10 for the
//   latency phase; BENCH_WARMUP=300 warm-up events per level; BENCH_STALL_MS=30000 how long to wait without
//   a new delivery before counting the rest missing; BENCH_VERBOSE=1 forwards the Toolport log to stderr;
//   BENCH_PROFILE=toolport writes a CPU profile per level to /tmp/toolport-prof/toolport.
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { connect } from "nats";
import { freePort } from "../../deploy/local/infra.mjs";
import { adopt, cpuPerCall, cpuSnapshot, profiled, request, sleep } from "./lib.mjs";
import { benchNats, benchPostgres, teardown } from "./servers.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [events = 5000] = process.argv.slice(2).map(Number);
const levels = (process.env.BENCH_LEVELS ?? "1,50").split(",").map(Number);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 30_000);
const PUBLISH_WINDOW = 256;
const GOALS = { rps: 1000, p50Ms: 50 };
const ROLES = ["identity", "webhooks", "gateway"];
/** The stack's NATS namespace: its stream and subjects (`<namespace>.toolport.…`) are its own. */
const NAMESPACE = "bench_webhooks";
const SUBJECT = `${NAMESPACE}.toolport.execution.completed`;

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-webhooks-"));
const now = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// Certificates and the receiver

function openssl(args) {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A CA and a leaf for IP:127.0.0.1 it signed (EC P-256), in the temp folder; the CA's PEM file path. */
function makeCertificates() {
  const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  writeFileSync(
    path.join(dir, "ca.cnf"),
    "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = toolport bench CA\n[ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n",
  );
  writeFileSync(
    path.join(dir, "leaf.cnf"),
    "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = toolport bench receiver\n[ext]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature,keyEncipherment\nextendedKeyUsage = serverAuth\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid,issuer\nsubjectAltName = IP:127.0.0.1\n",
  );
  openssl(
    ["req", "-x509", "-config", "ca.cnf", ...EC, "-keyout", "ca.key", "-out", "ca.pem", "-sha256", "-days", "2"].concat([
      "-extensions",
      "ext",
    ]),
  );
  openssl(["req", "-new", "-config", "leaf.cnf", ...EC, "-keyout", "leaf.key", "-out", "leaf.csr"]);
  openssl(
    ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-sha256", "-days", "2"].concat([
      "-extfile",
      "leaf.cnf",
      "-extensions",
      "ext",
      "-out",
      "leaf.pem",
    ]),
  );
  return path.join(dir, "ca.pem");
}

// One line per request: "<seq> <delivery id> <ms>"; "-" for a body without a bench sequence number.
// Lines are gathered and written once per turn of the event loop (stdout to a pipe is synchronous).
const receiverSource = `
const https = require("node:https");
const fs = require("node:fs");
let out = [];
const flush = () => { process.stdout.write(out.join("")); out = []; };
const server = https.createServer({ cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) }, (req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    let seq = "-";
    try { seq = /^bench-(\\d+)$/.exec(JSON.parse(Buffer.concat(chunks).toString("utf8")).data.tool_name)?.[1] ?? "-"; } catch {}
    res.writeHead(200, { "content-type": "text/plain", "content-length": 2 });
    res.end("ok");
    if (out.length === 0) setImmediate(flush);
    out.push(seq + " " + (req.headers["x-svc-delivery"] ?? "-") + " " + at.toFixed(3) + "\\n");
  });
});
server.keepAliveTimeout = 65000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

/** Every request the receiver reported: seq (or -1), delivery id, receiver time. */
const received = [];

async function startReceiver(port) {
  const child = spawn(process.execPath, ["-e", receiverSource], {
    env: { ...process.env, PORT: String(port), CERT: path.join(dir, "leaf.pem"), KEY: path.join(dir, "leaf.key") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  adopt("receiver", child);
  let rest = "";
  let ready;
  const isReady = new Promise((resolve, reject) => {
    ready = resolve;
    child.once("exit", (code, signal) => reject(new Error(`the receiver exited with ${signal ?? code}`)));
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop();
    for (const line of lines) {
      if (line === "ready") {
        ready();
        continue;
      }
      const [seq, id, at] = line.split(" ");
      received.push({ seq: seq === "-" ? -1 : Number(seq), id, at: Number(at) });
    }
  });
  await isReady;
}

// ---------------------------------------------------------------------------------------------
// Toolport

let toolport; // the running Toolport child
let logFile;

/** The one Toolport process for `level`; resolves once its gateway answers (it starts after the services). */
async function startToolport(env, level, ports) {
  logFile = path.join(dir, `toolport-c${level}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [...profiled("toolport"), path.join(root, "services/host/dist/main.js"), `--roles=${ROLES.join(",")}`],
    { env: { ...process.env, ...env, WEBHOOKS_ENDPOINT_CONCURRENCY: String(level) }, stdio: ["ignore", "pipe", "pipe"] },
  );
  adopt("toolport", child);
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipe(log, { end: false });
    if (process.env.BENCH_VERBOSE) stream.pipe(process.stderr, { end: false });
  }
  toolport = child;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`toolport exited with ${child.signalCode ?? child.exitCode} while starting:\n${tail(logFile)}`);
    try {
      await request(`http://127.0.0.1:${ports.gateway}/v1/webhooks`);
      return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`toolport did not answer within 60 s:\n${tail(logFile)}`);
    await sleep(100);
  }
}

async function stopToolport() {
  const child = toolport;
  toolport = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

const tail = (file, n = 20) => {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-n).join("\n");
  } catch {
    return "";
  }
};

/** Warnings and errors (pino level >= 40) the Toolport process logged: how many, and the distinct messages. */
function logProblems(file) {
  const messages = new Map();
  let count = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let level = 50;
    let msg = line;
    try {
      const entry = JSON.parse(line);
      level = entry.level;
      msg = `[${entry.service ?? "?"}] ${entry.msg}${entry.err ? `: ${entry.err.message ?? entry.err}` : ""}`;
    } catch {}
    if (level < 40) continue;
    count++;
    messages.set(msg, (messages.get(msg) ?? 0) + 1);
  }
  return { count, messages };
}

// ---------------------------------------------------------------------------------------------
// Events

let nextSeq = 0;
/** seq -> publish time (ms, the shared clock). */
const publishedAt = new Map();

function eventBytes(seq, accountId) {
  const eventId = randomUUID();
  const message = create(ExecutionEventSchema, {
    eventId,
    occurredAt: timestampFromDate(new Date()),
    executionId: randomUUID(),
    toolId: "00000000-0000-4000-8000-000000000001",
    toolName: `bench-${seq}`,
    accountId,
    status: ExecutionStatus.SUCCESS,
    seconds: 0.05,
  });
  return { eventId, bytes: toBinary(ExecutionEventSchema, message) };
}

/** Publishes one event; its publish time is taken just before the call (it stands for the commit). */
async function publishOne(js, accountId) {
  const seq = nextSeq++;
  const { eventId, bytes } = eventBytes(seq, accountId);
  publishedAt.set(seq, now());
  await js.publish(SUBJECT, bytes, { msgID: eventId });
  return seq;
}

/** `n` events as fast as JetStream acks them (PUBLISH_WINDOW in flight); their seqs, and when the last ack came. */
async function burst(js, accountId, n) {
  const seqs = [];
  let left = n;
  await Promise.all(
    Array.from({ length: Math.min(PUBLISH_WINDOW, n) }, async () => {
      while (left > 0) {
        left--;
        seqs.push(await publishOne(js, accountId));
      }
    }),
  );
  return { seqs, ackedAt: now() };
}

/** `n` events at `rate` per second (a late timer publishes what fell due meanwhile); their seqs. */
async function paced(js, accountId, n, rate) {
  const seqs = [];
  const pending = [];
  const interval = 1000 / rate;
  const t0 = performance.now();
  let i = 0;
  while (i < n) {
    const due = Math.min(n, Math.floor((performance.now() - t0) / interval) + 1);
    for (; i < due; i++) pending.push(publishOne(js, accountId).then((seq) => seqs.push(seq)));
    await sleep(Math.max(0, i * interval - (performance.now() - t0)));
  }
  await Promise.all(pending);
  return seqs;
}

/**
 * Waits until every seq in `seqs` has reached the receiver, or nothing new came for STALL_MS; returns
 * per seq its first receipt, how many are missing, and the duplicates (delivery ids seen twice, events
 * delivered under more than one id) among the receipts from `from` on.
 */
async function collect(seqs, from) {
  const want = new Set(seqs);
  const first = new Map();
  const ids = new Map(); // seq -> Set of delivery ids
  let seen = from;
  let lastProgress = Date.now();
  const idCount = new Map();
  for (;;) {
    for (; seen < received.length; seen++) {
      const r = received[seen];
      idCount.set(r.id, (idCount.get(r.id) ?? 0) + 1);
      if (!want.has(r.seq)) continue;
      if (!first.has(r.seq)) first.set(r.seq, r.at);
      if (!ids.has(r.seq)) ids.set(r.seq, new Set());
      ids.get(r.seq).add(r.id);
      lastProgress = Date.now();
    }
    if (first.size >= want.size || Date.now() - lastProgress > STALL_MS) break;
    await sleep(20);
  }
  return {
    first,
    missing: want.size - first.size,
    duplicateIds: [...idCount.values()].filter((c) => c > 1).length,
    multiIdEvents: [...ids.values()].filter((s) => s.size > 1).length,
    next: seen,
  };
}

function quantiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
  return { p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1] ?? Number.NaN, n: sorted.length };
}

// ---------------------------------------------------------------------------------------------
// Run

const { shutdown } = teardown(dir, () => stopToolport());

let nc;
let accountId;
const results = [];
try {
  const caFile = makeCertificates();
  const pg = await benchPostgres(dir, "postgres");
  const nats = await benchNats(dir, "nats");
  const receiverPort = await freePort();
  await startReceiver(receiverPort);

  const ports = Object.fromEntries(await Promise.all(ROLES.map(async (r) => [r, await freePort()])));
  const env = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: NAMESPACE,
    LOG_LEVEL: "warn",
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    IDENTITY_SECRET_KEY: "i".repeat(48),
    WEBHOOKS_SECRET_KEY: "b".repeat(64),
    WEBHOOKS_OUTBOUND_ALLOW: `127.0.0.1:${receiverPort}`,
    NODE_EXTRA_CA_CERTS: caFile,
  };
  for (const role of ROLES) {
    env[`${role.toUpperCase()}_PORT`] = String(ports[role]);
    env[`${role.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[role]}`;
    if (role !== "gateway") {
      const url = new URL(pg.url);
      url.pathname = `/bench_${role}`;
      env[`${role.toUpperCase()}_DATABASE_URL`] = url.toString();
    }
  }

  console.log(
    `Webhook deliveries to a local HTTPS receiver: one Toolport process (--roles=${ROLES.join(",")}), Postgres with production durability, NATS JetStream; ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  console.log(
    `  per level: ${WARMUP} warm-up events, a burst of ${events} events (throughput), then events paced at up to ${RATE}/s for ${SECONDS} s (latency: publish -> receiver's 2xx)`,
  );

  for (const [index, level] of levels.entries()) {
    await startToolport(env, level, ports);
    const gw = `http://127.0.0.1:${ports.gateway}/v1`;
    if (index === 0) {
      // The user and the webhook, once: they live in the databases across restarts.
      const email = `bench-${randomUUID().slice(0, 8)}@example.com`;
      const signup = await request(`${gw}/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery staple", name: "bench" }),
      });
      if (signup.status !== 200) throw new Error(`signup: HTTP ${signup.status} ${signup.body.slice(0, 500)}`);
      const user = JSON.parse(signup.body);
      accountId = user.account_id;
      const hook = await request(`${gw}/webhooks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${user.access_token}` },
        body: JSON.stringify({ url: `https://127.0.0.1:${receiverPort}/hook`, events: ["tool.execution.completed"] }),
      });
      if (hook.status !== 200) throw new Error(`registering the webhook: HTTP ${hook.status} ${hook.body.slice(0, 500)}`);
      nc = await connect({ servers: nats.url });
    }
    const js = nc.jetstream();

    // 0. Warm-up, paced (a first delivery also opens the TLS connection).
    let from = received.length;
    const warm = await collect(await paced(js, accountId, WARMUP, Math.min(RATE, 200)), from);
    if (warm.missing > 0) throw new Error(`concurrency ${level}: ${warm.missing} of ${WARMUP} warm-up deliveries did not arrive`);
    from = warm.next;

    // 1. Throughput.
    const before = cpuSnapshot();
    const started = now();
    const { seqs, ackedAt } = await burst(js, accountId, events);
    const burstResult = await collect(seqs, from);
    await sleep(100);
    const after = cpuSnapshot();
    from = burstResult.next;
    const lastAt = Math.max(...burstResult.first.values());
    const seconds = (lastAt - started) / 1000;
    const delivered = burstResult.first.size;
    const cpu = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));

    // 2. Latency, paced well below this level's capacity.
    const rate = Math.max(1, Math.min(RATE, Math.floor(delivered / seconds / 2)));
    const pacedSeqs = await paced(js, accountId, Math.round(rate * SECONDS), rate);
    const lat = await collect(pacedSeqs, from);
    const latency = quantiles([...lat.first].map(([seq, at]) => at - publishedAt.get(seq)));

    const problems = logProblems(logFile);
    await stopToolport();
    results.push({
      level,
      rps: delivered / seconds,
      publishRps: events / ((ackedAt - started) / 1000),
      seconds,
      cpu,
      delivered,
      rate,
      latency,
      missing: { burst: burstResult.missing, paced: lat.missing },
      duplicateIds: burstResult.duplicateIds + lat.duplicateIds + warm.duplicateIds,
      multiIdEvents: burstResult.multiIdEvents + lat.multiIdEvents + warm.multiIdEvents,
      problems,
    });
  }

  // The figures.
  console.log(
    `\n  ${"concurrency".padEnd(12)}${"deliveries/s".padStart(13)}${"(published/s)".padStart(15)}${"latency at".padStart(13)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"max ms".padStart(9)}${"missing".padStart(9)}${"dup ids".padStart(9)}`,
  );
  for (const r of results)
    console.log(
      `  ${String(r.level).padEnd(12)}${r.rps.toFixed(0).padStart(13)}${`(${r.publishRps.toFixed(0)})`.padStart(15)}${`${r.rate}/s`.padStart(13)}${r.latency.p50.toFixed(1).padStart(9)}${r.latency.p99.toFixed(1).padStart(9)}${r.latency.max.toFixed(1).padStart(9)}${String(r.missing.burst + r.missing.paced).padStart(9)}${String(r.duplicateIds).padStart(9)}`,
    );
  console.log("");
  for (const r of results) {
    const own = ["toolport", "postgres", "nats"].map((k) => [k, ((r.cpu[k] ?? 0) * 1e3) / r.delivered]);
    const sum = own.reduce((t, [, ms]) => t + ms, 0);
    const beside = cpuPerCall({ receiver: r.cpu.receiver ?? 0, bench: r.cpu.bench ?? 0 }, r.delivered);
    const list = (xs) => xs.map(([k, ms]) => `${k} ${ms.toFixed(3)}`).join(", ");
    console.log(
      `  concurrency ${r.level}: ${r.delivered} of ${events} delivered in ${r.seconds.toFixed(2)} s; CPU per delivery ${sum.toFixed(3)} ms = ${list(own)}; beside the sum: ${list(beside) || "-"}`,
    );
    console.log(
      `    latency: ${r.latency.n} events at ${r.rate}/s; missing: ${r.missing.burst} of the burst, ${r.missing.paced} of the paced; duplicate delivery ids ${r.duplicateIds}, events delivered under two ids ${r.multiIdEvents}`,
    );
    const { count, messages } = r.problems;
    console.log(`    Toolport log: ${count} warning/error line(s)${count ? ":" : ""}`);
    for (const [msg, n] of [...messages].slice(0, 8)) console.log(`      ${n} x ${msg.slice(0, 300)}`);
  }
  console.log("\n  Goals:");
  for (const r of results) {
    const met = (ok) => (ok ? "met" : "MISSES");
    console.log(
      `    concurrency ${r.level}: >= ${GOALS.rps.toLocaleString("en-US")} deliveries/s: ${r.rps.toFixed(0)} (${met(r.rps >= GOALS.rps)}); p50 < ${GOALS.p50Ms} ms: ${r.latency.p50.toFixed(1)} ms (${met(r.latency.p50 < GOALS.p50Ms)})`,
    );
  }
} catch (err) {
  console.error(err);
  if (logFile) console.error(`toolport log (last lines):\n${tail(logFile)}`);
  process.exitCode = 1;
} finally {
  await nc?.close().catch(() => {});
  await shutdown();
}
