/**
 * The content service's own layer, on a real Postgres and without a stack: its handlers through connect's
 * in-memory router transport (the kit's server interceptor, real serialization), its domain and store
 * behind them, the workflow runner and the crawl queue as the role runs them. Catalog and execution are
 * in-process fakes of their RPCs only (served through the same transport, with the caller's principal
 * forwarded as the kit's clients forward it); content's own store is the real one. Sites are crawled
 * from a real HTTP server on 127.0.0.1.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create, fromBinary } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { notFound, permissionDenied, unavailable } from "@toolport/kit/errors";
import { InputValidator } from "@toolport/kit/input-validator";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import { parsePath, selectPath } from "@toolport/kit/json-path";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import { createLogger } from "@toolport/kit/logger";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { principalKey } from "@toolport/kit/rpc";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { AuthMethod, type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { Visibility, WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { SubmissionStatus } from "@toolport/proto/toolport/content/v1/skills_pb";
import { WorkflowEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import type { CallResult } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedDatabase, type TestDatabase } from "../../../test/harness/db.js";
import { inMemoryService, inMemoryPeer as peer, refusal } from "../../../test/harness/in-memory-rpc.js";
import { until } from "../../../test/harness/wait.js";
import { CatalogClient } from "../src/clients/catalog.js";
import { ExecutionClient } from "../src/clients/execution.js";
import { CrawlQueue } from "../src/crawl-queue.js";
import { siteHandlers } from "../src/handlers/sites.js";
import { skillHandlers } from "../src/handlers/skills.js";
import { workflowHandlers } from "../src/handlers/workflows.js";
import { ExtractPool } from "../src/sites/extract-pool.js";
import { SiteStore } from "../src/store/sites.js";
import { SkillStore } from "../src/store/skills.js";
import { WorkflowStore } from "../src/store/workflows.js";
import { WorkflowRunner } from "../src/workflows/runner.js";
import { fixtureSiteRoutes } from "./site-fixture.js";

const log = createLogger("content-test", process.env.TEST_LOG ?? "silent");
const CONFIRM_TOKEN = "confirm-token-1";

/** A timestamp in nanoseconds (0 when absent), for comparing two of them exactly. */
const instant = (t: Timestamp | undefined) => (t ? t.seconds * 1_000_000_000n + BigInt(t.nanos) : 0n);

const jwtCaller = (extra: { isPlatformAdmin?: boolean } = {}) =>
  create(PrincipalSchema, { accountId: randomUUID(), organizationId: randomUUID(), authMethod: AuthMethod.JWT, ...extra });
/** The same account calling with an API key (workflows run with a key's permissions). */
const withKey = (p: Principal) => create(PrincipalSchema, { ...p, authMethod: AuthMethod.API_KEY, keyId: randomUUID() });

const skillMd = (name: string) => `---
name: ${name}
description: Turns CSV files into charts.
license: MIT
---

# ${name}

Use scripts/plot.py to draw a chart.
`;
const skill = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  skillMdContent: skillMd(name),
  scripts: [{ name: "plot.py", content: "print('chart')\n" }],
  referenceFiles: [],
  assets: [],
  ...extra,
});

interface FakeTool {
  id: string;
  name: string;
  /** Only this account sees the tool; undefined: everyone. */
  ownerId?: string;
}

/** What the execution fake was asked to call. */
interface Called {
  toolId: string;
  input: unknown;
  accountId: string | undefined;
  keyId: string | undefined;
  idempotencyKey: string | undefined;
  confirmToken: string | undefined;
}

