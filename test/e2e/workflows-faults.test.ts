/**
 * Workflow runs survive their process. A five-step workflow with a priced step runs five times; in run
 * k the content process is SIGKILLed while step k's upstream call is under way, then started again.
 * Every run completes (resumed by the new process's sweeper once the dead one's lease ran out), the
 * upstream sees every step of every run exactly once (the resumed step gets execution's stored outcome
 * for its idempotency key `<run_id>:<step>`), the wallet is charged exactly once per priced step and
 * holds nothing, and each run has exactly one completion event. One process per role: only content dies.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentKey,
  balanceAtomic,
  type ExecStack,
  fund,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";
import { type ShopApi, shopDocument, startShopApi, workflowEvents } from "./workflow-support.js";

const PRICE_CENTS = 3;
const STEPS = 5;
const PRICED_STEP = 3;

describe("workflow runs when the content process is killed mid-step", () => {
  let s: ExecStack;
  let api: ShopApi;
  let agent: AgentKey;
  let workflowId: string;

  beforeAll(async () => {
    api = await startShopApi();
    s = await startExecStack(
      [`127.0.0.1:${api.port}`],
      { CONTENT_WORKFLOW_LEASE_MS: "1500", CONTENT_WORKFLOW_POLL_MS: "200" },
      ["catalog", "execution", "billing", "identity", "content", "gateway"],
      { layout: "per-role" },
    );
    agent = await registerAgent(s);
    const { tools } = await publishOpenApi(s, agent, shopDocument(`Faulty shop ${randomUUID().slice(0, 6)}`), api.url);
    const priced = await s.call("PATCH", `/tools/${tools.charge}`, {
      key: agent.key,
      body: { price_per_call_cents: PRICE_CENTS },
    });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    await fund(s, agent, 100);
    const steps = Array.from({ length: STEPS }, (_, i) => ({
      tool_id: i + 1 === PRICED_STEP ? tools.charge : tools.slow,
      input_mapping: { tag: "{{inputs.tag}}", step: i + 1 },
    }));
    const res = await s.call("POST", "/workflows", { key: agent.key, body: { name: "Five steps", steps } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    workflowId = res.body.id;
    // Long enough to kill the process while a step's call is at the upstream.
    api.slowMs = 600;
  });

  afterAll(async () => {
    await s?.stop();
    await api?.close();
  });

  it("completes every run with each step called once, each priced step charged once, one event per run", async () => {
    const before = await balanceAtomic(s, agent);
    const runs: Array<{ runId: string; tag: string }> = [];
    for (let k = 1; k <= STEPS; k++) {
      const tag = `kill-${k}-${randomUUID().slice(0, 6)}`;
      const started = await s.call("POST", `/workflows/${workflowId}/run`, {
        key: agent.key,
        body: { inputs: { tag }, async: true },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      runs.push({ runId: started.body.run_id, tag });
      // Step k is at the upstream: kill content, then start it again.
      await expect.poll(() => api.calls.get(`${tag}:${k}`) ?? 0, { timeout: 20_000, interval: 20 }).toBe(1);
      await s.stack.stop("content", "SIGKILL");
      await s.stack.start("content");
      await expect
        .poll(async () => (await s.call("GET", `/workflows/runs/${started.body.run_id}`, { key: agent.key })).body.status, {
          timeout: 30_000,
          interval: 200,
        })
        .toBe("completed");
    }

    for (const { runId, tag } of runs) {
      const run = (await s.call("GET", `/workflows/runs/${runId}`, { key: agent.key })).body;
      expect(run).toMatchObject({ status: "completed", steps_completed: STEPS, error: null });
      expect(run.result).toEqual({ tag, step: STEPS, done: true });
      for (let step = 1; step <= STEPS; step++) expect(api.calls.get(`${tag}:${step}`), `${tag} step ${step}`).toBe(1);
    }

    // Each run was taken over by the restarted process, and its interrupted step got the stored outcome.
    const contentLog = await s.stack.log("content");
    for (const { runId } of runs) expect(contentLog).toMatch(new RegExp(`"run_id":"${runId}"[^\n]*workflow run: resuming`));
    const replays = (await s.stack.log("execution")).split("\n").filter((l) => l.includes("idempotent replay"));
    expect(replays.length).toBeGreaterThanOrEqual(STEPS);

    // One charge per priced step, nothing held.
    const wallet = (await s.call("GET", "/agents/wallet", { key: agent.key })).body;
    expect(wallet.held_atomic).toBe(0);
    expect(before - (await balanceAtomic(s, agent))).toBe(BigInt(STEPS * PRICE_CENTS * 10_000));
    const ledger = (await s.call("GET", "/agents/wallet/ledger?limit=100", { key: agent.key })).body as Array<{
      kind: string;
      reference: string;
    }>;
    const pricedExecutions = await Promise.all(
      runs.map(
        async ({ runId }) =>
          (await s.call("GET", `/workflows/runs/${runId}`, { key: agent.key })).body.steps[PRICED_STEP - 1].execution_id,
      ),
    );
    for (const executionId of pricedExecutions) {
      expect(
        ledger.filter((e) => e.reference === executionId && e.kind === "capture"),
        executionId,
      ).toHaveLength(1);
    }

    // Exactly one completion event per run.
    const ids = new Set(runs.map((r) => r.runId));
    await expect
      .poll(async () => (await workflowEvents(s.stack)).filter((e) => ids.has(e.runId)).length, { timeout: 10_000 })
      .toBe(STEPS);
    const events = (await workflowEvents(s.stack)).filter((e) => ids.has(e.runId));
    expect(new Set(events.map((e) => e.runId)).size).toBe(STEPS);
    for (const e of events)
      expect(e).toMatchObject({ subject: "toolport.workflow.completed", stepsCompleted: STEPS, stepsTotal: STEPS });
  });
});
