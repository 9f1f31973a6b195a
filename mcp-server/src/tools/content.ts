/**
 * Content tools: skills (`create_skill`), workflows (`list_workflows`, `delete_workflow`) and site
 * records (`get_site_info`), each one gateway route.
 */
import { z } from "zod";
import { maxResponseChars } from "./execution.js";
import { asObject, call, callerOf, listUnder, requireKey, type ToolContext } from "./results.js";
import { canUseTasks, type RunJson, TASK_MARKER, taskOfRun } from "./tasks.js";

const file = z.object({
  name: z.string().describe("File name, e.g. 'run.py'."),
  content: z.string().describe("The file's text."),
});

const skillInput = {
  name: z.string().describe("Skill name: lowercase letters, digits and hyphens, 1 to 64 characters."),
  skill_md_content: z.string().describe("The SKILL.md text: markdown with YAML frontmatter that includes a `description`."),
  scripts: z.array(file).optional().describe("Script files of the skill (default none)."),
  reference_files: z.array(file).optional().describe("Reference documents of the skill (default none)."),
  assets: z.array(file).optional().describe("Other files of the skill (default none)."),
  visibility: z
    .string()
    .optional()
    .describe("Only `private` is accepted (the default); public skills go through a review submission."),
};

const skillOutput = { id: z.string(), name: z.string(), visibility: z.string() };

const workflowsInput = {
  search: z.string().optional().describe("Words to match in workflow names and descriptions."),
  sort: z.enum(["newest", "popular", "name"]).optional().describe("Order: newest (default), popular or name."),
  limit: z.number().int().min(1).max(100).optional().describe("How many, 1 to 100 (default 20)."),
  offset: z.number().int().min(0).optional().describe("How many to skip, for paging (default 0)."),
};

const workflowsOutput = {
  workflows: z
    .array(z.looseObject({ id: z.string(), name: z.string() }))
    .describe("Public workflows: id, name, description, step_count, tags, total_executions, success_rate."),
};

export function registerContentTools(ctx: ToolContext): void {
  ctx.server.registerTool(
    "create_skill",
    {
      title: "Create a skill",
      description:
        "Save a skill (an instruction bundle: SKILL.md with frontmatter plus optional scripts, references and assets) as a private skill of your account. " +
        "Returns the skill with its id. Use it to keep instructions you or your team will reuse.",
      inputSchema: z.object(skillInput),
      outputSchema: z.looseObject(skillOutput),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) =>
      requireKey(callerOf(extra)) ??
      call(
        ctx,
        callerOf(extra),
        // `visibility` goes as given: for anything but `private` the gateway's 400 says what is accepted.
        (api, headers) =>
          api.POST("/v1/skills", { body: { ...args, visibility: args.visibility as "private" | undefined }, headers }),
        asObject,
      ),
  );

  ctx.server.registerTool(
    "list_workflows",
    {
      title: "List public workflows",
      description:
        "Browse public workflows (ordered chains of tools) by words, popularity or name, with paging. " +
        "Returns summaries with id, name, description, step_count and success_rate. No key needed.",
      inputSchema: z.object(workflowsInput),
      outputSchema: z.looseObject(workflowsOutput),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      call(
        ctx,
        callerOf(extra),
        (api, headers) => api.GET("/v1/workflows/public", { params: { query: args }, headers }),
        listUnder("workflows"),
      ),
  );

  ctx.server.registerTool(
    "run_workflow",
    {
      title: "Run a workflow",
      description:
        "Run a saved workflow (yours, or a public one from list_workflows) with its inputs: its steps run in order as calls on your key (permissions, caps, prices and consent apply). " +
        "Returns the run: run_id, status (completed, failed, awaiting_confirmation when a step needs consent, with its consent object; running when it goes on after the server's wait), steps with their execution_ids for fetch_result, and the last step's result. " +
        "Clients that support the MCP Tasks extension get a task handle at once and poll it.",
      inputSchema: z.object({
        workflow_id: z.string().min(1).describe("Id of the workflow to run (from list_workflows or your own)."),
        inputs: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("Values for the workflow's {{inputs.x}} placeholders, checked against its input_schema. Default {}."),
        max_response_chars: maxResponseChars(
          "Cap on the last step's result in characters (default 32000), as for a single call.",
        ),
      }),
      outputSchema: z.looseObject({ run_id: z.string(), status: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => {
      const caller = callerOf(extra);
      const missing = requireKey(caller);
      if (missing) return missing;
      const asTask = ctx.tasks !== undefined && canUseTasks(extra);
      const result = await call(
        ctx,
        caller,
        (api, headers) =>
          api.POST("/v1/workflows/{workflow_id}/run", {
            params: { path: { workflow_id: args.workflow_id } },
            body: { inputs: args.inputs, max_response_chars: args.max_response_chars, ...(asTask ? { async: true } : {}) },
            headers,
          }),
        asObject,
      );
      const run = result.structuredContent as RunJson | undefined;
      if (!asTask || result.isError || typeof run?.run_id !== "string") return result;
      // The run exists in the content service now, so tasks/get on this handle resolves.
      const { result: _, ...task } = taskOfRun(ctx.tasks!.seal(run.run_id, caller), run);
      return { ...result, _meta: { [TASK_MARKER]: task } };
    },
  );

  ctx.server.registerTool(
    "delete_workflow",
    {
      title: "Delete a workflow",
      description:
        "Permanently delete a workflow you own, by id. This cannot be undone: confirm with the user first. Returns {deleted: true}.",
      inputSchema: z.object({ workflow_id: z.string().describe("Id of the workflow to delete (one you own).") }),
      outputSchema: z.looseObject({ deleted: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      requireKey(callerOf(extra)) ??
      call(
        ctx,
        callerOf(extra),
        (api, headers) =>
          api.DELETE("/v1/workflows/{workflow_id}", { params: { path: { workflow_id: args.workflow_id } }, headers }),
        asObject,
      ),
  );

  ctx.server.registerTool(
    "get_site_info",
    {
      title: "Get a site's record",
      description:
        "Look up the agent-friendly record of a website by its domain (e.g. 'example.com'): title, description, contact, docs, pricing and the tools discovered there. " +
        "Only live public sites are known. No key needed.",
      inputSchema: z.object({ domain: z.string().describe("The site's domain, without scheme or path, e.g. 'example.com'.") }),
      outputSchema: z.looseObject({ domain: z.string(), url: z.string() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      call(
        ctx,
        callerOf(extra),
        (api, headers) => api.GET("/v1/agent-sites/domain/{domain}", { params: { path: { domain: args.domain } }, headers }),
        asObject,
      ),
  );
}
