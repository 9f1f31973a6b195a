/**
 * Two replicas of every role (issue 34): catalog, execution, billing, identity, content, webhooks, the
 * gateway and the MCP server each run as two processes against one Postgres and one NATS JetStream,
 * each pair behind a TCP balancer standing for its Kubernetes Service (test/harness/balancer.ts). For
 * three minutes a mixed load runs (soak.ts: single calls, batches, priced calls, calls whose webhook
 * delivers, workflow runs, site crawls, calls with an Idempotency-Key retried after faults, MCP tool
 * calls and OAuth refreshes with rotation, and a limit loop past the rate limit and the free tier),
 * while one replica of each role in turn, chosen at random, is killed with SIGKILL and started again
 * (one every 20 s). Then: every request answered or refused cleanly, and every check of soak.ts passes
 * (ledger, priced calls once, events once, deliveries ended and none missing, no stuck hold, crawls
 * ended, each idempotent call run once, each workflow step run once, limits never exceeded, memory
 * flat). A longer run: `pnpm exec tsx test/soak/run.ts --replicas 2 --minutes 30`.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { doctoredCopiesFail } from "./doctored.js";
import { ALL_KINDS, formatReport, runSoak, type SoakReport } from "./soak.js";

const ROLES = ["billing", "catalog", "content", "execution", "gateway", "identity", "mcp-server", "webhooks"];
let report: SoakReport;

beforeAll(async () => {
  report = await runSoak({
    durationMs: 180_000,
    faultPlan: "replicas",
    faultEveryMs: 20_000,
    infraDownMs: 0,
    memory: { sampleEveryMs: 2_000, warmupMs: 20_000, margin: 0.5 },
    workers: 3,
    pauseMs: 500,
    replicas: 2,
    log: (line) => console.log(line),
  });
  console.log(formatReport(report));
}, 600_000);

describe("two replicas of every role, one of each killed in turn (3 minutes)", () => {
  it("killed one replica of every role and answered every request cleanly", () => {
    expect(report.faults.map((f) => f.what).sort()).toEqual(ROLES);
    expect(report.faults.every((f) => f.replica === 0 || f.replica === 1)).toBe(true);
    expect(report.load.unclean).toEqual([]);
    for (const kind of ALL_KINDS) {
      const ok = [...report.load.outcomes].filter(([label]) => label.startsWith(`${kind}\t2`)).length;
      expect(ok, `${kind}: no 2xx at all`).toBeGreaterThan(0);
    }
  });

  it("sent connections to both replicas of every role that is called", () => {
    for (const role of ROLES) {
      const split = report.connections[role] ?? [];
      expect(split, role).toHaveLength(2);
      expect(Math.min(...split), `${role}: ${split.join(" / ")}`).toBeGreaterThan(0);
    }
  });

  it("passes every check", () => {
    for (const check of report.checks) expect(check.problems, check.name).toEqual([]);
  });

  it("each check fails on a doctored copy of the run's snapshot", () => {
    doctoredCopiesFail(report);
  });
});
