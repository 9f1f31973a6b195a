// Workflow overhead benchmark, one run, side by side: a three-step workflow of built-in tools run through
// the gateway, against the same three tool calls made one after another by a client.
//  - (w) workflow: POST /v1/workflows/{id}/run {inputs: {title}} of a workflow
//          1. text-slugify      {text: "{{inputs.title}}"}
//          2. text-change-case  {text: "{{steps.1.result.slug}}", to: "upper"}
//          3. text-word-count   {text: "{{steps.2.result.result}}"}
//        answered 200 with status "completed" (anything else counts as failed). The content role drives
//        the run: a run row, a row per step (each step committed in its own transaction), the workflow's
//        event in the outbox, each step a tool call to the execution role in process.
//  - (c) client: POST /v1/tools/call/text-slugify, then text-change-case with the slug, then
//        text-word-count with the converted text, each answered 200 with success true: the same three tool
//        calls and the same data, without the run's own rows.
// One operation = one run of (w) or the three calls of (c), timed from the first request's start to the
// last answer. At concurrency 1 (overhead alone) and at load (default 16): operations/s (printed as
// "req/s" by lib.mjs's fmt), p50, p99, the CPU per operation of the Toolport process, Postgres (with all
// its backends) and NATS (the bench beside the sum), and the verdict against the goal
//   overhead = p50(w) - p50(c)  < 2 ms
// A level where any operation failed gets no "met": a failed run may have been fast.
// Each row is warmed up (BENCH_WARMUP operations), then the rows take turns in BENCH_ROUNDS rounds so
// that drift (JIT, table growth, other work on the machine) falls on both alike. Every title is different
// (worker and sequence number in it), so nothing can be answered from a cache of equal inputs.
// Set-up, on free ports in a temporary folder (removed on exit, also after an error or Ctrl-C): Postgres
// with production durability (fsync, synchronous_commit on) and max_connections=300, NATS with JetStream,
// and ONE Toolport process, `services/host/dist/main.js --roles=catalog,execution,billing,identity,content,gateway`
// (the c1 stack of execution-gateway.mjs plus content), its own databases bench_wf_<role>. The free tier's
// monthly allowance and the per-key rate limit are raised (FREE_TIER_CALLS_PER_MONTH, TOOL_CALLS_PER_MINUTE)
// so that neither stops the bench. Toolport runs from dist/ (build first).
// Usage: node test/bench/workflow-run.mjs [runs=2000] [concurrency=16]
//   runs: operations per row at load (at concurrency 1: at most 1000, where each takes longest);
//   BENCH_LEVELS=1,16 the concurrencies (default 1 and the second argument); BENCH_ROUNDS=4;
//   BENCH_WARMUP=100 operations per row before each level; BENCH_WORKFLOWS=1 identical workflows the
//   workers spread their runs over (see the comment where they are created); BENCH_VERBOSE=1 forwards the processes' logs;
//   BENCH_PROFILE=toolport writes a CPU profile of the Toolport process to /tmp/toolport-prof/toolport.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../deploy/local/infra.mjs";
import { cpuPerCall, fmt, profiled, request, row, runRounds, start, summary } from "./lib.mjs";
import { benchNats, benchPostgres, expectJson, teardown } from "./servers.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [runs = 2000, concurrency = 16] = process.argv.slice(2).map(Number);
const levels = process.env.BENCH_LEVELS ? process.env.BENCH_LEVELS.split(",").map(Number) : [1, concurrency];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const WORKFLOWS = Number(process.env.BENCH_WORKFLOWS ?? 1);
const C1_MAX = 1000;
const GOAL_OVERHEAD_MS = 2;
const SERVICES = ["catalog", "execution", "billing", "identity", "content"];
const ROLES = [...SERVICES, "gateway"];
const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-workflow-"));
const { shutdown, started: stopping } = teardown(dir);
const json = { "content-type": "application/json" };
// Progress and results; silent once Ctrl-C started the clean-up (the rows still running then only fail).
const log = (line) => {
  if (!stopping()) console.log(line);
};

// Why operations failed: the first few distinct reasons per row (warm-up included), printed after each level.
const failures = new Map();
function failed(label, reason) {
  const seen = failures.get(label) ?? new Map();
  failures.set(label, seen);
  seen.set(reason, (seen.get(reason) ?? 0) + 1);
  return false;
}

/**
 * "CPU per operation in (w): 9.10 ms = toolport 6.80, postgres 2.10, nats 0.20; beside the sum: bench 0.30":
 * the stack's own processes summed, this bench shown beside.
 */