describe("content: handlers, domain and store on Postgres, catalog and execution as fakes of their RPCs", () => {
  let db: TestDatabase;
  let content: ReturnType<typeof inMemoryService<typeof ContentService>>;
  let runner: WorkflowRunner;
  let crawls: CrawlQueue;
  let site: Server;
  let siteBase: string;
  const extractor = new ExtractPool({ threads: 1, queue: 8, heapMb: 256 });
  let outbound: Outbound;
  let wakes = 0;
  let nudges = 0;

  // The catalog: tools and services, each public or one account's alone; `catalogDown` makes it fail to answer.
  let catalogDown = false;
  const tools = new Map<string, FakeTool>();
  const services = new Map<string, { ownerId?: string; organizationId?: string }>();
  const catalogFake: Partial<ServiceImpl<typeof CatalogService>> = {
    async getTool(req, context) {
      if (catalogDown) throw unavailable("internal", "catalog is down");
      const who = context.values.get(principalKey);
      const tool = tools.get(req.toolId);
      if (!tool || (tool.ownerId && tool.ownerId !== who?.accountId))
        throw notFound("tool_not_found", `tool ${req.toolId} not found`);
      return { tool: { id: tool.id, name: tool.name } };
    },
    async getService(req, context) {
      if (catalogDown) throw unavailable("internal", "catalog is down");
      const who = context.values.get(principalKey);
      const service = services.get(req.serviceId);
      if (!service || (service.ownerId && service.ownerId !== who?.accountId))
        throw notFound("service_not_found", `service ${req.serviceId} not found`);
      if (service.organizationId !== who?.organizationId)
        throw permissionDenied("not_service_owner", "only the service's organization may change it");
      return { service: { id: req.serviceId } };
    },
  };

  // Execution: `echo` answers its input, `consent` asks for confirmation first, `fails` fails upstream.
  const called: Called[] = [];
  const echo = { id: randomUUID(), name: "echo" };
  const needsConsent = { id: randomUUID(), name: "send_money" };
  const fails = { id: randomUUID(), name: "always_fails" };
  /** Answers more than a call returns: cut (truncated), the whole stored by execution for a read back by path. */
  const big = { id: randomUUID(), name: "big_report" };
  const stored = new Map<string, Json>();
  const readBack: { executionId: string; path: string | undefined }[] = [];
  const executionFake: Partial<ServiceImpl<typeof ExecutionService>> = {
    async callBatch(req, context) {
      const who = context.values.get(principalKey);
      const results = req.calls.map((c) => {
        const input = fromJsonBytes(c.toolInputJson);
        called.push({
          toolId: c.toolId,
          input,
          accountId: who?.accountId,
          keyId: who?.keyId,
          idempotencyKey: c.idempotencyKey,
          confirmToken: c.confirmToken,
        });
        if (c.toolId === needsConsent.id && c.confirmToken !== CONFIRM_TOKEN)
          return {
            toolId: c.toolId,
            success: false,
            consent: {
              toolId: c.toolId,
              toolName: needsConsent.name,
              parametersJson: c.toolInputJson,
              confirmToken: CONFIRM_TOKEN,
              expiresAt: timestampFromDate(new Date(Date.now() + 600_000)),
            },
          };
        if (c.toolId === fails.id)
          return {
            toolId: c.toolId,
            success: false,
            executionId: randomUUID(),
            error: "the upstream answered 500",
            errorDetail: { reason: "upstream_error" },
          };
        if (c.toolId === big.id) {
          const executionId = randomUUID();
          stored.set(executionId, { rows: [{ id: "r1" }, { id: "r2" }], padding: "x".repeat(1000) });
          return { toolId: c.toolId, success: true, executionId, truncated: true, resultJson: jsonBytes({ cut: true }) };
        }
        return { toolId: c.toolId, success: true, executionId: randomUUID(), resultJson: jsonBytes({ echoed: input }) };
      });
      return { results } as { results: CallResult[] };
    },
    async getExecutionResult(req) {
      readBack.push({ executionId: req.executionId, path: req.path });
      const whole = stored.get(req.executionId);
      if (whole === undefined) throw notFound("execution_not_found", `execution ${req.executionId} not found`);
      const found = req.path ? selectPath(whole, parsePath(req.path)) : { matched: true, value: whole };
      return {
        result: {
          executionId: req.executionId,
          pathMatched: req.path ? found.matched : undefined,
          resultJson: found.matched ? jsonBytes(found.value) : new Uint8Array(),
        },
      };
    },
  };

  beforeAll(async () => {
    db = await migratedDatabase("content_handlers", "content");
    for (const t of [echo, needsConsent, fails, big]) tools.set(t.id, t);

    const routes = fixtureSiteRoutes();
    site = createServer((req, res) => {
      const handler = routes[new URL(req.url ?? "/", "http://x").pathname];
      if (handler) handler(req, res);
      else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    siteBase = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const policy = new AddressPolicy("127.0.0.1", "CONTENT_OUTBOUND_ALLOW");
    outbound = new Outbound({ policy });

    const sites = new SiteStore(db.pool);
    crawls = new CrawlQueue({
      pool: db.pool,
      sites,
      outbound,
      log,
      concurrency: 1,
      leaseMs: 30_000,
      pollMs: 200,
      extractor,
      catalogServices: async () => [],
    });
    await crawls.start();
    const workflows = new WorkflowStore(db.pool);
    runner = new WorkflowRunner({
      pool: db.pool,
      store: workflows,
      execution: new ExecutionClient(peer(ExecutionService, executionFake, "execution")),
      log,
      nudge: () => nudges++,
      leaseMs: 10_000,
      pollMs: 200,
      concurrency: 4,
      maxAttempts: 3,
    });
    await runner.start();
    const catalog = new CatalogClient(peer(CatalogService, catalogFake, "catalog"));
    content = inMemoryService(
      ContentService,
      {
        ...skillHandlers({ skills: new SkillStore(db.pool), catalog }),
        ...siteHandlers({
          sites,
          policy,
          wake: () => {
            wakes++;
            crawls.wake();
          },
        }),
        ...workflowHandlers({ workflows, runner, validator: new InputValidator(log), syncWaitMs: 10_000, catalog }),
      },
      "content",
    );
  });

  afterAll(async () => {
    await runner?.stop();
    await crawls?.stop();
    await outbound?.close();
    await extractor.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await db?.pool.end();
  });

  describe("skills", () => {
    it("creates private skills, shows them to their owner alone, lists and deletes them, and refuses what the rules refuse", async () => {
      const alice = jwtCaller();
      const bob = jwtCaller();
      const asAlice = content.as(alice);
      const created = (await asAlice.createSkill(skill("csv-charts"))).skill!;
      expect(created).toMatchObject({
        name: "csv-charts",
        description: "Turns CSV files into charts.",
        license: "MIT",
        visibility: Visibility.PRIVATE,
        ownerId: alice.accountId,
        scripts: [{ name: "plot.py", content: "print('chart')\n" }],
      });
      expect((await asAlice.getSkill({ skillId: created.id })).skill?.skillMd).toBe(skillMd("csv-charts"));
      // Private: anyone else, signed in or not, is told there is no such skill.
      for (const other of [content.as(bob), content.anonymous])
        expect(await refusal(other.getSkill({ skillId: created.id }))).toMatchObject({
          code: Code.NotFound,
          reason: "skill_not_found",
        });
      expect(await refusal(asAlice.getSkill({ skillId: "not-a-uuid" }))).toMatchObject({ code: Code.NotFound });

      const archive = await asAlice.getSkillArchive({ skillId: created.id });
      expect(archive.filename).toBe("csv-charts.zip");
      expect(Buffer.from(archive.zip.subarray(0, 2)).toString("latin1")).toBe("PK");

      await asAlice.createSkill(skill("second-skill"));
      expect((await asAlice.listMySkills({})).skills.map((s) => s.name).sort()).toEqual(["csv-charts", "second-skill"]);
      expect((await asAlice.listMySkills({ visibility: "public" })).skills).toEqual([]);
      expect(await refusal(asAlice.listMySkills({ visibility: "secret" }))).toMatchObject({ reason: "invalid_request" });
      // Listing one's own skills takes a signed-in user, not an API key.
      expect(await refusal(content.as(withKey(alice)).listMySkills({}))).toMatchObject({
        code: Code.Unauthenticated,
        reason: "jwt_required",
      });

      expect(await refusal(asAlice.createSkill(skill("csv-charts")))).toMatchObject({
        code: Code.AlreadyExists,
        reason: "skill_name_taken",
      });
      expect(await refusal(asAlice.createSkill(skill("public-one", { visibility: "public" })))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "visibility_not_allowed",
      });
      expect(await refusal(asAlice.createSkill({ ...skill("broken"), skillMdContent: "no front matter" }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "invalid_skill",
      });
      expect(await refusal(content.anonymous.createSkill(skill("nobody")))).toMatchObject({ code: Code.Unauthenticated });

      // Deleting: only the owner; afterwards it is gone.
      expect(await refusal(content.as(bob).deleteSkill({ skillId: created.id }))).toMatchObject({ reason: "skill_not_found" });
      expect(await asAlice.deleteSkill({ skillId: created.id })).toMatchObject({ deleted: true });
      expect(await refusal(asAlice.getSkill({ skillId: created.id }))).toMatchObject({ reason: "skill_not_found" });
      expect((await asAlice.listMySkills({})).skills.map((s) => s.name)).toEqual(["second-skill"]);
    });

    it("links a skill to a catalog service the caller can see, asking the catalog as the caller", async () => {
      const alice = jwtCaller();
      const mine = randomUUID();
      const publicOfOthers = randomUUID();
      const privateOfOthers = randomUUID();
      services.set(mine, { ownerId: alice.accountId, organizationId: alice.organizationId });
      services.set(publicOfOthers, { organizationId: randomUUID() });
      services.set(privateOfOthers, { ownerId: randomUUID() });
      const asAlice = content.as(alice);
      expect((await asAlice.createSkill(skill("own-service", { serviceId: mine }))).skill?.serviceId).toBe(mine);
      // Seen but not managed (catalog's not_service_owner) is still a service the caller can see.
      expect((await asAlice.createSkill(skill("public-service", { serviceId: publicOfOthers }))).skill?.serviceId).toBe(
        publicOfOthers,
      );
      for (const serviceId of [privateOfOthers, randomUUID(), "not-a-uuid"])
        expect(await refusal(asAlice.createSkill(skill("hidden-service", { serviceId })))).toMatchObject({
          code: Code.InvalidArgument,
          reason: "invalid_service_id",
        });

      // The catalog failing to answer is 503, and nothing is stored.
      catalogDown = true;
      try {
        expect(await refusal(asAlice.createSkill(skill("while-down", { serviceId: mine })))).toMatchObject({
          code: Code.Unavailable,
          reason: "catalog_unavailable",
        });
      } finally {
        catalogDown = false;
      }
      expect((await asAlice.listMySkills({})).skills.map((s) => s.name).sort()).toEqual(["own-service", "public-service"]);
    });

    it("publishes a skill only through a reviewed submission, reviewed once, by a platform administrator", async () => {
      const alice = jwtCaller();
      const bob = jwtCaller();
      const admin = jwtCaller({ isPlatformAdmin: true });
      const asAlice = content.as(alice);
      const name = `reviewed-${randomUUID().slice(0, 8)}`;
      const own = (await asAlice.createSkill(skill(name))).skill!;
      const submission = (await asAlice.createSkillSubmission({ skillId: own.id })).submission!;
      expect(submission).toMatchObject({
        skillName: name,
        status: SubmissionStatus.PENDING,
        sourceSkillId: own.id,
        submitterId: alice.accountId,
      });
      expect(await refusal(content.as(bob).createSkillSubmission({ skillId: own.id }))).toMatchObject({
        reason: "skill_not_found",
      });
      expect(await refusal(content.as(bob).getSkillSubmission({ submissionId: submission.id }))).toMatchObject({
        reason: "submission_not_found",
      });
      expect((await content.as(admin).getSkillSubmission({ submissionId: submission.id })).submission?.id).toBe(submission.id);
      expect((await asAlice.listMySkillSubmissions({})).submissions.map((s) => s.id)).toEqual([submission.id]);
      expect((await content.anonymous.listPublicSkills({ search: name })).skills).toEqual([]);

      // Only platform administrators see the queue and decide.
      expect(await refusal(asAlice.listSkillSubmissions({}))).toMatchObject({
        code: Code.PermissionDenied,
        reason: "platform_admin_only",
      });
      expect(await refusal(asAlice.reviewSkillSubmission({ submissionId: submission.id, decision: "approve" }))).toMatchObject({
        reason: "platform_admin_only",
      });
      const asAdmin = content.as(admin);
      expect((await asAdmin.listSkillSubmissions({})).submissions.map((s) => s.id)).toContain(submission.id);
      expect(await refusal(asAdmin.listSkillSubmissions({ status: "lost" }))).toMatchObject({ reason: "invalid_request" });
      expect(await refusal(asAdmin.reviewSkillSubmission({ submissionId: submission.id, decision: "maybe" }))).toMatchObject({
        reason: "invalid_request",
      });
      const approved = (
        await asAdmin.reviewSkillSubmission({ submissionId: submission.id, decision: "approve", reviewerNotes: " Fine. " })
      ).submission!;
      expect(approved).toMatchObject({ status: SubmissionStatus.APPROVED, reviewerNotes: "Fine." });
      expect(approved.skillId).toBeTruthy();
      expect(await refusal(asAdmin.reviewSkillSubmission({ submissionId: submission.id, decision: "reject" }))).toMatchObject({
        code: Code.AlreadyExists,
        reason: "submission_already_reviewed",
      });

      // The published skill is public: listed, and readable by anyone.
      const listed = (await content.anonymous.listPublicSkills({ search: name })).skills;
      expect(listed.map((s) => [s.id, s.visibility])).toEqual([[approved.skillId, Visibility.PUBLIC]]);
      expect((await content.as(bob).getSkill({ skillId: approved.skillId ?? "" })).skill?.name).toBe(name);
      expect(await refusal(content.anonymous.listPublicSkills({ limit: 0 }))).toMatchObject({ reason: "invalid_request" });
    });

    it("refuses a submission carrying a credential, naming file and line, and stores nothing", async () => {
      const bob = jwtCaller();
      const secret = "AKIAIOSFODNN7EXAMPLE";
      const leak = await refusal(
        content.as(bob).createSkillSubmission({
          ...skill("leaky-skill"),
          scripts: [{ name: "deploy.sh", content: `#!/bin/sh\n# deploy\nexport AWS_ACCESS_KEY_ID=${secret}\n` }],
        }),
      );
      expect(leak).toMatchObject({ code: Code.InvalidArgument, reason: "submission_contains_secret" });
      expect(leak.message).toMatch(/^scripts\/deploy\.sh line 3: /);
      expect(leak.message).not.toContain(secret);
      expect((await content.as(bob).listMySkillSubmissions({})).submissions).toEqual([]);
      expect(await refusal(content.as(bob).createSkillSubmission({}))).toMatchObject({ reason: "invalid_request" });
    });
  });

  describe("workflows", () => {
    const step = (toolId: string, mapping: JsonObject, extra: Record<string, unknown> = {}) => ({
      toolId,
      description: "",
      inputMappingJson: jsonBytes(mapping),
      ...extra,
    });

    /** A workflow of `owner`'s, with no description or tags. */
    const newWorkflow = async (
      owner: Principal,
      fields: { name: string; steps: ReturnType<typeof step>[]; inputSchemaJson?: Uint8Array },
    ) => (await content.as(owner).createWorkflow({ description: "", tags: [], ...fields })).workflow!;

    it("refuses a workflow that breaks a rule, naming the field, and stores none of them", async () => {
      const alice = jwtCaller();
      const asAlice = content.as(alice);
      const others = { id: randomUUID(), name: "private_tool", ownerId: randomUUID() };
      tools.set(others.id, others);
      const base = { name: "checked", description: "", tags: [], steps: [step(echo.id, {})] };
      const cases: [Record<string, unknown>, string, Record<string, unknown>?][] = [
        [{ name: "  " }, "invalid_request"],
        [{ name: "n".repeat(129) }, "invalid_request"],
        [{ steps: [] }, "invalid_request"],
        [{ steps: Array.from({ length: 21 }, () => step(echo.id, {})) }, "invalid_request"],
        [{ steps: [step(echo.id, {}, { stepNumber: 2 })] }, "invalid_step"],
        [{ steps: [step(" ", {})] }, "invalid_step"],
        [{ steps: [{ ...step(echo.id, {}), inputMappingJson: jsonBytes([1, 2]) }] }, "invalid_step"],
        // A template may refer only to the inputs and earlier steps.
        [{ steps: [step(echo.id, { x: "{{steps.2.result.y}}" }), step(echo.id, {})] }, "invalid_template"],
        [{ steps: [step(echo.id, {}), step(others.id, {})] }, "unknown_tool", { step_number: 2, tool_id: others.id }],
        [{ steps: [step(randomUUID(), {})] }, "unknown_tool"],
        [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "invalid_request"],
        [{ visibility: "friends" }, "invalid_request"],
        [{ inputSchemaJson: jsonBytes([]) }, "invalid_request"],
        [{ inputSchemaJson: jsonBytes({ type: "no-such-type" }) }, "invalid_request"],
      ];
      for (const [change, reason] of cases)
        expect(await refusal(asAlice.createWorkflow({ ...base, ...change })), JSON.stringify(change)).toMatchObject({
          code: Code.InvalidArgument,
          reason,
        });
      catalogDown = true;
      try {
        expect(await refusal(asAlice.createWorkflow(base))).toMatchObject({
          code: Code.Unavailable,
          reason: "catalog_unavailable",
        });
      } finally {
        catalogDown = false;
      }
      expect((await asAlice.listMyWorkflows({})).workflows).toEqual([]);
    });

    it("creates, lists, reads, updates and deletes workflows, public ones readable by anyone and private ones by their owner", async () => {
      const alice = jwtCaller();
      const bob = jwtCaller();
      const asAlice = content.as(alice);
      const privateOne = (
        await asAlice.createWorkflow({
          name: "  private flow ",
          description: "mine",
          tags: ["a", "a", " b "],
          steps: [step(echo.id, { q: "{{inputs.q}}" }, { stepNumber: 1 })],
        })
      ).workflow!;
      expect(privateOne).toMatchObject({
        name: "private flow",
        visibility: Visibility.PRIVATE,
        tags: ["a", "b"],
        ownerId: alice.accountId,
        totalExecutions: 0n,
        steps: [{ stepNumber: 1, toolId: echo.id, toolName: "echo" }],
      });
      const publicName = `public flow ${randomUUID().slice(0, 8)}`;
      const publicOne = (
        await asAlice.createWorkflow({
          name: publicName,
          description: "",
          visibility: "public",
          tags: [],
          steps: [step(echo.id, {})],
        })
      ).workflow!;

      expect((await asAlice.listMyWorkflows({})).workflows.map((w) => w.name).sort()).toEqual(
        ["private flow", publicName].sort(),
      );
      expect((await asAlice.listMyWorkflows({ visibility: "public" })).workflows.map((w) => w.id)).toEqual([publicOne.id]);
      expect((await content.anonymous.listPublicWorkflows({ search: publicName })).workflows.map((w) => w.id)).toEqual([
        publicOne.id,
      ]);
      expect(await refusal(content.anonymous.listPublicWorkflows({ sort: "random" }))).toMatchObject({
        reason: "invalid_request",
      });
      expect(await refusal(asAlice.listMyWorkflows({ limit: 101 }))).toMatchObject({ reason: "invalid_request" });

      expect((await content.anonymous.getWorkflow({ workflowId: publicOne.id })).workflow?.name).toBe(publicName);
      for (const other of [content.as(bob), content.anonymous])
        expect(await refusal(other.getWorkflow({ workflowId: privateOne.id }))).toMatchObject({
          code: Code.NotFound,
          reason: "workflow_not_found",
        });

      // Only the owner changes a workflow; fields not given stay.
      expect(await refusal(content.as(bob).updateWorkflow({ workflowId: publicOne.id, name: "taken over" }))).toMatchObject({
        reason: "workflow_not_found",
      });
      const updated = (
        await asAlice.updateWorkflow({
          workflowId: privateOne.id,
          visibility: "public",
          tags: { values: ["c"] },
          steps: { steps: [step(echo.id, {}), step(echo.id, { prev: "{{steps.1.result}}" })] },
        })
      ).workflow!;
      expect(updated).toMatchObject({ name: "private flow", description: "mine", visibility: Visibility.PUBLIC, tags: ["c"] });
      expect(updated.steps.map((s) => s.stepNumber)).toEqual([1, 2]);
      expect(await refusal(asAlice.updateWorkflow({ workflowId: privateOne.id, name: "" }))).toMatchObject({
        reason: "invalid_request",
      });
      expect((await content.as(bob).getWorkflow({ workflowId: privateOne.id })).workflow?.name).toBe("private flow");

      expect(await refusal(content.as(bob).deleteWorkflow({ workflowId: publicOne.id }))).toMatchObject({
        reason: "workflow_not_found",
      });
      expect(await asAlice.deleteWorkflow({ workflowId: publicOne.id })).toMatchObject({ deleted: true });
      expect(await refusal(content.anonymous.getWorkflow({ workflowId: publicOne.id }))).toMatchObject({
        reason: "workflow_not_found",
      });
    });

    it("runs a workflow's steps through execution as the API key's caller, each result feeding the next, and records the run and its event", async () => {
      const alice = jwtCaller();
      const asKey = content.as(withKey(alice));
      const workflow = await newWorkflow(alice, {
        name: "two steps",
        inputSchemaJson: jsonBytes({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
        steps: [
          step(echo.id, { city: "{{inputs.city}}" }),
          step(echo.id, { greeting: "Weather for {{steps.1.result.echoed.city}}", raw: "{{inputs.city}}" }),
        ],
      });

      // A run needs an API key; the inputs must pass the workflow's schema.
      expect(
        await refusal(content.as(alice).executeWorkflow({ workflowId: workflow.id, inputsJson: jsonBytes({ city: "Oslo" }) })),
      ).toMatchObject({
        code: Code.PermissionDenied,
        reason: "api_key_required",
      });
      const invalid = await refusal(asKey.executeWorkflow({ workflowId: workflow.id, inputsJson: jsonBytes({ city: 7 }) }));
      expect(invalid).toMatchObject({ code: Code.InvalidArgument, reason: "invalid_inputs" });
      expect(await refusal(asKey.executeWorkflow({ workflowId: workflow.id, inputsJson: jsonBytes([1]) }))).toMatchObject({
        reason: "invalid_request",
      });
      expect(await refusal(content.as(withKey(jwtCaller())).executeWorkflow({ workflowId: workflow.id }))).toMatchObject({
        reason: "workflow_not_found",
      });

      const before = called.length;
      const key = withKey(alice);
      const { run, pending } = await content.as(key).executeWorkflow({
        workflowId: workflow.id,
        inputsJson: jsonBytes({ city: "Oslo" }),
      });
      expect(pending).toBe(false);
      expect(run).toMatchObject({
        workflowId: workflow.id,
        ownerId: alice.accountId,
        status: WorkflowRunStatus.COMPLETED,
        stepsCompleted: 2,
        stepsTotal: 2,
      });
      expect(fromJsonBytes(run!.resultJson)).toEqual({ echoed: { greeting: "Weather for Oslo", raw: "Oslo" } });
      expect(run!.steps.map((s) => s.status)).toEqual(["completed", "completed"]);

      // Each step was one call, as the key's caller, with the run's idempotency key.
      expect(called.slice(before)).toEqual([
        {
          toolId: echo.id,
          input: { city: "Oslo" },
          accountId: alice.accountId,
          keyId: key.keyId,
          idempotencyKey: `${run!.id}:1`,
          confirmToken: undefined,
        },
        {
          toolId: echo.id,
          input: { greeting: "Weather for Oslo", raw: "Oslo" },
          accountId: alice.accountId,
          keyId: key.keyId,
          idempotencyKey: `${run!.id}:2`,
          confirmToken: undefined,
        },
      ]);

      // The run is its runner's to read; its end was written to the outbox with it.
      expect((await content.as(alice).getWorkflowRun({ runId: run!.id })).run?.status).toBe(WorkflowRunStatus.COMPLETED);
      expect(await refusal(content.as(jwtCaller()).getWorkflowRun({ runId: run!.id }))).toMatchObject({
        reason: "workflow_run_not_found",
      });
      expect((await content.as(alice).listWorkflowRuns({ workflowId: workflow.id })).runs.map((r) => r.id)).toEqual([run!.id]);
      const events = (
        await db.pool.query<{ subject: string; payload: Buffer }>(
          "SELECT subject, payload FROM outbox WHERE subject LIKE 'toolport.workflow.%'",
        )
      ).rows
        .map((e) => ({ subject: e.subject, event: fromBinary(WorkflowEventSchema, e.payload) }))
        .filter((e) => e.event.executionId === run!.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        subject: "toolport.workflow.completed",
        event: {
          workflowId: workflow.id,
          ownerId: alice.accountId,
          status: WorkflowRunStatus.COMPLETED,
          stepsCompleted: 2,
          stepsTotal: 2,
        },
      });
      expect(nudges).toBeGreaterThan(0);
      expect((await content.as(alice).getWorkflow({ workflowId: workflow.id })).workflow).toMatchObject({
        totalExecutions: 1n,
        successRate: 100,
      });
    });

    it("refuses a run missing an input a template uses inside a longer string", async () => {
      const alice = jwtCaller();
      const workflow = await newWorkflow(alice, {
        name: "greets",
        steps: [step(echo.id, { text: "Hello {{inputs.name}}!", whole: "{{inputs.optional}}" })],
      });
      const before = called.length;
      expect(
        await refusal(content.as(withKey(alice)).executeWorkflow({ workflowId: workflow.id, inputsJson: jsonBytes({}) })),
      ).toMatchObject({
        code: Code.InvalidArgument,
        reason: "missing_input",
      });
      expect(called.length).toBe(before);
    });

    it("pauses a run at a step that needs consent, continues it with that step's token once, and ends a run at a failing step", async () => {
      const alice = jwtCaller();
      const asKey = content.as(withKey(alice));
      const paying = await newWorkflow(alice, {
        name: "pays",
        steps: [step(echo.id, { amount: 5 }), step(needsConsent.id, { amount: "{{steps.1.result.echoed.amount}}" })],
      });
      const paused = (await asKey.executeWorkflow({ workflowId: paying.id })).run!;
      expect(paused.status).toBe(WorkflowRunStatus.AWAITING_CONFIRMATION);
      expect(paused.consent).toMatchObject({ toolId: needsConsent.id, toolName: needsConsent.name, confirmToken: CONFIRM_TOKEN });
      expect(fromJsonBytes(paused.consent!.parametersJson)).toEqual({ amount: 5 });

      expect(await refusal(asKey.confirmWorkflowRun({ runId: paused.id, confirmToken: "someone-elses" }))).toMatchObject({
        reason: "invalid_confirm_token",
      });
      expect(
        await refusal(content.as(jwtCaller()).confirmWorkflowRun({ runId: paused.id, confirmToken: CONFIRM_TOKEN })),
      ).toMatchObject({
        reason: "workflow_run_not_found",
      });
      const confirmed = (await asKey.confirmWorkflowRun({ runId: paused.id, confirmToken: CONFIRM_TOKEN })).run!;
      expect(confirmed.status).toBe(WorkflowRunStatus.COMPLETED);
      expect(called.at(-1)).toMatchObject({
        toolId: needsConsent.id,
        confirmToken: CONFIRM_TOKEN,
        idempotencyKey: `${paused.id}:2`,
      });
      expect(await refusal(asKey.confirmWorkflowRun({ runId: paused.id, confirmToken: CONFIRM_TOKEN }))).toMatchObject({
        code: Code.AlreadyExists,
        reason: "run_not_awaiting_confirmation",
      });

      const failing = await newWorkflow(alice, { name: "fails", steps: [step(fails.id, {}), step(echo.id, {})] });
      const failed = (await asKey.executeWorkflow({ workflowId: failing.id })).run!;
      expect(failed).toMatchObject({ status: WorkflowRunStatus.FAILED, error: "the upstream answered 500", stepsCompleted: 0 });
      expect(failed.steps.map((s) => [s.status, s.errorCode ?? null])).toEqual([
        ["failed", "upstream_error"],
        ["skipped", null],
      ]);
    });

    it("reads a path of a step's cut result back from execution's stored result, and fails the step when the path matches nothing", async () => {
      const alice = jwtCaller();
      const asKey = content.as(withKey(alice));
      const create = (second: string) =>
        newWorkflow(alice, { name: "reads back", steps: [step(big.id, {}), step(echo.id, { second })] });
      const reading = await create("{{steps.1.result.rows[1].id}}");
      const run = (await asKey.executeWorkflow({ workflowId: reading.id })).run!;
      expect(run.status).toBe(WorkflowRunStatus.COMPLETED);
      expect(fromJsonBytes(run.resultJson)).toEqual({ echoed: { second: "r2" } });
      const firstStep = run.steps[0]!.executionId;
      expect(readBack.at(-1)).toEqual({ executionId: firstStep, path: "rows[1].id" });

      const missing = await create("{{steps.1.result.rows[5].id}}");
      const failed = (await asKey.executeWorkflow({ workflowId: missing.id })).run!;
      expect(failed.status).toBe(WorkflowRunStatus.FAILED);
      expect(failed.steps.map((s) => [s.status, s.errorCode ?? null])).toEqual([
        ["completed", null],
        ["failed", "template_unmatched"],
      ]);
    });
  });

  describe("sites", () => {
    it("creates a site record for a URL the policy allows, crawls it to live, and keeps it its owner's", async () => {
      const alice = jwtCaller();
      const bob = jwtCaller();
      const asAlice = content.as(alice);
      expect(await refusal(asAlice.createSite({ url: "http://10.1.2.3/" }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "url_not_allowed",
      });
      expect(await refusal(asAlice.createSite({ url: "ftp://127.0.0.1/" }))).toMatchObject({ reason: "invalid_url" });
      expect(await refusal(asAlice.createSite({ url: `${siteBase}/`, visibility: "friends" }))).toMatchObject({
        reason: "invalid_request",
      });
      expect((await asAlice.listMySites({})).sites).toEqual([]);

      const wakesBefore = wakes;
      const created = (await asAlice.createSite({ url: `${siteBase}/#top` })).site!;
      expect(created).toMatchObject({
        url: `${siteBase}/`,
        domain: "127.0.0.1",
        status: "pending",
        visibility: Visibility.PUBLIC,
      });
      expect(wakes).toBe(wakesBefore + 1);

      // The crawl queue takes the record from pending to live.
      await until("the site is crawled", async () => (await asAlice.getSite({ siteId: created.id })).site?.status === "live");
      const live = (await asAlice.getSite({ siteId: created.id })).site!;
      expect(live.pageTitle).not.toBe("");
      expect(instant(live.crawledAt)).toBeGreaterThan(0n);
      expect((await content.anonymous.getSiteByDomain({ domain: "127.0.0.1" })).site?.id).toBe(created.id);
      expect(await refusal(content.anonymous.getSiteByDomain({ domain: "unknown.example" }))).toMatchObject({
        code: Code.NotFound,
        reason: "site_not_found",
      });

      // Another account sees none of it and changes nothing.
      const asBob = content.as(bob);
      expect(await refusal(asBob.getSite({ siteId: created.id }))).toMatchObject({ reason: "site_not_found" });
      expect(await refusal(asBob.recrawlSite({ siteId: created.id }))).toMatchObject({ reason: "site_not_found" });
      expect(await refusal(asBob.deleteSite({ siteId: created.id }))).toMatchObject({ reason: "site_not_found" });
      expect((await asBob.listMySites({})).sites).toEqual([]);

      // A live record stays live while it is crawled again; the new crawl's time shows it was.
      expect((await asAlice.recrawlSite({ siteId: created.id })).site?.status).toBe("live");
      expect(wakes).toBe(wakesBefore + 2);
      const firstCrawl = instant(live.crawledAt);
      await until(
        "the site is crawled again",
        async () => instant((await asAlice.getSite({ siteId: created.id })).site?.crawledAt) > firstCrawl,
      );
      expect((await asAlice.listMySites({})).sites.map((s) => s.id)).toEqual([created.id]);
      expect(await asAlice.deleteSite({ siteId: created.id })).toMatchObject({ deleted: true });
      expect(await refusal(asAlice.getSite({ siteId: created.id }))).toMatchObject({ reason: "site_not_found" });
    });
  });
});
