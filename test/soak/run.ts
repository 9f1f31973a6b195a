/**
 * The long soak under faults, as a script (see soak.ts for what it runs and checks):
 *
 *   pnpm build && pnpm exec tsx test/soak/run.ts --minutes 30
 *   pnpm build && pnpm exec tsx test/soak/run.ts --minutes 30 --replicas 2
 *
 * 30 minutes by default: a random process killed (SIGKILL) and restarted every minute, NATS stopped
 * once at about a third of the run and Postgres at about two thirds, memory judged after a 2-minute
 * warm-up with a 20% margin. Prints each fault as it happens, progress every 30 s, and the figures
 * table at the end; exits 1 when a check fails or a reply was not clean.
 *
 * With --replicas N (2 or more), every role runs as N processes behind a balancer and the faults are
 * those of the replica test (replicas.test.ts): one replica of each role killed in turn, one a minute,
 * NATS and Postgres left up.
 */
import { parseArgs } from "node:util";
import { formatReport, runSoak } from "./soak.js";

const { values } = parseArgs({
  options: { minutes: { type: "string", default: "30" }, replicas: { type: "string", default: "1" } },
});
const minutes = Number(values.minutes);
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`--minutes must be a positive number, not ${values.minutes}`);
const replicas = Number(values.replicas);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 4)
  throw new Error(`--replicas must be 1 to 4, not ${values.replicas}`);

/** The script's output: progress lines and the figures table. */
const print = (line: string) => process.stdout.write(`${line}\n`);

const report = await runSoak({
  durationMs: minutes * 60_000,
  faultPlan: replicas > 1 ? "replicas" : "every-minute",
  replicas,
  faultEveryMs: 60_000,
  infraDownMs: 15_000,
  memory: { sampleEveryMs: 5_000, warmupMs: 120_000, margin: 0.2 },
  workers: 4,
  pauseMs: 400,
  log: print,
});
print(`\n${formatReport(report)}`);
const failed = report.checks.filter((c) => c.problems.length > 0).length + (report.load.unclean.length > 0 ? 1 : 0);
process.exit(failed > 0 ? 1 : 0);