function cpuLine(label, r, processes) {
  const ops = r.latencies.length;
  const own = Object.fromEntries(processes.map((k) => [k, r.cpu[k] ?? 0]));
  const perOp = Object.entries(own)
    .map(([k, seconds]) => [k, (seconds * 1e3) / ops])
    .sort((x, y) => y[1] - x[1]);
  const sum = perOp.reduce((t, [, ms]) => t + ms, 0);
  const beside = cpuPerCall({ bench: r.cpu.bench ?? 0 }, ops);
  const list = (xs) => xs.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ");
  log(
    `    CPU per operation in ${label}: ${sum.toFixed(2)} ms = ${list(perOp)}${beside.length ? `; beside the sum: ${list(beside)}` : ""}`,
  );
  return sum;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const verdicts = [];
try {
  log(`starting postgres and nats in ${dir}`);
  const [pg, nats] = await Promise.all([benchPostgres(dir, "postgres"), benchNats(dir, "nats")]);

  const ports = Object.fromEntries(await Promise.all(ROLES.map(async (n) => [n, await freePort()])));
  const env = {
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: "bench_wf",
    LOG_LEVEL: "info", // for the "toolport listening" line; the access lines after it are drained, not kept
    CATALOG_SECRET_KEY: "a".repeat(64),
    EXECUTION_CONSENT_SECRET: "c".repeat(48),
    TOOL_CALLS_PER_MINUTE: "100000000",
    FREE_TIER_CALLS_PER_MONTH: "100000000",
    STRIPE_WEBHOOK_SECRET: "whsec_bench",
    STRIPE_SECRET_KEY: "sk_test_bench",
    PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
  };
  for (const n of ROLES) env[`${n.toUpperCase()}_PORT`] = String(ports[n]);
  for (const n of SERVICES) {
    env[`${n.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[n]}`;
    const url = new URL(pg.url);
    url.pathname = `/bench_wf_${n}`;
    env[`${n.toUpperCase()}_DATABASE_URL`] = url.toString();
  }
  log(`starting toolport --roles=${ROLES.join(",")}`);
  await start(
    "toolport",
    [...profiled("toolport"), path.join(root, "services/host/dist/main.js"), `--roles=${ROLES.join(",")}`],
    {
      env,
      ready: /toolport listening/,
    },
  );
  const gw = `http://127.0.0.1:${ports.gateway}/v1`;
  log(`stack ready on ${gw}`);

  const reg = await expectJson("registering the agent", `${gw}/agents`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: "bench-workflow", operator_email: "bench-workflow@example.com" }),
  });
  const key = { ...json, "svc-api-key": reg.api_key };
  // BENCH_WORKFLOWS identical workflows (default 1), worker i running number i % N: the last step of a
  // run counts it on its workflow's row (total_executions), so with one workflow concurrent runs queue on
  // that row's lock; several show how much of the difference at load is that.
  const workflows = [];
  for (let i = 0; i < WORKFLOWS; i++)
    workflows.push(
      await expectJson("creating the workflow", `${gw}/workflows`, {
        method: "POST",
        headers: key,
        body: JSON.stringify({
          name: `bench slug upper count ${i + 1}`,
          steps: [
            { tool_id: "text-slugify", input_mapping: { text: "{{inputs.title}}" } },
            { tool_id: "text-change-case", input_mapping: { text: "{{steps.1.result.slug}}", to: "upper" } },
            { tool_id: "text-word-count", input_mapping: { text: "{{steps.2.result.result}}" } },
          ],
        }),
      }),
    );
  const [workflow] = workflows;
  log(
    `${WORKFLOWS === 1 ? `workflow ${workflow.id}` : `${WORKFLOWS} workflows like ${workflow.id}`}: ${workflow.steps.map((s) => `${s.step_number}. ${s.tool_name} (${s.tool_id})`).join(", ")}`,
  );

  // Every operation a different title: worker and sequence number in it.
  let seq = 0;
  const title = (worker) => `Crème Brûlée: ${++seq} Easy Steps from Bench Worker ${worker}!`;

  /** One tool call by slug; its result, or a string saying why it failed. */
  async function call(slug, input) {
    const res = await request(`${gw}/tools/call/${slug}`, {
      method: "POST",
      headers: key,
      body: JSON.stringify({ tool_input: input }),
    });
    if (res.status !== 200) return `${slug}: HTTP ${res.status} ${res.body.slice(0, 200)}`;
    const body = JSON.parse(res.body);
    if (body.success !== true) return `${slug}: success ${body.success} ${res.body.slice(0, 200)}`;
    return body.result;
  }

  /** The client row's operation: the three calls one after another, each fed the previous result. */
  async function clientOp(text) {
    const a = await call("text-slugify", { text });
    if (typeof a === "string") return a;
    const b = await call("text-change-case", { text: a.slug, to: "upper" });
    if (typeof b === "string") return b;
    const c = await call("text-word-count", { text: b.result });
    if (typeof c === "string") return c;
    return { slug: a.slug, upper: b.result, counts: c };
  }

  const serverMs = []; // the run's own execution_time_ms, as content reports it (this level)
  /** The workflow row's operation: one run, synchronous; its body, or a string saying why it failed. */
  async function workflowOp(text, worker = 0) {
    const res = await request(`${gw}/workflows/${workflows[worker % WORKFLOWS].id}/run`, {
      method: "POST",
      headers: key,
      body: JSON.stringify({ inputs: { title: text } }),
    });
    if (res.status !== 200) return `HTTP ${res.status} ${res.body.slice(0, 300)}`;
    const body = JSON.parse(res.body);
    if (body.status !== "completed") return `status ${body.status}: ${body.error ?? res.body.slice(0, 300)}`;
    if (typeof body.result?.words !== "number")
      return `no word count in the result: ${JSON.stringify(body.result).slice(0, 200)}`;
    serverMs.push(body.execution_time_ms);
    return body;
  }

  // Both rows on one title must agree before anything is timed: the same work, the same answer.
  const probe = title("probe");
  const viaClient = await clientOp(probe);
  if (typeof viaClient === "string") throw new Error(`the client calls failed: ${viaClient}`);
  const viaWorkflow = await workflowOp(probe);
  if (typeof viaWorkflow === "string") throw new Error(`the workflow run failed: ${viaWorkflow}`);
  if (JSON.stringify(viaWorkflow.result) !== JSON.stringify(viaClient.counts))
    throw new Error(`workflow and client disagree: ${JSON.stringify(viaWorkflow.result)} vs ${JSON.stringify(viaClient.counts)}`);
  log(
    `check: "${probe}" -> ${viaClient.slug} -> ${viaClient.upper} -> ${viaClient.counts.words} words (workflow and client agree)`,
  );
  serverMs.length = 0;

  const wRow = row("(w) workflow, 3 steps", async (worker) => {
    const r = await workflowOp(title(worker), worker);
    return typeof r === "string" ? failed("(w)", r) : true;
  });
  const cRow = row("(c) client, 3 calls in a row", async (worker) => {
    const r = await clientOp(title(worker));
    return typeof r === "string" ? failed("(c)", r) : true;
  });
  const processes = ["toolport", pg.name, nats.name];

  log(
    `\nWorkflow of 3 built-in tools vs the same 3 calls by a client (${runs} operations per row at load, ${Math.min(runs, C1_MAX)} at concurrency 1, each row warmed up with ${WARMUP}, then ${ROUNDS} alternating rounds;${WORKFLOWS > 1 ? ` runs spread over ${WORKFLOWS} identical workflows;` : ""} ${os.cpus().length} CPUs, Node ${process.version}; one operation = 1 run or 3 calls)`,
  );
  for (const conc of levels) {
    const n = conc === 1 ? Math.min(runs, C1_MAX) : runs;
    // Fresh rows per level; the same make functions.
    const w = row(wRow.label, wRow.make);
    const c = row(cRow.label, cRow.make);
    log(`\n   concurrency ${conc}: warming up (${WARMUP} operations per row)`);
    const started = performance.now();
    // runRounds alternates the rows itself; called round by round here so that progress shows.
    await runRounds([w, c], { calls: 0, conc, rounds: 0, warmup: WARMUP });
    serverMs.length = 0; // the warm-up's runs left out
    for (let round = 1; round <= ROUNDS; round++) {
      await runRounds([w, c], { calls: n / ROUNDS, conc, rounds: 1, warmup: 0 });
      log(`   concurrency ${conc}: round ${round}/${ROUNDS} done (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
    const sw = summary(w.label, w);
    const sc = summary(c.label, c);
    log(`\n   concurrency ${conc}`);
    log(fmt(sw, 30));
    log(fmt(sc, 30));
    const cpuW = cpuLine("(w)", w, processes);
    const cpuC = cpuLine("(c)", c, processes);
    log(`    CPU per operation, (w) - (c): ${(cpuW - cpuC).toFixed(2)} ms`);
    log(`    (w) execution_time_ms as content reports it: median ${median(serverMs)} ms`);
    const overhead = sw.p50 - sc.p50;
    const anyFailed = sw.failures + sc.failures;
    const verdict = anyFailed ? `not judged: ${anyFailed} operations failed` : overhead < GOAL_OVERHEAD_MS ? "met" : "missed";
    const line = `overhead p50 = ${overhead.toFixed(2)} ms (goal < ${GOAL_OVERHEAD_MS} ms): ${verdict}`;
    log(`    ${line}   [p99 difference ${(sw.p99 - sc.p99).toFixed(2)} ms; throughput (w)/(c) ${(sw.rps / sc.rps).toFixed(3)}]`);
    verdicts.push(`concurrency ${String(conc).padStart(2)}: ${line}`);
    for (const [label, reasons] of failures) {
      log(`    ${label} failures (warm-up included):`);
      for (const [reason, count] of [...reasons].slice(0, 5)) log(`      ${count} x ${reason}`);
    }
    failures.clear();
  }
  log("\n   Goal, this run:");
  for (const line of verdicts) log(`     ${line}`);
} catch (err) {
  if (!stopping()) console.error(err);
  process.exitCode = 1;
} finally {
  await shutdown();
}
