/**
 * Workflows through the gateway on the real stack, with a real upstream API: values passed between
 * steps (an object, an array element, a number kept a number, values inside a string), every save-time
 * validation error, a failing middle step (later steps never run, a failed event counting the steps
 * that completed), the consent pause and its confirmation, private workflows closed to other users,
 * the public list's search, sort and paging, and an async run polled to its end.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Call, Reply } from "../harness/http.js";
import { signupHuman } from "../harness/identity-http.js";
import {
  type AgentKey,
  createKey,
  type ExecStack,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";
import { type ShopApi, type StepJson, shopDocument, startShopApi, workflowEvents } from "./workflow-support.js";

describe("workflows", () => {
  let s: ExecStack;
  let call: Call;
  let api: ShopApi;
  let alice: AgentKey;
  let bob: AgentKey;
  let tools: Record<string, string>;
  let bobsPrivateTool: string;

  const create = (who: AgentKey, body: Record<string, unknown>) => call("POST", "/workflows", { key: who.key, body });
  const run = (who: { key: string }, id: string, body: Record<string, unknown> = {}) =>
    call("POST", `/workflows/${id}/run`, { key: who.key, body });

  async function created(who: AgentKey, body: Record<string, unknown>): Promise<Reply["body"]> {
    const res = await create(who, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  /** The three steps that pass values along: profile -> compose (from step 1) -> compose (from step 2). */
  const passAlong = () => [
    { tool_id: tools.get_profile, description: "look the user up", input_mapping: { user_id: "{{inputs.user_id}}" } },
    {
      tool_id: tools.compose,
      description: "compose from the profile",
      input_mapping: {
        owner: "{{steps.1.result.user}}",
        first_order: "{{ steps.1.result.orders[0].id }}",
        order_count: "{{steps.1.result.count}}",
        totals: "{{steps.1.result.orders[].total}}",
        note: "Dear {{steps.1.result.user.name}}, you have {{steps.1.result.count}} orders ({{steps.1.result.orders[1]}})",
        tag: "{{inputs.tag}}",
      },
    },
    {
      tool_id: tools.compose,
      input_mapping: { note: "{{steps.2.result.received.note}}", owner: "{{steps.2.result.received.owner}}" },
    },
  ];

  beforeAll(async () => {
    api = await startShopApi();
    s = await startExecStack([`127.0.0.1:${api.port}`], {}, [
      "catalog",
      "execution",
      "billing",
      "identity",
      "content",
      "gateway",
    ]);
    call = s.call;
    alice = await registerAgent(s);
    bob = await registerAgent(s);
    tools = (await publishOpenApi(s, alice, shopDocument(`Shop ${randomUUID().slice(0, 6)}`), api.url)).tools;
    // A service of Bob's (published services are private): Alice cannot see its tools.
    bobsPrivateTool = (await publishOpenApi(s, bob, shopDocument(`Bob's shop ${randomUUID().slice(0, 6)}`), api.url)).tools
      .get_profile!;
  });

  afterAll(async () => {
    await s?.stop();
    await api?.close();
  });

  it("runs three steps passing an object, an array element, a number and text between them", async () => {
    const wf = await created(alice, { name: "Profile digest", description: "three steps", steps: passAlong(), tags: ["demo"] });
    expect(wf).toMatchObject({
      name: "Profile digest",
      description: "three steps",
      owner_id: alice.id,
      visibility: "private",
      tags: ["demo"],
      total_executions: 0,
      success_rate: 0,
      input_schema: null,
    });
    expect(wf.steps.map((x: StepJson) => [x.step_number, x.tool_id, x.tool_name])).toEqual([
      [1, tools.get_profile, "get_profile"],
      [2, tools.compose, "compose"],
      [3, tools.compose, "compose"],
    ]);
    expect(wf.steps[0].input_mapping).toEqual({ user_id: "{{inputs.user_id}}" });

    const before = api.received.length;
    const res = await run(alice, wf.id, { inputs: { user_id: "7", tag: "digest" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({
      workflow_id: wf.id,
      status: "completed",
      steps_completed: 3,
      steps_total: 3,
      error: null,
      consent: null,
    });
    expect(typeof r.run_id).toBe("string");
    expect(Number.isInteger(r.execution_time_ms)).toBe(true);
    expect(r.steps.map((x: StepJson) => [x.step_number, x.status, x.error])).toEqual([
      [1, "completed", null],
      [2, "completed", null],
      [3, "completed", null],
    ]);
    for (const step of r.steps) {
      expect(step.execution_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isInteger(step.duration_ms)).toBe(true);
    }

    // What the upstream received: each template resolved with its JSON type, or as text inside a string.
    const composed = api.received.slice(before).filter((x) => x.route === "compose");
    expect(composed).toHaveLength(2);
    expect(composed[0]!.body).toEqual({
      owner: { id: 7, name: "Ada", email: "ada@example.com" },
      first_order: "o-1",
      order_count: 2,
      totals: [12.5, 30],
      note: 'Dear Ada, you have 2 orders ({"id":"o-2","total":30})',
      tag: "digest",
    });
    expect(composed[1]!.body).toEqual({
      note: 'Dear Ada, you have 2 orders ({"id":"o-2","total":30})',
      owner: { id: 7, name: "Ada", email: "ada@example.com" },
    });
    // The run answers the last step's result; the step's resolved input is on the run.
    expect(r.result).toEqual({ received: composed[1]!.body });
    expect(r.steps[1].tool_input).toEqual(composed[0]!.body);

    // Each step is a stored execution of the runner, readable by its handle.
    const stored = await call("GET", `/tools/executions/${r.steps[0].execution_id}/result?path=user.name`, { key: alice.key });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.result).toBe("Ada");

    // The run by id and in the workflow's history; the workflow's counters moved.
    const again = await call("GET", `/workflows/runs/${r.run_id}`, { key: alice.key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(r);
    const history = await call("GET", `/workflows/${wf.id}/runs`, { key: alice.key });
    expect(history.status).toBe(200);
    expect(history.body.map((x: { run_id: string }) => x.run_id)).toEqual([r.run_id]);
    const after = await call("GET", `/workflows/${wf.id}`, { key: alice.key });
    expect(after.body).toMatchObject({ total_executions: 1, success_rate: 100 });

    // One completion event with the spec's fields.
    await expect
      .poll(async () => (await workflowEvents(s.stack)).filter((e) => e.runId === r.run_id), { timeout: 10_000 })
      .toEqual([
        {
          subject: "toolport.workflow.completed",
          runId: r.run_id,
          workflowId: wf.id,
          status: "completed",
          stepsCompleted: 3,
          stepsTotal: 3,
          executionTimeMs: r.execution_time_ms,
          error: undefined,
          ownerId: alice.id,
        },
      ]);
  });

  it("refuses a workflow whose steps or templates are wrong, naming the step and the template", async () => {
    const step = (mapping: Record<string, unknown>, tool = tools.compose) => ({ tool_id: tool, input_mapping: mapping });
    const base = { name: "bad" };
    const cases: Array<[string, Record<string, unknown>, string, Record<string, unknown>?]> = [
      ["no name", { steps: [step({})] }, "invalid_request", { field: "name" }],
      ["blank name", { name: "  ", steps: [step({})] }, "invalid_request", { field: "name" }],
      ["name over 128", { name: "n".repeat(129), steps: [step({})] }, "invalid_request", { field: "name" }],
      ["no steps", { ...base }, "invalid_request", { field: "steps" }],
      ["empty steps", { ...base, steps: [] }, "invalid_request", { field: "steps" }],
      ["21 steps", { ...base, steps: Array.from({ length: 21 }, () => step({})) }, "invalid_request", { field: "steps" }],
      ["steps not an array", { ...base, steps: { a: 1 } }, "invalid_request", { field: "steps" }],
      ["step without a tool", { ...base, steps: [{ input_mapping: {} }] }, "invalid_step", { field: "steps[0].tool_id" }],
      ["mapping not an object", { ...base, steps: [{ tool_id: tools.compose, input_mapping: [1] }] }, "invalid_request"],
      [
        "step_number out of order",
        { ...base, steps: [{ ...step({}), step_number: 2 }, step({})] },
        "invalid_step",
        { field: "steps[0].step_number", step_number: 1 },
      ],
      [
        "unknown tool",
        { ...base, steps: [step({}), step({}, "no-such-tool")] },
        "unknown_tool",
        { step_number: 2, tool_id: "no-such-tool", field: "steps[1].tool_id" },
      ],
      [
        "another user's private tool",
        { ...base, steps: [step({}, bobsPrivateTool)] },
        "unknown_tool",
        { step_number: 1, tool_id: bobsPrivateTool },
      ],
      [
        "a later step",
        { ...base, steps: [step({ note: "{{steps.2.result.x}}" }), step({})] },
        "invalid_template",
        { step_number: 1, template: "{{steps.2.result.x}}", field: "steps[0].input_mapping.note" },
      ],
      [
        "its own step",
        { ...base, steps: [step({}), step({ owner: { inner: ["{{steps.2.result}}"] } })] },
        "invalid_template",
        { step_number: 2, template: "{{steps.2.result}}", field: "steps[1].input_mapping.owner.inner[0]" },
      ],
      ["step 0", { ...base, steps: [step({}), step({ note: "{{steps.0.result.a}}" })] }, "invalid_template", { step_number: 2 }],
      [
        "not inputs or steps",
        { ...base, steps: [step({ note: "{{secrets.key}}" })] },
        "invalid_template",
        { template: "{{secrets.key}}" },
      ],
      ["no result keyword", { ...base, steps: [step({}), step({ note: "{{steps.1.output}}" })] }, "invalid_template"],
      ["unclosed", { ...base, steps: [step({ note: "hello {{inputs.name" })] }, "invalid_template", { step_number: 1 }],
      ["bad path", { ...base, steps: [step({}), step({ note: "{{steps.1.result.items[}}" })] }, "invalid_template"],
      ["visibility", { ...base, steps: [step({})], visibility: "everyone" }, "invalid_request", { field: "visibility" }],
      ["tags not strings", { ...base, steps: [step({})], tags: [1] }, "invalid_request", { field: "tags[0]" }],
      [
        "input_schema not a schema",
        { ...base, steps: [step({})], input_schema: { type: "nonsense" } },
        "invalid_request",
        { field: "input_schema" },
      ],
    ];
    for (const [why, body, code, details] of cases) {
      const res = await create(alice, body);
      expect(res.status, `${why}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.code, why).toBe(code);
      if (details) expect(res.body.error.details, why).toMatchObject(details);
      if (code === "invalid_template") expect(res.body.error.message, why).toMatch(/^step \d+: /);
    }
    // The message names the step and the template as written.
    const later = await create(alice, { ...base, steps: [step({ note: "{{steps.2.result.x}}" }), step({})] });
    expect(later.body.error.message).toBe(
      "step 1: note {{steps.2.result.x}}: refers to step 2, which does not run before step 1",
    );
    // Nothing was stored by any refused request.
    const mine = await call("GET", "/workflows/my", { key: alice.key });
    expect(mine.body.filter((w: { id: string; name: string }) => w.name === "bad" || w.name.startsWith("n".repeat(129)))).toEqual(
      [],
    );

    // PATCH checks the same way, and keeps the workflow as it was when it refuses.
    const wf = await created(alice, { name: "patchable", steps: [step({ note: "{{inputs.note}}" })] });
    expectError(
      await call("PATCH", `/workflows/${wf.id}`, { key: alice.key, body: { steps: [step({ note: "{{steps.1.result}}" })] } }),
      400,
      "invalid_template",
    );
    expectError(await call("PATCH", `/workflows/${wf.id}`, { key: alice.key, body: { name: "" } }), 400, "invalid_request");
    const unchanged = await call("GET", `/workflows/${wf.id}`, { key: alice.key });
    expect(unchanged.body).toEqual(wf);
    const patched = await call("PATCH", `/workflows/${wf.id}`, {
      key: alice.key,
      body: { name: "patched", tags: ["x"], input_schema: { type: "object", required: ["note"] } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ name: "patched", tags: ["x"], steps: wf.steps, input_schema: { required: ["note"] } });

    // The inputs are checked against input_schema; an input used inside a longer string must be given.
    expectError(await run(alice, wf.id, { inputs: {} }), 400, "invalid_inputs");
    expectError(await run(alice, wf.id, { inputs: "x" }), 400, "invalid_request");
    const inText = await created(alice, { name: "in text", steps: [step({ note: "hello {{inputs.name}}" })] });
    const missing = await run(alice, inText.id, { inputs: {} });
    expectError(missing, 400, "missing_input");
    expect(missing.body.error.details).toMatchObject({ step_number: 1, template: "{{inputs.name}}" });
    // An input that is a whole value may be left out: its parameter is left out.
    const optional = await run(alice, wf.id, { inputs: { note: "n" } });
    expect(optional.body.status).toBe("completed");
    const dropped = await created(alice, { name: "optional input", steps: [step({ note: "{{inputs.note}}", tag: "t" })] });
    const ran = await run(alice, dropped.id, {});
    expect(ran.body.status, JSON.stringify(ran.body)).toBe("completed");
    expect(ran.body.result).toEqual({ received: { tag: "t" } });

    // A run needs an API key: a JWT is refused.
    const human = await signupHuman(call, "wf-human");
    expectError(await call("POST", `/workflows/${wf.id}/run`, { token: human.token, body: {} }), 401, "unauthenticated");
  });

  it("fails the run at a failing middle step: later steps never run, the event counts the completed ones", async () => {
    const tag = `fail-${randomUUID().slice(0, 8)}`;
    const wf = await created(alice, {
      name: "Breaks in the middle",
      steps: [
        { tool_id: tools.get_profile, input_mapping: { user_id: "1" } },
        { tool_id: tools.fail, input_mapping: { tag, step: 2 } },
        { tool_id: tools.compose, input_mapping: { tag, step: 3 } },
      ],
    });
    const res = await run(alice, wf.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({ status: "failed", steps_completed: 1, steps_total: 3, result: null });
    expect(r.error).toMatch(/500/);
    expect(r.steps.map((x: StepJson) => x.status)).toEqual(["completed", "failed", "skipped"]);
    expect(r.steps[1].execution_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.steps[1].error).toBe(r.error);
    expect(r.steps[2]).toMatchObject({ execution_id: null, tool_input: null });
    expect(api.calls.get(`${tag}:2`)).toBe(1);
    expect(api.calls.get(`${tag}:3`)).toBeUndefined();

    const stats = await call("GET", `/workflows/${wf.id}`, { key: alice.key });
    expect(stats.body).toMatchObject({ total_executions: 1, success_rate: 0 });
    await expect
      .poll(async () => (await workflowEvents(s.stack)).filter((e) => e.runId === r.run_id), { timeout: 10_000 })
      .toEqual([
        expect.objectContaining({
          subject: "toolport.workflow.failed",
          status: "failed",
          stepsCompleted: 1,
          stepsTotal: 3,
          error: r.error,
        }),
      ]);

    // A tool the runner may not call is a failed step too (refused: nothing ran).
    const limited = await createKey(s, alice, { allowed_tools: [tools.get_profile!] });
    const refused = await run({ key: limited }, wf.id);
    expect(refused.body).toMatchObject({ status: "failed", steps_completed: 1 });
    expect(refused.body.steps[1]).toMatchObject({ status: "failed", error_code: "tool_not_permitted", execution_id: null });
    expect(api.calls.get(`${tag}:2`)).toBe(1);
    const later = await call("GET", `/workflows/${wf.id}`, { key: alice.key });
    expect(later.body).toMatchObject({ total_executions: 2, success_rate: 0 });
  });

  it("pauses at a step that needs consent and continues it with the confirm token", async () => {
    const tag = `consent-${randomUUID().slice(0, 8)}`;
    const careful = await createKey(s, alice, { require_confirmation: true });
    const wf = await created(alice, {
      name: "Asks first",
      steps: [
        { tool_id: tools.get_profile, input_mapping: { user_id: "3" } },
        { tool_id: tools.charge, input_mapping: { tag, step: 2, note: "for {{steps.1.result.user.name}}" } },
        // "3" and "2" side by side: profile 32.
        { tool_id: tools.get_profile, input_mapping: { user_id: "{{steps.1.result.user.id}}{{steps.2.result.step}}" } },
      ],
    });
    const res = await run({ key: careful }, wf.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const paused = res.body;
    expect(paused).toMatchObject({ status: "awaiting_confirmation", steps_completed: 1, error: null, result: null });
    expect(paused.steps.map((x: StepJson) => x.status)).toEqual(["completed", "awaiting_confirmation", "pending"]);
    expect(paused.consent).toMatchObject({
      tool_id: tools.charge,
      tool_name: "charge",
      parameters: { tag, step: 2, note: "for Ada" },
    });
    expect(typeof paused.consent.confirm_token).toBe("string");
    expect(api.calls.get(`${tag}:2`)).toBeUndefined();
    const read = await call("GET", `/workflows/runs/${paused.run_id}`, { key: careful });
    expect(read.body).toMatchObject({ status: "awaiting_confirmation", consent: paused.consent });

    // A token that is not the run's, another user, and a missing token are refused; the run still waits.
    const confirm = (who: string, body: Record<string, unknown>) =>
      call("POST", `/workflows/runs/${paused.run_id}/confirm`, { key: who, body });
    expectError(await confirm(careful, { confirm_token: "forged" }), 400, "invalid_confirm_token");
    expectError(await confirm(careful, {}), 400, "invalid_request");
    expectError(await confirm(bob.key, { confirm_token: paused.consent.confirm_token }), 404, "workflow_run_not_found");
    expect(api.calls.get(`${tag}:2`)).toBeUndefined();

    const done = await confirm(careful, { confirm_token: paused.consent.confirm_token });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: "completed", steps_completed: 3, consent: null, error: null });
    expect(done.body.steps.map((x: StepJson) => x.status)).toEqual(["completed", "completed", "completed"]);
    expect(done.body.result.user.id).toBe(32);
    expect(api.calls.get(`${tag}:2`)).toBe(1);
    // Confirmed once: again is a conflict, and nothing runs twice.
    expectError(await confirm(careful, { confirm_token: paused.consent.confirm_token }), 409, "run_not_awaiting_confirmation");
    expect(api.calls.get(`${tag}:2`)).toBe(1);
  });

  it("keeps a private workflow and its runs from other users, and lets anyone run a public one", async () => {
    // A built-in tool, which every caller can see (a tool of Alice's private service would fail Bob's run).
    const wf = await created(alice, {
      name: "Alice only",
      steps: [{ tool_id: "text-word-count", input_mapping: { text: "one two" } }],
    });
    const asBob = { key: bob.key };
    expectError(await call("GET", `/workflows/${wf.id}`, asBob), 404, "workflow_not_found");
    expectError(await call("GET", `/workflows/${wf.id}`), 404, "workflow_not_found");
    expectError(await run(bob, wf.id), 404, "workflow_not_found");
    expectError(await call("GET", `/workflows/${wf.id}/runs`, asBob), 404, "workflow_not_found");
    expectError(await call("PATCH", `/workflows/${wf.id}`, { ...asBob, body: { name: "mine" } }), 404, "workflow_not_found");
    expectError(await call("DELETE", `/workflows/${wf.id}`, asBob), 404, "workflow_not_found");
    // The same answer as for an id that does not exist.
    expectError(await call("GET", `/workflows/${randomUUID()}`, asBob), 404, "workflow_not_found");
    expectError(await call("GET", "/workflows/not-a-uuid", asBob), 404, "workflow_not_found");
    const mine = await run(alice, wf.id);
    expectError(await call("GET", `/workflows/runs/${mine.body.run_id}`, asBob), 404, "workflow_run_not_found");

    // Made public: readable without credentials, runnable by Bob, whose runs stay his own.
    const pub = await call("PATCH", `/workflows/${wf.id}`, { key: alice.key, body: { visibility: "public" } });
    expect(pub.body.visibility).toBe("public");
    expect((await call("GET", `/workflows/${wf.id}`)).status).toBe(200);
    const bobs = await run(bob, wf.id);
    expect(bobs.body.status).toBe("completed");
    expectError(await call("GET", `/workflows/runs/${bobs.body.run_id}`, { key: alice.key }), 404, "workflow_run_not_found");
    const bobsHistory = await call("GET", `/workflows/${wf.id}/runs`, asBob);
    expect(bobsHistory.body.map((x: { run_id: string }) => x.run_id)).toEqual([bobs.body.run_id]);
    const alicesHistory = await call("GET", `/workflows/${wf.id}/runs`, { key: alice.key });
    expect(alicesHistory.body.map((x: { run_id: string }) => x.run_id)).toEqual([mine.body.run_id]);
    // Still Alice's to delete; deleted, it is gone for everyone, and its runs stay readable by their runner.
    expectError(await call("DELETE", `/workflows/${wf.id}`, asBob), 404, "workflow_not_found");
    const deleted = await call("DELETE", `/workflows/${wf.id}`, { key: alice.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expectError(await call("GET", `/workflows/${wf.id}`), 404, "workflow_not_found");
    expectError(await call("DELETE", `/workflows/${wf.id}`, { key: alice.key }), 404, "workflow_not_found");
    expect((await call("GET", `/workflows/runs/${bobs.body.run_id}`, asBob)).body.status).toBe("completed");
  });

  it("lists public workflows by search, sort, limit and offset", async () => {
    const word = `zebra${randomUUID().slice(0, 6)}`;
    const steps = [{ tool_id: "text-word-count", input_mapping: { text: "one two" } }];
    const b = await created(alice, { name: `Beta ${word}`, steps, visibility: "public", tags: ["t1"] });
    const a = await created(bob, { name: `alpha ${word}`, steps, visibility: "public" });
    const c = await created(alice, { name: "Gamma", description: `about ${word}`, steps, visibility: "public" });
    await created(alice, { name: `Hidden ${word}`, steps, visibility: "private" });
    for (let i = 0; i < 2; i++) expect((await run(alice, a.id)).body.status).toBe("completed");
    expect((await run(alice, c.id)).body.status).toBe("completed");

    const list = async (query: string) => {
      const res = await call("GET", `/workflows/public?search=${word}${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as Reply["body"][];
    };
    expect((await list("")).map((w) => w.id)).toEqual([c.id, a.id, b.id]);
    expect((await list("&sort=newest")).map((w) => w.id)).toEqual([c.id, a.id, b.id]);
    expect((await list("&sort=name")).map((w) => w.id)).toEqual([a.id, b.id, c.id]);
    expect((await list("&sort=popular")).map((w) => w.id)).toEqual([a.id, c.id, b.id]);
    expect((await list("&sort=name&limit=1&offset=1")).map((w) => w.id)).toEqual([b.id]);
    expect((await list("&sort=name&offset=3")).map((w) => w.id)).toEqual([]);
    const summary = (await list("&sort=popular"))[0];
    expect(summary).toEqual({
      id: a.id,
      name: `alpha ${word}`,
      description: "",
      step_count: 1,
      owner_id: bob.id,
      visibility: "public",
      tags: [],
      total_executions: 2,
      success_rate: 100,
      created_at: a.created_at,
    });
    // Wildcards in the search are taken literally.
    expect(await list("%25")).toEqual([]);
    for (const [query, field] of [
      ["sort=best", "sort"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=x", "limit"],
      ["offset=-1", "offset"],
    ]) {
      const res = await call("GET", `/workflows/public?${query}`);
      expectError(res, 400, "invalid_request");
      expect(res.body.error.details.field).toBe(field);
    }
    // /workflows/my: the caller's own, both visibilities, newest first.
    const human = await signupHuman(call, "wf-lister");
    const mineByJwt = await call("GET", "/workflows/my", { token: human.token });
    expect(mineByJwt.status).toBe(200);
    expect(mineByJwt.body).toEqual([]);
    const bobs = await call("GET", "/workflows/my?visibility=public", { key: bob.key });
    expect(bobs.body.map((w: { id: string; name: string }) => w.id)).toContain(a.id);
    expectError(await call("GET", "/workflows/my?visibility=all", { key: bob.key }), 400, "invalid_request");
  });

  it("answers an async run at once with 202 and finishes it in the background", async () => {
    const tag = `async-${randomUUID().slice(0, 8)}`;
    api.slowMs = 400;
    try {
      const wf = await created(alice, {
        name: "Slow",
        steps: [
          { tool_id: tools.slow, input_mapping: { tag, step: 1 } },
          { tool_id: tools.slow, input_mapping: { tag, step: 2 } },
        ],
      });
      const started = Date.now();
      const res = await run(alice, wf.id, { async: true });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(Date.now() - started).toBeLessThan(400);
      expect(res.body).toMatchObject({ status: "running", steps_completed: 0, result: null, finished_at: null });
      let last: Reply["body"];
      await expect
        .poll(
          async () => {
            last = (await call("GET", `/workflows/runs/${res.body.run_id}`, { key: alice.key })).body;
            return last.status;
          },
          { timeout: 10_000, interval: 100 },
        )
        .toBe("completed");
      expect(last).toMatchObject({ steps_completed: 2, result: { tag, step: 2, done: true } });
      expect(last.execution_time_ms).toBeGreaterThanOrEqual(800);
      expect(api.calls.get(`${tag}:1`)).toBe(1);
      expect(api.calls.get(`${tag}:2`)).toBe(1);
    } finally {
      api.slowMs = 0;
    }
  });
});
